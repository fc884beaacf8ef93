import type { Micros } from "../../domain/time.ts";
import type { QuotaCharge } from "./quota-ledger.ts";

/** A stored strategy (DESIGN 3.7): a definition, where it came from, and the charge that bought it. */
export interface StrategyRecord {
  id: string;
  keyId: string;
  name: string;
  /** The complete definition, as JSON text. */
  definition: string;
  source: "prompt" | "preset" | "definition";
  prompt: string | null;
  preset: string | null;
  /** Which generator made it (`offline`, `openai-compatible`); null for a definition given as it is. */
  generator: string | null;
  model: string | null;
  /** What the generator could not use, as a JSON array of strings. */
  notes: string;
  createdAt: Micros;
  chargeId: string | null;
  idempotencyKey: string | null;
  /** A digest of the request that made it, so that a retry can be told from a different request. */
  requestHash: string | null;
}

export type RunStatus = "queued" | "running" | "complete" | "failed";

/** A run: a job replaying a definition over a selection of markets, executed off the request thread. */
export interface RunRecord {
  id: string;
  keyId: string;
  /** The account of the key (ApiKeyRecord.account); null for runs stored before accounts were kept. */
  account: string | null;
  strategyId: string | null;
  /** The definition the run replays (the strategy's with the body's overrides), as JSON text. */
  definition: string;
  /** Which markets, as JSON text (src/backtest/jobs/replay.ts reads it). */
  selection: string;
  status: RunStatus;
  createdAt: Micros;
  startedAt: Micros | null;
  finishedAt: Micros | null;
  error: string | null;
  marketsDone: number;
  /** Known once the markets are selected. */
  marketsTotal: number | null;
  /** The aggregate, as JSON text, once complete. */
  aggregate: string | null;
  /** Its benchmarks, intervals, sweep and walk-forward (src/backtest/research.ts), as JSON text, once complete. */
  research: string | null;
  /** The markets of the selection left out as unresolved, as JSON text, once selected. */
  unresolved: string | null;
  /** The process whose lease the run is under (it executes the run while the lease is renewed). */
  runner: string | null;
  leaseUntil: Micros | null;
  /** How many times a process started executing it. */
  attempts: number;
  idempotencyKey: string | null;
  requestHash: string | null;
}

export type NewRun = Pick<
  RunRecord,
  | "id"
  | "keyId"
  | "account"
  | "strategyId"
  | "definition"
  | "selection"
  | "createdAt"
  | "runner"
  | "leaseUntil"
  | "idempotencyKey"
  | "requestHash"
>;

/** How many runs may be queued or running at once, per key and per account (DESIGN 3.7, docs/backtests.md). */
export interface RunLimits {
  perKey: number;
  perAccount: number;
}

/** A run refused for the runs already in flight: of the key, or of its account. */
export interface Busy {
  status: "busy";
  inFlight: number;
  limit: number;
  scope: "key" | "account";
}

export type CreateStrategyResult =
  | { status: "created"; strategy: StrategyRecord; run: RunRecord | null; used: number }
  /** A live charge holds the idempotency key: what it bought (null if that is not stored here). */
  | { status: "replayed"; strategy: StrategyRecord | null; run: RunRecord | null; used: number }
  | { status: "exhausted"; used: number }
  | Busy;

export type CreateRunResult =
  { status: "created"; run: RunRecord } | { status: "replayed"; run: RunRecord } | Busy;

export type RunOutcome =
  /** `research`: Research as JSON text (absent: none computed). */
  { status: "complete"; aggregate: string; research?: string } | { status: "failed"; error: string };

/**
 * Strategies, runs and their per-market results. Implementations: dialects/sqlite/backtest-store.ts and
 * dialects/postgres/backtest-store.ts; one contract suite (test/contracts/backtest-store.ts) runs against each.
 *
 * Invariants every implementation keeps:
 * - a strategy is stored in the same transaction as the quota charge that pays for it (and its run,
 *   if any): never one without the other, and never past the limit the charge was made under;
 * - a key, and an account, never has more runs queued or running than the limits it creates runs
 *   under, whatever the concurrency; a run's idempotency key (per API key) replays the run it first made;
 * - a run's progress, results and outcome are written only by the runner holding it; a run whose
 *   lease expired is taken over (run again from the start) or failed, never left running.
 */
export interface BacktestStore {
  /**
   * In one transaction under the key's lock: replays the live charge holding the charge's
   * idempotency key (with what it bought); refuses when `run` is given and the key or its account
   * has as many runs queued or running as `limits` allow; charges (or refuses at the limit); stores
   * the strategy with the charge's id, and the run.
   */
  createStrategy(
    strategy: StrategyRecord,
    charge: QuotaCharge,
    run: NewRun | null,
    limits: RunLimits,
  ): Promise<CreateStrategyResult>;
  /** What a live charge with this idempotency key bought (a strategy, and its run if it made one), if any. */
  boughtWith(
    keyId: string,
    idempotencyKey: string,
  ): Promise<{ strategy: StrategyRecord; run: RunRecord | null } | null>;
  getStrategy(keyId: string, id: string): Promise<StrategyRecord | null>;
  /** A key's strategies, newest first. */
  listStrategies(
    keyId: string,
    limit: number,
    offset: number,
  ): Promise<{ strategies: StrategyRecord[]; total: number }>;

  /** In one transaction under the key's and the account's lock: replays by idempotency key, refuses past a limit, or stores. */
  createRun(run: NewRun, limits: RunLimits): Promise<CreateRunResult>;
  runByIdempotencyKey(keyId: string, idempotencyKey: string): Promise<RunRecord | null>;
  getRun(id: string): Promise<RunRecord | null>;
  /** Queued → running for the runner holding it: counts an attempt; false if it is not the runner's to start. */
  claimRun(id: string, runner: string, at: Micros, leaseUntil: Micros): Promise<boolean>;
  /** Extends the leases of the runner's runs still queued or running. */
  renewLeases(runner: string, ids: string[], leaseUntil: Micros): Promise<void>;
  /** The selection's outcome: how many markets replay, and those left out as unresolved (JSON). */
  setSelected(id: string, runner: string, marketsTotal: number, unresolved: string): Promise<boolean>;
  /**
   * One market's result, `seq` from 0, stored with the progress in one transaction: the result's JSON
   * and its trades apart, one JSON line a trade (both rendered by the worker, never by a request).
   */
  putResult(
    id: string,
    runner: string,
    seq: number,
    slug: string,
    result: string,
    trades: string,
  ): Promise<boolean>;
  finishRun(id: string, runner: string, outcome: RunOutcome, at: Micros): Promise<boolean>;
  /** A run's per-market results as stored, in replay order: `limit` of them from `offset` (all by default). */
  listResults(id: string, limit?: number, offset?: number): Promise<string[]>;
  /** One market's trades of a run, one JSON line a trade; null when the run has no result for the slug. */
  marketTrades(id: string, slug: string): Promise<string | null>;
  /**
   * Runs queued or running whose lease ended before `now`: those started `maxAttempts` times fail,
   * the others are handed to `runner` (queued again, their results cleared). Returns both lists.
   * `runner`'s own runs are left: the process asking is alive, and a lease of its own that ran out
   * (its event loop held up longer than the lease) is renewed at its next tick, not failed by itself.
   */
  reclaimExpired(
    runner: string,
    now: Micros,
    leaseUntil: Micros,
    maxAttempts: number,
  ): Promise<{ requeued: string[]; failed: string[] }>;
}
