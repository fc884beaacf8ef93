import type { DatabaseSync } from "node:sqlite";
import type { Store } from "../store.ts";
import { SqliteConnection } from "./connection.ts";
import { SqliteExchangeStore } from "./exchange-store.ts";
import { SqliteKeyStore } from "./key-store.ts";
import { SqliteMarketStore } from "./market-store.ts";
import { SQLITE_MIGRATIONS } from "./migrations.ts";
import { SqliteQuotaLedger } from "./quota-ledger.ts";

/** Parses `sqlite:./data/updown.db`, `sqlite::memory:` or a bare path. */
export function sqlitePathOf(url: string): string {
  return url.startsWith("sqlite:") ? url.slice("sqlite:".length) : url;
}

/** The embedded store: one node:sqlite connection (WAL) shared by a store of each capability. */
export class SqliteStore implements Store {
  readonly kind = "sqlite" as const;
  readonly markets: SqliteMarketStore;
  readonly keys: SqliteKeyStore;
  readonly quota: SqliteQuotaLedger;
  readonly exchange: SqliteExchangeStore;
  private readonly conn: SqliteConnection;

  constructor(path: string) {
    this.conn = new SqliteConnection(path);
    this.markets = new SqliteMarketStore(this.conn);
    this.keys = new SqliteKeyStore(this.conn);
    this.quota = new SqliteQuotaLedger(this.conn);
    this.exchange = new SqliteExchangeStore(this.conn);
  }

  /** The connection itself, for tools that look at the file (the benchmark's storage figures). */
  get db(): DatabaseSync {
    return this.conn.db;
  }

  async migrate(): Promise<void> {
    const db = this.conn.db;
    db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER)");
    const applied = db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?");
    for (const m of SQLITE_MIGRATIONS) {
      // Checked inside the write transaction, so two processes migrating at once apply each version once.
      this.conn.transaction(() => {
        if (applied.get(m.version)) return;
        db.exec(m.sql);
        db.prepare("INSERT INTO schema_migrations VALUES (?, ?)").run(m.version, Date.now());
      });
    }
    // Version 5's upgrade of the data: resolved markets' snapshots into blocks (a no-op once done).
    await this.markets.sealPendingMarkets();
  }

  async close(): Promise<void> {
    this.conn.close();
  }
}
