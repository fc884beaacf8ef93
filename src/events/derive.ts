import { displayedPrice, type OrderBook } from "../domain/book.ts";
import type { MarketEvent } from "../domain/event.ts";
import type { SnapshotRow } from "../domain/snapshot.ts";
import type { Micros } from "../domain/time.ts";
import { BookEncodingError, encodeBooks } from "../wire/book-codec.ts";
import { EventBook, type MarketTokens, type TokenBook } from "./event-book.ts";

/**
 * THE rule from events to snapshots (DESIGN 3.10), wherever events exist (live recording, the demo,
 * the API's book and snapshot at a moment):
 *
 *   the book at time T (µs) is the state after applying, in receive order, every event of the market
 *   with `receivedUs <= T` (src/events/event-book.ts); the snapshot at T holds that book of both tokens
 *   (encoded with `encodeBooks`), each token's price by `displayedPrice` with the last trade price the
 *   events carried, and the coin price the caller supplies.
 *
 * There is no snapshot at T while a token has had no `book` yet, when a price cannot be displayed
 * (an empty book and no trade), or when the book cannot be encoded (`snapshotOf` throws
 * BookEncodingError: more decimals than the codec keeps). The live recorder takes its snapshot through `snapshotOf` at the
 * tick's time, with every event received up to then applied and none after, so a stored snapshot
 * equals the one derived again from the stored events.
 */

/** One token's state at a moment: its book best first, and what else the events said. */
export interface TokenState {
  book: OrderBook;
  lastTradePrice: number | null;
  tickSize: number | null;
  /** False until the token's first `book` message: until then its levels are not the upstream's. */
  hasBook: boolean;
}

export function tokenState(b: TokenBook): TokenState {
  return {
    book: b.toOrderBook(),
    lastTradePrice: b.lastTradePrice,
    tickSize: b.tickSize,
    hasBook: b.hasBook,
  };
}

/** The snapshot of a market's two tokens at `time`; null when there is none (see above). */
export function snapshotOf(
  up: TokenState,
  down: TokenState,
  time: Micros,
  coinPrice: number,
): SnapshotRow | null {
  if (!up.hasBook || !down.hasBook) return null;
  const priceUp = displayedPrice(up.book, up.lastTradePrice);
  const priceDown = displayedPrice(down.book, down.lastTradePrice);
  if (priceUp === null || priceDown === null) return null;
  return { time, coinPrice, priceUp, priceDown, books: encodeBooks(up.book, down.book) };
}

/** The coin price at a time, supplied by the caller; null leaves the time without a snapshot. */
export type CoinPriceAt = (time: Micros) => number | null;

/**
 * The streaming form: events in receive order go in (`push`), snapshots at ascending times come out
 * as soon as an event past them (or `finish`) shows that every event up to them was applied.
 */
export class SnapshotDeriver {
  readonly book: EventBook;
  private readonly times: Iterator<Micros>;
  private next: Micros | null;
  private readonly coinPriceAt: CoinPriceAt;

  /** `times` ascending (µs); each becomes a snapshot unless there is none at that time. */
  constructor(tokens: MarketTokens, times: Iterable<Micros>, coinPriceAt: CoinPriceAt) {
    this.book = new EventBook(tokens);
    this.times = times[Symbol.iterator]();
    this.coinPriceAt = coinPriceAt;
    this.next = this.advance(null);
  }

  /** Applies the next event; returns the snapshots of the times before it. */
  push(event: MarketEvent): SnapshotRow[] {
    const out = this.until(event.receivedUs);
    this.book.apply(event);
    return out;
  }

  /** No more events: the snapshots of the remaining times. */
  finish(): SnapshotRow[] {
    return this.until(Number.POSITIVE_INFINITY);
  }

  /** The snapshots of the times earlier than `receivedUs`. */
  private until(receivedUs: Micros): SnapshotRow[] {
    const out: SnapshotRow[] = [];
    while (this.next !== null && this.next < receivedUs) {
      const time = this.next;
      const coinPrice = this.coinPriceAt(time);
      const row = coinPrice === null ? null : this.snapshotAt(time, coinPrice);
      if (row) out.push(row);
      this.next = this.advance(time);
    }
    return out;
  }

  /** A book the codec cannot encode gives no snapshot, as live (where the second is a `bad_book` gap). */
  private snapshotAt(time: Micros, coinPrice: number): SnapshotRow | null {
    try {
      return snapshotOf(tokenState(this.book.up), tokenState(this.book.down), time, coinPrice);
    } catch (err) {
      if (err instanceof BookEncodingError) return null;
      throw err;
    }
  }

  private advance(previous: Micros | null): Micros | null {
    const r = this.times.next();
    if (r.done) return null;
    if (previous !== null && r.value <= previous) throw new Error("snapshot times must ascend");
    return r.value;
  }
}

/** The snapshots at ascending `times` from a market's events in receive order. */
export function* deriveSnapshots(
  events: Iterable<MarketEvent>,
  tokens: MarketTokens,
  times: Iterable<Micros>,
  coinPriceAt: CoinPriceAt,
): Generator<SnapshotRow> {
  const deriver = new SnapshotDeriver(tokens, times, coinPriceAt);
  for (const event of events) yield* deriver.push(event);
  yield* deriver.finish();
}

/** The same from blocks of events as the event store streams them (`streamMarketEvents`). */
export async function* deriveSnapshotsFromBlocks(
  blocks: AsyncIterable<readonly MarketEvent[]>,
  tokens: MarketTokens,
  times: Iterable<Micros>,
  coinPriceAt: CoinPriceAt,
): AsyncGenerator<SnapshotRow> {
  const deriver = new SnapshotDeriver(tokens, times, coinPriceAt);
  for await (const block of blocks) for (const event of block) yield* deriver.push(event);
  yield* deriver.finish();
}

/** The full book of both tokens at a moment, and the event that made it. */
export interface BookAt {
  up: TokenState;
  down: TokenState;
  /** The last event applied (receivedUs <= the time asked); null when there was none. */
  lastEvent: MarketEvent | null;
}

/**
 * The book of both tokens at `time` (µs): every event with `receivedUs <= time` applied in order.
 * `events` are the market's from its first (a book needs its token's `book` message and the changes
 * after it), in receive order; reading stops at the first event after `time`.
 */
export function bookAt(events: Iterable<MarketEvent>, tokens: MarketTokens, time: Micros): BookAt {
  const book = new EventBook(tokens);
  for (const event of events) {
    if (event.receivedUs > time) break;
    book.apply(event);
  }
  return stateOf(book);
}

/** `bookAt` over blocks as the event store streams them; stops reading after the block that passes `time`. */
export async function bookAtFromBlocks(
  blocks: AsyncIterable<readonly MarketEvent[]>,
  tokens: MarketTokens,
  time: Micros,
): Promise<BookAt> {
  const book = new EventBook(tokens);
  for await (const block of blocks) {
    for (const event of block) {
      if (event.receivedUs > time) return stateOf(book);
      book.apply(event);
    }
  }
  return stateOf(book);
}

function stateOf(book: EventBook): BookAt {
  return { up: tokenState(book.up), down: tokenState(book.down), lastEvent: book.last };
}
