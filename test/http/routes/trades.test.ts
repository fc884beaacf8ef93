import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { loadPlans } from "../../../src/access/plans.ts";
import type { TradeRow } from "../../../src/domain/trade.ts";
import { isoMicros, ManualClock } from "../../../src/domain/time.ts";
import { ANCHOR, HAND_MARKET, makeTestApp, type TestApp } from "../../helpers/app.ts";

/**
 * What the catalog and trades add to the API: a 50-50 market served as it is, a market's
 * trades page by page, the series catalog counting exactly what the store holds, and the coins and
 * their plan windows as configuration.
 */

let t: TestApp;
before(async () => {
  t = await makeTestApp();
});
after(() => t.close());

describe("a 50-50 resolution", () => {
  test("is stored and served as it is, field by field, never turned into Up or Down", async () => {
    const split = {
      ...HAND_MARKET,
      slug: "btc-updown-24h-1784822400",
      polymarketSlug: "bitcoin-up-or-down-on-july-24-2026",
      coin: "btc",
      marketType: "24h" as const,
      startTime: 1784822400,
      endTime: 1784908800,
      coinPriceStart: 65000.5,
      coinPriceEnd: 65000.5,
      winner: "50-50" as const,
      resolvedAt: 1784908861,
      settlement: { source: "binance" as const, lookbackS: null },
    };
    await t.store.markets.upsertMarket(split);
    const res = await t.get("/v1/markets/bitcoin-up-or-down-on-july-24-2026");
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      slug: "btc-updown-24h-1784822400",
      winner: "50-50",
      market_id: "3047973",
      event_id: "901234",
      market_type: "24h",
      start_time: "2026-07-23T16:00:00Z",
      end_time: "2026-07-24T16:00:00Z",
      coin_price_start: 65000.5,
      coin_price_end: 65000.5,
      condition_id: HAND_MARKET.conditionId,
      clob_token_up: HAND_MARKET.clobTokenUp,
      clob_token_down: HAND_MARKET.clobTokenDown,
      final_volume: 87923.58,
      final_liquidity: 12000.5,
      resolved_at: "2026-07-24T16:01:01Z",
      created_at: "2026-07-23T00:00:00.000001Z",
      updated_at: "2026-07-24T00:15:18.178216Z",
      coin: "btc",
      polymarket_slug: "bitcoin-up-or-down-on-july-24-2026",
      settlement: { source: "binance", lookback_s: null },
      fee_schedule: { rate: 0.07, exponent: 1, taker_only: true, rebate_rate: 0.2 },
    });
    // It counts as resolved: listed with resolved=true, not with resolved=false.
    const resolved = (await t.get("/v1/markets?resolved=true&market_type=24h")).json();
    assert.deepEqual(
      resolved.markets.map((m: { winner: string }) => m.winner),
      ["50-50"],
    );
    assert.equal((await t.get("/v1/markets?resolved=false&market_type=24h")).json().total, 0);
  });
});

