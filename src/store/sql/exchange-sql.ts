import {
  BASE_INTERVAL,
  bucketOffset,
  bucketStart,
  CANDLE_INTERVALS,
  type CandleRow,
  type DepthRow,
  type ExchangeBatch,
  type FundingRow,
  isStoredInterval,
  type MarkPriceRow,
  nextBucket,
  type OpenInterestRow,
  type TradeRow,
  type Venue,
} from "../../domain/exchange.ts";
import type { Coin } from "../../domain/market.ts";
import type { Micros } from "../../domain/time.ts";
import {
  type Candle,
  EXCHANGE_KINDS,
  type ExchangeKind,
  type ExchangeSeries,
  type SeriesCursor,
  type SeriesExtent,
  type TradePrice,
} from "../ports/exchange-store.ts";

/** What both exchange stores share: the bounds of a candle query and reading an aggregate row. */

export const MIN_TIME = Number.MIN_SAFE_INTEGER;
export const MAX_TIME = Number.MAX_SAFE_INTEGER;

/**
 * The stored 1m candles a query of `interval` over open times [from, to] reads: those in the buckets
 * that open within [from, to] (a bucket opening before `from` is left out whole), as [lo, hi); for a
 * stored interval (1m, 1s), its own candles opening within [from, to].
 */
export function candleRowRange(interval: string, from?: Micros, to?: Micros): { lo: number; hi: number } {
  if (isStoredInterval(interval)) {
    return { lo: from ?? MIN_TIME, hi: to === undefined ? MAX_TIME : to + 1 };
  }
  let lo = MIN_TIME;
  if (from !== undefined) {
    const start = bucketStart(interval, from);
    lo = start === from ? from : nextBucket(interval, start);
  }
  const hi = to === undefined ? MAX_TIME : nextBucket(interval, bucketStart(interval, to));
  return { lo, hi };
}

/** Width and offset of a fixed-width interval's buckets (not used for 1M). */
export function bucketParams(interval: string): { width: number; offset: number } {
  return { width: CANDLE_INTERVALS[interval], offset: bucketOffset(interval) };
}

/** The columns a wider candle sums, in the order their sums are selected. */
const SUMMED = ["volume", "quote_volume", "taker_buy_volume", "taker_buy_quote_volume"];

/** 10^8: Binance gives at most 8 decimals. */
const UNITS = 100_000_000n;

/**
 * The select list of the summed columns of an aggregate, summed exactly so that every store and
 * every order of adding gives the same number (sums of doubles do not): for each column its whole
 * part and its fraction in units of 10^-8, each summed as an integer (a fraction rounds to 8
 * decimals). `whole` and `units` give a column's two parts in the store's SQL; `as` names them.
 */
export function exactSums(whole: (column: string) => string, units: (column: string) => string): string {
  return SUMMED.map((c) => `${whole(c)} AS ${c}_whole, ${units(c)} AS ${c}_units`).join(",\n        ");
}

/** The names exactSums gives its columns, for the select after it. */
export function exactSumNames(prefix: string): string {
  return SUMMED.map((c) => `${prefix}${c}_whole, ${prefix}${c}_units`).join(", ");
}

/** A sum from its whole part and its units of 10^-8, as the double nearest the exact decimal. */
function decimalSum(whole: unknown, units: unknown): number {
  const total = BigInt(whole as number) * UNITS + BigInt(units as number);
  const abs = total < 0n ? -total : total;
  const fraction = (abs % UNITS).toString().padStart(8, "0");
  return Number(`${total < 0n ? "-" : ""}${abs / UNITS}.${fraction}`);
}

/** A stored 1m candle from CANDLE_COLUMNS: [open time, open time, open, high, low, close, ...]. */
export function candleFromRow(r: unknown[]): Candle {
  return {
    openTime: r[0] as number,
    lastOpenTime: r[1] as number,
    open: r[2] as number,
    high: r[3] as number,
    low: r[4] as number,
    close: r[5] as number,
    volume: r[6] as number,
    quoteVolume: r[7] as number,
    trades: r[8] as number,
    takerBuyVolume: r[9] as number,
    takerBuyQuoteVolume: r[10] as number,
  };
}

