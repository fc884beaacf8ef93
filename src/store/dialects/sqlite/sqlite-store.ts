import type { DatabaseSync } from "node:sqlite";
import type { MigrationReport, Store } from "../../ports/store.ts";
import { SqliteBacktestStore } from "./backtest-store.ts";
import { SqliteConnection } from "./connection.ts";
import { SqliteEventStore } from "./event-store.ts";
import { SqliteExchangeStore } from "./exchange-store.ts";
import { SqliteImportMarks } from "./import-marks.ts";
import { SqliteKeyStore } from "./key-store.ts";
import { SqliteMarketStore } from "./market-store.ts";
import { SQLITE_MIGRATIONS } from "./migrations.ts";
import { SqliteQuotaLedger } from "./quota-ledger.ts";
import { SqliteTradeStore } from "./trade-store.ts";

/** The embedded store: one node:sqlite connection (WAL) shared by a store of each capability. */
export class SqliteStore implements Store {
  readonly kind = "sqlite";
  readonly markets: SqliteMarketStore;
  readonly trades: SqliteTradeStore;
  readonly keys: SqliteKeyStore;
  readonly quota: SqliteQuotaLedger;
  readonly exchange: SqliteExchangeStore;
  readonly backtests: SqliteBacktestStore;
  readonly events: SqliteEventStore;
  readonly imports: SqliteImportMarks;
  readonly url: string | null;
  private readonly conn: SqliteConnection;

  /** `renderVersion`: the render version the store reads as current (a test bumps it; see RENDER_VERSION). */
  constructor(path: string, options: { renderVersion?: number } = {}) {
    this.url = path === ":memory:" || path === "" ? null : `sqlite:${path}`;
    this.conn = new SqliteConnection(path);
    this.markets = new SqliteMarketStore(this.conn, options.renderVersion);
    this.trades = new SqliteTradeStore(this.conn);
    this.keys = new SqliteKeyStore(this.conn);
    this.quota = new SqliteQuotaLedger(this.conn);
    this.exchange = new SqliteExchangeStore(this.conn);
    this.backtests = new SqliteBacktestStore(this.conn);
    this.events = new SqliteEventStore(this.conn);
    this.imports = new SqliteImportMarks(this.conn);
  }

  /** The connection itself, for tools that look at the file (the benchmark's storage figures). */
  get db(): DatabaseSync {
    return this.conn.db;
  }

  async ready(): Promise<void> {
    await this.markets.countMarkets();
    this.conn.checkWritable();
  }

  async migrate(): Promise<MigrationReport> {
    const db = this.conn.db;
    db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER)");
    const done = db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?");
    const applied: number[] = [];
    for (const m of SQLITE_MIGRATIONS) {
      // Checked inside the write transaction, so two processes migrating at once apply each version once.
      this.conn.transaction(() => {
        if (done.get(m.version)) return;
        db.exec(m.sql);
        db.prepare("INSERT INTO schema_migrations VALUES (?, ?)").run(m.version, Date.now());
        applied.push(m.version);
      });
    }
    // Version 7's upgrade of the data: resolved markets' snapshots into blocks (a no-op once done).
    await this.markets.sealPendingMarkets();
    // Blocks whose rendering is stale (of another render version, or none) rendered (a no-op once done).
    await this.markets.renderPendingBlocks();
    const version = db.prepare("SELECT max(version) AS v FROM schema_migrations").get()?.v as number;
    const tables = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all()
      .map((r) => r.name as string);
    return { applied, version, tables };
  }

  async close(): Promise<void> {
    this.conn.close();
  }
}