describe("GET /v1/markets/{slug}/trades", () => {
  const SLUG = "btc-updown-5m-1784851800";
  const T0 = 1784851800 * 1e6;
  /** 1,205 trades a quarter second apart, so that a page of 1000 and the last 205 can be told apart. */
  const trades: TradeRow[] = Array.from({ length: 1205 }, (_, i) => ({
    time: T0 + 100_000_000 + i * 250_000,
    outcome: i % 3 === 0 ? "Down" : "Up",
    side: i % 2 === 0 ? "BUY" : "SELL",
    price: 0.4 + (i % 20) / 100,
    size: 1 + i,
    feeRateBps: 0,
    // Every other trade carries its transaction hash (PMXT's rows do; live messages may not).
    transactionHash: i % 2 === 0 ? `0x${i.toString(16).padStart(64, "0")}` : null,
  }));
  let demoTrades = 0;

  before(async () => {
    const m = (await t.store.markets.getMarket(SLUG))!;
    demoTrades = await t.store.trades.countTrades(m.key);
    assert.equal(await t.store.trades.insertTrades([{ marketKey: m.key, rows: trades }]), 1205);
  });

  test("pages newest first with total, limit and offset; every trade once", async () => {
    const first = (await t.get(`/v1/markets/${SLUG}/trades`)).json();
    assert.deepEqual(Object.keys(first), ["slug", "trades", "total", "limit", "offset"]);
    assert.equal(first.total, 1205 + demoTrades);
    assert.equal(first.limit, 1000);
    assert.equal(first.trades.length, 1000);
    const times = first.trades.map((x: { time: string }) => x.time);
    assert.deepEqual(times, [...times].sort().reverse());
    assert.equal(first.trades[0].time, isoMicros(trades[1204].time), "the latest trade first");
    const rest = (await t.get(`/v1/markets/${SLUG}/trades?offset=1000`)).json();
    assert.equal(rest.trades.length, first.total - 1000);
    const all = [...first.trades, ...rest.trades];
    assert.equal(new Set(all.map((x: object) => JSON.stringify(x))).size, first.total);
    assert.deepEqual(Object.keys(first.trades[0]), [
      "time",
      "outcome",
      "token_id",
      "side",
      "price",
      "size",
      "fee_rate_bps",
      "transaction_hash",
    ]);
  });

  test("a time range and ascending order; both ends included", async () => {
    const from = new Date((T0 + 100_000_000) / 1000).toISOString();
    const to = new Date((T0 + 101_000_000) / 1000).toISOString();
    const body = (
      await t.get(`/v1/markets/${SLUG}/trades?order=asc&start_time=${from}&end_time=${to}`)
    ).json();
    assert.equal(body.total, 5);
    assert.deepEqual(
      body.trades.map((x: { size: number }) => x.size),
      [1, 2, 3, 4, 5],
    );
    const up = body.trades.find((x: { outcome: string }) => x.outcome === "Up");
    const m = (await t.store.markets.getMarket(SLUG))!;
    assert.equal(up.token_id, m.clobTokenUp);
    assert.deepEqual(
      body.trades.map((x: { transaction_hash: string | null }) => x.transaction_hash),
      trades.slice(0, 5).map((x) => x.transactionHash),
      "the hash where the trade has one, null where not",
    );
  });

  test("limit is 1..1000, offset >= 0; bad ones are 400 naming the parameter, past the end is empty", async () => {
    for (const [q, parameter] of [
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["offset=-1", "offset"],
      ["order=sideways", "order"],
      ["start_time=soon", "start_time"],
    ]) {
      const res = await t.get(`/v1/markets/${SLUG}/trades?${q}`);
      assert.equal(res.statusCode, 400, q);
      assert.equal(res.json().error.details.parameter, parameter, q);
    }
    const one = (await t.get(`/v1/markets/${SLUG}/trades?limit=1`)).json();
    assert.equal(one.trades.length, 1);
    const past = (await t.get(`/v1/markets/${SLUG}/trades?offset=5000`)).json();
    assert.deepEqual(past.trades, []);
    assert.equal((await t.get("/v1/markets/btc-updown-5m-1/trades")).statusCode, 404);
  });

  test("plan rules as for snapshots: a market older than the free plan's window is 403", async () => {
    const plans = loadPlans();
    const strict = await makeTestApp({
      plans: {
        ...plans,
        starter: { ...plans.starter, history: { btc: { "5m": 1, "15m": 1, "1h": 1, "4h": 1, "24h": 1 } } },
      },
    });
    try {
      const starter = await strict.keyFor("starter");
      const res = await strict.get(`/v1/markets/${SLUG}/trades`, { "x-api-key": starter });
      assert.equal(res.statusCode, 403);
      assert.equal(res.json().error.details.required_plan, "pro");
      const eth = await strict.get("/v1/markets/eth-updown-5m-1784851800/trades", { "x-api-key": starter });
      assert.equal(eth.statusCode, 200, "only BTC has a window");
    } finally {
      await strict.close();
    }
  });
});

