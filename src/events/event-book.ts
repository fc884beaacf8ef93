import type { Level, OrderBook } from "../domain/book.ts";
import { addIntegrity, type BookIntegrity, type MarketEvent, NO_INTEGRITY } from "../domain/event.ts";

/**
 * The order book of a market's tokens rebuilt from the market channel's messages, in the order they
 * were received: the one book rule of the project, used live (the collector's market channel) and
 * offline (snapshots derived from stored events, the book at any moment, the demo's data).
 *
 * - `book` replaces a token's levels (and sets its tick size and last trade price when it carries them);
 * - a `price_change` entry sets the total size at one price (0 removes the level; BUY is the bid side);
 *   each entry names its token (`asset_id`); before September 2025 the message named it for all;
 * - `last_trade_price` sets the last trade price, `tick_size_change` the tick size;
 * - `best_bid_ask` and `market_resolved` change no level.
 *
 * Integrity (DESIGN 3.10), counted per token and never repaired: each `book` after the first is
 * compared with the book rebuilt until then, and each `price_change` entry's `best_bid` and `best_ask`
 * with the rebuilt best after applying it. A comparison is made only while the rebuilt book is
 * current: from a token's `book` on, until `invalidate` says messages may have been missed (the live
 * feed lost its connection; offline streams have no such moment).
 */

/** One token's book and what the channel said about it. */
export class TokenBook {
  private readonly bids = new Map<number, number>();
  private readonly asks = new Map<number, number>();
  private bestBid: number | null = null;
  private bestAsk: number | null = null;
  lastTradePrice: number | null = null;
  tickSize: number | null = null;
  /** A `book` message was applied: the levels are the upstream's, not a partial picture. */
  hasBook = false;
  /** The levels follow every message since a `book`: later messages can be compared with them. */
  private current = false;
  private counts: BookIntegrity = { ...NO_INTEGRITY };

  /** Replaces the levels with a `book` message's, comparing them first when the book is current. */
  replace(bids: readonly Level[], asks: readonly Level[]): void {
    if (this.current) {
      if (sameLevels(this.bids, bids) && sameLevels(this.asks, asks)) this.counts.bookMatches++;
      else this.counts.bookMismatches++;
    }
    this.bids.clear();
    this.asks.clear();
    for (const l of bids) if (l.size > 0) this.bids.set(l.price, l.size);
    for (const l of asks) if (l.size > 0) this.asks.set(l.price, l.size);
    this.bestBid = extreme(this.bids, Math.max);
    this.bestAsk = extreme(this.asks, Math.min);
    this.hasBook = true;
    this.current = true;
  }

  /** Sets the total size at a price; BUY is the bid side; 0 removes the level. */
  setLevel(side: "BUY" | "SELL", price: number, size: number): void {
    const bid = side === "BUY";
    const levels = bid ? this.bids : this.asks;
    const best = bid ? this.bestBid : this.bestAsk;
    if (size === 0) {
      levels.delete(price);
      if (price === best) {
        if (bid) this.bestBid = extreme(levels, Math.max);
        else this.bestAsk = extreme(levels, Math.min);
      }
      return;
    }
    levels.set(price, size);
    if (bid && (best === null || price > best)) this.bestBid = price;
    if (!bid && (best === null || price < best)) this.bestAsk = price;
  }

  /**
   * Compares a `price_change` entry's best bid and ask with the rebuilt ones (when the book is
   * current and the entry carries both). An empty side compares as 0 (bids) or as 0 or 1 (asks), the
   * values the upstream sends for a side without orders.
   */
  checkBest(bestBid: number, bestAsk: number): void {
    if (!this.current) return;
    const bidOk = bestBid === (this.bestBid ?? 0);
    const askOk = this.bestAsk === null ? bestAsk === 0 || bestAsk === 1 : bestAsk === this.bestAsk;
    if (bidOk && askOk) this.counts.bestMatches++;
    else this.counts.bestMismatches++;
  }

  /** Messages may have been missed (a lost connection): nothing is compared until the next `book`. */
  invalidate(): void {
    this.current = false;
  }

  /** The integrity counts so far. */
  get integrity(): BookIntegrity {
    return { ...this.counts };
  }

  /** The integrity counts since the last call (the collector adds them to the store each tick). */
  takeIntegrity(): BookIntegrity {
    const taken = this.counts;
    this.counts = { ...NO_INTEGRITY };
    return taken;
  }

  /** The book best first. */
  toOrderBook(): OrderBook {
    return {
      bids: sortedLevels(this.bids, (a, b) => b - a),
      asks: sortedLevels(this.asks, (a, b) => a - b),
    };
  }
}

/** A market's two tokens by outcome. */
export interface MarketTokens {
  up: string;
  down: string;
}

/**
 * Applies one market-channel message to the books of the tokens it names (`bookOf` gives the book of
 * a token, or nothing for a token not kept). Throws on a message that cannot be read; the entries of a
 * `price_change` before the bad one stay applied, here as everywhere the rule runs.
 */
