import { type Static, Type } from "typebox";
import { decimalsOf, type Level, pow10 } from "../domain/book.ts";
import { decodeBooks } from "./book-codec.ts";
import {
  type CandleRow,
  type DepthRow,
  type FundingRow,
  type MarkPriceRow,
  nextBucket,
  type OpenInterestRow,
  type TradeRow,
} from "../domain/exchange.ts";
import type { Micros } from "../domain/time.ts";
import { Nullable } from "./wire-schemas.ts";

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

const timeFields = {
  time: Type.String({ format: "date-time", description: "ISO 8601 UTC, millisecond precision" }),
  timestamp: Type.Integer({ description: "The same instant in epoch milliseconds" }),
};
const levels = (description: string) => Type.Array(Type.Ref("Level"), { description });

/** The exchange endpoints' records: the one definition of their shapes (route schemas, types, docs). */
export const DepthWireSchema = Type.Object(
  {
    ...timeFields,
    price: Nullable(Type.Number({ description: "Midpoint of best bid and best ask" })),
    bids: levels("Best (highest) first, up to 20"),
    asks: levels("Best (lowest) first, up to 20"),
  },
  { $id: "DepthSnapshot", additionalProperties: false },
);
export type DepthWire = Omit<Static<typeof DepthWireSchema>, "bids" | "asks"> & {
  bids: Level[];
  asks: Level[];
};

export const TradeWireSchema = Type.Object(
  {
    id: Type.Integer({ description: "Binance's trade id (spot) or aggregate trade id (futures)" }),
    ...timeFields,
    price: Type.Number(),
    size: Type.Number({ description: "Base asset quantity" }),
    side: Type.Enum(["buy", "sell"], { description: "The taker's side" }),
    is_buyer_maker: Type.Boolean(),
  },
  { $id: "Trade", additionalProperties: false },
);
export type TradeWire = Static<typeof TradeWireSchema>;

export const CandleWireSchema = Type.Object(
  {
    open_time: Type.String({ format: "date-time" }),
    close_time: Type.String({ format: "date-time", description: "Last millisecond of the candle" }),
    timestamp: Type.Integer({ description: "Open time in epoch milliseconds" }),
    open: Type.Number(),
    high: Type.Number(),
    low: Type.Number(),
    close: Type.Number(),
    volume: Type.Number({ description: "Base asset volume" }),
    quote_volume: Type.Number({ description: "USDT volume" }),
    trades: Type.Integer(),
    taker_buy_volume: Type.Number(),
    taker_buy_quote_volume: Type.Number(),
  },
  { $id: "Candle", additionalProperties: false },
);
export type CandleWire = Static<typeof CandleWireSchema>;

export const FundingRateWireSchema = Type.Object(
  { ...timeFields, funding_rate: Type.Number(), mark_price: Nullable(Type.Number()) },
  { $id: "FundingRate", additionalProperties: false },
);
export type FundingRateWire = Static<typeof FundingRateWireSchema>;

export const OpenInterestWireSchema = Type.Object(
  {
    ...timeFields,
    open_interest: Type.Number({ description: "Contracts (base asset)" }),
    open_interest_value: Nullable(Type.Number({ description: "USDT" })),
  },
  { $id: "OpenInterest", additionalProperties: false },
);
export type OpenInterestWire = Static<typeof OpenInterestWireSchema>;

export const MarkPriceWireSchema = Type.Object(
  {
    ...timeFields,
    mark_price: Type.Number(),
    index_price: Nullable(Type.Number()),
    estimated_settle_price: Nullable(Type.Number()),
    funding_rate: Nullable(Type.Number({ description: "The rate the next settlement would apply" })),
    next_funding_time: Nullable(Type.String({ format: "date-time" })),
  },
  { $id: "MarkPrice", additionalProperties: false },
);
export type MarkPriceWire = Static<typeof MarkPriceWireSchema>;

export const EXCHANGE_WIRE_SCHEMAS = [
  DepthWireSchema,
  TradeWireSchema,
  CandleWireSchema,
  FundingRateWireSchema,
  OpenInterestWireSchema,
  MarkPriceWireSchema,
];

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

export function tradeToWire(t: TradeRow): TradeWire {
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

export function candleToWire(interval: string, c: CandleLike): CandleWire {
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

export function fundingToWire(f: FundingRow): FundingRateWire {
  return {
    time: isoMillis(f.time),
    timestamp: epochMillis(f.time),
    funding_rate: f.rate,
    mark_price: f.markPrice,
  };
}

export function openInterestToWire(o: OpenInterestRow): OpenInterestWire {
  return {
    time: isoMillis(o.time),
    timestamp: epochMillis(o.time),
    open_interest: o.openInterest,
    open_interest_value: o.openInterestValue,
  };
}

export function markPriceToWire(m: MarkPriceRow): MarkPriceWire {
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
