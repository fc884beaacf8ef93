import type { JsonBytes } from "../../wire/json-bytes.ts";
import type { Coin, Market, MarketSource, MarketType } from "../../domain/market.ts";
import type { SnapshotRow, SortOrder } from "../../domain/snapshot.ts";
import type { Micros } from "../../domain/time.ts";
import type { SeriesSummaryRow } from "../rules/series-summary.ts";

export type { SeriesSummaryRow } from "../rules/series-summary.ts";

/** Writes a page's snapshots as JSON (comma-separated), synchronously, into a writer (renderedPage's answer). */
export type PageWriter = (w: JsonBytes) => void;

/** A market as the store holds it: the record plus the store's own key and snapshot count. */
export interface StoredMarket extends Market {
  /** The store's surrogate key; a market's snapshots are found by (key, time). */
  key: number;
  /** Number of stored snapshots, kept in step with every insert. */
  snapshotCount: number;
  /** Where its data came from (MarketSource's rule), in MARKET_SOURCES' order; empty when never marked. */
  sources: MarketSource[];
}

/** Which markets a listing selects (rules/market-filter.ts says it in SQL, once for both stores). */
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
   * for its `total`); it must be that count. A deep page is then read from the nearer end of the range
   * (rules/snapshot-page.ts), skipping fewer rows; the page is the same with or without it.
   */
  total?: number;
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

/** See MarketStore.snapshotSpan. */
export interface SnapshotSpan {
  first: Micros | null;
  last: Micros | null;
  holes: { after: Micros; before: Micros }[];
}

/**
 * Markets, their per-second snapshots and their recording gaps. Implementations: dialects/sqlite/market-store.ts
 * and dialects/postgres/market-store.ts; one contract suite (test/contracts/market-store.ts) runs against each.
 *
 * Invariants every implementation keeps:
 * - a market is identified by its slug; upserting the same slug updates it in place; Polymarket's
 *   slug, where it differs, finds the earliest market holding it;
 * - snapshots are unique on (market, time): inserting a row that exists is a no-op, never a duplicate,
 *   and the first write of a second wins;
 * - `snapshotCount` equals the number of stored snapshots of the market after every insert;
 * - a page is the same bytes on every implementation, whichever end of its range it is read from;
 * - a market's sources change only by markSource, by MarketSource's rule; an upsert leaves them.
 */
export interface MarketStore {
  /** Leaves the market's sources as they were (a new market has none): markSource sets them. */
  upsertMarket(market: Market): Promise<StoredMarket>;
  /**
   * Records that the market's data (also) came from `source`, by MarketSource's rule: `recorded` and
   * `pmxt` add to its sources and take `gamma` out; `gamma` is kept only on a market with no other.
   * Idempotent. Answers the market's sources after it (none for an unknown key, which changes nothing).
   */
  markSource(marketKey: number, source: MarketSource): Promise<MarketSource[]>;
  /** By our slug or Polymarket's alias. */
  getMarket(slug: string): Promise<StoredMarket | null>;
  listMarkets(filter: MarketFilter): Promise<{ markets: StoredMarket[]; total: number }>;
  /** The latest `count` start times of a series, newest first (for plan windows). */
  latestStartTimes(coin: Coin, marketType: MarketType, count: number): Promise<number[]>;
  countMarkets(): Promise<number>;
  /** The first start's demo seed (src/cli/first-start.ts): null when none was begun. */
  demoSeed(): Promise<DemoSeedMark | null>;
  /** Records that the demo seed over `anchor` (Unix seconds) has begun; one begun before is kept. */
  beginDemoSeed(anchor: number): Promise<void>;
  /** Records that the demo seed is complete. */
  completeDemoSeed(at: Micros): Promise<void>;
  /**
   * Every series (coin and type) with a stored market: how many markets and snapshots, the first and
   * last market's times, and the snapshots at or after the Unix second `since`. In coin, type order.
   */
  seriesSummary(since: number): Promise<SeriesSummaryRow[]>;

  /** Inserts the rows that are not stored yet; returns how many were new. */
  insertSnapshots(marketKey: number, rows: SnapshotRow[]): Promise<number>;
  /**
   * Removes the market's snapshots at or after `from` (µs), in one transaction, `snapshotCount` kept
   * right; returns how many went. For a derivation that replaces what it derived before (an archive
   * import that found earlier events: docs/archives.md); the collector never removes a snapshot.
   */
  deleteSnapshotsFrom(marketKey: number, from: Micros): Promise<number>;
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
  /**
   * The same page as snapshotPage, as its JSON ready to be written (writeSnapshotJson's bytes, comma-
   * separated), when the market's snapshots are in blocks (resolved); null otherwise (then read
   * snapshotPage). The writer is synchronous, so a caller can write into a shared buffer after it.
   */
  renderedPage(marketKey: number, query: SnapshotQuery): Promise<PageWriter | null>;
  /** The latest snapshot at or before `time`, or null. */
  snapshotAtOrBefore(marketKey: number, time: Micros, books: boolean): Promise<SnapshotRow | null>;
}

/** A demo seed begun by a first start: its anchor (Unix seconds), and when it was complete. */
export interface DemoSeedMark {
  anchor: number;
  completedAt: Micros | null;
}
