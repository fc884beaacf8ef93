import type { Pool, PoolClient } from "pg";
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
import { type AsyncLedgerSteps, chargeFlow, runFlowAsync } from "../../rules/quota-flow.ts";
import { inTransaction, type Queryable } from "./pg-util.ts";
import { lockQuotaOf, postgresLedgerSteps } from "./quota-ledger.ts";

type Row = Record<string, unknown>;

const params = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `$${i + from}`).join(", ");
const INSERT_STRATEGY_SQL = `INSERT INTO backtest_strategies (${STRATEGY_COLUMNS}) VALUES (${params(14)})`;
const INSERT_RUN_SQL = `INSERT INTO backtest_runs (${NEW_RUN_COLUMNS}) VALUES (${params(13)})`;
const IN_FLIGHT_SQL = `SELECT
  (SELECT count(*)::int FROM backtest_runs WHERE key_id = $1 AND status IN ('queued', 'running')) AS by_key,
  (SELECT count(*)::int FROM backtest_runs WHERE account = $2 AND status IN ('queued', 'running')) AS by_account`;

async function one<T>(db: Queryable, sql: string, values: unknown[], read: (r: Row) => T): Promise<T | null> {
  const { rows } = await db.query<Row>(sql, values);
  return rows[0] ? read(rows[0]) : null;
}

async function runOf(db: Queryable, id: string | null): Promise<RunRecord | null> {
  if (id === null) return null;
  return one(db, `SELECT ${RUN_COLUMNS} FROM backtest_runs WHERE id = $1`, [id], runFromRow);
}

async function strategyOf(db: Queryable, keyId: string, id: string): Promise<StrategyRecord | null> {
  return one(
    db,
    `SELECT ${STRATEGY_COLUMNS} FROM backtest_strategies WHERE id = $1 AND key_id = $2`,
    [id, keyId],
    strategyFromRow,
  );
}

/**
 * Whether the run is refused for the runs in flight, under the account's lock (taken after the key's,
 * always in that order): two keys of one account admitting runs at once each see the other's.
 */
async function busy(client: PoolClient, run: NewRun, limits: RunLimits) {
  await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`backtest-account:${run.account}`]);
  const { rows } = await client.query<Row>(IN_FLIGHT_SQL, [run.keyId, run.account]);
  return busyOf(Number(rows[0].by_key), Number(rows[0].by_account), limits);
}

async function replayOf(
  client: PoolClient,
  steps: AsyncLedgerSteps,
  result: string | null,
  keyId: string,
  month: string,
): Promise<CreateStrategyResult> {
  const bought = boughtBy(result);
  const strategy = bought === null ? null : await strategyOf(client, keyId, bought.strategyId);
  const run = await runOf(client, bought?.runId ?? null);
  return { status: "replayed", strategy, run, used: await steps.used(keyId, month) };
}

/**
 * Backtests in PostgreSQL (see BacktestStore). A key's charges and run admissions take the key's
 * quota lock first, so that across processes each sees the others' committed rows before deciding.
 */
export class PostgresBacktestStore implements BacktestStore {
  private readonly pool: Pool;

  constructor(pool: Pool) {
    this.pool = pool;
  }

  async createStrategy(
    strategy: StrategyRecord,
    charge: QuotaCharge,
    run: NewRun | null,
    limits: RunLimits,
  ): Promise<CreateStrategyResult> {
    return inTransaction(this.pool, async (client): Promise<CreateStrategyResult> => {
      await lockQuotaOf(client, charge.keyId);
      const steps = postgresLedgerSteps(client);
      if (charge.idempotencyKey !== null) {
        const earlier = await steps.chargeWithIdempotencyKey(charge.keyId, charge.idempotencyKey);
        if (earlier && !earlier.refunded)
          return replayOf(client, steps, earlier.result, charge.keyId, earlier.month);
      }
      const refused = run === null ? null : await busy(client, run, limits);
      if (refused !== null) return refused;
      const charged = await runFlowAsync(chargeFlow(charge), steps);
      if (charged.status === "exhausted") return charged;
      if (charged.status === "replayed")
        return replayOf(client, steps, charged.result, charge.keyId, charge.month);
      const stored = { ...strategy, chargeId: charge.chargeId };
      await client.query(INSERT_STRATEGY_SQL, strategyValues(stored));
      if (run !== null) await client.query(INSERT_RUN_SQL, newRunValues(run));
      await steps.recordResult(charge.keyId, charge.chargeId, chargeResultOf(strategy.id, run?.id ?? null));
      return {
        status: "created",
        strategy: stored,
        run: await runOf(client, run?.id ?? null),
        used: charged.used,
      };
    });
  }

  async boughtWith(keyId: string, idempotencyKey: string) {
    const bought = await one(
      this.pool,
      "SELECT result FROM quota_charges WHERE key_id = $1 AND idempotency_key = $2 AND refunded_at IS NULL",
      [keyId, idempotencyKey],
      (r) => boughtBy(r.result as string | null),
    );
    const strategy = bought ? await strategyOf(this.pool, keyId, bought.strategyId) : null;
    return strategy === null ? null : { strategy, run: await runOf(this.pool, bought?.runId ?? null) };
  }

  async getStrategy(keyId: string, id: string): Promise<StrategyRecord | null> {
    return strategyOf(this.pool, keyId, id);
  }

