import type { SQLInputValue } from "node:sqlite";
import type { Micros } from "../../../domain/time.ts";
import {
  abandonedError,
  boughtBy,
  busyOf,
  chargeResultOf,
  NEW_RUN_COLUMNS,
  newRunValues,
  RUN_COLUMNS,
  runFromRow,
  STRATEGY_COLUMNS,
  strategyFromRow,
  strategyValues,
  tradeLinesOf,
} from "../../sql/backtest-sql.ts";
import type {
  BacktestStore,
  CreateRunResult,
  CreateStrategyResult,
  NewRun,
  RunLimits,
  RunOutcome,
  RunRecord,
  StrategyRecord,
} from "../../ports/backtest-store.ts";
import type { QuotaCharge } from "../../ports/quota-ledger.ts";
import { chargeFlow, type LedgerSteps, runFlow } from "../../rules/quota-flow.ts";
import type { SqliteConnection } from "./connection.ts";
import { sqliteLedgerSteps } from "./quota-ledger.ts";

type Row = Record<string, SQLInputValue>;

const IN_FLIGHT_SQL =
  "SELECT count(*) AS n FROM backtest_runs WHERE key_id = ? AND status IN ('queued', 'running')";
const ACCOUNT_IN_FLIGHT_SQL =
  "SELECT count(*) AS n FROM backtest_runs WHERE account = ? AND status IN ('queued', 'running')";
const INSERT_STRATEGY_SQL = `INSERT INTO backtest_strategies (${STRATEGY_COLUMNS}) VALUES (${"?, ".repeat(13)}?)`;
const INSERT_RUN_SQL = `INSERT INTO backtest_runs (${NEW_RUN_COLUMNS}) VALUES (${"?, ".repeat(12)}?)`;
const RUN_SQL = `SELECT ${RUN_COLUMNS} FROM backtest_runs WHERE id = ?`;

/**
 * Backtests in the embedded store (see BacktestStore). Every write that must be atomic is one
 * synchronous transaction on the shared connection (BEGIN IMMEDIATE: one writer at a time, across
 * processes too), which is what serializes a key's charges and runs here.
 */
export class SqliteBacktestStore implements BacktestStore {
  private readonly conn: SqliteConnection;
  private readonly steps: LedgerSteps;

  constructor(conn: SqliteConnection) {
    this.conn = conn;
    this.steps = sqliteLedgerSteps(conn);
  }

  private strategy(keyId: string, id: string): StrategyRecord | null {
    const row = this.conn
      .stmt(`SELECT ${STRATEGY_COLUMNS} FROM backtest_strategies WHERE id = ? AND key_id = ?`)
      .get(id, keyId) as Row | undefined;
    return row ? strategyFromRow(row) : null;
  }

  private run(id: string | null): RunRecord | null {
    if (id === null) return null;
    const row = this.conn.stmt(RUN_SQL).get(id) as Row | undefined;
    return row ? runFromRow(row) : null;
  }

  private busy(run: NewRun, limits: RunLimits) {
    const key = Number((this.conn.stmt(IN_FLIGHT_SQL).get(run.keyId) as Row).n);
    const account = Number((this.conn.stmt(ACCOUNT_IN_FLIGHT_SQL).get(run.account) as Row).n);
    return busyOf(key, account, limits);
  }

  /** What an earlier charge bought, from the ledger's record of it (chargeResultOf). */
  private replayOf(result: string | null, keyId: string, month: string): CreateStrategyResult {
    const bought = boughtBy(result);
    const strategy = bought === null ? null : this.strategy(keyId, bought.strategyId);
    const run = bought?.runId ? this.run(bought.runId) : null;
    return { status: "replayed", strategy, run, used: this.steps.used(keyId, month) };
  }

