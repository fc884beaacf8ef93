import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { HAND_MARKET, insertHandMarket, makeTestApp, type TestApp } from "../../helpers/app.ts";

const MICRO_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const SECOND_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

interface Level {
  price: number;
  size: number;
}
interface Book {
  bids: Level[];
  asks: Level[];
}
interface Snapshot {
  time: string;
  coin_price: number;
  price_up: number;
  price_down: number;
  orderbook_up?: Book;
  orderbook_down?: Book;
}
interface Page {
  market: Record<string, unknown>;
  snapshots: Snapshot[];
  total: number;
  limit: number;
  offset: number;
}

let t: TestApp;
const RESOLVED = "btc-updown-5m-1784851800"; // 00:10-00:15, resolved before the anchor (00:20:34)
const LIVE = "btc-updown-5m-1784852400"; // contains the anchor

before(async () => {
  t = await makeTestApp();
  await insertHandMarket(t.store);
});
after(() => t.close());

async function page(url: string): Promise<Page> {
  const res = await t.get(url);
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as Page;
}

describe("GET /v1/markets/{slug}/snapshots", () => {
  test("returns the market record and snapshots with the spec's fields and types", async () => {
    const body = await page(`/v1/markets/${RESOLVED}/snapshots?limit=5`);
    assert.deepEqual(Object.keys(body), ["market", "snapshots", "total", "limit", "offset"]);
    assert.equal(body.market.slug, RESOLVED);
    assert.equal(body.market.winner === "Up" || body.market.winner === "Down", true);
    for (const f of ["market_id", "event_id", "condition_id", "clob_token_up", "clob_token_down"]) {
      assert.equal(typeof body.market[f], "string", f);
    }
    assert.match(body.market.market_id as string, /^\d+$/);
    assert.match(body.market.condition_id as string, /^0x[0-9a-f]{64}$/);
    assert.match(body.market.clob_token_up as string, /^\d+$/);
    assert.match(body.market.start_time as string, SECOND_ISO);
    assert.match(body.market.end_time as string, SECOND_ISO);
    assert.match(body.market.resolved_at as string, SECOND_ISO);
    assert.match(body.market.created_at as string, MICRO_ISO);
    assert.match(body.market.updated_at as string, MICRO_ISO);
    for (const f of ["coin_price_start", "coin_price_end", "final_volume", "final_liquidity"]) {
      assert.equal(typeof body.market[f], "number", f);
    }
    assert.equal(body.snapshots.length, 5);
    for (const s of body.snapshots) {
      assert.deepEqual(Object.keys(s), ["time", "coin_price", "price_up", "price_down"]);
      assert.match(s.time, MICRO_ISO);
      assert.equal(typeof s.coin_price, "number");
      assert.ok(s.price_up >= 0 && s.price_up <= 1);
      assert.ok(s.price_down >= 0 && s.price_down <= 1);
    }
  });

  test("defaults: limit 1000, offset 0, newest first, total over all snapshots", async () => {
    const body = await page(`/v1/markets/${RESOLVED}/snapshots`);
    assert.equal(body.limit, 1000);
    assert.equal(body.offset, 0);
    assert.equal(body.total, 300);
    assert.equal(body.snapshots.length, 300);
    assert.equal(body.snapshots[0].time, "2026-07-24T00:14:59.000000Z");
    assert.equal(body.snapshots[299].time, "2026-07-24T00:10:00.000000Z");
    const times = body.snapshots.map((s) => s.time);
    assert.deepEqual(times, [...times].sort().reverse());
    const small = await page(`/v1/markets/${RESOLVED}/snapshots?limit=10&offset=20`);
    assert.equal(small.total, 300, "total counts all snapshots, not the page");
    assert.equal(small.snapshots.length, 10);
  });

  test("order=asc gives oldest first", async () => {
    const body = await page(`/v1/markets/${RESOLVED}/snapshots?order=asc&limit=2`);
    assert.deepEqual(
      body.snapshots.map((s) => s.time),
      ["2026-07-24T00:10:00.000000Z", "2026-07-24T00:10:01.000000Z"],
    );
  });

  test("paging by offset until total returns every snapshot exactly once", async () => {
    for (const books of [false, true]) {
      const seen: string[] = [];
      let total = Number.POSITIVE_INFINITY;
      for (let offset = 0; offset < total; offset += 7) {
        const body = await page(
          `/v1/markets/${RESOLVED}/snapshots?limit=7&offset=${offset}&include_orderbook=${books}`,
        );
        total = body.total;
        seen.push(...body.snapshots.map((s) => s.time));
      }
      assert.equal(seen.length, 300);
      assert.equal(new Set(seen).size, 300);
    }
  });

  test("offset at or past total gives an empty page, not an error", async () => {
    for (const offset of [300, 301, 1_000_000]) {
      const body = await page(`/v1/markets/${RESOLVED}/snapshots?offset=${offset}`);
      assert.deepEqual(body.snapshots, []);
      assert.equal(body.total, 300);
      assert.equal(body.offset, offset);
    }
  });

  test("without include_orderbook no snapshot has books; with it every snapshot has both", async () => {
    for (const q of ["", "?include_orderbook=false"]) {
      const body = await page(`/v1/markets/${RESOLVED}/snapshots${q}`);
      assert.ok(body.snapshots.every((s) => !("orderbook_up" in s) && !("orderbook_down" in s)));
    }
    const body = await page(`/v1/markets/${RESOLVED}/snapshots?include_orderbook=true`);
    assert.equal(body.snapshots.length, 300);
    for (const s of body.snapshots) {
      assert.ok(s.orderbook_up && s.orderbook_down);
      for (const b of [s.orderbook_up, s.orderbook_down]) {
        assert.ok(Array.isArray(b.bids) && Array.isArray(b.asks));
        for (const l of [...b.bids, ...b.asks]) {
          assert.deepEqual(Object.keys(l), ["price", "size"]);
          assert.ok(l.price > 0 && l.price < 1 && l.size > 0);
        }
      }
    }
  });

  test("books are best first: bids descending, asks ascending; Down mirrors Up", async () => {
    const body = await page(`/v1/markets/${RESOLVED}/snapshots?include_orderbook=true&limit=50`);
    for (const s of body.snapshots) {
      for (const b of [s.orderbook_up!, s.orderbook_down!]) {
        for (let i = 1; i < b.bids.length; i++) assert.ok(b.bids[i - 1].price > b.bids[i].price);
        for (let i = 1; i < b.asks.length; i++) assert.ok(b.asks[i - 1].price < b.asks[i].price);
        assert.ok(b.bids[0].price < b.asks[0].price);
      }
      // 20 levels a side, fewer only where the tick range 0.01..0.99 runs out.
      const up = s.orderbook_up!;
      assert.equal(up.bids.length, Math.min(20, Math.round(up.bids[0].price * 100)));
      assert.equal(up.asks.length, Math.min(20, 100 - Math.round(up.asks[0].price * 100)));
      assert.equal(
        Math.round((1 - s.orderbook_up!.bids[0].price) * 100),
        Math.round(s.orderbook_down!.asks[0].price * 100),
      );
    }
  });

  test("the body is byte for byte the contract for a hand-written market", async () => {
    const res = await t.get(`/v1/markets/${HAND_MARKET.slug}/snapshots?include_orderbook=true`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "application/json; charset=utf-8");
    const market =
      '{"slug":"sol-updown-15m-1784851200","winner":"Up","market_id":"3047973","event_id":"901234","market_type":"15m",' +
      '"start_time":"2026-07-24T00:00:00Z","end_time":"2026-07-24T00:15:00Z","coin_price_start":150.125,"coin_price_end":150.5,' +
      '"condition_id":"0x36cb924e956b2d13bcafe194cb4c59fbd13d3cccbf1368b081d07924ab20f329",' +
      '"clob_token_up":"113284799581609751589891550166136992389699845333635525538167662371764318518311",' +
      '"clob_token_down":"48265563723288791013647874716778794965875981985781900232388978043327398639215",' +
      '"final_volume":87923.58,"final_liquidity":12000.5,"resolved_at":"2026-07-24T00:15:18Z",' +
      '"created_at":"2026-07-23T00:00:00.000001Z","updated_at":"2026-07-24T00:15:18.178216Z","coin":"sol","polymarket_slug":null,' +
      '"settlement":{"source":"chainlink","lookback_s":null},' +
      '"fee_schedule":{"rate":0.07,"exponent":1,"taker_only":true,"rebate_rate":0.2}}';
    const newest =
      '{"time":"2026-07-24T00:00:01.500000Z","coin_price":150.13,"price_up":0.525,"price_down":0.475,' +
      '"orderbook_up":{"bids":[],"asks":[]},"orderbook_down":{"bids":[],"asks":[]}}';
    const oldest =
      '{"time":"2026-07-24T00:00:00.000000Z","coin_price":150.125,"price_up":0.52,"price_down":0.48,' +
      '"orderbook_up":{"bids":[{"price":0.51,"size":120.5},{"price":0.5,"size":10}],"asks":[{"price":0.53,"size":7.25},{"price":0.54,"size":3}]},' +
      '"orderbook_down":{"bids":[{"price":0.47,"size":7.25},{"price":0.46,"size":3}],"asks":[{"price":0.49,"size":120.5},{"price":0.5,"size":10}]}}';
    assert.equal(
      res.body,
      `{"market":${market},"snapshots":[${newest},${oldest}],"total":2,"limit":1000,"offset":0}`,
    );
  });

  test("limit and offset are validated with a 400 naming the parameter", async () => {
    const cases: [string, string][] = [
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["limit=-5", "limit"],
      ["limit=1.5", "limit"],
      ["limit=abc", "limit"],
      ["offset=-1", "offset"],
      ["offset=2.5", "offset"],
      ["offset=x", "offset"],
      ["include_orderbook=maybe", "include_orderbook"],
      ["order=sideways", "order"],
      ["start_time=yesterday", "start_time"],
      ["start_time=2026-07-24T00:14:00Z&end_time=2026-07-24T00:11:00Z", "start_time"],
    ];
    for (const [q, parameter] of cases) {
      const res = await t.get(`/v1/markets/${RESOLVED}/snapshots?${q}`);
      assert.equal(res.statusCode, 400, q);
      const body = res.json();
      assert.equal(body.success, false);
      assert.equal(body.error.code, "VALIDATION_ERROR");
      assert.ok(body.error.message.startsWith(parameter), `${q}: ${body.error.message}`);
      assert.equal(body.error.details.parameter, parameter);
    }
    const ok = await page(`/v1/markets/${RESOLVED}/snapshots?limit=1&offset=0`);
    assert.equal(ok.snapshots.length, 1);
    const max = await page(`/v1/markets/${RESOLVED}/snapshots?limit=1000`);
    assert.equal(max.limit, 1000);
  });

  test("start_time and end_time bound the snapshots, inclusive, and total follows them", async () => {
    const body = await page(
      `/v1/markets/${RESOLVED}/snapshots?start_time=2026-07-24T00:11:00Z&end_time=${Date.UTC(2026, 6, 24, 0, 11, 9)}`,
    );
    assert.equal(body.total, 10);
    assert.equal(body.snapshots[0].time, "2026-07-24T00:11:09.000000Z");
    assert.equal(body.snapshots[9].time, "2026-07-24T00:11:00.000000Z");
  });

  test("unknown slug is a 404 in the envelope", async () => {
    const res = await t.get("/v1/markets/btc-updown-5m-1/snapshots");
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error.code, "RESOURCE_NOT_FOUND");
    assert.match(res.json().error.message, /btc-updown-5m-1/);
  });

  test("slugs are accepted in any case and with the 1hr spelling", async () => {
    const body = await page(`/v1/markets/${RESOLVED.toUpperCase()}/snapshots?limit=1`);
    assert.equal(body.market.slug, RESOLVED);
    const hourly = await page("/v1/markets/btc-updown-1hr-1784851200/snapshots?limit=1");
    assert.equal(hourly.market.slug, "btc-updown-1h-1784851200");
    const alias = hourly.market.polymarket_slug as string;
    assert.equal(alias, "bitcoin-up-or-down-july-23-2026-8pm-et");
    const byAlias = await page(`/v1/markets/${alias}/snapshots?limit=1`);
    assert.equal(byAlias.market.slug, "btc-updown-1h-1784851200");
  });

  test("a live market has null resolution fields and snapshots up to now", async () => {
    const body = await page(`/v1/markets/${LIVE}/snapshots?limit=1`);
    for (const f of ["winner", "coin_price_end", "final_volume", "final_liquidity", "resolved_at"]) {
      assert.equal(body.market[f], null, f);
    }
    assert.equal(typeof body.market.coin_price_start, "number");
    assert.equal(body.total, 35);
    assert.equal(body.snapshots[0].time, "2026-07-24T00:20:34.000000Z");
  });

  test("resolved pages carry an ETag and answer If-None-Match with 304; live pages do not", async () => {
    const first = await t.get(`/v1/markets/${RESOLVED}/snapshots?limit=3`);
    const etag = first.headers.etag as string;
    assert.match(etag, /^"[\w-]+"$/);
    const again = await t.get(`/v1/markets/${RESOLVED}/snapshots?limit=3`);
    assert.equal(again.body, first.body);
    assert.equal(again.headers.etag, etag);
    const revalidated = await t.get(`/v1/markets/${RESOLVED}/snapshots?limit=3`, { "if-none-match": etag });
    assert.equal(revalidated.statusCode, 304);
    assert.equal(revalidated.body, "");
    const other = await t.get(`/v1/markets/${RESOLVED}/snapshots?limit=4`);
    assert.notEqual(other.headers.etag, etag);
    const live = await t.get(`/v1/markets/${LIVE}/snapshots?limit=3`);
    assert.equal(live.headers.etag, undefined);
  });

  test("a live market's page shows snapshots added after an earlier request", async () => {
    const before = await page(`/v1/markets/${LIVE}/snapshots?limit=1`);
    const m = (await t.store.markets.getMarket(LIVE))!;
    await t.store.markets.insertSnapshots(m.key, [
      { time: 1784852435_000000, coinPrice: 1, priceUp: 0.5, priceDown: 0.5, books: null },
    ]);
    const later = await page(`/v1/markets/${LIVE}/snapshots?limit=1`);
    assert.equal(later.total, before.total + 1);
    assert.equal(later.snapshots[0].time, "2026-07-24T00:20:35.000000Z");
  });
});

