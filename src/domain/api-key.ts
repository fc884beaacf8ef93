import { createHash, hash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Micros } from "./time.ts";

export const PLAN_NAMES = ["starter", "pro", "enterprise"] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export function parsePlanName(text: string): PlanName | null {
  return (PLAN_NAMES as readonly string[]).includes(text) ? (text as PlanName) : null;
}

/**
 * A key as stored: never the key itself, only its SHA-256. `id` is the key's public part (its first
 * characters), used to find the record and shown in listings so a user can tell keys apart.
 */
export interface ApiKeyRecord {
  id: string;
  hash: string;
  plan: PlanName;
  /** Who holds the key; the plan's keys-per-account limit counts active keys per account and plan. */
  account: string;
  name: string | null;
  createdAt: Micros;
  revokedAt: Micros | null;
  /** Enterprise keys may carry their own limits; null means the plan's. */
  perMinuteLimit: number | null;
  perDayLimit: number | null;
}

/** Keys look like `ud_3fK9x2Lm_<32 random base62>`; `ud_` makes a leaked key recognisable in a scan. */
export const KEY_PREFIX = "ud_";
const ID_LENGTH = 8;
const SECRET_LENGTH = 32;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const KEY_RE = /^ud_([0-9A-Za-z]{8})_[0-9A-Za-z]{32}$/;

function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejecting larger bytes keeps every character equally likely.
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export function generateKey(): { key: string; id: string; hash: string } {
  const id = randomBase62(ID_LENGTH);
  const key = `${KEY_PREFIX}${id}_${randomBase62(SECRET_LENGTH)}`;
  return { key, id, hash: hashKey(key) };
}

/** The record id a presented key claims, or null when it is not shaped like one of our keys. */
export function keyIdOf(key: string): string | null {
  const m = KEY_RE.exec(key);
  return m ? m[1] : null;
}

/** Whether `key` is the key behind `record`, compared in constant time. */
export function keyMatches(key: string, record: ApiKeyRecord): boolean {
  // Every request checks its key: the digest's bytes directly, the stored hash decoded once per record.
  const presented = hash("sha256", key, "buffer");
  let stored = storedHashBytes.get(record);
  if (!stored) {
    stored = Buffer.from(record.hash, "hex");
    storedHashBytes.set(record, stored);
  }
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

const storedHashBytes = new WeakMap<ApiKeyRecord, Buffer>();
