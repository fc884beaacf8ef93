import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { displayedPrice } from "../../src/domain/book.ts";
import type { MarketEvent } from "../../src/domain/event.ts";
import type { SnapshotRow } from "../../src/domain/snapshot.ts";
import {
  bookAt,
  bookAtFromBlocks,
  deriveSnapshots,
  deriveSnapshotsFromBlocks,
  SnapshotDeriver,
} from "../../src/events/derive.ts";
import { encodeBooks } from "../../src/wire/book-codec.ts";
import { DOWN, eventStream, referenceBook, referenceRebuild, TOKENS, UP } from "../helpers/market-events.ts";

/**
 * The one rule from events to snapshots: the snapshot at T is the state after every event received at
 * or before T, checked against the naive reference rebuild at arbitrary times, in every form the rule
 * is offered (a list, store blocks, the book at a moment).
 */

/** The snapshot the rule gives at T, computed from the reference rebuild. */
function referenceSnapshot(events: MarketEvent[], time: number, coinPrice: number): SnapshotRow | null {
  const ref = referenceRebuild(events, time);
  const [up, down] = [ref[UP], ref[DOWN]];
  if (!up.hasBook || !down.hasBook) return null;
  const priceUp = displayedPrice(referenceBook(up), up.lastTradePrice);
  const priceDown = displayedPrice(referenceBook(down), down.lastTradePrice);
  if (priceUp === null || priceDown === null) return null;
  return { time, coinPrice, priceUp, priceDown, books: encodeBooks(referenceBook(up), referenceBook(down)) };
}

/** Ascending times around and between the events' receive times, equal ones included. */
function timesOf(events: MarketEvent[], picks: number[]): number[] {
  const candidates = [0, ...events.flatMap((e) => [e.receivedUs - 1, e.receivedUs, e.receivedUs + 1]), 9e15];
  return [...new Set(picks.map((p) => candidates[p % candidates.length]))].sort((a, b) => a - b);
}

function inBlocks(events: MarketEvent[], size: number): AsyncIterable<MarketEvent[]> {
  return (async function* () {
    for (let i = 0; i < events.length; i += size) yield events.slice(i, i + size);
  })();
}

const coinPriceAt = (t: number) => (t % 7 === 3 ? null : 60_000 + (t % 1000));

test("for random event streams, the snapshots derived at any times equal the reference rebuild's, in both streaming forms", async () => {
  await fc.assert(
    fc.asyncProperty(
      eventStream,
      fc.array(fc.nat(), { maxLength: 30 }),
      fc.integer({ min: 1, max: 7 }),
      async (events, picks, blockSize) => {
        const times = timesOf(events, picks);
        const expected = times.flatMap((t) => {
          const price = coinPriceAt(t);
          const row = price === null ? null : referenceSnapshot(events, t, price);
          return row ? [row] : [];
        });
        assert.deepEqual([...deriveSnapshots(events, TOKENS, times, coinPriceAt)], expected);
        const fromBlocks: SnapshotRow[] = [];
        for await (const row of deriveSnapshotsFromBlocks(
          inBlocks(events, blockSize),
          TOKENS,
          times,
          coinPriceAt,
        ))
          fromBlocks.push(row);
        assert.deepEqual(fromBlocks, expected);
      },
    ),
    { numRuns: 200 },
  );
});

test("for random event streams, the book at any time equals the reference rebuild, with the last event applied", async () => {
  await fc.assert(
    fc.asyncProperty(
      eventStream,
      fc.nat(),
      fc.integer({ min: 1, max: 5 }),
      async (events, pick, blockSize) => {
        const [time] = timesOf(events, [pick]);
        const ref = referenceRebuild(events, time);
        const at = bookAt(events, TOKENS, time);
        for (const [state, id] of [
          [at.up, UP],
          [at.down, DOWN],
        ] as const) {
          assert.deepEqual(state.book, referenceBook(ref[id]));
          assert.equal(state.lastTradePrice, ref[id].lastTradePrice);
          assert.equal(state.hasBook, ref[id].hasBook);
          assert.equal(state.tickSize, ref[id].tickSize);
        }
        const applied = events.filter((e) => e.receivedUs <= time);
        assert.equal(at.lastEvent, applied.at(-1) ?? null);
        assert.deepEqual(await bookAtFromBlocks(inBlocks(events, blockSize), TOKENS, time), at);
      },
    ),
    { numRuns: 200 },
  );
});

test("an event received exactly at T is in the snapshot at T; one a microsecond later is not", () => {
  const book = (id: string, bid: string): MarketEvent => ({
    receivedUs: 5_000_000,
    timestampMs: 4999,
    type: "book",
    message: {
      event_type: "book",
      asset_id: id,
      bids: [{ price: bid, size: "1" }],
      asks: [{ price: "0.6", size: "1" }],
      timestamp: "4999",
    },
  });
  const late: MarketEvent = {
    receivedUs: 5_000_001,
    timestampMs: 5000,
    type: "last_trade_price",
    message: {
      event_type: "last_trade_price",
      asset_id: UP,
      price: "0.9",
      side: "BUY",
      size: "1",
      timestamp: "5000",
    },
  };
  const events = [book(UP, "0.55"), book(DOWN, "0.3"), late];
  const deriver = new SnapshotDeriver(TOKENS, [4_999_999, 5_000_000, 5_000_001], () => 1);
  const out = events.flatMap((e) => deriver.push(e));
  assert.deepEqual(
    out.map((r) => r.time),
    [5_000_000],
    "no snapshot before both books; the one at T emitted once the later event arrives",
  );
  assert.equal(out[0].priceUp, 0.575);
  const rest = deriver.finish();
  // Down's spread is 0.3 wide: its price is the last trade (none yet, so its best bid) either way.
  assert.deepEqual(
    rest.map((r) => [r.time, r.priceUp]),
    [[5_000_001, 0.575]],
  );
  assert.equal(out[0].priceDown, 0.3);
  assert.throws(() => [...deriveSnapshots(events, TOKENS, [2, 1], () => 1)], /ascend/);
});
