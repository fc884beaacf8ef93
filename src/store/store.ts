import type { ExchangeStore } from "./exchange-store.ts";
import type { ApiKeyRecord, PlanName } from "../domain/api-key.ts";
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
  /**
   * How many snapshots lie within from..to, when the caller has counted them (the snapshot route has,
   * for its `total`). A store may then read a deep page from the nearer end, skipping fewer rows; the
   * page is the one at `offset` of exactly that many rows.
   */
  total?: number;
}

/**
 * Everything the service keeps. Implementations: SQLite (embedded default) and PostgreSQL. One
 * contract suite (test/store-contract.ts) runs against each.
 *
 * Invariants every implementation keeps:
 * - a market is identified by its slug; upserting the same slug updates it in place;
 * - snapshots are unique on (market, time): inserting a row that exists is a no-op, never a duplicate;
 * - `snapshotCount` equals the number of stored snapshots of the market after every insert;
 * - API keys are stored only as hashes;
 * - a key's quota `used` for a month equals its live (unrefunded) charges of that month, and never
 *   exceeds the limit it was charged under, whatever the concurrency.
 */
export interface Store {
  readonly kind: "sqlite" | "postgres";
  /** Binance spot and futures data, on the same connection (src/store/exchange-store.ts). */
  readonly exchange: ExchangeStore;
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
  /** Inserts the rows of several markets in one transaction (the collector's second); returns how many were new. */
  insertSnapshotBatch(batch: SnapshotBatch[]): Promise<number>;
  /**
   * Records why a live market lacks snapshots for a span. Keyed by (market, from): recording the same
   * gap again, or the same gap grown longer, keeps one record with the later end.
   */
  recordGap(marketKey: number, gap: RecordingGap): Promise<void>;
  /** A market's recorded gaps, oldest first. */
  listGaps(marketKey: number): Promise<RecordingGap[]>;
  /**
   * Where a market's snapshots lie: the first and last times, and every pair of consecutive
   * snapshots more than `maxStep` apart (the holes coverage reports), in time order.
   */
  snapshotSpan(marketKey: number, maxStep: Micros): Promise<SnapshotSpan>;
  /**
   * A page of a market's snapshots. Books, when asked, come in their stored encoding byte for byte,
   * so that ascending pages from a given time also serve to copy a market between stores.
   */
  snapshotPage(marketKey: number, query: SnapshotQuery): Promise<SnapshotRow[]>;
  /** The latest snapshot at or before `time`, or null. */
  snapshotAtOrBefore(marketKey: number, time: Micros, books: boolean): Promise<SnapshotRow | null>;

  /**
   * Stores a new key unless its account already holds `maxActive` active keys of its plan (null: no
   * limit); counting and inserting are one atomic step. Returns false when refused.
   */
  insertApiKey(record: ApiKeyRecord, maxActive?: number | null): Promise<boolean>;
  countActiveKeys(account: string, plan: PlanName): Promise<number>;
  findApiKey(id: string): Promise<ApiKeyRecord | null>;
  listApiKeys(): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked; false when there is no such key or it was already revoked. */
  revokeApiKey(id: string, at: Micros): Promise<boolean>;
  /**
   * Stores a key record as given, for copying between stores (`updown copy`): inserts it, or
   * overwrites the record with the same id, except that a key revoked on either side stays revoked
   * (the earlier revocation time is kept). No keys-per-account limit applies. Repeating it changes
   * nothing.
   */
  putApiKey(record: ApiKeyRecord): Promise<void>;

  /**
   * Spends one unit of a key's monthly quota in one atomic step: replays a live charge with the same
   * idempotency key, else refuses when `limit` units are used (null: no limit), else charges.
   */
  chargeQuota(charge: QuotaCharge): Promise<QuotaChargeResult>;
  /** Gives a charge's unit back; false when there is no such live charge. */
  refundQuota(keyId: string, chargeId: string, at: Micros): Promise<boolean>;
  /** Keeps what a charge bought (a response body), so that a replay can return it. */
  recordChargeResult(keyId: string, chargeId: string, result: string): Promise<void>;
  quotaUsed(keyId: string, month: string): Promise<number>;
  /** Up to `limit` charges of the ledger, whatever their key, ordered by id, after `afterId` (null: from the first). */
  listQuotaCharges(afterId: string | null, limit: number): Promise<QuotaChargeRecord[]>;
  /**
   * Stores charges as given, for copying between stores (`updown copy`), in one transaction: each
   * one inserted, or overwriting the charge with the same id, except that a refund or a recorded
   * result on either side is kept; a different charge of the same key and idempotency key is
   * removed. Then the `used` of every (key, month) touched is set to its live charges, so the
   * invariant above holds whatever was stored before. Repeating it changes nothing.
   */
  putQuotaCharges(charges: QuotaChargeRecord[]): Promise<void>;
}

export interface QuotaCharge {
  keyId: string;
  /** UTC month, `YYYY-MM`. */
  month: string;
  limit: number | null;
  /** Chosen by the caller (a UUID), so that it is known before the store answers. */
  chargeId: string;
  idempotencyKey: string | null;
  at: Micros;
}

export type QuotaChargeResult =
  | { status: "charged"; chargeId: string; used: number }
  | { status: "exhausted"; used: number }
  /** An earlier live charge with the same idempotency key; `result` is null while it is in progress. */
  | { status: "replayed"; chargeId: string; used: number; result: string | null };

/** One charge of the quota ledger exactly as stored. */
export interface QuotaChargeRecord {
  id: string;
  keyId: string;
  /** UTC month, `YYYY-MM`. */
  month: string;
  idempotencyKey: string | null;
  chargedAt: Micros;
  refundedAt: Micros | null;
  /** What the charge bought (see recordChargeResult), or null. */
  result: string | null;
}

/** One market's rows of a batch written in one transaction. */
export interface SnapshotBatch {
  marketKey: number;
  rows: SnapshotRow[];
}

/** A span of a live market without snapshots, and why, as the collector saw it. */
export interface RecordingGap {
  /** Time of the first tick without a snapshot. */
  from: Micros;
  /** Time of the last tick without a snapshot. */
  to: Micros;
  /** A short code (docs/collector.md): upstream_disconnected, collector_down, ... */
  cause: string;
  detail: string | null;
}

/** See Store.snapshotSpan. */
export interface SnapshotSpan {
  first: Micros | null;
  last: Micros | null;
  holes: { after: Micros; before: Micros }[];
}