/**
 * A wider candle from an aggregate row: [first open time, last open time, open, high, low, close,
 * trades, then the exact sums (exactSumNames) of volume, quote volume, taker buy volume and taker buy
 * quote volume].
 */
export function candleFromAggregate(interval: string, r: unknown[]): Candle {
  return {
    openTime: bucketStart(interval, r[0] as number),
    lastOpenTime: r[1] as number,
    open: r[2] as number,
    high: r[3] as number,
    low: r[4] as number,
    close: r[5] as number,
    volume: decimalSum(r[7], r[8]),
    quoteVolume: decimalSum(r[9], r[10]),
    trades: r[6] as number,
    takerBuyVolume: decimalSum(r[11], r[12]),
    takerBuyQuoteVolume: decimalSum(r[13], r[14]),
  };
}

/** Rows read as arrays, in the column orders both stores select. */

export function depthFrom(coin: Coin, venue: Venue, r: unknown[]): DepthRow {
  const b = r[1] as Uint8Array;
  // A plain Uint8Array over the same bytes (node-pg gives a Buffer), as the encoder makes it.
  return { coin, venue, time: r[0] as number, books: new Uint8Array(b.buffer, b.byteOffset, b.byteLength) };
}

export function fundingFrom(coin: Coin, r: unknown[]): FundingRow {
  return { coin, time: r[0] as number, rate: r[1] as number, markPrice: r[2] as number | null };
}

export function openInterestFrom(coin: Coin, r: unknown[]): OpenInterestRow {
  return {
    coin,
    time: r[0] as number,
    openInterest: r[1] as number,
    openInterestValue: r[2] as number | null,
  };
}

export function markPriceFrom(coin: Coin, r: unknown[]): MarkPriceRow {
  return {
    coin,
    time: r[0] as number,
    markPrice: r[1] as number,
    indexPrice: r[2] as number | null,
    estimatedSettlePrice: r[3] as number | null,
    fundingRate: r[4] as number | null,
    nextFundingTime: r[5] as number | null,
  };
}

/** How each kind's series is stored: its table, time column, key columns, and columns read back. */
const SERIES_TABLES: Record<
  ExchangeKind,
  { table: string; time: string; venue: boolean; interval: boolean; columns: string; order: string }
> = {
  depth: {
    table: "exchange_depth",
    time: "time_us",
    venue: true,
    interval: false,
    columns: "time_us, books",
    order: "time_us",
  },
  trades: {
    table: "exchange_trades",
    time: "time_us",
    venue: true,
    interval: false,
    columns: "trade_id, time_us, price, qty, buyer_maker",
    order: "time_us, trade_id",
  },
  candles: {
    table: "exchange_candles",
    time: "open_time",
    venue: true,
    interval: true,
    columns: `open_time, open, high, low, close, volume, quote_volume, trades, taker_buy_volume,
      taker_buy_quote_volume`,
    order: "open_time",
  },
  funding: {
    table: "exchange_funding",
    time: "time_us",
    venue: false,
    interval: false,
    columns: "time_us, rate, mark_price",
    order: "time_us",
  },
  open_interest: {
    table: "exchange_open_interest",
    time: "time_us",
    venue: false,
    interval: false,
    columns: "time_us, open_interest, open_interest_value",
    order: "time_us",
  },
  mark_price: {
    table: "exchange_mark_price",
    time: "time_us",
    venue: false,
    interval: false,
    columns: "time_us, mark_price, index_price, estimated_settle_price, funding_rate, next_funding_time",
    order: "time_us",
  },
};

/**
 * A statement over series, with numbered parameters written `${mark}1`, `${mark}2`, ... (`?` for
 * SQLite, `$` for PostgreSQL), and its values.
 */
export interface SeriesSql {
  text: string;
  values: (string | number)[];
}