  async createStrategy(
    strategy: StrategyRecord,
    charge: QuotaCharge,
    run: NewRun | null,
    limits: RunLimits,
  ): Promise<CreateStrategyResult> {
    return this.conn.transaction((): CreateStrategyResult => {
      if (charge.idempotencyKey !== null) {
        const earlier = this.steps.chargeWithIdempotencyKey(charge.keyId, charge.idempotencyKey);
        if (earlier && !earlier.refunded) return this.replayOf(earlier.result, charge.keyId, earlier.month);
      }
      const busy = run === null ? null : this.busy(run, limits);
      if (busy !== null) return busy;
      const charged = runFlow(chargeFlow(charge), this.steps);
      if (charged.status === "exhausted") return charged;
      if (charged.status === "replayed") return this.replayOf(charged.result, charge.keyId, charge.month);
      this.conn.stmt(INSERT_STRATEGY_SQL).run(...strategyValues({ ...strategy, chargeId: charge.chargeId }));
      if (run !== null) this.conn.stmt(INSERT_RUN_SQL).run(...newRunValues(run));
      this.steps.recordResult(charge.keyId, charge.chargeId, chargeResultOf(strategy.id, run?.id ?? null));
      return {
        status: "created",
        strategy: { ...strategy, chargeId: charge.chargeId },
        run: this.run(run?.id ?? null),
        used: charged.used,
      };
    });
  }

  async boughtWith(keyId: string, idempotencyKey: string) {
    const earlier = this.steps.chargeWithIdempotencyKey(keyId, idempotencyKey);
    const bought = earlier && !earlier.refunded ? boughtBy(earlier.result) : null;
    const strategy = bought === null ? null : this.strategy(keyId, bought.strategyId);
    return strategy === null ? null : { strategy, run: this.run(bought?.runId ?? null) };
  }

  async getStrategy(keyId: string, id: string): Promise<StrategyRecord | null> {
    return this.strategy(keyId, id);
  }

  async listStrategies(keyId: string, limit: number, offset: number) {
    const rows = this.conn
      .stmt(
        `SELECT ${STRATEGY_COLUMNS} FROM backtest_strategies WHERE key_id = ?
         ORDER BY created_at DESC, id LIMIT ? OFFSET ?`,
      )
      .all(keyId, limit, offset) as Row[];
    const total = this.conn
      .stmt("SELECT count(*) AS n FROM backtest_strategies WHERE key_id = ?")
      .get(keyId) as Row;
    return { strategies: rows.map(strategyFromRow), total: Number(total.n) };
  }

  async createRun(run: NewRun, limits: RunLimits): Promise<CreateRunResult> {
    return this.conn.transaction((): CreateRunResult => {
      if (run.idempotencyKey !== null) {
        const earlier = this.runByKey(run.keyId, run.idempotencyKey);
        if (earlier) return { status: "replayed", run: earlier };
      }
      const busy = this.busy(run, limits);
      if (busy !== null) return busy;
      this.conn.stmt(INSERT_RUN_SQL).run(...newRunValues(run));
      return { status: "created", run: this.run(run.id) as RunRecord };
    });
  }

  private runByKey(keyId: string, idempotencyKey: string): RunRecord | null {
    const row = this.conn
      .stmt(`SELECT ${RUN_COLUMNS} FROM backtest_runs WHERE key_id = ? AND idempotency_key = ?`)
      .get(keyId, idempotencyKey) as Row | undefined;
    return row ? runFromRow(row) : null;
  }

  async runByIdempotencyKey(keyId: string, idempotencyKey: string): Promise<RunRecord | null> {
    return this.runByKey(keyId, idempotencyKey);
  }

  async getRun(id: string): Promise<RunRecord | null> {
    return this.run(id);
  }

  async claimRun(id: string, runner: string, at: Micros, leaseUntil: Micros): Promise<boolean> {
    const result = this.conn
      .stmt(
        `UPDATE backtest_runs SET status = 'running', started_at = ?, lease_until = ?, attempts = attempts + 1
         WHERE id = ? AND runner = ? AND status = 'queued'`,
      )
      .run(at, leaseUntil, id, runner);
    return Number(result.changes) === 1;
  }

