import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DEFAULT_PLANS_FILE } from "../../../src/access/plans.ts";
import { importVisionFile } from "../../../src/archive/binance-vision.ts";
import { EMPTY_BOOK } from "../../../src/domain/book.ts";
import { encodeBooks } from "../../../src/wire/book-codec.ts";
import type { CandleRow, ExchangeBatch } from "../../../src/domain/exchange.ts";
import { parsePlans } from "../../../src/domain/plan.ts";
import { LIMIT_HEADERS, makeTestApp, type TestApp } from "../../helpers/app.ts";
import { writeZip } from "../../helpers/zip.ts";

/** 2026-07-24T00:20:34.123Z in µs. */
const T = 1784852434_123_000;
const SECOND = 1_000_000;
const MINUTE = 60 * SECOND;

function minuteCandle(minute: number, venue: "spot" | "futures" = "spot"): CandleRow {
  return {
    coin: "btc",
    venue,
    interval: "1m",
    openTime: 1784851200_000_000 + minute * MINUTE,
    open: 65000 + minute,
    high: 65010.5 + minute,
    low: 64990.25 + minute,
    close: 65001 + minute,
    volume: 1.23456,
    quoteVolume: 80246.4,
    trades: 120,
    takerBuyVolume: 0.6,
    takerBuyQuoteVolume: 39000.6,
  };
}

/** Hand-written rows whose answers are checked byte for byte. */
const HAND: ExchangeBatch = {
  depth: [
    {
      coin: "btc",
      venue: "spot",
      time: T,
      books: encodeBooks(
        {
          // Worst first on purpose: stored and served best first.
          bids: [
            { price: 65000, size: 1.25 },
            { price: 65000.01, size: 0.5 },
          ],
          asks: [
            { price: 65000.1, size: 3 },
            { price: 65000.02, size: 0.00012 },
          ],
        },
        EMPTY_BOOK,
      ),
    },
    // 30 earlier seconds to page through.
    ...Array.from({ length: 30 }, (_, i) => ({
      coin: "btc" as const,
      venue: "spot" as const,
      time: 1784852400_000_000 + i * SECOND,
      books: encodeBooks({ bids: [{ price: 64000 + i, size: 1 }], asks: [] }, EMPTY_BOOK),
    })),
    {
      coin: "btc",
      venue: "futures",
      time: T,
      books: encodeBooks(
        { bids: [{ price: 65010.1, size: 2.5 }], asks: [{ price: 65010.2, size: 0.004 }] },
        EMPTY_BOOK,
      ),
    },
  ],
  trades: [
    {
      coin: "btc",
      venue: "spot",
      id: 5000001,
      time: T - 1000,
      price: 65000.02,
      qty: 0.015,
      buyerMaker: false,
    },
    { coin: "btc", venue: "spot", id: 5000002, time: T, price: 65000.01, qty: 0.1, buyerMaker: true },
    { coin: "btc", venue: "futures", id: 777, time: T, price: 65010.1, qty: 1.5, buyerMaker: false },
  ],
  candles: Array.from({ length: 12 }, (_, m) => minuteCandle(m)),
  funding: [
    { coin: "btc", time: 1784851200_000_000, rate: 0.0001, markPrice: 65012.5 },
    { coin: "btc", time: 1784822400_000_000, rate: -0.00002345, markPrice: null },
  ],
  openInterest: [
    { coin: "btc", time: 1784852400_000_000, openInterest: 81234.567, openInterestValue: 5280246855.5 },
  ],
  markPrices: [
    {
      coin: "btc",
      time: 1784852434_000_000,
      markPrice: 65011.23456789,
      indexPrice: 65000.5,
      estimatedSettlePrice: 65001.1,
      fundingRate: 0.00012,
      nextFundingTime: 1784880000_000_000,
    },
  ],
};

let t: TestApp;
before(async () => {
  t = await makeTestApp({ seed: false });
  await t.store.exchange.insertBatch(HAND);
});
after(() => t.close());

async function ok(url: string): Promise<Record<string, unknown>> {
  const res = await t.get(url);
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  assert.equal(res.headers["x-tier"], "pro", url);
  return res.json();
}

