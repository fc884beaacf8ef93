import type { Static } from "typebox";
import type { OrderBook } from "../domain/book.ts";
import { encodeBooks } from "./book-codec.ts";
import { writeBooksJson } from "./book-json.ts";
import { type BookTails, wasmBookWriter } from "./book-json-wasm.ts";
import { writeIsoMicros } from "./iso-bytes.ts";
import { JsonBytes } from "./json-bytes.ts";
import {
  type Coin,
  type FeeSchedule,
  type Market,
  type MarketType,
  type Outcome,
  parseCoin,
  parseMarketType,
  type Settlement,
  type SettlementSource,
  WINNERS,
  type Winner,
} from "../domain/market.ts";
import { settlementOf } from "../domain/settlement.ts";
import type { SnapshotRow } from "../domain/snapshot.ts";
import type { TradeRow } from "../domain/trade.ts";
import { isoMicros, isoSeconds, parseIsoMicros } from "../domain/time.ts";
import type { MarketWireSchema } from "./wire-schemas.ts";

/** The record as sent; the refs are spelled out as the domain's own types. */
export type MarketWire = Omit<
  Static<typeof MarketWireSchema>,
  "winner" | "market_type" | "coin" | "settlement" | "fee_schedule"
> & {
  winner: Winner | null;
  market_type: MarketType;
  coin: Coin;
  settlement: SettlementWire;
  fee_schedule: FeeScheduleWire | null;
};

export interface SettlementWire {
  source: SettlementSource;
  lookback_s: number | null;
}

export interface FeeScheduleWire {
  rate: number;
  exponent: number;
  taker_only: boolean;
  rebate_rate: number;
}

export function settlementToWire(s: Settlement): SettlementWire {
  return { source: s.source, lookback_s: s.lookbackS };
}

export function feeScheduleToWire(f: FeeSchedule | null): FeeScheduleWire | null {
  return f === null
    ? null
    : { rate: f.rate, exponent: f.exponent, taker_only: f.takerOnly, rebate_rate: f.rebateRate };
}

export function marketToWire(m: Market): MarketWire {
  return {
    slug: m.slug,
    winner: m.winner,
    market_id: m.marketId,
    event_id: m.eventId,
    market_type: m.marketType,
    start_time: isoSeconds(m.startTime),
    end_time: isoSeconds(m.endTime),
    coin_price_start: m.coinPriceStart,
    coin_price_end: m.coinPriceEnd,
    condition_id: m.conditionId,
    clob_token_up: m.clobTokenUp,
    clob_token_down: m.clobTokenDown,
    final_volume: m.finalVolume,
    final_liquidity: m.finalLiquidity,
    resolved_at: m.resolvedAt === null ? null : isoSeconds(m.resolvedAt),
    created_at: isoMicros(m.createdAt),
    updated_at: isoMicros(m.updatedAt),
    coin: m.coin,
    polymarket_slug: m.polymarketSlug,
    settlement: settlementToWire(m.settlement),
    fee_schedule: feeScheduleToWire(m.feeSchedule),
  };
}

export interface TradeWire {
  time: string;
  outcome: Outcome;
  token_id: string;
  side: "BUY" | "SELL";
  price: number;
  size: number;
  fee_rate_bps: number;
  transaction_hash: string | null;
}

export function tradeToWire(t: TradeRow, market: Pick<Market, "clobTokenUp" | "clobTokenDown">): TradeWire {
  return {
    time: isoMicros(t.time),
    outcome: t.outcome,
    token_id: t.outcome === "Up" ? market.clobTokenUp : market.clobTokenDown,
    side: t.side,
    price: t.price,
    size: t.size,
    fee_rate_bps: t.feeRateBps,
    transaction_hash: t.transactionHash,
  };
}

export class WireFormatError extends Error {}

/** Reads a trade in the wire shape (our export format) back into a stored row. */
export function tradeFromWire(w: Record<string, unknown>): TradeRow {
  const time = requireMicros(w.time, "time");
  if (w.outcome !== "Up" && w.outcome !== "Down") throw new WireFormatError("outcome must be Up or Down");
  if (w.side !== "BUY" && w.side !== "SELL") throw new WireFormatError("side must be BUY or SELL");
  const price = numberOrNull(w.price, "price");
  const size = numberOrNull(w.size, "size");
  const fee = numberOrNull(w.fee_rate_bps ?? 0, "fee_rate_bps");
  if (price === null || size === null || fee === null)
    throw new WireFormatError("price and size are required");
  const hash = w.transaction_hash ?? null;
  if (hash !== null && typeof hash !== "string")
    throw new WireFormatError("transaction_hash must be a string");
  return { time, outcome: w.outcome, side: w.side, price, size, feeRateBps: fee, transactionHash: hash };
}

function requireSeconds(text: unknown, field: string): number {
  const us = typeof text === "string" ? parseIsoMicros(text) : null;
  if (us === null) throw new WireFormatError(`${field} is not an ISO 8601 timestamp`);
  return Math.floor(us / 1_000_000);
}

