import { EMPTY_BOOK, type Level } from "../../domain/book.ts";
import { encodeBooks } from "../../wire/book-codec.ts";
import {
  type CandleRow,
  decimal,
  DEPTH_LEVELS,
  type DepthRow,
  type FundingRow,
  type MarkPriceRow,
  type OpenInterestRow,
  type TradeRow,
  type Venue,
} from "../../domain/exchange.ts";
import type { Coin } from "../../domain/market.ts";

/**
 * Binance's payloads (REST answers and stream events, field names as Binance sends them) into our
 * rows. Anything malformed throws; callers log and skip it. Binance's milliseconds become µs.
 */

type Json = Record<string, unknown>;

const us = (ms: unknown, field: string): number => {
  const n = decimal(ms, field);
  if (!Number.isSafeInteger(n)) throw new TypeError(`${field} is not an integer: ${JSON.stringify(ms)}`);
  return n * 1000;
};

const optional = (v: unknown, field: string): number | null =>
  v === undefined || v === null || v === "" ? null : decimal(v, field);

function levels(side: unknown, field: string): Level[] {
  if (!Array.isArray(side)) throw new TypeError(`${field} is not a list of levels`);
  return side.slice(0, DEPTH_LEVELS).map((l, i) => {
    if (!Array.isArray(l)) throw new TypeError(`${field}[${i}] is not [price, quantity]`);
    return { price: decimal(l[0], `${field}[${i}] price`), size: decimal(l[1], `${field}[${i}] quantity`) };
  });
}

/**
 * A partial book depth event: spot's `{lastUpdateId, bids, asks}` (no time: `timeMs` is when it
 * arrived) or futures' `{e: "depthUpdate", E, T, b, a}` (the event time is used).
 */
export function depthFromEvent(coin: Coin, venue: Venue, data: Json, arrivedMs: number): DepthRow {
  const bids = levels(data.bids ?? data.b, "bids");
  const asks = levels(data.asks ?? data.a, "asks");
  const time = data.E === undefined ? arrivedMs * 1000 : us(data.E, "E");
  return { coin, venue, time, books: encodeBooks({ bids, asks }, EMPTY_BOOK) };
}

/** Spot `trade` event: `{t, p, q, T, m}`. */
export function tradeFromEvent(coin: Coin, data: Json): TradeRow {
  return {
    coin,
    venue: "spot",
    id: decimal(data.t, "t"),
    time: us(data.T, "T"),
    price: decimal(data.p, "p"),
    qty: decimal(data.q, "q"),
    buyerMaker: data.m === true,
  };
}

/** `aggTrade` event or /aggTrades row: `{a, p, q, T, m}` (futures trades are aggregate trades). */
export function aggTradeFrom(coin: Coin, venue: Venue, data: Json): TradeRow {
  return {
    coin,
    venue,
    id: decimal(data.a, "a"),
    time: us(data.T, "T"),
    price: decimal(data.p, "p"),
    qty: decimal(data.q, "q"),
    buyerMaker: data.m === true,
  };
}

/** /api/v3/historicalTrades row: `{id, price, qty, time, isBuyerMaker}`. */
export function historicalTradeFrom(coin: Coin, data: Json): TradeRow {
  return {
    coin,
    venue: "spot",
    id: decimal(data.id, "id"),
    time: us(data.time, "time"),
    price: decimal(data.price, "price"),
    qty: decimal(data.qty, "qty"),
    buyerMaker: data.isBuyerMaker === true,
  };
}

/** A kline event's `k` object, or null while the candle is still open (`x` false). */
export function candleFromKlineEvent(coin: Coin, venue: Venue, data: Json): CandleRow | null {
  const k = data.k as Json | undefined;
  if (!k || typeof k !== "object") throw new TypeError("kline event without k");
  if (k.x !== true) return null;
  return {
    coin,
    venue,
    interval: String(k.i),
    openTime: us(k.t, "k.t"),
    open: decimal(k.o, "k.o"),
    high: decimal(k.h, "k.h"),
    low: decimal(k.l, "k.l"),
    close: decimal(k.c, "k.c"),
    volume: decimal(k.v, "k.v"),
    quoteVolume: decimal(k.q, "k.q"),
    trades: decimal(k.n, "k.n"),
    takerBuyVolume: decimal(k.V, "k.V"),
    takerBuyQuoteVolume: decimal(k.Q, "k.Q"),
  };
}

/**
 * A /klines row: [open time, open, high, low, close, volume, close time, quote volume, trades, taker
 * buy base volume, taker buy quote volume, ignore].
 */
export function candleFromKline(coin: Coin, venue: Venue, interval: string, row: unknown): CandleRow {
  if (!Array.isArray(row) || row.length < 11) throw new TypeError("a kline is not an array of 11 or more");
  return {
    coin,
    venue,
    interval,
    openTime: us(row[0], "open time"),
    open: decimal(row[1], "open"),
    high: decimal(row[2], "high"),
    low: decimal(row[3], "low"),
    close: decimal(row[4], "close"),
    volume: decimal(row[5], "volume"),
    quoteVolume: decimal(row[7], "quote volume"),
    trades: decimal(row[8], "trades"),
    takerBuyVolume: decimal(row[9], "taker buy volume"),
    takerBuyQuoteVolume: decimal(row[10], "taker buy quote volume"),
  };
}

/** `markPriceUpdate` event: `{E, p, i, P, r, T}`. */
export function markPriceFromEvent(coin: Coin, data: Json): MarkPriceRow {
  return {
    coin,
    time: us(data.E, "E"),
    markPrice: decimal(data.p, "p"),
    indexPrice: optional(data.i, "i"),
    estimatedSettlePrice: optional(data.P, "P"),
    fundingRate: optional(data.r, "r"),
    nextFundingTime: data.T === undefined || data.T === 0 ? null : us(data.T, "T"),
  };
}

/** /fapi/v1/fundingRate row: `{fundingTime, fundingRate, markPrice}` (markPrice is "" on old rows). */
export function fundingFrom(coin: Coin, data: Json): FundingRow {
  return {
    coin,
    time: us(data.fundingTime, "fundingTime"),
    rate: decimal(data.fundingRate, "fundingRate"),
    markPrice: optional(data.markPrice, "markPrice"),
  };
}

/** /futures/data/openInterestHist row: `{sumOpenInterest, sumOpenInterestValue, timestamp}`. */
export function openInterestFrom(coin: Coin, data: Json): OpenInterestRow {
  return {
    coin,
    time: us(data.timestamp, "timestamp"),
    openInterest: decimal(data.sumOpenInterest, "sumOpenInterest"),
    openInterestValue: optional(data.sumOpenInterestValue, "sumOpenInterestValue"),
  };
}