  async listStrategies(keyId: string, limit: number, offset: number) {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${STRATEGY_COLUMNS} FROM backtest_strategies WHERE key_id = $1
       ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
      [keyId, limit, offset],
    );
    const total = await one(
      this.pool,
      "SELECT count(*)::int AS n FROM backtest_strategies WHERE key_id = $1",
      [keyId],
      (r) => Number(r.n),
    );
    return { strategies: rows.map(strategyFromRow), total: total ?? 0 };
  }

  async createRun(run: NewRun, limits: RunLimits): Promise<CreateRunResult> {
    return inTransaction(this.pool, async (client): Promise<CreateRunResult> => {
      await lockQuotaOf(client, run.keyId);
      if (run.idempotencyKey !== null) {
        const earlier = await this.runByKey(client, run.keyId, run.idempotencyKey);
        if (earlier) return { status: "replayed", run: earlier };
      }
      const refused = await busy(client, run, limits);
      if (refused !== null) return refused;
      await client.query(INSERT_RUN_SQL, newRunValues(run));
      return { status: "created", run: (await runOf(client, run.id)) as RunRecord };
    });
  }

  private runByKey(db: Queryable, keyId: string, idempotencyKey: string): Promise<RunRecord | null> {
    return one(
      db,
      `SELECT ${RUN_COLUMNS} FROM backtest_runs WHERE key_id = $1 AND idempotency_key = $2`,
      [keyId, idempotencyKey],
      runFromRow,
    );
  }

  runByIdempotencyKey(keyId: string, idempotencyKey: string): Promise<RunRecord | null> {
    return this.runByKey(this.pool, keyId, idempotencyKey);
  }

  getRun(id: string): Promise<RunRecord | null> {
    return runOf(this.pool, id);
  }

  async claimRun(id: string, runner: string, at: Micros, leaseUntil: Micros): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE backtest_runs SET status = 'running', started_at = $1, lease_until = $2, attempts = attempts + 1
       WHERE id = $3 AND runner = $4 AND status = 'queued'`,
      [at, leaseUntil, id, runner],
    );
    return rowCount === 1;
  }

  async renewLeases(runner: string, ids: string[], leaseUntil: Micros): Promise<void> {
    if (ids.length === 0) return;
    await this.pool.query(
      `UPDATE backtest_runs SET lease_until = $1
       WHERE id = ANY($2::text[]) AND runner = $3 AND status IN ('queued', 'running')`,
      [leaseUntil, ids, runner],
    );
  }

  async setSelected(id: string, runner: string, marketsTotal: number, unresolved: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE backtest_runs SET markets_total = $1, unresolved = $2
       WHERE id = $3 AND runner = $4 AND status = 'running'`,
      [marketsTotal, unresolved, id, runner],
    );
    return rowCount === 1;
  }

  async putResult(
    id: string,
    runner: string,
    seq: number,
    slug: string,
    result: string,
    trades: string,
  ): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const { rowCount } = await client.query(
        "UPDATE backtest_runs SET markets_done = $1 WHERE id = $2 AND runner = $3 AND status = 'running'",
        [seq + 1, id, runner],
      );
      if (rowCount !== 1) return false;
      await client.query(
        `INSERT INTO backtest_results (run_id, seq, slug, result, trades) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (run_id, seq) DO UPDATE SET slug = excluded.slug, result = excluded.result,
           trades = excluded.trades`,
        [id, seq, slug, result, trades],
      );
      return true;
    });
  }

  async finishRun(id: string, runner: string, outcome: RunOutcome, at: Micros): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE backtest_runs SET status = $1, aggregate = $2, research = $7, error = $3, finished_at = $4,
         lease_until = NULL
       WHERE id = $5 AND runner = $6 AND status IN ('queued', 'running')`,
      [
        outcome.status,
        outcome.status === "complete" ? outcome.aggregate : null,
        outcome.status === "failed" ? outcome.error : null,
        at,
        id,
        runner,
        outcome.status === "complete" ? (outcome.research ?? null) : null,
      ],
    );
    return rowCount === 1;
  }

  async listResults(id: string, limit?: number, offset = 0): Promise<string[]> {
    const { rows } = await this.pool.query<Row>(
      "SELECT result FROM backtest_results WHERE run_id = $1 ORDER BY seq LIMIT $2 OFFSET $3",
      [id, limit ?? null, offset],
    );
    return rows.map((r) => String(r.result));
  }

  async marketTrades(id: string, slug: string): Promise<string | null> {
    return one(
      this.pool,
      "SELECT trades, result FROM backtest_results WHERE run_id = $1 AND slug = $2 ORDER BY seq LIMIT 1",
      [id, slug],
      (r) => tradeLinesOf(r.trades, r.result),
    );
  }

  /** One transaction; FOR UPDATE SKIP LOCKED, so that two processes sweeping at once share the runs out. */
  async reclaimExpired(runner: string, now: Micros, leaseUntil: Micros, maxAttempts: number) {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<Row>(
        `SELECT id, attempts FROM backtest_runs
         WHERE status IN ('queued', 'running') AND lease_until < $1 AND runner IS DISTINCT FROM $2
         ORDER BY created_at, id FOR UPDATE SKIP LOCKED`,
        [now, runner],
      );
      const requeued: string[] = [];
      const failed: string[] = [];
      for (const row of rows) {
        const id = String(row.id);
        const attempts = Number(row.attempts);
        if (attempts >= maxAttempts) {
          await client.query(
            `UPDATE backtest_runs SET status = 'failed', error = $1, finished_at = $2, lease_until = NULL
             WHERE id = $3`,
            [abandonedError(attempts), now, id],
          );
          failed.push(id);
        } else {
          await client.query(
            `UPDATE backtest_runs SET status = 'queued', runner = $1, lease_until = $2, markets_done = 0,
             markets_total = NULL, unresolved = NULL WHERE id = $3`,
            [runner, leaseUntil, id],
          );
          await client.query("DELETE FROM backtest_results WHERE run_id = $1", [id]);
          requeued.push(id);
        }
      }
      return { requeued, failed };
    });
  }
}