function requireMicros(text: unknown, field: string): number {
  const us = typeof text === "string" ? parseIsoMicros(text) : null;
  if (us === null) throw new WireFormatError(`${field} is not an ISO 8601 timestamp`);
  return us;
}

function requireString(v: unknown, field: string): string {
  if (typeof v !== "string" || v === "") throw new WireFormatError(`${field} must be a non-empty string`);
  return v;
}

function numberOrNull(v: unknown, field: string): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== "number" || !Number.isFinite(v))
    throw new WireFormatError(`${field} must be a number or null`);
  return v;
}

/** Reads a market record in the wire shape (our export format) back into a Market. */
export function marketFromWire(w: Record<string, unknown>): Market {
  const coin = parseCoin(String(w.coin ?? String(w.slug ?? "").split("-")[0]));
  const marketType = parseMarketType(String(w.market_type));
  if (!coin) throw new WireFormatError("coin must be a coin code (2 to 12 letters and digits)");
  if (!marketType) throw new WireFormatError("market_type must be one of 5m, 15m, 1h, 4h, 24h");
  if (w.winner !== null && w.winner !== undefined && !WINNERS.includes(w.winner as Winner)) {
    throw new WireFormatError("winner must be Up, Down, 50-50 or null");
  }
  return {
    slug: requireString(w.slug, "slug"),
    polymarketSlug: typeof w.polymarket_slug === "string" ? w.polymarket_slug : null,
    coin,
    marketType,
    marketId: requireString(w.market_id, "market_id"),
    eventId: requireString(w.event_id, "event_id"),
    startTime: requireSeconds(w.start_time, "start_time"),
    endTime: requireSeconds(w.end_time, "end_time"),
    coinPriceStart: numberOrNull(w.coin_price_start, "coin_price_start"),
    coinPriceEnd: numberOrNull(w.coin_price_end, "coin_price_end"),
    conditionId: requireString(w.condition_id, "condition_id"),
    clobTokenUp: requireString(w.clob_token_up, "clob_token_up"),
    clobTokenDown: requireString(w.clob_token_down, "clob_token_down"),
    winner: (w.winner as Winner | null | undefined) ?? null,
    finalVolume: numberOrNull(w.final_volume, "final_volume"),
    finalLiquidity: numberOrNull(w.final_liquidity, "final_liquidity"),
    resolvedAt:
      w.resolved_at === null || w.resolved_at === undefined
        ? null
        : requireSeconds(w.resolved_at, "resolved_at"),
    createdAt: requireMicros(w.created_at, "created_at"),
    updatedAt: requireMicros(w.updated_at, "updated_at"),
    // Archives written before these fields existed: the type's feed, fees unknown.
    settlement:
      w.settlement === undefined ? settlementOf(marketType, null) : settlementFromWire(w.settlement),
    feeSchedule: w.fee_schedule === undefined ? null : feeScheduleFromWire(w.fee_schedule),
  };
}

function settlementFromWire(v: unknown): Settlement {
  const s = v as { source?: unknown; lookback_s?: unknown } | null;
  const source = s?.source;
  if (source !== "chainlink" && source !== "chainlink_twap" && source !== "binance") {
    throw new WireFormatError("settlement.source must be chainlink, chainlink_twap or binance");
  }
  const lookback = s?.lookback_s ?? null;
  if (lookback !== null && (typeof lookback !== "number" || !Number.isInteger(lookback) || lookback <= 0)) {
    throw new WireFormatError("settlement.lookback_s must be a positive integer or null");
  }
  return { source, lookbackS: lookback };
}

function feeScheduleFromWire(v: unknown): FeeSchedule | null {
  if (v === null) return null;
  const f = v as Record<string, unknown>;
  const number = (field: string) => {
    const n = numberOrNull(f[field], `fee_schedule.${field}`);
    if (n === null) throw new WireFormatError(`fee_schedule.${field} is required`);
    return n;
  };
  if (typeof f.taker_only !== "boolean")
    throw new WireFormatError("fee_schedule.taker_only must be true or false");
  return {
    rate: number("rate"),
    exponent: number("exponent"),
    takerOnly: f.taker_only,
    rebateRate: number("rebate_rate"),
  };
}

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const TIME_OPEN = ascii('{"time":"');
const COIN_PRICE = ascii('","coin_price":');
const PRICE_UP = ascii(',"price_up":');
const PRICE_DOWN = ascii(',"price_down":');
const ORDERBOOK_UP = ascii(',"orderbook_up":');
const ORDERBOOK_DOWN = ascii(',"orderbook_down":');
const EMPTY_BOOKS = ascii(',"orderbook_up":{"bids":[],"asks":[]},"orderbook_down":{"bids":[],"asks":[]}}');
const BOOK_TAILS: BookTails = { up: ORDERBOOK_UP, down: ORDERBOOK_DOWN, empty: EMPTY_BOOKS };

