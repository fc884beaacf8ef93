import fc from "fast-check";
import type { Level, OrderBook } from "../../src/domain/book.ts";
import type { MarketEvent } from "../../src/domain/event.ts";

/**
 * Random market-channel event streams of one market's two tokens, for property tests of the book
 * rebuilt from events, and a naive reference rebuild written plainly (lists of levels, searched and
 * filtered), independent of src/events.
 */

export const UP = "111";
export const DOWN = "222";
export const TOKENS = { up: UP, down: DOWN };

const price = fc.integer({ min: 31, max: 60 }).map((n) => n / 100);
/** The ways the upstream writes a decimal: "0.45", ".45", "0.450". */
const priceText = fc
  .tuple(price, fc.constantFrom(0, 1, 2))
  .map(([p, style]) => (style === 0 ? String(p) : style === 1 ? String(p).replace(/^0/, "") : p.toFixed(3)));
const sizeText = fc.oneof(
  fc.constant("0"),
  fc.integer({ min: 1, max: 50_000 }).map((n) => String(n / 100)),
);
const token = fc.constantFrom(UP, DOWN, "999");
const side = fc.constantFrom("BUY", "SELL");

const levelsText = fc.array(fc.record({ price: priceText, size: sizeText }), { maxLength: 8 });

const bookMessage = fc.record({
  event_type: fc.constant("book"),
  asset_id: token,
  market: fc.constant("0xm"),
  bids: levelsText,
  asks: levelsText,
  hash: fc.constant("0x0"),
  tick_size: fc.constantFrom("0.01", "0.001"),
  last_trade_price: fc.oneof(fc.constant(""), priceText),
});

const priceChangeEntry = fc.record({
  asset_id: token,
  price: priceText,
  side,
  size: sizeText,
  hash: fc.constant("h"),
});
const priceChangeNew = fc.record({
  event_type: fc.constant("price_change"),
  market: fc.constant("0xm"),
  price_changes: fc.array(priceChangeEntry, { minLength: 1, maxLength: 4 }),
});
/** Before September 2025 the message named the token and listed `changes`. */
const priceChangeOld = fc.record({
  event_type: fc.constant("price_change"),
  asset_id: token,
  market: fc.constant("0xm"),
  changes: fc.array(fc.record({ price: priceText, side, size: sizeText }), { minLength: 1, maxLength: 4 }),
});
const lastTrade = fc.record({
  event_type: fc.constant("last_trade_price"),
  asset_id: token,
  price: priceText,
  side,
  size: fc.constant("10"),
  fee_rate_bps: fc.constant("0"),
});
const tickSizeChange = fc.record({
  event_type: fc.constant("tick_size_change"),
  asset_id: token,
  old_tick_size: fc.constant("0.01"),
  new_tick_size: fc.constantFrom("0.01", "0.001"),
});
const bestBidAsk = fc.record({
  event_type: fc.constant("best_bid_ask"),
  asset_id: token,
  best_bid: priceText,
  best_ask: priceText,
  spread: fc.constant("0.01"),
});
const resolved = fc.record({
  event_type: fc.constant("market_resolved"),
  assets_ids: fc.constant([UP, DOWN]),
  winning_asset_id: fc.constantFrom(UP, DOWN),
});

const message = fc.oneof(
  { arbitrary: bookMessage, weight: 2 },
  { arbitrary: priceChangeNew, weight: 5 },
  { arbitrary: priceChangeOld, weight: 1 },
  { arbitrary: lastTrade, weight: 2 },
  { arbitrary: tickSizeChange, weight: 1 },
  { arbitrary: bestBidAsk, weight: 1 },
  { arbitrary: resolved, weight: 1 },
);

/** A stream in receive order: receive times ascending, several events sharing one time now and then. */
export const eventStream: fc.Arbitrary<MarketEvent[]> = fc
  .array(fc.tuple(message, fc.integer({ min: 0, max: 3 })), { maxLength: 60 })
  .map((items) => {
    let us = 1_000_000;
    return items.map(([m, step], i) => {
      us += step * 1000;
      const timestampMs = Math.floor(us / 1000) - 5;
      const msg = { ...m, timestamp: String(timestampMs), n: i } as Record<string, unknown>;
      return { receivedUs: us, timestampMs, type: m.event_type, message: msg } as MarketEvent;
    });
  });

/** A token's state as the naive rebuild keeps it. */
export interface ReferenceToken {
  bids: Level[];
  asks: Level[];
  lastTradePrice: number | null;
  tickSize: number | null;
  hasBook: boolean;
}

/**
 * The plain reading of the protocol: a `book` replaces the token's lists, a change entry drops the
 * level at its price and adds it back unless its size is 0, a trade sets the last trade price.
 */
export function referenceRebuild(
  events: readonly MarketEvent[],
  upTo: number,
): Record<string, ReferenceToken> {
  const tokens: Record<string, ReferenceToken> = {};
  for (const id of [UP, DOWN])
    tokens[id] = { bids: [], asks: [], lastTradePrice: null, tickSize: null, hasBook: false };
  for (const e of events) {
    if (e.receivedUs > upTo) break;
    const m = e.message as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- generated messages, shapes known above
    if (m.event_type === "book") {
      const t = tokens[m.asset_id];
      if (!t) continue;
      const read = (ls: { price: string; size: string }[]) =>
        ls.map((l) => ({ price: Number(l.price), size: Number(l.size) })).filter((l) => l.size !== 0);
      // A price listed twice: the later listing stands.
      t.bids = dedupe(read(m.bids));
      t.asks = dedupe(read(m.asks));
      t.hasBook = true;
      if (m.last_trade_price !== "") t.lastTradePrice = Number(m.last_trade_price);
      t.tickSize = Number(m.tick_size);
    } else if (m.event_type === "price_change") {
      const entries = m.price_changes ?? m.changes;
      for (const c of entries) {
        const t = tokens[c.asset_id ?? m.asset_id];
        if (!t) continue;
        const list = c.side === "BUY" ? "bids" : "asks";
        t[list] = t[list].filter((l) => l.price !== Number(c.price));
        if (Number(c.size) !== 0) t[list].push({ price: Number(c.price), size: Number(c.size) });
      }
    } else if (m.event_type === "last_trade_price") {
      const t = tokens[m.asset_id];
      if (t) t.lastTradePrice = Number(m.price);
    } else if (m.event_type === "tick_size_change") {
      const t = tokens[m.asset_id];
      if (t) t.tickSize = Number(m.new_tick_size);
    }
  }
  return tokens;
}

function dedupe(levels: Level[]): Level[] {
  const out: Level[] = [];
  for (const l of levels) {
    const i = out.findIndex((o) => o.price === l.price);
    if (i >= 0) out.splice(i, 1);
    out.push(l);
  }
  return out;
}

export function referenceBook(t: ReferenceToken): OrderBook {
  return {
    bids: [...t.bids].sort((a, b) => b.price - a.price),
    asks: [...t.asks].sort((a, b) => a.price - b.price),
  };
}
