import { type ApiKeyRecord, generateKey, keyIdOf, keyMatches, type PlanName } from "../domain/api-key.ts";
import type { Plans } from "../domain/plan.ts";
import { type Clock, keptWithin, type Micros } from "../domain/time.ts";
import type { KeyStore } from "../store/ports/key-store.ts";

export interface CreatedKey {
  /** The key itself: shown once, never stored. */
  key: string;
  record: ApiKeyRecord;
}

export interface NewKey {
  plan: PlanName;
  /** Defaults to `default`. */
  account?: string;
  name?: string | null;
  /** Per-key limits, enterprise keys only. */
  perMinuteLimit?: number | null;
  perDayLimit?: number | null;
}

/** A key the plan's rules do not allow: too many for the account, or limits on a plan without them. */
export class KeyPolicyError extends Error {}

const DEFAULT_ACCOUNT = "default";

/** How long a key's record is trusted without asking the store again: a revocation's reach. */
export const KEY_RECORD_TTL: Micros = 1_000_000;
const MAX_CACHED_KEYS = 10_000;

/**
 * A record as kept between store reads. `verified` holds the key last shown to match the record's
 * hash: a key presented again is compared with it in constant time instead of hashed
 * again (hashing was the largest cost of a cached page's request). They live in this process's memory
 * only, as long as the entry (a store read starts a new one), like the key in the request that brought it.
 */
interface CachedRecord {
  record: ApiKeyRecord;
  at: Micros;
  verified: string | null;
}

/**
 * Issues, finds and revokes API keys. The key itself exists only in the caller's hands. Records found
 * are kept for KEY_RECORD_TTL, so that a request costs no store read for its key; a revocation through
 * this service applies at once, one through another process (the CLI, another replica) within the TTL.
 */
export class KeyService {
  private readonly keys: KeyStore;
  private readonly clock: Clock;
  private readonly plans: Plans;
  private readonly records = new Map<string, CachedRecord>();
  constructor(keys: KeyStore, clock: Clock, plans: Plans) {
    this.keys = keys;
    this.clock = clock;
    this.plans = plans;
  }

  async create(spec: NewKey): Promise<CreatedKey> {
    const perMinuteLimit = spec.perMinuteLimit ?? null;
    const perDayLimit = spec.perDayLimit ?? null;
    if (spec.plan !== "enterprise" && (perMinuteLimit !== null || perDayLimit !== null)) {
      throw new KeyPolicyError(`per-key limits are for enterprise keys; a ${spec.plan} key has its plan's`);
    }
    const { key, id, hash } = generateKey();
    const record: ApiKeyRecord = {
      id,
      hash,
      plan: spec.plan,
      account: spec.account ?? DEFAULT_ACCOUNT,
      name: spec.name ?? null,
      createdAt: this.clock.nowMicros(),
      revokedAt: null,
      perMinuteLimit,
      perDayLimit,
    };
    const maxActive = this.plans[spec.plan].keysPerAccount;
    if (!(await this.keys.insertApiKey(record, maxActive))) {
      throw new KeyPolicyError(
        `account "${record.account}" already holds ${maxActive} active ${spec.plan} keys, the plan's limit; ` +
          "revoke one first",
      );
    }
    return { key, record };
  }

  /** The active record behind a presented key, or null for a missing, malformed, unknown or revoked one. */
  async authenticate(presented: string | undefined): Promise<ApiKeyRecord | null> {
    if (!presented) return null;
    const id = keyIdOf(presented);
    if (!id) return null;
    return verified(presented, this.keptEntry(id) ?? (await this.entryOf(id)));
  }

  /**
   * authenticate() where it needs no store read: the record of a presented key kept from a read less
   * than KEY_RECORD_TTL ago, or null for a key that is not valid; undefined where the store must be read.
   */
  authenticateKept(presented: string | undefined): ApiKeyRecord | null | undefined {
    if (!presented) return null;
    const id = keyIdOf(presented);
    if (!id) return null;
    const entry = this.keptEntry(id);
    return entry === undefined ? undefined : verified(presented, entry);
  }

  private keptEntry(id: string): CachedRecord | undefined {
    const now = this.clock.nowMicros();
    const cached = this.records.get(id);
    return cached && keptWithin(cached.at, now, KEY_RECORD_TTL) ? cached : undefined;
  }

  private async entryOf(id: string): Promise<CachedRecord | null> {
    const now = this.clock.nowMicros();
    const record = await this.keys.findApiKey(id);
    // Unknown ids are not kept: guessing is throttled per address, and the map stays bounded by real keys.
    if (!record) {
      this.records.delete(id);
      return null;
    }
    if (this.records.size >= MAX_CACHED_KEYS) this.records.clear();
    const entry: CachedRecord = { record, at: now, verified: null };
    this.records.set(id, entry);
    return entry;
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.keys.listApiKeys();
  }

  revoke(id: string): Promise<boolean> {
    this.records.delete(id);
    return this.keys.revokeApiKey(id, this.clock.nowMicros());
  }
}

/** The entry's record if the presented key is its key and it is not revoked. */
function verified(presented: string, entry: CachedRecord | null): ApiKeyRecord | null {
  return entry && matches(presented, entry) && entry.record.revokedAt === null ? entry.record : null;
}

/** Whether the presented key is the entry's: the text verified before, else its hash (then remembered). */
function matches(presented: string, entry: CachedRecord): boolean {
  const { verified } = entry;
  if (verified !== null && sameText(verified, presented)) return true;
  if (!keyMatches(presented, entry.record)) return false;
  entry.verified = presented;
  return true;
}

/**
 * Equality of two texts in time that depends on their length only: every code unit is compared, with
 * no early exit (crypto's timingSafeEqual would want a Buffer made of the key on every request).
 */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}
