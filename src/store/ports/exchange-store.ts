import type {
  CandleRow,
  DepthRow,
  ExchangeBatch,
  ExchangeCounts,
  FundingRow,
  MarkPriceRow,
  OpenInterestRow,
  TradeRow,
  Venue,
} from "../../domain/exchange.ts";
import type { Coin } from "../../domain/market.ts";
import type { SortOrder } from "../../domain/snapshot.ts";
import type { Micros } from "../../domain/time.ts";

/** A page of one series in time order; both bounds inclusive. */
export interface RangeQuery {
  order: SortOrder;
  limit: number;
  offset: number;
  from?: Micros;
  to?: Micros;
}

/** A candle as read: stored 1m candles, or a wider interval aggregated from them. */
export interface Candle extends Omit<CandleRow, "coin" | "venue" | "interval"> {
  /** Open time of the last 1m candle in the bucket (a bucket may be incomplete). */
  lastOpenTime: Micros;
}

/**
 * Binance spot and futures data (DESIGN 3.6), on the connection of the Store holding it: `store.exchange`.
 * Implementations: dialects/sqlite/exchange-store.ts and dialects/postgres/exchange-store.ts; one contract suite
 * (test/contracts/exchange-store.ts) runs against each.
 *
 * Invariants:
 * - every write is idempotent: a row whose key is stored is skipped (the first write wins), so a
 *   replayed batch or an overlapping backfill never duplicates. Keys: depth (coin, venue, time),
 *   trades (coin, venue, id), candles (coin, venue, interval, open time), funding, open interest and
 *   mark price (coin, time);
 * - `insertBatch` writes all its rows in one transaction;
 * - pages are in time order (`desc` newest first) and counts match what paging returns.
 */
export interface ExchangeStore {
  /** Inserts the rows not stored yet, all in one transaction; returns how many of each were new. */
  insertBatch(batch: ExchangeBatch): Promise<ExchangeCounts>;

  latestDepth(coin: Coin, venue: Venue): Promise<DepthRow | null>;
  depthPage(coin: Coin, venue: Venue, q: RangeQuery): Promise<DepthRow[]>;
  countDepth(coin: Coin, venue: Venue, from?: Micros, to?: Micros): Promise<number>;

  /** The latest `limit` trades, newest first. */
  latestTrades(coin: Coin, venue: Venue, limit: number): Promise<TradeRow[]>;

  /**
   * The last trade of each second with trades in [from, to] (times after 0), oldest first: of the
   * trades after a whole second and at or before the next, the latest by time, then id. The price at
   * or before any whole second is one of these (a backtest's lookbacks read them: src/backtest/lookback.ts).
   */
  lastTradeEachSecond(coin: Coin, venue: Venue, from: Micros, to: Micros): Promise<TradePrice[]>;

  /**
   * Candles of `interval` whose open time is in [from, to]: the stored 1m candles (or 1s, as imported),
   * or buckets of a wider interval aggregated from the 1m ones (open of the first, close of the last,
   * high, low, sums).
   */
  candlePage(coin: Coin, venue: Venue, interval: string, q: RangeQuery): Promise<Candle[]>;
  countCandles(coin: Coin, venue: Venue, interval: string, from?: Micros, to?: Micros): Promise<number>;

  fundingPage(coin: Coin, q: RangeQuery): Promise<FundingRow[]>;
  countFunding(coin: Coin, from?: Micros, to?: Micros): Promise<number>;
  openInterestPage(coin: Coin, q: RangeQuery): Promise<OpenInterestRow[]>;
  countOpenInterest(coin: Coin, from?: Micros, to?: Micros): Promise<number>;
  markPricePage(coin: Coin, q: RangeQuery): Promise<MarkPriceRow[]>;
  countMarkPrices(coin: Coin, from?: Micros, to?: Micros): Promise<number>;

  /** Time of the latest stored row of a kind (where a backfill or recorder may resume), or null. */
  latestTime(kind: ExchangeKind, coin: Coin, venue: Venue): Promise<Micros | null>;

  /**
   * Every series holding rows, with its row count and latest time, ordered by kind (as in
   * EXCHANGE_KINDS), coin, venue and interval. Counts every row: a scan of the exchange tables.
   */
  listSeries(): Promise<SeriesExtent[]>;

  /** Row count and latest time of one series; rows 0 and last null when it holds none. */
  seriesExtent(series: ExchangeSeries): Promise<{ rows: number; last: Micros | null }>;

  /**
   * Up to `limit` rows of one series exactly as stored (depth books in their stored encoding, candles
   * of the series' own interval, never aggregated), in ascending time (trades: time, then id), after
   * `after` (null: from the first). Returned as a batch holding that one kind, ready for insertBatch.
   */
  seriesPage(series: ExchangeSeries, after: SeriesCursor | null, limit: number): Promise<ExchangeBatch>;
}

/** A trade's time and price. */
export interface TradePrice {
  time: Micros;
  price: number;
}

export const EXCHANGE_KINDS = [
  "depth",
  "trades",
  "candles",
  "funding",
  "open_interest",
  "mark_price",
] as const;
export type ExchangeKind = (typeof EXCHANGE_KINDS)[number];

/**
 * One stored series: a kind of one coin and venue (`futures` for the futures-only kinds); candles also
 * of one stored interval (1m is what the recorder and backfill write).
 */
export interface ExchangeSeries {
  kind: ExchangeKind;
  coin: Coin;
  venue: Venue;
  /** Candles only. */
  interval?: string;
}

export interface SeriesExtent extends ExchangeSeries {
  rows: number;
  last: Micros;
}

/**
 * Where a page of a series continues: rows later than `time`, and of trades at `time` those with an id
 * above `id` (without `id`, none at `time`). Rows of the other kinds are one per time.
 */
export interface SeriesCursor {
  time: Micros;
  id?: number;
}

/** The batch key of a kind's rows. */
export const BATCH_KEY: Record<ExchangeKind, keyof ExchangeBatch> = {
  depth: "depth",
  trades: "trades",
  candles: "candles",
  funding: "funding",
  open_interest: "openInterest",
  mark_price: "markPrices",
};

export function emptyCounts(): ExchangeCounts {
  return { depth: 0, trades: 0, candles: 0, funding: 0, openInterest: 0, markPrices: 0 };
}