/** The conditions selecting one series, from parameter 1 on. */
function seriesWhere(series: ExchangeSeries, mark: string): SeriesSql {
  const t = SERIES_TABLES[series.kind];
  const conditions = [`coin = ${mark}1`];
  const values: (string | number)[] = [series.coin];
  if (t.venue) {
    values.push(series.venue);
    conditions.push(`venue = ${mark}${values.length}`);
  }
  if (t.interval) {
    values.push(series.interval ?? BASE_INTERVAL);
    conditions.push(`period = ${mark}${values.length}`);
  }
  return { text: conditions.join(" AND "), values };
}

/** Per kind: each series' coin, venue, interval, row count and latest time (no parameters). */
export function listSeriesSql(kind: ExchangeKind): string {
  const t = SERIES_TABLES[kind];
  const keys = ["coin", t.venue ? "venue" : "'futures'", t.interval ? "period" : "NULL"];
  const group = ["coin", ...(t.venue ? ["venue"] : []), ...(t.interval ? ["period"] : [])];
  return `SELECT ${keys.join(", ")}, count(*), max(${t.time}) FROM ${t.table} GROUP BY ${group.join(", ")}`;
}

/** A row of listSeriesSql as a series. */
export function seriesExtentFrom(kind: ExchangeKind, r: unknown[]): SeriesExtent {
  const series: SeriesExtent = {
    kind,
    coin: r[0] as Coin,
    venue: r[1] as Venue,
    rows: r[3] as number,
    last: r[4] as number,
  };
  if (kind === "candles") series.interval = r[2] as string;
  return series;
}

/** Series in listSeries order: kind, coin, venue, interval. */
export function compareSeries(a: ExchangeSeries, b: ExchangeSeries): number {
  const byKind = EXCHANGE_KINDS.indexOf(a.kind) - EXCHANGE_KINDS.indexOf(b.kind);
  if (byKind !== 0) return byKind;
  const key = (s: ExchangeSeries) => [s.coin, s.venue, s.interval ?? ""];
  const [ka, kb] = [key(a), key(b)];
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
  return 0;
}

/** One series' row count and latest time. */
export function seriesExtentSql(series: ExchangeSeries, mark: string): SeriesSql {
  const t = SERIES_TABLES[series.kind];
  const where = seriesWhere(series, mark);
  return {
    text: `SELECT count(*), max(${t.time}) FROM ${t.table} WHERE ${where.text}`,
    values: where.values,
  };
}

/** A page of one series in ascending time after a cursor (see ExchangeStore.seriesPage). */
export function seriesPageSql(
  series: ExchangeSeries,
  after: SeriesCursor | null,
  limit: number,
  mark: string,
): SeriesSql {
  const t = SERIES_TABLES[series.kind];
  const { text, values } = seriesWhere(series, mark);
  const conditions = [text];
  const time = after?.time ?? MIN_TIME;
  values.push(time);
  const at = `${mark}${values.length}`;
  if (series.kind === "trades") {
    // The first condition is what an index on (coin, venue, time) serves.
    values.push(after?.id ?? MAX_TIME);
    conditions.push(`time_us >= ${at} AND (time_us > ${at} OR trade_id > ${mark}${values.length})`);
  } else {
    conditions.push(`${t.time} ${after === null ? ">=" : ">"} ${at}`);
  }
  values.push(limit);
  return {
    text: `SELECT ${t.columns} FROM ${t.table} WHERE ${conditions.join(" AND ")}
      ORDER BY ${t.order} LIMIT ${mark}${values.length}`,
    values,
  };
}

/**
 * ExchangeStore.lastTradeEachSecond: of the trades in [from, to], the last of each second (s - 1, s]
 * (by time, then id), in time order. Times are positive, so integer division rounds the second up.
 */
export function lastTradeEachSecondSql(
  coin: Coin,
  venue: Venue,
  from: Micros,
  to: Micros,
  mark: string,
): SeriesSql {
  return {
    text: `SELECT time_us, price FROM (
        SELECT time_us, price, row_number() OVER (
          PARTITION BY (time_us + 999999) / 1000000 ORDER BY time_us DESC, trade_id DESC) AS pick
        FROM exchange_trades
        WHERE coin = ${mark}1 AND venue = ${mark}2 AND time_us >= ${mark}3 AND time_us <= ${mark}4
      ) AS last_trades WHERE pick = 1 ORDER BY time_us`,
    values: [coin, venue, from, to],
  };
}

