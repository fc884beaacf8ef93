import { randomUUID } from "node:crypto";
import type { ApiKeyRecord } from "../domain/api-key.ts";
import type { Plans } from "../domain/plan.ts";
import { type Clock, nextUtcMonthStart, utcMonthOf } from "../domain/time.ts";
import type { QuotaCharge, QuotaLedger } from "../store/ports/quota-ledger.ts";

export interface QuotaStatus {
  /** False when the plan has no backtest generations at all. */
  included: boolean;
  month: string;
  limit: number | null;
  used: number;
  remaining: number | null;
  /** Unix seconds of the next UTC month. */
  resetsAt: number;
}

export type QuotaSpend =
  | { status: "not_included" }
  | { status: "exhausted"; quota: QuotaStatus }
  | { status: "charged"; chargeId: string; quota: QuotaStatus }
  /** A retry with an idempotency key already charged: nothing new is spent; `result` is what it bought. */
  | { status: "replayed"; chargeId: string; result: string | null; quota: QuotaStatus };

/**
 * The monthly backtest-generation quota of each key (DESIGN 3.7): spent one unit at a time through
 * the store's atomic ledger (QuotaLedger), refunded when the work it paid for fails.
 */
export class QuotaService {
  private readonly ledger: QuotaLedger;
  private readonly clock: Clock;
  private readonly plans: Plans;
  constructor(ledger: QuotaLedger, clock: Clock, plans: Plans) {
    this.ledger = ledger;
    this.clock = clock;
    this.plans = plans;
  }

  /** The status of a key's month with `used` units spent (as a charge made elsewhere left it). */
  statusOf(key: ApiKeyRecord, month: string, used: number): QuotaStatus {
    const limit = this.plans[key.plan].backtestGenerationsPerMonth;
    return {
      included: limit !== 0,
      month,
      limit,
      used,
      remaining: limit === null ? null : Math.max(0, limit - used),
      resetsAt: nextUtcMonthStart(this.clock.nowMicros()),
    };
  }

  async status(key: ApiKeyRecord): Promise<QuotaStatus> {
    const month = utcMonthOf(this.clock.nowMicros());
    return this.statusOf(key, month, await this.ledger.quotaUsed(key.id, month));
  }

  async spend(key: ApiKeyRecord, idempotencyKey: string | null = null): Promise<QuotaSpend> {
    const limit = this.plans[key.plan].backtestGenerationsPerMonth;
    if (limit === 0) return { status: "not_included" };
    const now = this.clock.nowMicros();
    const month = utcMonthOf(now);
    const result = await this.ledger.chargeQuota({
      keyId: key.id,
      month,
      limit,
      chargeId: randomUUID(),
      idempotencyKey,
      at: now,
    });
    const quota = this.statusOf(key, month, result.used);
    if (result.status === "exhausted") return { status: "exhausted", quota };
    if (result.status === "charged") return { status: "charged", chargeId: result.chargeId, quota };
    return { status: "replayed", chargeId: result.chargeId, result: result.result, quota };
  }

  /**
   * One unit's charge for a store to make in its own transaction (the backtest store charges in the
   * transaction that stores the strategy it pays for); null when the plan has no generations.
   */
  chargeOf(key: ApiKeyRecord, idempotencyKey: string | null): QuotaCharge | null {
    const limit = this.plans[key.plan].backtestGenerationsPerMonth;
    if (limit === 0) return null;
    const now = this.clock.nowMicros();
    return { keyId: key.id, month: utcMonthOf(now), limit, chargeId: randomUUID(), idempotencyKey, at: now };
  }

  refund(key: ApiKeyRecord, chargeId: string): Promise<boolean> {
    return this.ledger.refundQuota(key.id, chargeId, this.clock.nowMicros());
  }

  recordResult(key: ApiKeyRecord, chargeId: string, result: string): Promise<void> {
    return this.ledger.recordChargeResult(key.id, chargeId, result);
  }
}
