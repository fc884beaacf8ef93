import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import type { RateLimiter } from "../../src/access/limiter/limiter.ts";
import { loadPlans } from "../../src/access/plans.ts";
import { OPENAPI_PATH, renderOpenApi } from "../../scripts/openapi.ts";
import { checkAnswer, checkedOperations, OPERATIONS } from "../helpers/contract.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

describe("the API document is the contract", () => {
  test("the served document is the committed openapi.json, byte for byte (npm run openapi rewrites it)", async () => {
    assert.equal(await renderOpenApi(), readFileSync(OPENAPI_PATH, "utf8"));
  });

  test("every operation has an operationId and tags; components are named by meaning", () => {
    const doc = JSON.parse(readFileSync(OPENAPI_PATH, "utf8"));
    const ids = new Set<string>();
    for (const [name, op] of OPERATIONS) {
      assert.match(op.operationId ?? "", /^[a-z][A-Za-z]+$/, name);
      assert.ok(!ids.has(op.operationId), `${op.operationId} is unique`);
      ids.add(op.operationId);
      const [method, path] = name.split(" ");
      assert.ok((doc.paths[path][method.toLowerCase()].tags ?? []).length > 0, `${name} has tags`);
      for (const [status, response] of Object.entries<{ headers?: object }>(op.responses)) {
        assert.ok(response.headers && "X-Request-Id" in response.headers, `${name} ${status} X-Request-Id`);
      }
    }
    const names = Object.keys(doc.components.schemas);
    for (const wanted of ["Market", "Snapshot", "OrderBook", "Level", "Error", "Coin", "MarketType"]) {
      assert.ok(names.includes(wanted), wanted);
    }
    assert.deepEqual(
      names.filter((n) => /^def-/.test(n)),
      [],
    );
    // The committed document holds the default coins (the COINS option).
    assert.deepEqual(doc.components.schemas.Coin.enum, ["btc", "eth", "sol", "xrp", "doge", "bnb", "hype"]);
    assert.deepEqual(doc.components.schemas.MarketType.enum, ["5m", "15m", "1h", "4h", "24h"]);
  });

  test("the checker finds an undeclared status, a missing header and a body off its schema", () => {
    const route = "/v1/markets/:slug";
    const headers = { "content-type": "application/json; charset=utf-8", "x-request-id": "r" };
    const bad = checkAnswer({ method: "GET", route, status: 418, headers, body: "{}" });
    assert.match(bad.join(), /status not declared/);
    const noId = checkAnswer({
      method: "GET",
      route,
      status: 401,
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.match(noId.join(), /no X-Request-Id header/);
    const envelope = {
      success: false,
      error: { code: "NOPE", message: "m" },
      request_id: "r",
      timestamp: "x",
    };
    const wrong = checkAnswer({ method: "GET", route, status: 401, headers, body: JSON.stringify(envelope) });
    assert.ok(wrong.length > 0, "an unknown error code and a bad timestamp are caught");
  });
});

/** A limiter that fails as a broken backing service would: a plain error, or an unreachable one. */
function failingLimiter(code: string | null): RateLimiter {
  const fail = async (): Promise<never> => {
    throw Object.assign(new Error("limiter failed"), code ? { code } : {});
  };
  return { kind: "memory", degraded: false, limit: fail, peek: fail, close: async () => {} };
}

describe("every operation's answers match the document", () => {
  let t: TestApp;
  let slug: string;
  before(async () => {
    t = await makeTestApp({ exchange: true });
    slug = (await t.get("/v1/markets?resolved=true&coin=btc&limit=1")).json().markets[0].slug;
  });
  after(() => t.close());

  const paths = () => [
    "/v1/account",
    "/v1/backtest-ai/quota",
    "/v1/markets",
    `/v1/markets/${slug}`,
    `/v1/markets/${slug}/snapshots?limit=2&include_orderbook=true`,
    `/v1/markets/${slug}/snapshots/at?time=2026-07-24T00:00:00Z`,
    `/v1/markets/${slug}/coverage`,
    `/v1/markets/${slug}/series?points=16`,
    `/v1/markets/${slug}/trades?limit=3`,
    "/v1/series",
    `/v1/markets/${slug}/snapshots/export?format=csv`,
    "/v1/snapshots/export?coin=btc&market_type=5m&start_time=2026-07-24T00:14:00Z&format=parquet",
    "/v1/btc/spot/latest",
    "/v1/btc/futures/trades/latest?limit=3",
    "/v1/btc/spot/snapshots?limit=2",
    "/v1/btc/spot/candles?interval=5m&limit=2",
    "/v1/btc/futures/funding-rates?limit=2",
    "/v1/btc/futures/open-interest?limit=2",
    "/v1/btc/futures/mark-price?limit=2",
    "/v1/backtest-ai/schema",
    "/v1/backtest-ai/strategies",
    "/v1/backtest-ai/strategies/no-such-strategy",
    "/v1/backtest-ai/runs/no-such-run",
    `/v1/markets/${slug}/execution-price?outcome=up&side=buy&size=10&time=2026-07-24T00:00:00Z`,
    `/v1/markets/${slug}/events?limit=2`,
    `/v1/markets/${slug}/book?time=2026-07-24T00:00:00Z`,
    `/v1/replay?assets_ids=${slug}&from=2026-07-24T00:00:00Z&to=2026-07-24T01:00:00Z&speed=max`,
  ];

  test("successes, and errors 400, 401, 403, 404 and 429", async () => {
    for (const path of paths()) assert.ok([200, 404].includes((await t.get(path)).statusCode), path);
    for (const path of ["/healthz", "/readyz", "/metrics"])
      assert.equal((await t.app.inject(path)).statusCode, 200);
    assert.equal((await t.get("/v1/markets?limit=0")).statusCode, 400);
    assert.equal((await t.get(`/v1/markets/${slug}/snapshots?order=up`)).statusCode, 400);
    assert.equal((await t.get("/v1/btc/spot/candles?interval=7m")).statusCode, 400);
    // A plain GET of the replay's WebSocket (its 101 is an upgrade, which inject does not make).
    assert.equal((await t.get("/v1/replay/ws?from=0&to=1")).statusCode, 400);
    assert.equal((await t.get("/v1/markets/btc-updown-5m-1")).statusCode, 404);
    assert.equal((await t.get("/v1/pepe/spot/latest")).statusCode, 404);
    assert.equal((await t.get("/v1/btc/spot/funding-rates")).statusCode, 404);
    assert.equal((await t.get("/v1/markets", { "x-api-key": "ud_nope_nope" })).statusCode, 401);
    const starter = await t.keyFor("starter");
    let last = 0;
    for (let i = 0; i < 61 && last !== 429; i++)
      last = (await t.get("/v1/markets?limit=1", { "x-api-key": starter })).statusCode;
    assert.equal(last, 429);
  });

  test("the backtest operations: 200, 202, 400, 403, 404 and 422", async () => {
    const post = (url: string, payload: object, key = t.key) =>
      t.app.inject({ method: "POST", url, payload, headers: { "x-api-key": key } });
    const generated = await post("/v1/backtest-ai/generate", { preset: "dip_buying" });
    assert.equal(generated.statusCode, 200);
    const id = generated.json().strategy.id;
    assert.equal((await t.get(`/v1/backtest-ai/strategies/${id}`)).statusCode, 200);
    assert.equal((await post("/v1/backtest-ai/generate", { prompt: "tomorrow it rains" })).statusCode, 422);
    assert.equal(
      (await post("/v1/backtest-ai/generate", { prompt: "buy up", preset: "nope" })).statusCode,
      400,
    );
    const markets = { coin: "btc", market_type: "5m", market_count: 2 };
    const ran = await post("/v1/backtest-ai/run", { strategy_id: id, ...markets });
    assert.equal(ran.statusCode, 200);
    assert.equal((await t.get(`/v1/backtest-ai/runs/${ran.json().run.id}`)).statusCode, 200);
    const queued = await post("/v1/backtest-ai/strategy", { preset: "quick_scalp", ...markets, wait: 0 });
    assert.equal(queued.statusCode, 202);
    assert.equal((await post("/v1/backtest-ai/run", { strategy_id: "nope", ...markets })).statusCode, 404);
    const starter = await t.keyFor("starter");
    assert.equal(
      (await post("/v1/backtest-ai/run", { strategy_id: id, ...markets }, starter)).statusCode,
      403,
    );
    assert.equal((await t.get("/v1/backtest-ai/strategies", { "x-api-key": starter })).statusCode, 403);
    const slug = ran.json().results[0].slug;
    const trades = `/v1/backtest-ai/runs/${ran.json().run.id}/markets/${slug}/trades`;
    assert.equal((await t.get(trades)).statusCode, 200);
    assert.equal((await t.get(`${trades}?limit=0`)).statusCode, 400);
    assert.equal((await t.get(trades, { "x-api-key": starter })).statusCode, 403);
    assert.equal((await t.get(trades.replace(slug, "btc-updown-5m-1"))).statusCode, 404);
    const replay = { marketSlug: slug, side: "UP", entryConditions: [] };
    assert.equal((await post("/v1/replay", replay)).statusCode, 200);
    assert.equal((await post("/v1/replay", { ...replay, wait: 0 })).statusCode, 202);
    assert.equal((await post("/v1/replay", { ...replay, side: "SIDEWAYS" })).statusCode, 400);
    assert.equal((await post("/v1/replay", replay, starter)).statusCode, 403);
    assert.equal((await post("/v1/replay", { ...replay, marketSlug: "btc-updown-5m-1" })).statusCode, 404);
    // Issue 25's files and comparison: each format, a bad query (400), a starter key (403), another run (404).
    const runPath = `/v1/backtest-ai/runs/${ran.json().run.id}`;
    for (const file of ["trades", "results"]) {
      for (const format of ["csv", "ndjson", "parquet"]) {
        assert.equal((await t.get(`${runPath}/${file}?format=${format}`)).statusCode, 200);
      }
      assert.equal((await t.get(`${runPath}/${file}?format=xlsx`)).statusCode, 400);
      assert.equal((await t.get(`${runPath}/${file}`, { "x-api-key": starter })).statusCode, 403);
      assert.equal((await t.get(`/v1/backtest-ai/runs/nope/${file}`)).statusCode, 404);
    }
    assert.equal((await t.get(`${runPath}/definition`)).statusCode, 200);
    assert.equal((await t.get(`${runPath}/definition`, { "x-api-key": starter })).statusCode, 403);
    assert.equal((await t.get("/v1/backtest-ai/runs/nope/definition")).statusCode, 404);
    const compare = `/v1/backtest-ai/runs?ids=${ran.json().run.id}`;
    assert.equal((await t.get(compare)).statusCode, 200);
    assert.equal((await t.get(`${compare},`)).statusCode, 400);
    assert.equal((await t.get(compare, { "x-api-key": starter })).statusCode, 403);
    assert.equal((await t.get(`${compare},nope`)).statusCode, 404);
  });

  test("403 for a market older than the plan opens", async () => {
    const plans = loadPlans();
    const strict = await makeTestApp({
      plans: {
        ...plans,
        starter: { ...plans.starter, history: { btc: { "5m": 1, "15m": 1, "1h": 1, "4h": 1, "24h": 1 } } },
      },
    });
    try {
      const starter = await strict.keyFor("starter");
      const old = (await strict.get("/v1/markets?coin=btc&market_type=5m")).json().markets.at(-1).slug;
      for (const path of [
        `/v1/markets/${old}`,
        `/v1/markets/${old}/snapshots`,
        `/v1/markets/${old}/coverage`,
        `/v1/markets/${old}/trades`,
      ]) {
        assert.equal((await strict.get(path, { "x-api-key": starter })).statusCode, 403, path);
      }
    } finally {
      await strict.close();
    }
  });

  test("500 and 503 from a failing backing service", async () => {
    for (const [code, status] of [
      [null, 500],
      ["ECONNREFUSED", 503],
    ] as const) {
      const broken = await makeTestApp({ seed: false, limiter: failingLimiter(code) });
      try {
        for (const path of paths().slice(2)) assert.equal((await broken.get(path)).statusCode, status, path);
      } finally {
        await broken.close();
      }
    }
  });

  test("every operation of the document was checked", () => {
    const all = [...OPERATIONS.values()].map((op) => op.operationId).sort();
    assert.deepEqual([...checkedOperations].sort(), all);
  });
});
