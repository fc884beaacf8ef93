import pg, { type Pool, type PoolConfig, type QueryConfig } from "pg";
import type { StoreOptions } from "../../ports/backend.ts";
import type { MigrationReport, Store } from "../../ports/store.ts";
import { PostgresBacktestStore } from "./backtest-store.ts";
import { PostgresEventStore } from "./event-store.ts";
import { PostgresExchangeStore } from "./exchange-store.ts";
import { PostgresImportMarks } from "./import-marks.ts";
import { PostgresKeyStore } from "./key-store.ts";
import { PostgresMarketStore } from "./market-store.ts";
import { POSTGRES_MIGRATIONS } from "./migrations.ts";
import { MonthlyPartitions } from "./partitions.ts";
import { PostgresQuotaLedger } from "./quota-ledger.ts";
import { PostgresTradeStore } from "./trade-store.ts";
import { SCHEMA_LOCK, STORE_TYPES, inTransaction } from "./pg-util.ts";

type Row = Record<string, unknown>;

export interface PostgresStoreOptions {
  /** Passed to pg.Pool after the defaults below (max connections, timeouts...). */
  pool?: Omit<PoolConfig, "connectionString" | "types" | "onConnect">;
  /** The statement and acquire timeouts (PG_STATEMENT_TIMEOUT_MS, PG_ACQUIRE_TIMEOUT_MS). */
  timeouts?: StoreOptions;
  /** The render version the store reads as current (a test bumps it; see RENDER_VERSION). */
  renderVersion?: number;
}

/**
 * The pool's settings for the timeouts. The server cancels a statement past `statement_timeout`; a
 * server that does not answer at all (frozen, or a network that drops packets) cannot, so the client
 * gives up on a query a little later (`query_timeout`) and the connection is discarded (see
 * pg-util.ts). `connectionTimeoutMillis` bounds both the wait for a free connection and the making
 * of a new one. Without timeouts: no statement limit, and 10 s to get a connection.
 */
function timeoutSettings(t: StoreOptions = {}): PoolConfig {
  const statement = t.statementTimeoutMs ?? 0;
  return {
    connectionTimeoutMillis: t.acquireTimeoutMs ?? 10_000,
    ...(statement > 0
      ? { statement_timeout: statement, query_timeout: statement + QUERY_TIMEOUT_MARGIN_MS }
      : {}),
  };
}

/** How long after the server's own cancellation the client stops waiting for it. */
const QUERY_TIMEOUT_MARGIN_MS = 250;
/**
 * A query the client waits for as long as it takes (node-pg reads a query's own `query_timeout`, which
 * its types leave out; 0 would mean the pool's, so the longest timer Node keeps, about 24.8 days).
 */
function untimed(text: string, values?: unknown[]): QueryConfig {
  const config: QueryConfig & { query_timeout: number } = { text, values, query_timeout: 2 ** 31 - 1 };
  return config;
}

/**
 * The server store: the same data and answers as SqliteStore, for several service processes sharing
 * one database; one pool shared by a store of each capability. Everything that must be atomic across
 * processes is one statement or one transaction serialized by an advisory lock (see pg-util.ts).
 */
export class PostgresStore implements Store {
  readonly kind = "postgres";
  readonly pool: Pool;
  readonly markets: PostgresMarketStore;
  readonly trades: PostgresTradeStore;
  readonly keys: PostgresKeyStore;
  readonly quota: PostgresQuotaLedger;
  readonly exchange: PostgresExchangeStore;
  readonly backtests: PostgresBacktestStore;
  readonly events: PostgresEventStore;
  readonly imports: PostgresImportMarks;
  readonly url: string;

  constructor(connectionString: string, options: PostgresStoreOptions = {}) {
    this.url = connectionString;
    this.pool = new pg.Pool({
      ...timeoutSettings(options.timeouts),
      ...options.pool,
      connectionString,
      types: STORE_TYPES,
      // Floats in text go out with the fewest digits that read back exactly (any value above 0 does
      // that from PostgreSQL 12; 3 gives 17 significant digits, also exact, before), whatever the
      // server's or role's default. A connection that cannot set it is not used.
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- pg-pool awaits onConnect's promise
      onConnect: async (client) => {
        await client.query("SET extra_float_digits = 3");
      },
    });
    // An idle client's connection dropping (a server restart) is reported here; without a listener
    // it would crash the process. The pool replaces the client on the next checkout.
    this.pool.on("error", () => {});
    const partitions = new MonthlyPartitions(this.pool);
    this.markets = new PostgresMarketStore(this.pool, partitions, options.renderVersion);
    this.trades = new PostgresTradeStore(this.pool);
    this.keys = new PostgresKeyStore(this.pool);
    this.quota = new PostgresQuotaLedger(this.pool);
    this.exchange = new PostgresExchangeStore(this.pool, partitions);
    this.backtests = new PostgresBacktestStore(this.pool);
    this.events = new PostgresEventStore(this.pool);
    this.imports = new PostgresImportMarks(this.pool);
  }

  async ready(): Promise<void> {
    await this.markets.countMarkets();
  }

  /** Applies the missing migrations in one transaction, after any other process migrating has finished. */
  async migrate(): Promise<MigrationReport> {
    const report = await inTransaction(this.pool, async (client) => {
      // A schema change may wait for another migrator and rewrite big tables: no request's timeout.
      await client.query("SET LOCAL statement_timeout = 0");
      await client.query(
        untimed("SELECT pg_advisory_xact_lock($1, $2)", [SCHEMA_LOCK.namespace, SCHEMA_LOCK.migrations]),
      );
      await client.query<Row>(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT)",
      );
      const { rows } = await client.query<Row>("SELECT version FROM schema_migrations");
      const done = new Set(rows.map((r) => r.version as number));
      const applied: number[] = [];
      for (const m of POSTGRES_MIGRATIONS) {
        if (done.has(m.version)) continue;
        await client.query(untimed(m.sql));
        await client.query("INSERT INTO schema_migrations VALUES ($1, $2)", [m.version, Date.now()]);
        applied.push(m.version);
      }
      const tables = await client.query<Row>(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
         ORDER BY c.relname`,
      );
      return {
        applied,
        version: Math.max(0, ...done, ...applied),
        tables: tables.rows.map((r) => r.name as string),
      };
    });
    // Version 7's upgrade of the data: resolved markets' snapshots into blocks (a no-op once done).
    await this.markets.sealPendingMarkets();
    // Blocks whose rendering is stale (of another render version, or none) rendered (a no-op once done).
    await this.markets.renderPendingBlocks();
    return report;
  }

  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }
}
