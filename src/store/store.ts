import type { ApiKeyRecord } from "../domain/api-key.ts";
import type { Coin, Market, MarketType } from "../domain/market.ts";
import type { SnapshotRow, SortOrder } from "../domain/snapshot.ts";
import type { Micros } from "../domain/time.ts";

/** A market as the store holds it: the record plus the store's own key and snapshot count. */
export interface StoredMarket extends Market {
  /** The store's surrogate key; snapshots are clustered by (key, time). */
  key: number;
  /** Number of stored snapshots, kept in step with every insert. */
  snapshotCount: number;
}

export interface MarketFilter {
  coin?: Coin;
  marketType?: MarketType;
  resolved?: boolean;
  /** Markets starting at or after this Unix second. */
  startFrom?: number;
  /** Markets starting at or before this Unix second. */
  startTo?: number;
  /** Leave out markets of these (coin, type) series that start before the given second (plan windows). */
  hiddenBefore?: { coin: Coin; marketType: MarketType; startTime: number }[];
  limit: number;
  offset: number;
}

export interface SnapshotQuery {
  order: SortOrder;
  limit: number;
  offset: number;
  /** Inclusive bounds on snapshot time. */
  from?: Micros;
  to?: Micros;
  books: boolean;
}

/**
 * Everything the service keeps. Implementations: SQLite (embedded default) and PostgreSQL. One
 * contract suite (test/store-contract.ts) runs against each.
 *
 * Invariants every implementation keeps:
 * - a market is identified by its slug; upserting the same slug updates it in place;
 * - snapshots are unique on (market, time): inserting a row that exists is a no-op, never a duplicate;
 * - `snapshotCount` equals the number of stored snapshots of the market after every insert;
 * - API keys are stored only as hashes.
 */
export interface Store {
  readonly kind: "sqlite" | "postgres";
  migrate(): Promise<void>;
  close(): Promise<void>;

  upsertMarket(market: Market): Promise<StoredMarket>;
  /** By our slug or Polymarket's alias. */
  getMarket(slug: string): Promise<StoredMarket | null>;
  listMarkets(filter: MarketFilter): Promise<{ markets: StoredMarket[]; total: number }>;
  /** The latest `count` start times of a series, newest first (for plan windows). */
  latestStartTimes(coin: Coin, marketType: MarketType, count: number): Promise<number[]>;
  countMarkets(): Promise<number>;

  /** Inserts the rows that are not stored yet; returns how many were new. */
  insertSnapshots(marketKey: number, rows: SnapshotRow[]): Promise<number>;
  countSnapshots(marketKey: number, from?: Micros, to?: Micros): Promise<number>;
  snapshotPage(marketKey: number, query: SnapshotQuery): Promise<SnapshotRow[]>;
  /** The latest snapshot at or before `time`, or null. */
  snapshotAtOrBefore(marketKey: number, time: Micros, books: boolean): Promise<SnapshotRow | null>;

  insertApiKey(record: ApiKeyRecord): Promise<void>;
  findApiKey(id: string): Promise<ApiKeyRecord | null>;
  listApiKeys(): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked; false when there is no such key or it was already revoked. */
  revokeApiKey(id: string, at: Micros): Promise<boolean>;
}
