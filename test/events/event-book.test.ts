import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import type { MarketEvent } from "../../src/domain/event.ts";
import { EventBook, tokensOfMessage } from "../../src/events/event-book.ts";
import { DOWN, eventStream, referenceBook, referenceRebuild, TOKENS, UP } from "../helpers/market-events.ts";
import { protocolFixture } from "../helpers/polymarket-upstream.ts";

/**
 * The book of a market's two tokens rebuilt from its events: equal at every moment to a naive
 * reference rebuild, and its integrity counted on streams made to disagree with themselves.
 */

test("for random event streams, the book rebuilt after any prefix equals the naive reference rebuild", () => {
  fc.assert(
    fc.property(eventStream, (events) => {
      const book = new EventBook(TOKENS);
      for (const [i, e] of events.entries()) {
        book.apply(e);
        // Compare after every event (a prefix is the book at that event's receive time only when the
        // next event is later; the reference cut is by position here).
        const ref = referenceRebuild(events.slice(0, i + 1), Number.POSITIVE_INFINITY);
        for (const [id, t] of [
          [UP, book.up],
          [DOWN, book.down],
        ] as const) {
          assert.deepEqual(t.toOrderBook(), referenceBook(ref[id]));
          assert.equal(t.lastTradePrice, ref[id].lastTradePrice);
          assert.equal(t.tickSize, ref[id].tickSize);
          assert.equal(t.hasBook, ref[id].hasBook);
        }
      }
      assert.equal(book.unreadable, 0);
      assert.equal(book.applied, events.length);
    }),
    { numRuns: 300 },
  );
});

let clock = 1_000_000;
function event(message: Record<string, unknown>): MarketEvent {
  clock += 1000;
  return {
    receivedUs: clock,
    timestampMs: Math.floor(clock / 1000),
    type: message.event_type as MarketEvent["type"],
    message: { ...message, timestamp: String(Math.floor(clock / 1000)) },
  };
}

function book(id: string, bids: [string, string][], asks: [string, string][]): MarketEvent {
  const side = (ls: [string, string][]) => ls.map(([price, size]) => ({ price, size }));
  return event({
    event_type: "book",
    asset_id: id,
    market: "0xm",
    bids: side(bids),
    asks: side(asks),
    hash: "0x0",
  });
}

function change(
  id: string,
  s: "BUY" | "SELL",
  price: string,
  size: string,
  best?: [string, string],
): MarketEvent {
  const entry = {
    asset_id: id,
    price,
    side: s,
    size,
    hash: "h",
    ...(best ? { best_bid: best[0], best_ask: best[1] } : {}),
  };
  return event({ event_type: "price_change", market: "0xm", price_changes: [entry] });
}

test("integrity: a later book equal to the rebuilt one matches, a different one is counted and replaces the levels as sent", () => {
  const b = new EventBook(TOKENS);
  // Bids ascending, asks descending: the upstream's order, which does not matter to the comparison.
  b.apply(
    book(
      UP,
      [
        ["0.40", "10"],
        ["0.45", "5"],
      ],
      [
        ["0.60", "7"],
        ["0.55", "3"],
      ],
    ),
  );
  b.apply(book(DOWN, [["0.40", "1"]], [["0.60", "1"]]));
  assert.deepEqual(
    b.integrity,
    { bookMatches: 0, bookMismatches: 0, bestMatches: 0, bestMismatches: 0 },
    "first books are not compared",
  );
  b.apply(change(UP, "BUY", "0.46", "8", ["0.46", "0.55"]));
  b.apply(change(UP, "SELL", "0.55", "0", ["0.46", "0.6"]));
  assert.deepEqual(b.integrity, { bookMatches: 0, bookMismatches: 0, bestMatches: 2, bestMismatches: 0 });
  b.apply(
    book(
      UP,
      [
        ["0.4", "10"],
        ["0.45", "5.0"],
        ["0.46", "8"],
      ],
      [["0.60", "7"]],
    ),
  );
  assert.equal(b.integrity.bookMatches, 1);
  // The upstream's best disagrees with the rebuilt book: counted, and the level is set as the entry says.
  b.apply(change(UP, "BUY", "0.47", "2", ["0.48", "0.60"]));
  assert.equal(b.integrity.bestMismatches, 1);
  assert.equal(b.up.toOrderBook().bids[0].price, 0.47);
  // A book missing the 0.47 level: a mismatch, and the levels become the book's, never repaired.
  b.apply(
    book(
      UP,
      [
        ["0.40", "10"],
        ["0.45", "5"],
        ["0.46", "8"],
      ],
      [["0.60", "7"]],
    ),
  );
  assert.deepEqual(b.integrity, { bookMatches: 1, bookMismatches: 1, bestMatches: 2, bestMismatches: 1 });
  assert.deepEqual(b.up.toOrderBook(), {
    bids: [
      { price: 0.46, size: 8 },
      { price: 0.45, size: 5 },
      { price: 0.4, size: 10 },
    ],
    asks: [{ price: 0.6, size: 7 }],
  });
  // An entry without best bid and ask is not compared; the Down token counts on its own.
  b.apply(change(DOWN, "SELL", "0.59", "4"));
  b.apply(change(DOWN, "SELL", "0.58", "4", ["0.40", "0.58"]));
  b.apply(
    book(
      DOWN,
      [["0.40", "1"]],
      [
        ["0.60", "1"],
        ["0.59", "4"],
        ["0.58", "4"],
      ],
    ),
  );
  assert.deepEqual(b.integrity, { bookMatches: 2, bookMismatches: 1, bestMatches: 3, bestMismatches: 1 });
});

