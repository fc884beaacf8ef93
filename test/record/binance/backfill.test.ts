import assert from "node:assert/strict";
import { after, afterEach, before, beforeEach, describe, test } from "node:test";
import {
  backfillBinance,
  type BackfillOptions,
  type BackfillProgress,
} from "../../../src/record/binance/backfill.ts";
import { silentLogger } from "../../../src/log.ts";
import { BinanceBannedError } from "../../../src/record/binance/rest.ts";
import { SqliteStore } from "../../../src/store/dialects/sqlite/sqlite-store.ts";
import type { Store } from "../../../src/store/ports/store.ts";
import { BinanceUpstream } from "../../helpers/binance-upstream.ts";
import { FakeScheduler } from "../../helpers/fake-scheduler.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** 2026-07-24T00:00:00Z, ms. */
const DAY = Date.UTC(2026, 6, 24);
const NOW = DAY + 12 * HOUR + 30_000;

let upstream: BinanceUpstream;
let scheduler: FakeScheduler;
let store: Store;

// In a describe of its own, so that its hooks wrap only its tests when it shares a process (test/run.ts).
describe("backfillBinance", () => {
  before(async () => {
    // The upstream counts weight per minute of the same clock the backfill waits on.
    scheduler = new FakeScheduler(NOW, { auto: true });
    upstream = await BinanceUpstream.start(scheduler, DAY - 3 * 24 * HOUR, NOW);
  });
  after(() => upstream.close());
  beforeEach(async () => {
    store = new SqliteStore(":memory:");
    await store.migrate();
    upstream.requests.length = 0;
    upstream.extraWeight = 0;
    scheduler.delays.length = 0;
  });
  afterEach(() => store.close());

  function run(options: Partial<BackfillOptions>) {
    return backfillBinance({
      store: store.exchange,
      coins: ["btc"],
      venues: ["spot", "futures"],
      from: DAY * 1000,
      to: (DAY + HOUR) * 1000,
      urls: upstream.urls,
      scheduler,
      ...options,
    });
  }

  const count = async (venue: "spot" | "futures") => ({
    candles: await store.exchange.countCandles("btc", venue, "1m"),
    trades: (await store.exchange.latestTrades("btc", venue, 100_000)).length,
  });

  describe("REST backfill", () => {
    test("pages candles, trades, funding rates and open interest across the range, each row once", async () => {
      const from = DAY - 26 * HOUR;
      const to = DAY;
      const report = await run({ from: from * 1000, to: to * 1000, kinds: ["candles"] });
      // 26 h of minutes, both ends included: two pages of klines per venue.
      assert.deepEqual(await count("spot"), { candles: 26 * 60 + 1, trades: 0 });
      assert.deepEqual(await count("futures"), { candles: 26 * 60 + 1, trades: 0 });
      assert.equal(upstream.requestsTo("/api/v3/klines").length, 2);
      assert.deepEqual(
        upstream.requestsTo("/fapi/v1/klines").map((r) => Number(r.query.startTime)),
        [from, from + 1000 * MINUTE],
      );
      const [first] = await store.exchange.candlePage("btc", "spot", "1m", {
        order: "asc",
        limit: 1,
        offset: 0,
      });
      assert.deepEqual(first, {
        openTime: from * 1000,
        lastOpenTime: from * 1000,
        open: 100 + (from - upstream.dataFrom) / MINUTE,
        high: 102 + (from - upstream.dataFrom) / MINUTE,
        low: 99 + (from - upstream.dataFrom) / MINUTE,
        close: 100.5 + (from - upstream.dataFrom) / MINUTE,
        volume: 1.5,
        quoteVolume: 150.75,
        trades: 30,
        takerBuyVolume: 0.75,
        takerBuyQuoteVolume: 75.375,
      });
      assert.deepEqual(
        report.parts.map((p) => [p.venue, p.kind, p.fetched, p.added, p.fraction]),
        [
          ["spot", "candles", 1561, 1561, 1],
          ["futures", "candles", 1561, 1561, 1],
        ],
      );
    });

    test("trades: spot by trade id from the first aggregate's first id, futures by aggregate id", async () => {
      // One hour: an aggregate trade every 10 s (361 with both ends), each three spot trades 1 ms apart;
      // of the last aggregate only the trade at the end itself is in range.
      await run({ kinds: ["trades"] });
      assert.deepEqual(await count("spot"), { candles: 0, trades: 360 * 3 + 1 });
      assert.deepEqual(await count("futures"), { candles: 0, trades: 361 });
      const spotPages = upstream.requestsTo("/api/v3/historicalTrades").map((r) => Number(r.query.fromId));
      const firstId = (DAY / 10_000) * 3;
      // The second page reaches past the end: no third.
      assert.deepEqual(spotPages, [firstId, firstId + 1000]);
      assert.deepEqual(
        upstream.requestsTo("/fapi/v1/aggTrades").map((r) => r.query.fromId ?? `start ${r.query.startTime}`),
        [`start ${DAY}`, String(DAY / 10_000)],
      );
      const [latest] = await store.exchange.latestTrades("btc", "spot", 1);
      assert.deepEqual(latest, {
        coin: "btc",
        venue: "spot",
        id: ((DAY + HOUR) / 10_000) * 3,
        time: (DAY + HOUR) * 1000,
        price: 65000.8, // 65000 + (aggregate id mod 100) / 100
        qty: 0.005,
        buyerMaker: true,
      });
    });

    test("funding rates and open interest (futures only); open interest only from 30 days back", async () => {
      const warnings: string[] = [];
      await run({
        from: (DAY - 2 * 24 * HOUR) * 1000,
        to: DAY * 1000,
        kinds: ["funding", "open_interest"],
        log: { ...silentLogger, warn: (_fields, m) => warnings.push(m) },
      });
      assert.equal(await store.exchange.countFunding("btc"), 7);
      assert.equal(await store.exchange.countOpenInterest("btc"), 2 * 24 * 12 + 1);
      assert.deepEqual(
        upstream.requestsTo("/futures/data/openInterestHist").map((r) => r.query.period),
        ["5m", "5m"],
      );
      assert.equal(warnings.length, 0);
      // A range starting 40 days back is clamped to Binance's 30 days, with a note.
      await run({
        from: (NOW - 40 * 24 * HOUR) * 1000,
        to: DAY * 1000,
        kinds: ["open_interest"],
        log: { ...silentLogger, warn: (_fields, m) => warnings.push(m) },
      });
      assert.equal(warnings.length, 1);
      assert.match(warnings[0], /30 days/);
      const oi = upstream.requestsTo("/futures/data/openInterestHist");
      assert.ok(Number(oi[2].query.startTime) >= NOW - 30 * 24 * HOUR);
    });

    test("running it again stores nothing new", async () => {
      await run({ kinds: ["candles", "trades"] });
      const before = { spot: await count("spot"), futures: await count("futures") };
      const again = await run({ kinds: ["candles", "trades"] });
      assert.deepEqual(
        again.parts.map((p) => p.added),
        [0, 0, 0, 0],
      );
      assert.deepEqual({ spot: await count("spot"), futures: await count("futures") }, before);
    });

    test("progress is reported per page and ends at 1 for every part", async () => {
      const seen: BackfillProgress[] = [];
      await run({
        from: (DAY - 26 * HOUR) * 1000,
        to: DAY * 1000,
        venues: ["spot"],
        kinds: ["candles"],
        onProgress: (p) => seen.push(p),
      });
      const fractions = seen.map((p) => p.fraction);
      assert.deepEqual(
        fractions,
        [...fractions].sort((a, b) => a - b),
      );
      assert.equal(seen.length, 3);
      assert.ok(fractions[0] > 0.6 && fractions[0] < 0.7, String(fractions[0]));
      assert.equal(fractions[2], 1);
    });
  });

  describe("Binance's limits", () => {
    test("past the weight budget it waits for the next minute before asking again", async () => {
      // Limit 100, budget 80: other clients already used 78, so after one request (80) the next waits.
      upstream.extraWeight = 78;
      const start = scheduler.nowMicros() / 1000;
      await run({
        venues: ["spot"],
        kinds: ["candles"],
        from: (DAY - 26 * HOUR) * 1000,
        to: DAY * 1000,
        weightLimits: { spot: 100 },
      });
      const [first, second] = upstream.requestsTo("/api/v3/klines");
      assert.equal(
        Math.floor(second.at / MINUTE),
        Math.floor(first.at / MINUTE) + 1,
        "second request in the next minute",
      );
      const nextMinute = (Math.floor(start / MINUTE) + 1) * MINUTE;
      assert.deepEqual(scheduler.delays, [nextMinute - start]);
      assert.equal(await store.exchange.countCandles("btc", "spot", "1m"), 26 * 60 + 1);
    });

    test("429 waits Retry-After seconds and asks again", async () => {
      upstream.failNext("/fapi/v1/klines", 429, { "retry-after": "7" });
      const report = await run({ venues: ["futures"], kinds: ["candles"] });
      assert.deepEqual(scheduler.delays, [7000]);
      assert.equal(report.waitedMs, 7000);
      assert.deepEqual(
        upstream.requestsTo("/fapi/v1/klines").map((r) => r.status),
        [429, 200],
      );
      assert.equal(await store.exchange.countCandles("btc", "futures", "1m"), 61);
    });

    test("418 stops the backfill at once and says until when; what was stored stays", async () => {
      upstream.failNext("/api/v3/historicalTrades", 418, { "retry-after": "120" }, 1);
      const seen: BackfillProgress[] = [];
      await assert.rejects(
        run({ venues: ["spot"], kinds: ["trades"], onProgress: (p) => seen.push(p) }),
        (err: unknown) => {
          assert.ok(err instanceof BinanceBannedError);
          assert.equal(err.retryAfterSeconds, 120);
          assert.match(err.message, /HTTP 418.*retry after 120 s/);
          return true;
        },
      );
      assert.deepEqual(
        upstream.requestsTo("/api/v3/historicalTrades").map((r) => r.status),
        [200, 418],
      );
      assert.deepEqual(scheduler.delays, []);
      assert.equal((await count("spot")).trades, 1000);
      assert.deepEqual(
        seen.map((p) => p.added),
        [1000],
      );
    });
  });
});
