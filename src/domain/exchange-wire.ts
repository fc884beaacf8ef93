import { decimalsOf, type Level, pow10 } from "./book.ts";
import { decodeBooks } from "./book-codec.ts";
import {
  type CandleRow,
  type DepthRow,
  type FundingRow,
  type MarkPriceRow,
  nextBucket,
  type OpenInterestRow,
  type TradeRow,
} from "./exchange.ts";
import type { Micros } from "./time.ts";

/**
 * The JSON shapes of the exchange endpoints (docs/api.md, "Spot and futures"). Binance's times are
 * milliseconds, so each record carries `time` as ISO 8601 UTC with milliseconds and `timestamp` as
 * epoch milliseconds (what Binance clients index by).
 */

/** `2026-07-24T00:20:34.123Z` */
export function isoMillis(us: Micros): string {
  return new Date(Math.floor(us / 1000)).toISOString();
}

export function epochMillis(us: Micros): number {
  return Math.floor(us / 1000);
}

/**
 * The midpoint of best bid and best ask, computed in integer ticks so that it prints as the decimal
 * it is (65000.015, not 65000.015000000004); the one side there is when the other is empty.
 */
export function midPrice(bids: Level[], asks: Level[]): number | null {
  const bid = bids[0]?.price;
  const ask = asks[0]?.price;
  if (bid === undefined || ask === undefined) return bid ?? ask ?? null;
  const d = Math.max(decimalsOf(bid, 12), decimalsOf(ask, 12), 0);
  const scale = pow10(d);
  return (Math.round(bid * scale) + Math.round(ask * scale)) / (2 * scale);
}

export interface DepthWire {
  time: string;
  timestamp: number;
  price: number | null;
  bids: Level[];
  asks: Level[];
}

export function depthToWire(row: DepthRow): DepthWire {
  const { bids, asks } = decodeBooks(row.books).up;
  return {
    time: isoMillis(row.time),
    timestamp: epochMillis(row.time),
    price: midPrice(bids, asks),
    bids,
    asks,
  };
}

export function tradeToWire(t: TradeRow) {
  return {
    id: t.id,
    time: isoMillis(t.time),
    timestamp: epochMillis(t.time),
    price: t.price,
    size: t.qty,
    side: t.buyerMaker ? "sell" : "buy",
    is_buyer_maker: t.buyerMaker,
  };
}

/** A stored 1m candle or an aggregated one: what the wire shows of either. */
export type CandleLike = Omit<CandleRow, "coin" | "venue" | "interval">;

export function candleToWire(interval: string, c: CandleLike) {
  const closeUs = nextBucket(interval, c.openTime) - 1000;
  return {
    open_time: isoMillis(c.openTime),
    close_time: isoMillis(closeUs),
    timestamp: epochMillis(c.openTime),
    open: c.open,
    high: c.high,
    low: c.low,
    close: c.close,
    volume: c.volume,
    quote_volume: c.quoteVolume,
    trades: c.trades,
    taker_buy_volume: c.takerBuyVolume,
    taker_buy_quote_volume: c.takerBuyQuoteVolume,
  };
}

export function fundingToWire(f: FundingRow) {
  return {
    time: isoMillis(f.time),
    timestamp: epochMillis(f.time),
    funding_rate: f.rate,
    mark_price: f.markPrice,
  };
}

export function openInterestToWire(o: OpenInterestRow) {
  return {
    time: isoMillis(o.time),
    timestamp: epochMillis(o.time),
    open_interest: o.openInterest,
    open_interest_value: o.openInterestValue,
  };
}

export function markPriceToWire(m: MarkPriceRow) {
  return {
    time: isoMillis(m.time),
    timestamp: epochMillis(m.time),
    mark_price: m.markPrice,
    index_price: m.indexPrice,
    estimated_settle_price: m.estimatedSettlePrice,
    funding_rate: m.fundingRate,
    next_funding_time: m.nextFundingTime === null ? null : isoMillis(m.nextFundingTime),
  };
}
