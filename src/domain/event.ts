import type { Coin } from "./market.ts";
import type { Micros } from "./time.ts";

/**
 * Events: every message the upstream sends about a market (DESIGN 3.10), kept as it was sent. A
 * snapshot is a sample of them; the book at any moment, the trades and the replay are read from them.
 */

/** The market channel's message types we keep, in the upstream's spelling. */
export const MARKET_EVENT_TYPES = [
  "book",
  "price_change",
  "last_trade_price",
  "tick_size_change",
  "best_bid_ask",
  "market_resolved",
] as const;
export type MarketEventType = (typeof MARKET_EVENT_TYPES)[number];

export function isMarketEventType(text: string): text is MarketEventType {
  return (MARKET_EVENT_TYPES as readonly string[]).includes(text);
}

/**
 * One market-channel message as Polymarket sent it. `message` holds every field of the object the
 * upstream sent, values as it typed them (prices and sizes stay decimal strings such as "0.510"), so
 * that serving or replaying it gives the upstream's object back; `type` and `timestampMs` are read
 * from it once, for indexing.
 */
export interface MarketEvent {
  /** When our collector (or the archive's) received it, µs since the epoch. */
  receivedUs: Micros;
  /** The upstream's `timestamp` (ms since the epoch). */
  timestampMs: number;
  type: MarketEventType;
  message: Readonly<Record<string, unknown>>;
}

/** The real-time data socket's coin-price topics we keep (Chainlink instantaneous and its TWAPs). */
export const COIN_EVENT_TOPICS = [
  "crypto_prices_chainlink",
  "crypto_prices",
  "crypto_prices_twap_thirty",
  "crypto_prices_twap_sixty",
] as const;
export type CoinEventTopic = (typeof COIN_EVENT_TOPICS)[number];

/** One real-time-data-socket update of a coin's price, kept whole like a market event. */
export interface CoinEvent {
  coin: Coin;
  topic: CoinEventTopic;
  receivedUs: Micros;
  /** The update's own `timestamp` (ms): the socket's send time. */
  timestampMs: number;
  message: Readonly<Record<string, unknown>>;
}

/**
 * Book integrity of a market's events (DESIGN 3.10): the book rebuilt from a `book` message and the
 * deltas after it, compared with each later `book` message and with each `price_change` entry's best
 * bid and ask. Counted, never repaired.
 */
export interface BookIntegrity {
  bookMatches: number;
  bookMismatches: number;
  bestMatches: number;
  bestMismatches: number;
}

export const NO_INTEGRITY: BookIntegrity = {
  bookMatches: 0,
  bookMismatches: 0,
  bestMatches: 0,
  bestMismatches: 0,
};

export function addIntegrity(a: BookIntegrity, b: BookIntegrity): BookIntegrity {
  return {
    bookMatches: a.bookMatches + b.bookMatches,
    bookMismatches: a.bookMismatches + b.bookMismatches,
    bestMatches: a.bestMatches + b.bestMatches,
    bestMismatches: a.bestMismatches + b.bestMismatches,
  };
}

/**
 * Reads the type and timestamp of one market-channel object as the upstream sent it, or says why it
 * is not one (a frame may hold an array of them: each element is an event of its own).
 */
export function marketEventOf(
  message: Record<string, unknown>,
  receivedUs: Micros,
): MarketEvent | { problem: string } {
  const type = message.event_type;
  if (typeof type !== "string" || !isMarketEventType(type)) return { problem: `event_type ${String(type)}` };
  const ts = typeof message.timestamp === "string" ? Number(message.timestamp) : message.timestamp;
  if (typeof ts !== "number" || !Number.isSafeInteger(ts))
    return { problem: `timestamp ${String(message.timestamp)}` };
  return { receivedUs, timestampMs: ts, type, message };
}