/** A row of lastTradeEachSecondSql. */
export function tradePriceFrom(r: unknown[]): TradePrice {
  return { time: r[0] as number, price: r[1] as number };
}

/** The rows of seriesPageSql as a batch of the series' kind. */
export function seriesBatch(series: ExchangeSeries, rows: unknown[][]): ExchangeBatch {
  const { coin, venue } = series;
  switch (series.kind) {
    case "depth":
      return { depth: rows.map((r) => depthFrom(coin, venue, r)) };
    case "trades":
      return { trades: rows.map((r) => tradeFrom(coin, venue, r)) };
    case "candles": {
      const interval = series.interval ?? BASE_INTERVAL;
      return { candles: rows.map((r) => candleRowFrom(coin, venue, interval, r)) };
    }
    case "funding":
      return { funding: rows.map((r) => fundingFrom(coin, r)) };
    case "open_interest":
      return { openInterest: rows.map((r) => openInterestFrom(coin, r)) };
    case "mark_price":
      return { markPrices: rows.map((r) => markPriceFrom(coin, r)) };
  }
}

/** A trade from [id, time, price, qty, buyer maker] (SQLite gives the flag as 0 or 1). */
export function tradeFrom(coin: Coin, venue: Venue, r: unknown[]): TradeRow {
  return {
    coin,
    venue,
    id: r[0] as number,
    time: r[1] as number,
    price: r[2] as number,
    qty: r[3] as number,
    buyerMaker: r[4] === true || r[4] === 1,
  };
}

function candleRowFrom(coin: Coin, venue: Venue, interval: string, r: unknown[]): CandleRow {
  return {
    coin,
    venue,
    interval,
    openTime: r[0] as number,
    open: r[1] as number,
    high: r[2] as number,
    low: r[3] as number,
    close: r[4] as number,
    volume: r[5] as number,
    quoteVolume: r[6] as number,
    trades: r[7] as number,
    takerBuyVolume: r[8] as number,
    takerBuyQuoteVolume: r[9] as number,
  };
}

/**
 * Each kind's values in the column order of its insert, the one list both stores write from (SQLite
 * takes the booleans as 0 and 1; see dialects/sqlite/exchange-store.ts).
 */
/** The row type of each kind of a batch. */
interface ExchangeRows {
  depth: DepthRow;
  trades: TradeRow;
  candles: CandleRow;
  funding: FundingRow;
  openInterest: OpenInterestRow;
  markPrices: MarkPriceRow;
}

export type ExchangeRowOf<K extends keyof ExchangeRows> = ExchangeRows[K];

// A mapped type over ExchangeRows, so that indexing it with a generic kind keeps kind and row together.
const INSERT_VALUES: { [K in keyof ExchangeRows]: (row: ExchangeRows[K]) => unknown[] } = {
  depth: (r: DepthRow) => [r.coin, r.venue, r.time, r.books],
  trades: (r: TradeRow) => [r.coin, r.venue, r.id, r.time, r.price, r.qty, r.buyerMaker],
  candles: (r: CandleRow) => [
    r.coin,
    r.venue,
    r.interval,
    r.openTime,
    r.open,
    r.high,
    r.low,
    r.close,
    r.volume,
    r.quoteVolume,
    r.trades,
    r.takerBuyVolume,
    r.takerBuyQuoteVolume,
  ],
  funding: (r: FundingRow) => [r.coin, r.time, r.rate, r.markPrice],
  openInterest: (r: OpenInterestRow) => [r.coin, r.time, r.openInterest, r.openInterestValue],
  markPrices: (r: MarkPriceRow) => [
    r.coin,
    r.time,
    r.markPrice,
    r.indexPrice,
    r.estimatedSettlePrice,
    r.fundingRate,
    r.nextFundingTime,
  ],
};

/** A row's values in the column order of its kind's insert. */
export function insertValues<K extends keyof ExchangeRows>(kind: K, row: ExchangeRows[K]): unknown[] {
  return INSERT_VALUES[kind](row);
}