async function error(url: string, status: number, code: string): Promise<Record<string, unknown>> {
  const res = await t.get(url);
  assert.equal(res.statusCode, status, `${url}: ${res.body}`);
  const body = res.json();
  assert.equal(body.success, false);
  assert.equal(body.error.code, code, url);
  for (const h of LIMIT_HEADERS) assert.ok(res.headers[h], `${url} carries ${h}`);
  return body.error;
}

describe("GET /v1/{coin}/{venue}/latest", () => {
  test("the latest depth snapshot, byte for byte: mid price and levels best first", async () => {
    const res = await t.get("/v1/btc/spot/latest");
    assert.equal(res.statusCode, 200);
    assert.equal(
      res.body,
      '{"coin":"btc","venue":"spot","symbol":"BTCUSDT","time":"2026-07-24T00:20:34.123Z","timestamp":1784852434123,' +
        '"price":65000.015,"bids":[{"price":65000.01,"size":0.5},{"price":65000,"size":1.25}],' +
        '"asks":[{"price":65000.02,"size":0.00012},{"price":65000.1,"size":3}]}',
    );
    for (const h of LIMIT_HEADERS) assert.ok(res.headers[h], h);
  });

  test("futures, with `future` as an alias and the coin in any case", async () => {
    for (const path of ["/v1/btc/futures/latest", "/v1/BTC/future/latest", "/v1/Btc/FUTURES/latest"]) {
      const body = await ok(path);
      assert.deepEqual(
        [body.venue, body.price, body.bids, body.asks],
        ["futures", 65010.15, [{ price: 65010.1, size: 2.5 }], [{ price: 65010.2, size: 0.004 }]],
        path,
      );
    }
  });

  test("nothing recorded yet is 404", async () => {
    const e = await error("/v1/eth/spot/latest", 404, "RESOURCE_NOT_FOUND");
    assert.equal(e.message, "No depth snapshot of ETHUSDT spot is recorded yet.");
  });
});

describe("GET /v1/{coin}/{venue}/trades/latest", () => {
  test("newest first, byte for byte, limited", async () => {
    const res = await t.get("/v1/btc/spot/trades/latest?limit=1");
    assert.equal(
      res.body,
      '{"data":[{"id":5000002,"time":"2026-07-24T00:20:34.123Z","timestamp":1784852434123,"price":65000.01,' +
        '"size":0.1,"side":"sell","is_buyer_maker":true}],"limit":1}',
    );
    const all = await ok("/v1/btc/spot/trades/latest");
    assert.equal(all.limit, 100);
    assert.deepEqual(
      (all.data as { id: number; side: string }[]).map((d) => [d.id, d.side]),
      [
        [5000002, "sell"],
        [5000001, "buy"],
      ],
    );
    const futures = await ok("/v1/btc/futures/trades/latest");
    assert.deepEqual(
      (futures.data as { id: number }[]).map((d) => d.id),
      [777],
    );
  });

  test("limit must be 1..1000", async () => {
    for (const limit of ["0", "1001", "x"]) {
      const e = await error(`/v1/btc/spot/trades/latest?limit=${limit}`, 400, "VALIDATION_ERROR");
      assert.equal((e.details as { parameter: string }).parameter, "limit");
    }
  });
});

describe("GET /v1/{coin}/{venue}/snapshots", () => {
  test("pages of depth history, newest first, {data, total, limit, offset}", async () => {
    const body = await ok("/v1/btc/spot/snapshots?limit=2");
    assert.deepEqual(Object.keys(body), ["data", "total", "limit", "offset"]);
    assert.deepEqual([body.total, body.limit, body.offset], [31, 2, 0]);
    const data = body.data as { time: string; price: number; bids: unknown[] }[];
    assert.deepEqual(
      data.map((d) => [d.time, d.price]),
      [
        ["2026-07-24T00:20:34.123Z", 65000.015],
        ["2026-07-24T00:20:29.000Z", 64029],
      ],
    );
    const defaults = await ok("/v1/btc/spot/snapshots");
    assert.deepEqual([defaults.limit, (defaults.data as unknown[]).length], [100, 31]);
  });

  test("paging by offset until total returns each snapshot once; past total is an empty page", async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < 31; offset += 7) {
      const body = await ok(`/v1/btc/spot/snapshots?limit=7&offset=${offset}&order=asc`);
      seen.push(...(body.data as { time: string }[]).map((d) => d.time));
    }
    assert.equal(new Set(seen).size, 31);
    assert.deepEqual(seen, [...seen].sort());
    const past = await ok("/v1/btc/spot/snapshots?offset=31");
    assert.deepEqual([past.data, past.total], [[], 31]);
  });

  test("start_time and end_time as epoch ms or ISO, both inclusive", async () => {
    const ms = await ok("/v1/btc/spot/snapshots?start_time=1784852405000&end_time=1784852407000&order=asc");
    const iso = await ok(
      "/v1/btc/spot/snapshots?start_time=2026-07-24T00:20:05Z&end_time=2026-07-24T00:20:07.000Z&order=asc",
    );
    assert.deepEqual(ms, iso);
    assert.equal(ms.total, 3);
    assert.deepEqual(
      (ms.data as { timestamp: number }[]).map((d) => d.timestamp),
      [1784852405000, 1784852406000, 1784852407000],
    );
  });
});