export function applyMarketMessage(
  m: Readonly<Record<string, unknown>>,
  bookOf: (assetId: string) => TokenBook | undefined,
): void {
  switch (m.event_type) {
    case "book": {
      const book = bookOf(String(m.asset_id));
      if (!book) return;
      book.replace(levels(m.bids), levels(m.asks));
      if (m.last_trade_price !== undefined && m.last_trade_price !== "") {
        book.lastTradePrice = decimal(m.last_trade_price);
      }
      if (m.tick_size !== undefined) book.tickSize = decimal(m.tick_size);
      return;
    }
    case "price_change": {
      for (const entry of priceChangeEntries(m)) {
        const book = bookOf(String(entry.asset_id ?? m.asset_id));
        if (!book) continue;
        const side = entry.side === "BUY" ? "BUY" : entry.side === "SELL" ? "SELL" : null;
        if (side === null) throw new Error(`price_change side ${String(entry.side)}`);
        book.setLevel(side, decimal(entry.price), decimal(entry.size));
        if (present(entry.best_bid) && present(entry.best_ask)) {
          book.checkBest(decimal(entry.best_bid), decimal(entry.best_ask));
        }
      }
      return;
    }
    case "last_trade_price": {
      const book = bookOf(String(m.asset_id));
      if (book) book.lastTradePrice = decimal(m.price);
      return;
    }
    case "tick_size_change": {
      const book = bookOf(String(m.asset_id));
      if (book) book.tickSize = decimal(m.new_tick_size);
      return;
    }
    default:
      // best_bid_ask, market_resolved and types to come change no level.
      return;
  }
}

/** The entries of a `price_change`: `price_changes` since September 2025, `changes` before. */
function priceChangeEntries(m: Readonly<Record<string, unknown>>): Record<string, unknown>[] {
  const entries = Array.isArray(m.price_changes)
    ? m.price_changes
    : Array.isArray(m.changes)
      ? m.changes
      : [];
  return entries as Record<string, unknown>[];
}

/**
 * Every token a market-channel message is about: its `asset_id`, its `price_change` entries' tokens,
 * a `market_resolved`'s `assets_ids`. The collector files the message under each market they belong to.
 */
export function tokensOfMessage(m: Readonly<Record<string, unknown>>): string[] {
  const ids = new Set<string>();
  if (typeof m.asset_id === "string") ids.add(m.asset_id);
  for (const entry of priceChangeEntries(m)) if (typeof entry.asset_id === "string") ids.add(entry.asset_id);
  if (Array.isArray(m.assets_ids)) for (const id of m.assets_ids) if (typeof id === "string") ids.add(id);
  return [...ids];
}

/** The book of one market's two tokens rebuilt from its events, with its integrity counts. */
export class EventBook {
  readonly tokens: MarketTokens;
  readonly up = new TokenBook();
  readonly down = new TokenBook();
  /** Events applied so far. */
  applied = 0;
  /** Events that could not be read (applied up to the unreadable part, as live). */
  unreadable = 0;
  /** The last event applied. */
  last: MarketEvent | null = null;

  constructor(tokens: MarketTokens) {
    this.tokens = tokens;
  }

  /** Applies the next event in receive order. */
  apply(event: MarketEvent): void {
    this.applied++;
    this.last = event;
    try {
      applyMarketMessage(event.message, (id) => this.bookOf(id));
    } catch {
      this.unreadable++;
    }
  }

  bookOf(assetId: string): TokenBook | undefined {
    return assetId === this.tokens.up ? this.up : assetId === this.tokens.down ? this.down : undefined;
  }

  get integrity(): BookIntegrity {
    return addIntegrity(this.up.integrity, this.down.integrity);
  }
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null && v !== "";
}

/** Upstream numbers are decimal strings ("0.51"); Number() gives the nearest double, as the codec expects. */
export function decimal(v: unknown): number {
  const n = typeof v === "string" ? Number(v) : typeof v === "number" ? v : Number.NaN;
  // Number("") and Number("  ") are 0: only a 0 can be such a string (trimmed only then).
  if (!Number.isFinite(n) || (n === 0 && typeof v === "string" && v.trim() === "")) {
    throw new Error(`not a decimal: ${JSON.stringify(v)}`);
  }
  return n;
}

function levels(v: unknown): Level[] {
  if (!Array.isArray(v)) throw new Error("book side is not a list");
  return v.map((l: Record<string, unknown>) => ({ price: decimal(l.price), size: decimal(l.size) }));
}

/** The same non-empty levels, whatever order the message lists them in. */
function sameLevels(kept: ReadonlyMap<number, number>, sent: readonly Level[]): boolean {
  let n = 0;
  for (const l of sent) {
    if (l.size === 0) continue;
    n++;
    if (kept.get(l.price) !== l.size) return false;
  }
  return n === kept.size;
}

function extreme(levels: ReadonlyMap<number, number>, pick: (a: number, b: number) => number): number | null {
  let best: number | null = null;
  for (const price of levels.keys()) best = best === null ? price : pick(best, price);
  return best;
}

function sortedLevels(levels: Map<number, number>, order: (a: number, b: number) => number): Level[] {
  return [...levels.keys()].sort(order).map((price) => ({ price, size: levels.get(price) as number }));
}
