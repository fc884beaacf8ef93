import type { Micros } from "../../domain/time.ts";

export interface QuotaCharge {
  keyId: string;
  /** UTC month, `YYYY-MM`. */
  month: string;
  limit: number | null;
  /** Chosen by the caller (a UUID), so that it is known before the store answers. */
  chargeId: string;
  idempotencyKey: string | null;
  at: Micros;
}

export type QuotaChargeResult =
  | { status: "charged"; chargeId: string; used: number }
  | { status: "exhausted"; used: number }
  /** An earlier live charge with the same idempotency key; `result` is null while it is in progress. */
  | { status: "replayed"; chargeId: string; used: number; result: string | null };

/** One charge of the quota ledger exactly as stored. */
export interface QuotaChargeRecord {
  id: string;
  keyId: string;
  /** UTC month, `YYYY-MM`. */
  month: string;
  idempotencyKey: string | null;
  chargedAt: Micros;
  refundedAt: Micros | null;
  /** What the charge bought (see recordChargeResult), or null. */
  result: string | null;
}

/**
 * The monthly quota ledger: one charge per unit spent, and each key's `used` per month. The flow of a
 * charge and a refund is written once (rules/quota-flow.ts) over each dialect's reads and writes:
 * dialects/sqlite/quota-ledger.ts and dialects/postgres/quota-ledger.ts; one contract suite
 * (test/contracts/quota-ledger.ts) runs against each.
 *
 * Invariants every implementation keeps: a key's `used` for a month equals its live (unrefunded)
 * charges of that month, and never exceeds the limit it was charged under, whatever the concurrency;
 * a charge is refunded at most once.
 */
export interface QuotaLedger {
  /**
   * Spends one unit of a key's monthly quota in one atomic step: replays a live charge with the same
   * idempotency key, else refuses when `limit` units are used (null: no limit), else charges.
   */
  chargeQuota(charge: QuotaCharge): Promise<QuotaChargeResult>;
  /** Gives a charge's unit back; false when there is no such live charge. */
  refundQuota(keyId: string, chargeId: string, at: Micros): Promise<boolean>;
  /** Keeps what a charge bought (a response body), so that a replay can return it. */
  recordChargeResult(keyId: string, chargeId: string, result: string): Promise<void>;
  quotaUsed(keyId: string, month: string): Promise<number>;
  /** Up to `limit` charges of the ledger, whatever their key, ordered by id, after `afterId` (null: from the first). */
  listQuotaCharges(afterId: string | null, limit: number): Promise<QuotaChargeRecord[]>;
  /**
   * Stores charges as given, for copying between stores (`updown copy`), in one transaction: each
   * one inserted, or overwriting the charge with the same id, except that a refund or a recorded
   * result on either side is kept; a different charge of the same key and idempotency key is
   * removed. Then the `used` of every (key, month) touched is set to its live charges, so the
   * invariant above holds whatever was stored before. Repeating it changes nothing.
   */
  putQuotaCharges(charges: QuotaChargeRecord[]): Promise<void>;
}
