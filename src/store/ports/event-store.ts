import type {
  BookIntegrity,
  CoinEvent,
  CoinEventTopic,
  MarketEvent,
  MarketEventType,
} from "../../domain/event.ts";
import type { Coin } from "../../domain/market.ts";
import type { SortOrder } from "../../domain/snapshot.ts";

/** Bounds on events' upstream `timestamp` (ms), both ends included; and which types. */
export interface EventRange {
  fromMs?: number;
  toMs?: number;
  /** Only these types; all when absent. */
  types?: readonly MarketEventType[];
}

export interface EventQuery extends EventRange {
  order: SortOrder;
  limit: number;
  offset: number;
}

/** One market's events of a batch written in one transaction. */
export interface MarketEventBatch {
  marketKey: number;
  events: MarketEvent[];
}

/** What a market's stored events cover. */
export interface EventSpan {
  count: number;
  firstReceivedUs: number;
  lastReceivedUs: number;
  firstTimestampMs: number;
  lastTimestampMs: number;
}

/**
 * Every market-channel message of a market, and the coin-price updates of each coin, stored in
 * compressed blocks (never a row per event). Implementations: dialects/sqlite/event-store.ts and
 * dialects/postgres/event-store.ts; one contract suite (test/contracts/event-store.ts) runs on each.
 *
 * Invariants every implementation keeps:
 * - order is receive order: `receivedUs`, then the order of arrival within one batch; it is the same
 *   on every implementation and for every reader (pages, streams, replay);
 * - an event is identified by its market, its receive time and its message (every field): appending
 *   it again is a no-op, so a replay, a restarted collector or an import of an overlapping file never
 *   duplicates;
 * - what is read back equals what was appended, field for field (decimal strings byte for byte);
 * - a stream holds at most a few blocks in memory, whatever the market's size.
 */
export interface EventStore {
  /** Appends the events of several markets in one transaction; returns how many were new. */
  appendMarketEvents(batch: MarketEventBatch[]): Promise<number>;
  countMarketEvents(marketKey: number, range?: EventRange): Promise<number>;
  /** One page of a market's events in receive order (or its reverse). */
  marketEventPage(marketKey: number, query: EventQuery): Promise<MarketEvent[]>;
  /** A market's events in receive order, a block at a time. */
  streamMarketEvents(marketKey: number, range?: EventRange): AsyncIterable<MarketEvent[]>;
  /** What the market's events cover; null when it has none. */
  marketEventSpan(marketKey: number): Promise<EventSpan | null>;
  /** The markets that have events, by key. */
  marketsWithEvents(): Promise<number[]>;

  /** Appends coin-price updates (several coins and topics at once); returns how many were new. */
  appendCoinEvents(events: CoinEvent[]): Promise<number>;
  /** One coin's updates of one topic whose `timestampMs` is within the range, in receive order. */
  streamCoinEvents(
    coin: Coin,
    topic: CoinEventTopic,
    range?: { fromMs?: number; toMs?: number },
  ): AsyncIterable<CoinEvent[]>;

  /** Adds to a market's book-integrity counts (DESIGN 3.10). */
  addBookIntegrity(marketKey: number, counts: BookIntegrity): Promise<void>;
  /** A market's book-integrity counts; null when none were ever counted. */
  bookIntegrity(marketKey: number): Promise<BookIntegrity | null>;
}
