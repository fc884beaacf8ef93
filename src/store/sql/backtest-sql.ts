import type { Busy, NewRun, RunLimits, RunRecord, StrategyRecord } from "../ports/backtest-store.ts";

/** Columns, row readers and parameter lists of the backtest tables, shared by both dialects. */

export const STRATEGY_COLUMNS =
  "id, key_id, name, definition, source, prompt, preset, generator, model, notes, created_at, charge_id, idempotency_key, request_hash";

export const RUN_COLUMNS =
  "id, key_id, strategy_id, definition, selection, status, created_at, started_at, finished_at, error, " +
  "markets_done, markets_total, aggregate, unresolved, runner, lease_until, attempts, idempotency_key, request_hash, account, research";

/** The columns a new run is inserted with, in NEW_RUN_COLUMNS order by newRunValues. */
export const NEW_RUN_COLUMNS =
  "id, key_id, strategy_id, definition, selection, status, created_at, runner, lease_until, attempts, idempotency_key, request_hash, account";

type Row = Record<string, unknown>;

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const int = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function strategyValues(s: StrategyRecord): (string | number | null)[] {
  return [
    s.id,
    s.keyId,
    s.name,
    s.definition,
    s.source,
    s.prompt,
    s.preset,
    s.generator,
    s.model,
    s.notes,
    s.createdAt,
    s.chargeId,
    s.idempotencyKey,
    s.requestHash,
  ];
}

export function strategyFromRow(r: Row): StrategyRecord {
  return {
    id: String(r.id),
    keyId: String(r.key_id),
    name: String(r.name),
    definition: String(r.definition),
    source: r.source as StrategyRecord["source"],
    prompt: text(r.prompt),
    preset: text(r.preset),
    generator: text(r.generator),
    model: text(r.model),
    notes: String(r.notes),
    createdAt: Number(r.created_at),
    chargeId: text(r.charge_id),
    idempotencyKey: text(r.idempotency_key),
    requestHash: text(r.request_hash),
  };
}

export function newRunValues(run: NewRun): (string | number | null)[] {
  return [
    run.id,
    run.keyId,
    run.strategyId,
    run.definition,
    run.selection,
    "queued",
    run.createdAt,
    run.runner,
    run.leaseUntil,
    0,
    run.idempotencyKey,
    run.requestHash,
    run.account,
  ];
}

export function runFromRow(r: Row): RunRecord {
  return {
    id: String(r.id),
    keyId: String(r.key_id),
    strategyId: text(r.strategy_id),
    definition: String(r.definition),
    selection: String(r.selection),
    status: r.status as RunRecord["status"],
    createdAt: Number(r.created_at),
    startedAt: int(r.started_at),
    finishedAt: int(r.finished_at),
    error: text(r.error),
    marketsDone: Number(r.markets_done),
    marketsTotal: int(r.markets_total),
    aggregate: text(r.aggregate),
    unresolved: text(r.unresolved),
    runner: text(r.runner),
    leaseUntil: int(r.lease_until),
    attempts: Number(r.attempts),
    idempotencyKey: text(r.idempotency_key),
    requestHash: text(r.request_hash),
    account: text(r.account),
    research: text(r.research),
  };
}

/** The refusal of a new run, if the key's or the account's runs in flight are at their limit (the key's first). */
export function busyOf(keyInFlight: number, accountInFlight: number, limits: RunLimits): Busy | null {
  if (keyInFlight >= limits.perKey) {
    return { status: "busy", inFlight: keyInFlight, limit: limits.perKey, scope: "key" };
  }
  if (accountInFlight >= limits.perAccount) {
    return { status: "busy", inFlight: accountInFlight, limit: limits.perAccount, scope: "account" };
  }
  return null;
}

/** A market's trades, one JSON line a trade, from its stored row (rows stored before version 12 keep them only in the result). */
export function tradeLinesOf(trades: unknown, result: unknown): string {
  if (typeof trades === "string") return trades;
  const parsed = JSON.parse(String(result)) as { trades?: unknown[] };
  return (parsed.trades ?? []).map((t) => JSON.stringify(t)).join("\n");
}

/** What a charge bought, as the ledger keeps it (QuotaChargeRecord.result). */
export function chargeResultOf(strategyId: string, runId: string | null): string {
  return JSON.stringify({ strategy_id: strategyId, run_id: runId });
}

/** The strategy and run a charge's recorded result names; null for a result not of this store. */
export function boughtBy(result: string | null): { strategyId: string; runId: string | null } | null {
  if (result === null) return null;
  try {
    const parsed = JSON.parse(result) as { strategy_id?: unknown; run_id?: unknown };
    if (typeof parsed.strategy_id !== "string") return null;
    return {
      strategyId: parsed.strategy_id,
      runId: typeof parsed.run_id === "string" ? parsed.run_id : null,
    };
  } catch {
    return null;
  }
}

/** The reason a run fails when its runner's lease ran out too often. */
export function abandonedError(attempts: number): string {
  return `The server running it stopped ${attempts === 1 ? "once" : `${attempts} times`} before it finished; it is not run again.`;
}
