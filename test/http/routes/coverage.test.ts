import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { isoMicros } from "../../../src/domain/time.ts";
import { HAND_MARKET, insertHandMarket, makeTestApp, type TestApp } from "../../helpers/app.ts";
import { marketEvents, NEXT_MARKET } from "../../helpers/recorded-events.ts";

const EVENTS = marketEvents(HAND_MARKET);

let t: TestApp;
before(async () => {
  t = await makeTestApp({ seed: false });
  await insertHandMarket(t.store);
  await t.store.markets.upsertMarket(NEXT_MARKET);
  const market = (await t.store.markets.getMarket(HAND_MARKET.slug))!;
  await t.store.events.appendMarketEvents([{ marketKey: market.key, events: EVENTS }]);
  await t.store.events.addBookIntegrity(market.key, {
    bookMatches: 4,
    bookMismatches: 1,
    bestMatches: 30,
    bestMismatches: 2,
  });
});
after(() => t.close());

describe("GET /v1/markets/{slug}/coverage: events", () => {
  test("gives the span and count of the market's events and its book-integrity counts", async () => {
    const res = await t.get(`/v1/markets/${HAND_MARKET.slug}/coverage`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    const first = EVENTS[0];
    const last = EVENTS[EVENTS.length - 1];
    assert.deepEqual(body.events, {
      count: EVENTS.length,
      first_timestamp: isoMicros(first.timestampMs * 1000),
      last_timestamp: isoMicros(last.timestampMs * 1000),
      first_received_at: isoMicros(first.receivedUs),
      last_received_at: isoMicros(last.receivedUs),
    });
    assert.deepEqual(body.book_integrity, {
      book_matches: 4,
      book_mismatches: 1,
      best_matches: 30,
      best_mismatches: 2,
    });
    // The snapshot figures are as before.
    assert.equal(body.recorded_snapshots, 2);
  });

  test("a market without events says null for both", async () => {
    const body = (await t.get(`/v1/markets/${NEXT_MARKET.slug}/coverage`)).json();
    assert.equal(body.events, null);
    assert.equal(body.book_integrity, null);
  });
});

describe("GET /v1/markets/{slug}/coverage: sources", () => {
  test("says where the market's data came from, as marked; none before any mark", async () => {
    const sourcesOf = async (slug: string) => {
      // A resolved market's record is kept for a second: the next read is a second later.
      t.clock.advance(1_000_000);
      return (await t.get(`/v1/markets/${slug}/coverage`)).json().sources;
    };
    assert.deepEqual(await sourcesOf(NEXT_MARKET.slug), []);
    const next = (await t.store.markets.getMarket(NEXT_MARKET.slug))!;
    await t.store.markets.markSource(next.key, "gamma");
    assert.deepEqual(await sourcesOf(NEXT_MARKET.slug), ["gamma"]);
    const hand = (await t.store.markets.getMarket(HAND_MARKET.slug))!;
    await t.store.markets.markSource(hand.key, "pmxt");
    await t.store.markets.markSource(hand.key, "recorded");
    assert.deepEqual(await sourcesOf(HAND_MARKET.slug), ["recorded", "pmxt"]);
  });
});

describe("GET /v1/markets/{slug}/coverage: coin price source", () => {
  test("null for a market no import derived; an archive import's source once one did", async () => {
    assert.equal((await t.get(`/v1/markets/${NEXT_MARKET.slug}/coverage`)).json().coin_price_source, null);
    const market = (await t.store.markets.getMarket(NEXT_MARKET.slug))!;
    await t.store.imports.setCoinPriceSource(market.key, "binance_1s");
    t.clock.advance(1_000_000);
    const res = await t.get(`/v1/markets/${NEXT_MARKET.slug}/coverage`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().coin_price_source, "binance_1s");
  });
});