/**
 * Writes one snapshot as JSON bytes. With books, a snapshot whose books were not recorded carries two
 * empty books, so that every snapshot of a page has both (spec 4.1 rule 2).
 */
export function writeSnapshotJson(w: JsonBytes, row: SnapshotRow, withBooks: boolean): void {
  writeSnapshotHead(w, row);
  writeSnapshotTail(w, row.books, withBooks);
}

/**
 * The version of the snapshot JSON that stores keep rendered (writeSnapshotHead's bytes, kept per
 * block by store/rules/rendered-blocks.ts). A store keeps those bytes as a cache stamped with the
 * version that wrote them and renders a block again, on read and by `updown migrate`, when its stamp
 * is not this one. Bump it with any change to the bytes writeSnapshotHead writes (a field added,
 * renamed or formatted otherwise): the bump is all a store needs, no migration.
 */
export const RENDER_VERSION = 1;

/**
 * A snapshot's JSON up to its last price, without the closing brace: what every form of it shares.
 * Resolved markets keep this rendered (with the brace) beside their blocks (store/rules/rendered-blocks.ts).
 */
export function writeSnapshotHead(w: JsonBytes, row: SnapshotRow): void {
  w.bytes(TIME_OPEN);
  writeIsoMicros(w, row.time);
  w.bytes(COIN_PRICE);
  w.number(row.coinPrice);
  w.bytes(PRICE_UP);
  w.number(row.priceUp);
  w.bytes(PRICE_DOWN);
  w.number(row.priceDown);
}

/** What follows a snapshot's head: its books when asked for, and the closing brace. */
export function writeSnapshotTail(w: JsonBytes, books: Uint8Array | null, withBooks: boolean): void {
  if (!withBooks) {
    w.byte(125);
  } else if (!books) {
    w.bytes(EMPTY_BOOKS);
  } else {
    w.bytes(ORDERBOOK_UP);
    writeBooksJson(w, books, ORDERBOOK_DOWN);
    w.byte(125);
  }
}

/**
 * Seconds of a resolved market's block with their books, from their rendered heads (without the
 * closing brace) and book blobs: writeSnapshotTail's bytes after each head, comma-separated (a comma
 * before the first too when `comma`). Second k's head is `text[spans[4k], spans[4k + 1])`, its blob
 * `books[spans[4k + 2], spans[4k + 3])` (none when empty). Written by the WebAssembly
 * (book-json-wasm.ts) in one call for a block rather than a call per second; a second whose books it
 * does not take is written by `writeOne(k, comma)`. Answers false, having written nothing, where it
 * cannot run: the caller then writes every second.
 */
export function writeSecondsWithBooks(
  w: JsonBytes,
  text: string | Uint8Array,
  books: Uint8Array | null,
  spans: Int32Array,
  count: number,
  comma: boolean,
  writeOne: (k: number, comma: boolean) => void,
): boolean {
  return wasmBookWriter()?.seconds(w, text, books, spans, count, comma, BOOK_TAILS, writeOne) ?? false;
}

const snapshotScratch = new JsonBytes(1 << 14);

/** One snapshot as JSON text (writeSnapshotJson's bytes as a string). */
export function snapshotJson(row: SnapshotRow, withBooks: boolean): string {
  const w = snapshotScratch;
  w.reset();
  writeSnapshotJson(w, row, withBooks);
  return w.text();
}

function bookFromWire(v: unknown, field: string): OrderBook {
  const b = v as { bids?: unknown; asks?: unknown } | null;
  if (!b || !Array.isArray(b.bids) || !Array.isArray(b.asks))
    throw new WireFormatError(`${field} needs bids and asks`);
  const levels = (side: unknown[], name: string) =>
    side.map((l) => {
      const level = l as { price?: unknown; size?: unknown };
      if (typeof level.price !== "number" || typeof level.size !== "number") {
        throw new WireFormatError(`${field}.${name} levels need numeric price and size`);
      }
      return { price: level.price, size: level.size };
    });
  return { bids: levels(b.bids, "bids"), asks: levels(b.asks, "asks") };
}

/** Reads a snapshot in the wire shape back into a stored row (books re-encoded). */
export function snapshotFromWire(w: Record<string, unknown>): SnapshotRow {
  const time = requireMicros(w.time, "time");
  const coinPrice = numberOrNull(w.coin_price, "coin_price");
  const priceUp = numberOrNull(w.price_up, "price_up");
  const priceDown = numberOrNull(w.price_down, "price_down");
  if (coinPrice === null || priceUp === null || priceDown === null) {
    throw new WireFormatError("coin_price, price_up and price_down are required");
  }
  const hasBooks = w.orderbook_up !== undefined || w.orderbook_down !== undefined;
  const books = hasBooks
    ? encodeBooks(
        bookFromWire(w.orderbook_up, "orderbook_up"),
        bookFromWire(w.orderbook_down, "orderbook_down"),
      )
    : null;
  return { time, coinPrice, priceUp, priceDown, books };
}
