import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { MarketEvent } from "../../../src/domain/event.ts";
import { isoMicros } from "../../../src/domain/time.ts";
import { HAND_MARKET, insertHandMarket, makeTestApp, type TestApp } from "../../helpers/app.ts";
import { marketEvents } from "../../helpers/recorded-events.ts";

const SLUG = HAND_MARKET.slug;
// The market starts at 00:00:00; its events from 23:59:59 (two books), a change every 250 ms after.
const EVENTS = marketEvents(HAND_MARKET, { startMs: HAND_MARKET.startTime * 1000 - 1_000 });

/**
 * The book a reader of the messages would hold after `events`, written plainly: a book message's
 * levels, then each price change setting its price's size (0 removes it).
 */
function naiveBooks(events: MarketEvent[]) {
  const books = new Map<string, { bids: Map<number, number>; asks: Map<number, number> }>();
  for (const e of events) {
    const m = e.message as Record<string, unknown>;
    if (e.type === "book") {
      const side = (levels: unknown) =>
        new Map((levels as { price: string; size: string }[]).map((l) => [Number(l.price), Number(l.size)]));
      books.set(String(m.asset_id), { bids: side(m.bids), asks: side(m.asks) });
    }
    if (e.type === "price_change") {
      for (const c of m.price_changes as { asset_id: string; price: string; size: string; side: string }[]) {
        const book = books.get(c.asset_id);
        if (!book) continue;
        const side = c.side === "BUY" ? book.bids : book.asks;
        if (Number(c.size) === 0) side.delete(Number(c.price));
        else side.set(Number(c.price), Number(c.size));
      }
    }
  }
  const bestFirst = (book: { bids: Map<number, number>; asks: Map<number, number> }) => ({
    bids: [...book.bids].sort((a, b) => b[0] - a[0]).map(([price, size]) => ({ price, size })),
    asks: [...book.asks].sort((a, b) => a[0] - b[0]).map(([price, size]) => ({ price, size })),
  });
  return {
    up: bestFirst(books.get(HAND_MARKET.clobTokenUp)!),
    down: bestFirst(books.get(HAND_MARKET.clobTokenDown)!),
  };
}

let t: TestApp;
before(async () => {
  t = await makeTestApp({ seed: false });
  await insertHandMarket(t.store);
  const market = (await t.store.markets.getMarket(SLUG))!;
  await t.store.events.appendMarketEvents([{ marketKey: market.key, events: EVENTS }]);
});
after(() => t.close());

describe("GET /v1/markets/{slug}/book", () => {
  test("the book of both outcomes at any moment: every event received by then, applied in order", async () => {
    for (const n of [2, 7, 15]) {
      const at = EVENTS[n - 1].receivedUs;
      const res = await t.get(`/v1/markets/${SLUG}/book?time=${isoMicros(at)}`);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      const expected = naiveBooks(EVENTS.slice(0, n));
      assert.deepEqual(body.up.book, expected.up);
      assert.deepEqual(body.down.book, expected.down);
      assert.equal(body.up.token_id, HAND_MARKET.clobTokenUp);
      assert.equal(body.up.has_book, true);
      assert.equal(body.last_event_at, isoMicros(at));
      assert.equal(body.last_event_type, EVENTS[n - 1].type);
      assert.equal(body.requested_time, isoMicros(at));
    }
    // A microsecond before the third event, the book is the two books' alone.
    const before = await t.get(`/v1/markets/${SLUG}/book?time=${isoMicros(EVENTS[2].receivedUs - 1)}`);
    assert.deepEqual(before.json().up.book, naiveBooks(EVENTS.slice(0, 2)).up);
    // Epoch milliseconds too.
    const ms = Math.floor(EVENTS[5].receivedUs / 1000);
    const byMs = (await t.get(`/v1/markets/${SLUG}/book?time=${ms}`)).json();
    assert.deepEqual(byMs.up.book, naiveBooks(EVENTS.filter((e) => e.receivedUs <= ms * 1000)).up);
  });

  test("before the first event is a 404; a missing or bad time a 400", async () => {
    const early = await t.get(`/v1/markets/${SLUG}/book?time=${isoMicros(EVENTS[0].receivedUs - 1)}`);
    assert.equal(early.statusCode, 404);
    assert.match(early.json().error.message, /no event received at or before/);
    assert.equal((await t.get(`/v1/markets/${SLUG}/book`)).statusCode, 400);
    const bad = await t.get(`/v1/markets/${SLUG}/book?time=soon`);
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.details.parameter, "time");
  });
});

describe("GET /v1/markets/{slug}/snapshots/at where events exist", () => {
  test("the snapshot at exactly the time, from the events, with the coin price in effect", async () => {
    // HAND_MARKET's stored seconds: 00:00:00 (150.125) and 00:00:01.5 (150.13).
    const at = EVENTS[12].receivedUs; // 00:00:01.752235, after the second stored second
    const res = await t.get(`/v1/markets/${SLUG}/snapshots/at?time=${isoMicros(at)}&include_orderbook=true`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.distance_us, 0);
    assert.equal(body.snapshot.time, isoMicros(at));
    assert.equal(body.snapshot.coin_price, 150.13);
    const book = (await t.get(`/v1/markets/${SLUG}/book?time=${isoMicros(at)}`)).json();
    assert.deepEqual(body.snapshot.orderbook_up, book.up.book);
    assert.deepEqual(body.snapshot.orderbook_down, book.down.book);
    // Before the first stored snapshot it stays a 404, events or not.
    const early = await t.get(`/v1/markets/${SLUG}/snapshots/at?time=${isoMicros(EVENTS[3].receivedUs)}`);
    assert.equal(early.statusCode, 404);
  });
});