  async renewLeases(runner: string, ids: string[], leaseUntil: Micros): Promise<void> {
    if (ids.length === 0) return;
    const renew = this.conn.stmt(
      "UPDATE backtest_runs SET lease_until = ? WHERE id = ? AND runner = ? AND status IN ('queued', 'running')",
    );
    this.conn.transaction(() => {
      for (const id of ids) renew.run(leaseUntil, id, runner);
    });
  }

  async setSelected(id: string, runner: string, marketsTotal: number, unresolved: string): Promise<boolean> {
    const result = this.conn
      .stmt(
        `UPDATE backtest_runs SET markets_total = ?, unresolved = ?
         WHERE id = ? AND runner = ? AND status = 'running'`,
      )
      .run(marketsTotal, unresolved, id, runner);
    return Number(result.changes) === 1;
  }

  async putResult(
    id: string,
    runner: string,
    seq: number,
    slug: string,
    result: string,
    trades: string,
  ): Promise<boolean> {
    return this.conn.transaction(() => {
      const progress = this.conn
        .stmt("UPDATE backtest_runs SET markets_done = ? WHERE id = ? AND runner = ? AND status = 'running'")
        .run(seq + 1, id, runner);
      if (Number(progress.changes) !== 1) return false;
      this.conn
        .stmt(
          "INSERT OR REPLACE INTO backtest_results (run_id, seq, slug, result, trades) VALUES (?, ?, ?, ?, ?)",
        )
        .run(id, seq, slug, result, trades);
      return true;
    });
  }

  async finishRun(id: string, runner: string, outcome: RunOutcome, at: Micros): Promise<boolean> {
    const result = this.conn
      .stmt(
        `UPDATE backtest_runs SET status = ?, aggregate = ?, research = ?, error = ?, finished_at = ?,
           lease_until = NULL
         WHERE id = ? AND runner = ? AND status IN ('queued', 'running')`,
      )
      .run(
        outcome.status,
        outcome.status === "complete" ? outcome.aggregate : null,
        outcome.status === "complete" ? (outcome.research ?? null) : null,
        outcome.status === "failed" ? outcome.error : null,
        at,
        id,
        runner,
      );
    return Number(result.changes) === 1;
  }

  async listResults(id: string, limit = -1, offset = 0): Promise<string[]> {
    const rows = this.conn
      .stmt("SELECT result FROM backtest_results WHERE run_id = ? ORDER BY seq LIMIT ? OFFSET ?")
      .all(id, limit, offset) as Row[];
    return rows.map((r) => String(r.result));
  }

  async marketTrades(id: string, slug: string): Promise<string | null> {
    const row = this.conn
      .stmt("SELECT trades, result FROM backtest_results WHERE run_id = ? AND slug = ? ORDER BY seq LIMIT 1")
      .get(id, slug) as Row | undefined;
    return row ? tradeLinesOf(row.trades, row.result) : null;
  }

  async reclaimExpired(runner: string, now: Micros, leaseUntil: Micros, maxAttempts: number) {
    return this.conn.transaction(() => {
      const expired = this.conn
        .stmt(
          `SELECT id, attempts FROM backtest_runs
           WHERE status IN ('queued', 'running') AND lease_until < ? AND runner IS NOT ?
           ORDER BY created_at, id`,
        )
        .all(now, runner) as Row[];
      const requeued: string[] = [];
      const failed: string[] = [];
      for (const row of expired) {
        const id = String(row.id);
        const attempts = Number(row.attempts);
        if (attempts >= maxAttempts) {
          this.conn
            .stmt(
              `UPDATE backtest_runs SET status = 'failed', error = ?, finished_at = ?, lease_until = NULL
               WHERE id = ?`,
            )
            .run(abandonedError(attempts), now, id);
          failed.push(id);
        } else {
          this.conn
            .stmt(
              `UPDATE backtest_runs SET status = 'queued', runner = ?, lease_until = ?, markets_done = 0,
               markets_total = NULL, unresolved = NULL WHERE id = ?`,
            )
            .run(runner, leaseUntil, id);
          this.conn.stmt("DELETE FROM backtest_results WHERE run_id = ?").run(id);
          requeued.push(id);
        }
      }
      return { requeued, failed };
    });
  }
}