describe("GET /v1/series", () => {
  test("counts every series as the store holds it, with coverage overall and over 24 hours", async () => {
    const res = await t.get("/v1/series");
    assert.equal(res.statusCode, 200);
    assert.ok(res.headers["x-ratelimit-remaining"], "counted like any request");
    const body = res.json();
    const { markets } = await t.store.markets.listMarkets({ limit: 1000, offset: 0 });
    const keys = [...new Set(markets.map((m) => `${m.coin} ${m.marketType}`))].sort();
    assert.deepEqual(
      body.series.map((s: { coin: string; market_type: string }) => `${s.coin} ${s.market_type}`),
      keys,
    );
    for (const s of body.series) {
      const own = markets.filter((m) => m.coin === s.coin && m.marketType === s.market_type);
      const first = own.reduce((a, b) => (a.startTime < b.startTime ? a : b));
      const last = own.reduce((a, b) => (a.startTime > b.startTime ? a : b));
      assert.equal(s.markets, own.length);
      assert.equal(
        s.snapshots,
        own.reduce((n, m) => n + m.snapshotCount, 0),
      );
      assert.equal(s.first_market.slug, first.slug);
      assert.equal(s.last_market.slug, last.slug);
      assert.equal(s.coverage_overall.recorded_snapshots, s.snapshots);
      assert.deepEqual(s.markets_by_source, {
        recorded: own.filter((m) => m.sources.includes("recorded")).length,
        pmxt: 0,
        gamma: 0,
      });
    }
    // The demo records every second up to the anchor: BTC 5m (3 markets, the last one live).
    const btc5m = body.series.find(
      (s: { coin: string; market_type: string }) => s.coin === "btc" && s.market_type === "5m",
    );
    // The demo stands in for a live recording: every market of it is recorded.
    assert.deepEqual(btc5m.markets_by_source, { recorded: btc5m.markets, pmxt: 0, gamma: 0 });
    const expected = ANCHOR - 1784851800;
    assert.deepEqual(btc5m.coverage_overall, {
      expected_snapshots: expected,
      recorded_snapshots: expected + 1,
      coverage: 1,
    });
    assert.deepEqual(btc5m.coverage_24h, btc5m.coverage_overall, "every market of it is within the last day");
  });

  test("markets_by_source counts the markets holding each source's data", async () => {
    const app = await makeTestApp({ seed: false });
    try {
      const slugs = [0, 1, 2].map((i) => `sol-updown-15m-${HAND_MARKET.startTime + i * 900}`);
      const keys = [];
      for (const [i, slug] of slugs.entries()) {
        const start = HAND_MARKET.startTime + i * 900;
        keys.push(
          (
            await app.store.markets.upsertMarket({
              ...HAND_MARKET,
              slug,
              startTime: start,
              endTime: start + 900,
            })
          ).key,
        );
      }
      await app.store.markets.markSource(keys[0], "recorded");
      await app.store.markets.markSource(keys[0], "pmxt");
      await app.store.markets.markSource(keys[1], "gamma");
      await app.store.markets.markSource(keys[2], "gamma");
      await app.store.markets.markSource(keys[2], "pmxt");
      const [sol] = (await app.get("/v1/series")).json().series;
      assert.equal(sol.markets, 3);
      assert.deepEqual(sol.markets_by_source, { recorded: 1, pmxt: 2, gamma: 1 });
    } finally {
      await app.close();
    }
  });

  test("a day later, the window holds nothing new: coverage over 24 h is null or 0", async () => {
    const later = await makeTestApp({ clock: new ManualClock((ANCHOR + 3 * 86_400) * 1e6) });
    try {
      const body = (await later.get("/v1/series")).json();
      for (const s of body.series) {
        assert.equal(s.coverage_24h.recorded_snapshots, 0);
        assert.ok(s.coverage_24h.coverage === null || s.coverage_24h.coverage === 0);
      }
    } finally {
      await later.close();
    }
  });
});

describe("coins as configuration", () => {
  test("the document's Coin enum and the coin parameter follow the configured list", async () => {
    const two = await makeTestApp({ config: { coins: ["btc", "doge"] } });
    try {
      const doc = (await two.app.inject("/openapi.json")).json();
      assert.deepEqual(doc.components.schemas.Coin.enum, ["btc", "doge"]);
      assert.equal((await two.get("/v1/markets?coin=DOGE")).statusCode, 200);
      const eth = await two.get("/v1/markets?coin=eth");
      assert.equal(eth.statusCode, 400);
      assert.match(eth.json().error.message, /coin must be one of btc, doge/);
    } finally {
      await two.close();
    }
  });

  test("the plans file sets a history window for any coin", async () => {
    const plans = loadPlans();
    const windows = { "5m": 1, "15m": 1, "1h": 1, "4h": 1, "24h": 1 };
    const ethOnly = await makeTestApp({
      plans: { ...plans, starter: { ...plans.starter, history: { eth: windows } } },
    });
    try {
      const starter = await ethOnly.keyFor("starter");
      const list = (
        await ethOnly.get("/v1/markets?coin=eth&market_type=5m", { "x-api-key": starter })
      ).json();
      assert.equal(list.total, 1);
      assert.match(list.warning, /latest ETH markets/);
      const btc = (await ethOnly.get("/v1/markets?coin=btc&market_type=5m", { "x-api-key": starter })).json();
      assert.equal(btc.total, 3);
      assert.equal(btc.warning, null);
    } finally {
      await ethOnly.close();
    }
  });
});
