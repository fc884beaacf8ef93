import type { Coin } from "./market.ts";
import type { Micros } from "./time.ts";

/**
 * Binance data we keep beside the markets (DESIGN 3.6): spot and USDⓈ-M perpetual futures of each
 * coin against USDT. Times are µs like every instant in the service, though Binance gives
 * milliseconds (stored as ms × 1000, so they read back exactly).
 */

export const VENUES = ["spot", "futures"] as const;
export type Venue = (typeof VENUES)[number];

/** What a Binance backfill fetches: 1m candles, trades, funding rates, open interest (futures). */
export const BACKFILL_KINDS = ["candles", "trades", "funding", "open_interest"] as const;
export type BackfillKind = (typeof BACKFILL_KINDS)[number];

/** `spot`, `futures`, and `future` as an alias (any case); null for anything else. */
export function parseVenue(text: string): Venue | null {
  const lower = text.toLowerCase();
  if (lower === "spot") return "spot";
  if (lower === "futures" || lower === "future") return "futures";
  return null;
}

/** Binance's symbol of a coin: `BTCUSDT` (the same on spot and USDⓈ-M futures). */
export function symbolOf(coin: Coin): string {
  return `${coin.toUpperCase()}USDT`;
}

/** Levels kept per side of a depth snapshot (Binance's partial book stream gives 20). */
export const DEPTH_LEVELS = 20;

/** A depth snapshot: the top levels of one venue's book, encoded by encodeBooks(book, EMPTY_BOOK). */
export interface DepthRow {
  coin: Coin;
  venue: Venue;
  time: Micros;
  books: Uint8Array;
}

/**
 * A trade. On spot `id` is Binance's trade id; on futures, which publishes no single trades, the
 * aggregate trade id (one taker order filled at one price).
 */
export interface TradeRow {
  coin: Coin;
  venue: Venue;
  id: number;
  time: Micros;
  price: number;
  qty: number;
  /** The buyer was the maker: the taker sold. */
  buyerMaker: boolean;
}

export interface CandleRow {
  coin: Coin;
  venue: Venue;
  /** Stored candles are 1m (recorded) or 1s (imported); wider ones are aggregated from the 1m when read. */
  interval: string;
  openTime: Micros;
  open: number;
  high: number;
  low: number;
  close: number;
  /** Base asset volume. */
  volume: number;
  quoteVolume: number;
  trades: number;
  takerBuyVolume: number;
  takerBuyQuoteVolume: number;
}

/** A settled funding rate of a perpetual (futures only). */
export interface FundingRow {
  coin: Coin;
  time: Micros;
  rate: number;
  markPrice: number | null;
}

/** Open interest of a perpetual at a time (futures only), in contracts (base asset) and USDT. */
export interface OpenInterestRow {
  coin: Coin;
  time: Micros;
  openInterest: number;
  openInterestValue: number | null;
}

/** The mark price stream's state at a time (futures only). */
export interface MarkPriceRow {
  coin: Coin;
  time: Micros;
  markPrice: number;
  indexPrice: number | null;
  estimatedSettlePrice: number | null;
  /** The funding rate the next settlement would apply, as of this time. */
  fundingRate: number | null;
  nextFundingTime: Micros | null;
}

/** Rows of every kind written together, as one transaction (what the recorder flushes). */
export interface ExchangeBatch {
  depth?: DepthRow[];
  trades?: TradeRow[];
  candles?: CandleRow[];
  funding?: FundingRow[];
  openInterest?: OpenInterestRow[];
  markPrices?: MarkPriceRow[];
}

export type ExchangeCounts = Record<keyof ExchangeBatch, number>;

const MINUTE_US = 60_000_000;
const DAY_US = 86_400_000_000;

/**
 * Binance's kline intervals we answer, and their widths in µs (`1M` is a calendar month, width 0
 * here). 1s candles are not recorded live: they are what `import binance-vision` stored, as they are.
 */
export const CANDLE_INTERVALS: Record<string, number> = {
  "1s": 1_000_000,
  "1m": MINUTE_US,
  "3m": 3 * MINUTE_US,
  "5m": 5 * MINUTE_US,
  "15m": 15 * MINUTE_US,
  "30m": 30 * MINUTE_US,
  "1h": 60 * MINUTE_US,
  "2h": 120 * MINUTE_US,
  "4h": 240 * MINUTE_US,
  "6h": 360 * MINUTE_US,
  "8h": 480 * MINUTE_US,
  "12h": 720 * MINUTE_US,
  "1d": DAY_US,
  "3d": 3 * DAY_US,
  "1w": 7 * DAY_US,
  "1M": 0,
};

/** The interval candles are stored at; wider ones are aggregated from it. */
export const BASE_INTERVAL = "1m";

/** Imported 1 s klines: stored and served as they are, never aggregated. */
export const SECOND_INTERVAL = "1s";

/** Whether candles of `interval` are read as stored rather than aggregated from the base interval. */
export function isStoredInterval(interval: string): boolean {
  return interval === BASE_INTERVAL || interval === SECOND_INTERVAL;
}

/** The longest range of open times a query of 1s candles may span: a day, 86,400 candles. */
export const MAX_SECOND_CANDLES_SPAN_US = DAY_US;

/**
 * Where buckets of an interval start: Binance aligns fixed-width klines to the Unix epoch, except
 * weeks, which open on Monday 00:00 UTC (the epoch was a Thursday, so 4 days later).
 */
export function bucketOffset(interval: string): Micros {
  return interval === "1w" ? 4 * DAY_US : 0;
}

/** Start of the UTC calendar month containing `us`, and of the month `months` after it. */
export function monthStart(us: Micros, months = 0): Micros {
  const d = new Date(Math.floor(us / 1000));
  const out = new Date(0);
  out.setUTCFullYear(d.getUTCFullYear(), d.getUTCMonth() + months, 1);
  return out.getTime() * 1000;
}

/** Open time of the bucket of `interval` containing `us`. */
export function bucketStart(interval: string, us: Micros): Micros {
  if (interval === "1M") return monthStart(us);
  const width = CANDLE_INTERVALS[interval];
  const off = bucketOffset(interval);
  return Math.floor((us - off) / width) * width + off;
}

/** Open time of the bucket after the one that opens at `start`. */
export function nextBucket(interval: string, start: Micros): Micros {
  return interval === "1M" ? monthStart(start, 1) : start + CANDLE_INTERVALS[interval];
}

/** A number from a Binance decimal string (or a number), refusing anything that is not finite. */
export function decimal(value: unknown, field: string): number {
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
  if (!Number.isFinite(n) || (typeof value === "string" && value.trim() === "")) {
    throw new TypeError(`${field} is not a number: ${JSON.stringify(value)}`);
  }
  return n;
}
