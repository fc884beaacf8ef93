import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { HAND_MARKET, insertHandMarket, makeTestApp, type TestApp } from "../../helpers/app.ts";

let t: TestApp;
before(async () => {
  t = await makeTestApp();
  await insertHandMarket(t.store);
});
after(() => t.close());

interface MarketList {
  markets: { slug: string; start_time: string; coin: string; market_type: string; winner: string | null }[];
  total: number;
  limit: number;
  offset: number;
  warning: string | null;
}

async function list(q = ""): Promise<MarketList> {
  const res = await t.get(`/v1/markets${q}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as MarketList;
}

describe("GET /v1/markets", () => {
  test("lists every market newest first with total, limit, offset and warning", async () => {
    const body = await list();
    assert.deepEqual(Object.keys(body), ["markets", "total", "limit", "offset", "warning"]);
    // btc and eth: 3 x 5m + 2 x 15m + 1 x 1h + 1 x 4h each, plus the hand-written SOL market.
    assert.equal(body.total, 15);
    assert.equal(body.markets.length, 15);
    assert.equal(body.limit, 100);
    assert.equal(body.offset, 0);
    assert.equal(body.warning, null);
    const starts = body.markets.map((m) => m.start_time);
    assert.deepEqual(starts, [...starts].sort().reverse());
  });

  test("filters by coin (any case), market_type (with aliases) and resolved", async () => {
    const eth = await list("?coin=ETH");
    assert.equal(eth.total, 7);
    assert.ok(eth.markets.every((m) => m.coin === "eth"));
    const hourly = await list("?market_type=1hr");
    assert.deepEqual(
      hourly.markets.map((m) => m.slug),
      ["btc-updown-1h-1784851200", "eth-updown-1h-1784851200"],
    );
    const live = await list("?resolved=false");
    assert.ok(live.markets.every((m) => m.winner === null));
    assert.equal(live.total, 8);
    const resolved = await list("?resolved=true&coin=btc&market_type=5m");
    assert.deepEqual(
      resolved.markets.map((m) => m.slug),
      ["btc-updown-5m-1784852100", "btc-updown-5m-1784851800"],
    );
  });

  test("start_time and end_time select by market start, as ISO or epoch ms", async () => {
    const body = await list(`?start_time=2026-07-24T00:15:00Z&end_time=${Date.UTC(2026, 6, 24, 0, 15)}`);
    assert.deepEqual(body.markets.map((m) => m.slug).sort(), [
      "btc-updown-15m-1784852100",
      "btc-updown-5m-1784852100",
      "eth-updown-15m-1784852100",
      "eth-updown-5m-1784852100",
    ]);
  });

  test("pages with limit and offset", async () => {
    const all = await list();
    const first = await list("?limit=4");
    const second = await list("?limit=4&offset=4");
    assert.deepEqual(
      [...first.markets, ...second.markets].map((m) => m.slug),
      all.markets.slice(0, 8).map((m) => m.slug),
    );
    assert.equal(second.total, 15);
  });

  test("bad parameters are 400 VALIDATION_ERROR naming the parameter", async () => {
    for (const [q, parameter] of [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["offset=-1", "offset"],
      ["coin=pepe", "coin"],
      ["market_type=2m", "market_type"],
      ["resolved=perhaps", "resolved"],
      ["start_time=soon", "start_time"],
    ]) {
      const res = await t.get(`/v1/markets?${q}`);
      assert.equal(res.statusCode, 400, q);
      assert.equal(res.json().error.code, "VALIDATION_ERROR");
      assert.equal(res.json().error.details.parameter, parameter, q);
    }
  });
});

describe("GET /v1/markets/{slug}", () => {
  test("returns the market record itself", async () => {
    const res = await t.get(`/v1/markets/${HAND_MARKET.slug}`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.slug, HAND_MARKET.slug);
    assert.equal(body.created_at, "2026-07-23T00:00:00.000001Z");
    assert.equal(body.updated_at, "2026-07-24T00:15:18.178216Z");
    assert.equal(body.resolved_at, "2026-07-24T00:15:18Z");
    const fromSnapshots = (await t.get(`/v1/markets/${HAND_MARKET.slug}/snapshots?limit=1`)).json().market;
    assert.deepEqual(body, fromSnapshots);
  });

  test("unknown slug is 404 RESOURCE_NOT_FOUND", async () => {
    const res = await t.get("/v1/markets/doge-updown-5m-1784851200");
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error.code, "RESOURCE_NOT_FOUND");
  });
});