describe("GET /v1/markets/{slug}/snapshots/at", () => {
  test("gives the latest snapshot at or before the time, with the distance", async () => {
    // The hand market has stored seconds but no events: the answer is a stored second.
    const slug = HAND_MARKET.slug;
    const res = await t.get(`/v1/markets/${slug}/snapshots/at?time=2026-07-24T00:00:01.750000Z`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.slug, slug);
    assert.equal(body.requested_time, "2026-07-24T00:00:01.750000Z");
    assert.equal(body.snapshot.time, "2026-07-24T00:00:01.500000Z");
    assert.equal(body.distance_us, 250_000);
    assert.equal(body.snapshot.orderbook_up, undefined);
    const withBooks = await t.get(
      `/v1/markets/${slug}/snapshots/at?time=${Date.UTC(2026, 6, 24, 0, 0, 0)}&include_orderbook=true`,
    );
    assert.equal(withBooks.json().distance_us, 0);
    assert.ok(withBooks.json().snapshot.orderbook_up.bids.length > 0);
  });

  test("a market with events is answered at exactly the time asked", async () => {
    const res = await t.get(`/v1/markets/${RESOLVED}/snapshots/at?time=2026-07-24T00:12:30.250000Z`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.snapshot.time, "2026-07-24T00:12:30.250000Z");
    assert.equal(body.distance_us, 0);
  });

  test("before the first snapshot is a 404; a missing or bad time a 400", async () => {
    const early = await t.get(`/v1/markets/${RESOLVED}/snapshots/at?time=2026-07-24T00:09:59Z`);
    assert.equal(early.statusCode, 404);
    assert.equal(early.json().error.code, "RESOURCE_NOT_FOUND");
    const missing = await t.get(`/v1/markets/${RESOLVED}/snapshots/at`);
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error.message, "time is required");
    const bad = await t.get(`/v1/markets/${RESOLVED}/snapshots/at?time=2026-13-01`);
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.details.parameter, "time");
  });
});
