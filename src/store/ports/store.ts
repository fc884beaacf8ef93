import type { BacktestStore } from "./backtest-store.ts";
import type { EventStore } from "./event-store.ts";
import type { ExchangeStore } from "./exchange-store.ts";
import type { ImportMarks } from "./import-marks.ts";
import type { KeyStore } from "./key-store.ts";
import type { MarketStore } from "./market-store.ts";
import type { QuotaLedger } from "./quota-ledger.ts";
import type { TradeStore } from "./trade-store.ts";

/**
 * An opened database: one connection (SQLite) or pool (PostgreSQL) shared by a store of each
 * capability. Consumers take the narrowest of them they use (a KeyService a KeyStore, the collector a
 * MarketStore, ...); only what opens, migrates, copies and closes a database holds the whole.
 * Implementations: one per backend under src/store/dialects/ (src/store/backends.ts lists them; open.ts
 * picks the one a URL's scheme names).
 */
export interface Store {
  /** Which backend this is (its `Backend.name`), for operators (`/readyz` names it); no rule depends on it. */
  readonly kind: string;
  /**
   * A URL that opens this same database from another thread or process (a backtest worker opens its
   * own connection with it); null for a database only this connection sees (`sqlite::memory:`).
   */
  readonly url: string | null;
  readonly markets: MarketStore;
  /** Polymarket trades of the markets (src/store/ports/trade-store.ts). */
  readonly trades: TradeStore;
  readonly keys: KeyStore;
  readonly quota: QuotaLedger;
  /** Binance spot and futures data (src/store/ports/exchange-store.ts). */
  readonly exchange: ExchangeStore;
  /** Backtest strategies, runs and results (src/store/ports/backtest-store.ts). */
  readonly backtests: BacktestStore;
  /** Every market-channel message and coin-price update, in compressed blocks (src/store/ports/event-store.ts). */
  readonly events: EventStore;
  /** What archive imports have done, for resuming them (src/store/ports/import-marks.ts). */
  readonly imports: ImportMarks;
  /**
   * Resolves when the database answers and can be written; rejects with the driver's error otherwise
   * (`/readyz` answers 503 then). SQLite, after a write the disk refused, tries a write until one works.
   */
  ready(): Promise<void>;
  /** Applies the schema's missing migrations, each once, in order (also against a concurrent migrator). */
  migrate(): Promise<MigrationReport>;
  close(): Promise<void>;
}

/** What one `migrate` did, for `updown migrate` to say. */
export interface MigrationReport {
  /** The versions this call applied, in order; none when another process (or an earlier run) had. */
  applied: number[];
  /** The schema's version afterwards: the highest applied. */
  version: number;
  /** The schema's tables afterwards, by name (PostgreSQL's monthly partitions left out). */
  tables: string[];
}