test("integrity: an emptied side compares with the upstream's 0 (bids) and 1 (asks); nothing is compared before a token's first book or after invalidate", () => {
  const b = new EventBook(TOKENS);
  b.apply(change(UP, "BUY", "0.5", "1", ["0.5", "1"]));
  assert.equal(b.integrity.bestMatches + b.integrity.bestMismatches, 0, "no book yet");
  b.apply(book(UP, [["0.50", "1"]], [["0.52", "1"]]));
  b.apply(change(UP, "SELL", "0.52", "0", ["0.5", "1"]));
  b.apply(change(UP, "BUY", "0.50", "0", ["0", "1"]));
  assert.deepEqual(b.integrity, { bookMatches: 0, bookMismatches: 0, bestMatches: 2, bestMismatches: 0 });
  b.up.invalidate();
  b.apply(change(UP, "BUY", "0.3", "1", ["0.9", "0.95"]));
  b.apply(book(UP, [["0.10", "1"]], []));
  assert.deepEqual(b.integrity, { bookMatches: 0, bookMismatches: 0, bestMatches: 2, bestMismatches: 0 });
  b.apply(change(UP, "BUY", "0.3", "1", ["0.9", "0.95"]));
  assert.equal(b.integrity.bestMismatches, 1, "compared again after the next book");
});

test("the protocol fixtures: a captured book, a price change and a trade apply; an unreadable message is counted and skipped", () => {
  const captured = protocolFixture("ws-market-book-captured.json");
  const id = String(captured.asset_id);
  const b = new EventBook({ up: id, down: "other" });
  b.apply({ receivedUs: 1, timestampMs: 1, type: "book", message: captured });
  const ob = b.up.toOrderBook();
  assert.equal(ob.bids.length, (captured.bids as unknown[]).length);
  assert.equal(ob.bids[0].price, 0.07, "best bid first");
  assert.equal(b.up.lastTradePrice, 0.92);
  assert.equal(b.up.tickSize, 0.01);
  const pc = protocolFixture("ws-market-price-change.json");
  const pcId = String((pc.price_changes as Record<string, unknown>[])[0].asset_id);
  const b2 = new EventBook({ up: pcId, down: "x" });
  b2.apply({
    receivedUs: 1,
    timestampMs: 1,
    type: "book",
    message: { event_type: "book", asset_id: pcId, bids: [], asks: [{ price: "0.52", size: "1" }] },
  });
  b2.apply({ receivedUs: 2, timestampMs: 2, type: "price_change", message: pc });
  assert.deepEqual(b2.up.toOrderBook().bids, [{ price: 0.51, size: 150 }]);
  assert.deepEqual(b2.integrity.bestMatches, 1);
  b2.apply({
    receivedUs: 3,
    timestampMs: 3,
    type: "last_trade_price",
    message: { ...protocolFixture("ws-market-last-trade-price.json"), asset_id: pcId },
  });
  assert.equal(b2.up.lastTradePrice, 0.51);
  b2.apply({
    receivedUs: 4,
    timestampMs: 4,
    type: "price_change",
    message: {
      event_type: "price_change",
      price_changes: [{ asset_id: pcId, side: "UP", price: "0.1", size: "1" }],
    },
  });
  assert.equal(b2.unreadable, 1);
  assert.deepEqual(b2.up.toOrderBook().bids, [{ price: 0.51, size: 150 }]);
});

test("tokensOfMessage names every token a message is about", () => {
  assert.deepEqual(tokensOfMessage(protocolFixture("ws-market-resolved.json")).length, 2);
  assert.deepEqual(
    tokensOfMessage({
      event_type: "price_change",
      price_changes: [{ asset_id: "a" }, { asset_id: "b" }, { asset_id: "a" }],
    }),
    ["a", "b"],
  );
  assert.deepEqual(
    tokensOfMessage({ event_type: "price_change", asset_id: "c", changes: [{ price: "0.1" }] }),
    ["c"],
  );
});