describe("GET /v1/{coin}/{venue}/candles", () => {
  test("1m candles as stored, byte for byte", async () => {
    const res = await t.get("/v1/btc/spot/candles?limit=1");
    assert.equal(
      res.body,
      '{"data":[{"open_time":"2026-07-24T00:11:00.000Z","close_time":"2026-07-24T00:11:59.999Z",' +
        '"timestamp":1784851860000,"open":65011,"high":65021.5,"low":65001.25,"close":65012,"volume":1.23456,' +
        '"quote_volume":80246.4,"trades":120,"taker_buy_volume":0.6,"taker_buy_quote_volume":39000.6}],' +
        '"total":12,"limit":1,"offset":0}',
    );
  });

  test("wider intervals are aggregated from 1m", async () => {
    const body = await ok("/v1/btc/spot/candles?interval=5m&order=asc");
    assert.equal(body.total, 3);
    const [first] = body.data as Record<string, unknown>[];
    assert.deepEqual(first, {
      open_time: "2026-07-24T00:00:00.000Z",
      close_time: "2026-07-24T00:04:59.999Z",
      timestamp: 1784851200000,
      open: 65000,
      high: 65014.5,
      low: 64990.25,
      close: 65005,
      volume: 6.1728,
      quote_volume: 401232,
      trades: 600,
      taker_buy_volume: 3,
      taker_buy_quote_volume: 195003,
    });
    const daily = await ok("/v1/btc/spot/candles?interval=1d");
    assert.deepEqual(
      (daily.data as { open: number; close: number }[]).map((c) => [c.open, c.close]),
      [[65000, 65012]],
    );
  });

  test("1s candles imported from data.binance.vision are served as stored, over a range of at most a day", async () => {
    const dir = mkdtempSync(join(tmpdir(), "klines-1s-"));
    try {
      // 90 seconds of 2026-07-24 (spot files from 2025 on give µs), as the site publishes them.
      const path = join(dir, "BTCUSDT-1s-2026-07-24.zip");
      const start = 1784851200_000_000;
      const line = (i: number) =>
        `${start + i * SECOND},${65000 + i}.5,${65001 + i},${64999 + i},${65000 + i}.25,1.5,${start + i * SECOND + 999_999},97500.75,${10 + i},0.5,32500.25,0`;
      writeZip(path, Array.from({ length: 90 }, (_, i) => line(i)).join("\n"));
      await importVisionFile(t.store.exchange, path, ["btc"]);
      const range = "start_time=2026-07-24T00:00:30Z&end_time=2026-07-24T00:01:29Z";
      const res = await t.get(`/v1/btc/spot/candles?interval=1s&${range}&order=asc&limit=1`);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(
        res.body,
        '{"data":[{"open_time":"2026-07-24T00:00:30.000Z","close_time":"2026-07-24T00:00:30.999Z",' +
          '"timestamp":1784851230000,"open":65030.5,"high":65031,"low":65029,"close":65030.25,"volume":1.5,' +
          '"quote_volume":97500.75,"trades":40,"taker_buy_volume":0.5,"taker_buy_quote_volume":32500.25}],' +
          '"total":60,"limit":1,"offset":0}',
      );
      const newest = await ok(`/v1/btc/spot/candles?interval=1s&${range}&limit=2&offset=1`);
      assert.deepEqual(
        (newest.data as { open_time: string }[]).map((c) => c.open_time),
        ["2026-07-24T00:01:28.000Z", "2026-07-24T00:01:27.000Z"],
      );
      // The 1m series and its aggregates are the recorded 1m candles' as before.
      assert.equal((await ok("/v1/btc/spot/candles")).total, 12);
      assert.equal((await ok("/v1/btc/spot/candles?interval=5m")).total, 3);
      // A day of seconds at most, and the range named.
      const day = "start_time=2026-07-24T00:00:00Z&end_time=2026-07-25T00:00:00Z";
      assert.equal((await ok(`/v1/btc/spot/candles?interval=1s&${day}`)).total, 90);
      for (const [query, parameter, rule] of [
        ["end_time=2026-07-24T00:01:29Z", "start_time", "required"],
        ["start_time=2026-07-24T00:00:00Z", "end_time", "required"],
        ["start_time=2026-07-24T00:00:00Z&end_time=2026-07-25T00:00:00.001Z", "end_time", "range"],
      ]) {
        const e = await error(`/v1/btc/spot/candles?interval=1s&${query}`, 400, "VALIDATION_ERROR");
        assert.deepEqual(e.details, { parameter, rule }, query);
        assert.match(String(e.message), /interval=1s needs start_time and end_time at most 24 hours apart/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("an interval that is not Binance's is 400 naming interval", async () => {
    for (const interval of ["2m", "3s", "1H"]) {
      const e = await error(`/v1/btc/spot/candles?interval=${interval}`, 400, "VALIDATION_ERROR");
      assert.deepEqual(e.details, { parameter: "interval", rule: "enum", in: "querystring" });
    }
  });
});

describe("futures only: funding-rates, open-interest, mark-price", () => {
  test("each answers its history byte for byte", async () => {
    assert.equal(
      (await t.get("/v1/btc/futures/funding-rates")).body,
      '{"data":[{"time":"2026-07-24T00:00:00.000Z","timestamp":1784851200000,"funding_rate":0.0001,"mark_price":65012.5},' +
        '{"time":"2026-07-23T16:00:00.000Z","timestamp":1784822400000,"funding_rate":-0.00002345,"mark_price":null}],' +
        '"total":2,"limit":100,"offset":0}',
    );
    assert.equal(
      (await t.get("/v1/btc/future/open-interest")).body,
      '{"data":[{"time":"2026-07-24T00:20:00.000Z","timestamp":1784852400000,"open_interest":81234.567,' +
        '"open_interest_value":5280246855.5}],"total":1,"limit":100,"offset":0}',
    );
    assert.equal(
      (await t.get("/v1/btc/futures/mark-price")).body,
      '{"data":[{"time":"2026-07-24T00:20:34.000Z","timestamp":1784852434000,"mark_price":65011.23456789,' +
        '"index_price":65000.5,"estimated_settle_price":65001.1,"funding_rate":0.00012,' +
        '"next_funding_time":"2026-07-24T08:00:00.000Z"}],"total":1,"limit":100,"offset":0}',
    );
  });

  test("ranges filter and count", async () => {
    const body = await ok("/v1/btc/futures/funding-rates?start_time=2026-07-23T20:00:00Z");
    assert.equal(body.total, 1);
    const empty = await ok("/v1/eth/futures/funding-rates");
    assert.deepEqual([empty.data, empty.total], [[], 0]);
  });

  test("under spot they are 404", async () => {
    for (const r of ["funding-rates", "open-interest", "mark-price"]) {
      const e = await error(`/v1/btc/spot/${r}`, 404, "RESOURCE_NOT_FOUND");
      assert.match(e.message as string, /futures only/);
    }
  });
});

describe("errors", () => {
  test("bad query parameters are 400 naming the parameter", async () => {
    for (const [q, parameter] of [
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["offset=-1", "offset"],
      ["offset=1.5", "offset"],
      ["order=up", "order"],
      ["start_time=soon", "start_time"],
      ["end_time=2026-13-01", "end_time"],
      ["start_time=1784852407000&end_time=1784852405000", "start_time"],
    ]) {
      for (const path of [
        "/v1/btc/spot/snapshots",
        "/v1/btc/futures/candles",
        "/v1/btc/futures/mark-price",
      ]) {
        const e = await error(`${path}?${q}`, 400, "VALIDATION_ERROR");
        assert.equal((e.details as { parameter: string }).parameter, parameter, `${path}?${q}`);
      }
    }
  });

  test("an unknown coin, venue or resource is 404 in the envelope, with limit headers", async () => {
    const pepe = await error("/v1/pepe/spot/latest", 404, "RESOURCE_NOT_FOUND");
    assert.equal(pepe.message, "No coin pepe; coins are btc, eth, sol, xrp, doge, bnb, hype.");
    const margin = await error("/v1/btc/margin/latest", 404, "RESOURCE_NOT_FOUND");
    assert.equal(margin.message, "No venue margin; venues are spot and futures.");
    await error("/v1/btc/spot/orderbook", 404, "RESOURCE_NOT_FOUND");
    await error("/v1/btc/spot/trades", 404, "RESOURCE_NOT_FOUND");
  });

  test("no key is 401", async () => {
    const res = await t.app.inject({ url: "/v1/btc/spot/latest" });
    assert.equal(res.statusCode, 401);
  });
});

describe("plans", () => {
  test("a plans file without spot gives 403 with required_plan there; futures stays open", async () => {
    const defaults = JSON.parse(readFileSync(DEFAULT_PLANS_FILE, "utf8"));
    const plans = parsePlans(defaults, { starter: { features: { spot: false } } });
    const app = await makeTestApp({ seed: false, plans });
    try {
      await app.store.exchange.insertBatch(HAND);
      const starter = await app.keyFor("starter");
      const get = (url: string) => app.app.inject({ url, headers: { "x-api-key": starter } });
      for (const path of ["latest", "trades/latest", "snapshots", "candles"]) {
        const res = await get(`/v1/btc/spot/${path}`);
        assert.equal(res.statusCode, 403, path);
        assert.deepEqual(res.json().error, {
          code: "TIER_ACCESS_DENIED",
          message: "The starter plan does not include spot exchange data. Upgrade to pro to use it.",
          details: { required_plan: "pro" },
        });
        assert.equal(res.headers["x-tier"], "starter");
        assert.equal(res.headers["x-ratelimit-limit"], "1000");
      }
      assert.equal((await get("/v1/btc/futures/latest")).statusCode, 200);
      assert.equal((await get("/v1/btc/spot/latest")).headers["x-ratelimit-remaining"], "994");
    } finally {
      await app.close();
    }
  });

  test("every exchange request counts once, like any other", async () => {
    const key = await t.keyFor("starter");
    const get = (url: string) => t.app.inject({ url, headers: { "x-api-key": key } });
    const remaining = [];
    for (const url of ["/v1/btc/spot/latest", "/v1/btc/futures/candles?limit=0", "/v1/pepe/spot/latest"]) {
      remaining.push((await get(url)).headers["x-ratelimit-remaining"]);
    }
    assert.deepEqual(remaining, ["999", "998", "997"]);
  });
});

describe("demo data and documentation", () => {
  test("a seeded app answers every exchange endpoint with data", async () => {
    const seeded = await makeTestApp({ exchange: true });
    try {
      for (const url of [
        "/v1/btc/spot/latest",
        "/v1/eth/futures/latest",
        "/v1/btc/spot/trades/latest",
        "/v1/btc/futures/snapshots",
        "/v1/eth/spot/candles?interval=15m",
        "/v1/btc/futures/funding-rates",
        "/v1/btc/futures/open-interest",
        "/v1/btc/futures/mark-price",
      ]) {
        const res = await seeded.get(url);
        assert.equal(res.statusCode, 200, url);
        const body = res.json();
        assert.ok(body.price || (body.data as unknown[]).length > 0, url);
      }
      const latest = (await seeded.get("/v1/btc/spot/latest")).json();
      assert.equal(latest.time, "2026-07-24T00:20:34.000Z");
      assert.equal(latest.bids.length, 20);
      assert.ok(latest.bids[0].price < latest.price && latest.price < latest.asks[0].price);
    } finally {
      await seeded.close();
    }
  });

  test("/openapi.json documents every exchange path", async () => {
    const spec = (await t.app.inject({ url: "/openapi.json" })).json();
    for (const path of ["latest", "trades/latest", "snapshots", "candles"]) {
      assert.ok(spec.paths[`/v1/{coin}/{venue}/${path}`]?.get, path);
    }
    // Futures-only series are not reachable under a venue parameter that also accepts spot.
    for (const path of ["funding-rates", "open-interest", "mark-price"]) {
      assert.ok(spec.paths[`/v1/{coin}/futures/${path}`]?.get, path);
      assert.equal(spec.paths[`/v1/{coin}/{venue}/${path}`], undefined, path);
    }
  });
});
