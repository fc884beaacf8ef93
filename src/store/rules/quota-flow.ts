import type { Micros } from "../../domain/time.ts";
import type { QuotaCharge, QuotaChargeResult } from "../ports/quota-ledger.ts";

/** A charge of the ledger that holds the idempotency key a new charge comes with. */
export interface EarlierCharge {
  id: string;
  month: string;
  refunded: boolean;
  result: string | null;
}

/**
 * The reads and writes of the quota flows, which a dialect provides. Each runs within the transaction
 * of the charge or refund, which holds whatever serializes one key's charges in that dialect.
 */
export interface LedgerSteps {
  chargeWithIdempotencyKey(keyId: string, idempotencyKey: string): EarlierCharge | null;
  /** Removes a charge (a refunded one, whose idempotency key is spent again). */
  dropCharge(chargeId: string): void;
  /** The key's units spent in a month. */
  used(keyId: string, month: string): number;
  /** Stores a new live charge and counts its unit in its month. */
  addCharge(charge: QuotaCharge): void;
  /** Marks a live charge of the key refunded; its month, or null when there is no such live charge. */
  markRefunded(keyId: string, chargeId: string, at: Micros): string | null;
  /** Takes one unit off the key's month. */
  releaseUnit(keyId: string, month: string): void;
  /** Keeps what a live charge bought (QuotaChargeRecord.result). */
  recordResult(keyId: string, chargeId: string, result: string): void;
}

/** LedgerSteps of a dialect whose driver answers asynchronously (PostgreSQL). */
export type AsyncLedgerSteps = {
  [K in keyof LedgerSteps]: (...args: Parameters<LedgerSteps[K]>) => Promise<ReturnType<LedgerSteps[K]>>;
};

/** One step a flow asks for: which of the LedgerSteps, with which arguments. */
type Step = { [K in keyof LedgerSteps]: { name: K; args: Parameters<LedgerSteps[K]> } }[keyof LedgerSteps];

/**
 * The flows are generators that yield the steps they need and are given each step's answer, so that
 * one flow serves both dialects: SQLite's transaction is synchronous and must not span an await (another
 * caller's statement on the same connection would run inside it), PostgreSQL's queries are async.
 */
type Flow<R> = Generator<Step, R, unknown>;

function* step<K extends keyof LedgerSteps>(
  name: K,
  ...args: Parameters<LedgerSteps[K]>
): Generator<Step, ReturnType<LedgerSteps[K]>, unknown> {
  // The runners answer a step with what LedgerSteps[name] returned.
  return (yield { name, args } as Step) as ReturnType<LedgerSteps[K]>;
}

/**
 * Spending one unit: a live charge with the same idempotency key is replayed (with the `used` of its
 * own month); a refunded one bought nothing, so it is dropped and its idempotency key spent again;
 * at the limit the charge is refused; else it is stored and counted.
 */
export function* chargeFlow(c: QuotaCharge): Flow<QuotaChargeResult> {
  if (c.idempotencyKey !== null) {
    const earlier = yield* step("chargeWithIdempotencyKey", c.keyId, c.idempotencyKey);
    if (earlier && !earlier.refunded) {
      const used = yield* step("used", c.keyId, earlier.month);
      return { status: "replayed", chargeId: earlier.id, used, result: earlier.result };
    }
    if (earlier) yield* step("dropCharge", earlier.id);
  }
  const used = yield* step("used", c.keyId, c.month);
  if (c.limit !== null && used >= c.limit) return { status: "exhausted", used };
  yield* step("addCharge", c);
  return { status: "charged", chargeId: c.chargeId, used: used + 1 };
}

/** Giving a live charge's unit back; only the first of several refunds of one charge finds it live. */
export function* refundFlow(keyId: string, chargeId: string, at: Micros): Flow<boolean> {
  const month = yield* step("markRefunded", keyId, chargeId, at);
  if (month === null) return false;
  yield* step("releaseUnit", keyId, month);
  return true;
}

function perform(steps: LedgerSteps | AsyncLedgerSteps, { name, args }: Step): unknown {
  // Step pairs each name with its own arguments; TypeScript cannot follow that through the union.
  return (steps[name] as (...a: unknown[]) => unknown).apply(steps, args);
}

/** Runs a flow on synchronous steps, within the caller's transaction. */
export function runFlow<R>(flow: Flow<R>, steps: LedgerSteps): R {
  let next = flow.next();
  while (!next.done) next = flow.next(perform(steps, next.value));
  return next.value;
}

/** Runs a flow on asynchronous steps, within the caller's transaction. */
export async function runFlowAsync<R>(flow: Flow<R>, steps: AsyncLedgerSteps): Promise<R> {
  let next = flow.next();
  while (!next.done) next = flow.next(await perform(steps, next.value));
  return next.value;
}
