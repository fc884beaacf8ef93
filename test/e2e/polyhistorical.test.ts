import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ANCHOR, makeTestApp, type TestApp } from "../helpers/app.ts";

// A client written from PolyHistorical's public documentation (docs.polyhistorical.com: Strategy
// Replay, the Backtest AI Agent's generate, strategy, run and quota, and Error Handling), pointed at
// this service unchanged: the documented headers (Authorization: Bearer on the agent's endpoints,
// X-API-Key on replay), the documented bodies in their camelCase, and the documented answer fields
// and error codes. Nothing here is this service's own spelling.

const LIVE = ANCHOR - (ANCHOR % 300);
const RESOLVED = `btc-updown-5m-${LIVE - 300}`;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers read as a client reads them

describe("PolyHistorical's documented requests, unchanged", () => {
  let t: TestApp;
  let token: string;

  /** The Backtest AI Agent's endpoints, as documented: a bearer token and a JSON body. */
  const agent = async (method: "GET" | "POST", path: string, body?: object, bearer = token) => {
    const res = await t.app.inject({
      method,
      url: path,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, headers: res.headers, body: res.json() as Json };
  };

  /** Strategy Replay, as documented: X-API-Key and a JSON body. */
  const replay = async (body: object, apiKey = token) => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/replay",
      headers: { "x-api-key": apiKey, "content-type": "application/json" },
      payload: JSON.stringify(body),
    });
    return { status: res.statusCode, body: res.json() as Json };
  };

  before(async () => {
    t = await makeTestApp();
    token = await t.keyFor("pro");
  });
  after(() => t.close());

  test("POST /v1/replay: the documented body; success, data.{market, strategy, performance, trades, pnl_curve, total_snapshots}, timestamp", async () => {
    const res = await replay({
      marketSlug: RESOLVED,
      side: "UP",
      entryConditions: [{ field: "price_up", operator: "<", value: 0.9 }],
      exitConditions: [{ field: "price_up", operator: ">=", value: 0.95 }],
      positionSize: 10,
      maxLossPercent: 50,
      orderType: "MARKET",
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.success, true);
    assert.equal(typeof res.body.timestamp, "string");
    const data = res.body.data;
    for (const field of ["market", "strategy", "performance"])
      assert.equal(typeof data[field], "object", field);
    assert.ok(Array.isArray(data.trades));
    assert.ok(Array.isArray(data.pnl_curve));
    assert.equal(typeof data.total_snapshots, "number");
    // maxLossPercent and orderType have documented defaults (50, MARKET).
    const defaults = await replay({
      marketSlug: RESOLVED,
      side: "DOWN",
      entryConditions: [{ field: "price_down", operator: "<", value: 0.9 }],
      exitConditions: [],
      positionSize: 5,
    });
    assert.equal(defaults.status, 200);
    assert.equal(defaults.body.data.strategy.max_loss_percent, 50);
    assert.equal(defaults.body.data.strategy.order_type, "MARKET");
  });

  test("POST /v1/backtest-ai/generate: prompt with preset, coin, marketType, marketCount, positionSize, maxLossPercent, orderType", async () => {
    const res = await agent("POST", "/v1/backtest-ai/generate", {
      prompt: "Buy UP below 0.40",
      preset: "mean_reversion",
      coin: "BTC",
      marketType: "5m",
      marketCount: 20,
      positionSize: 25,
      maxLossPercent: 30,
      orderType: "MARKET",
    });
    assert.equal(res.status, 200);
    const strategy = res.body.strategy;
    assert.equal(typeof strategy, "object");
    assert.equal(strategy.definition.position_size, 25);
    assert.equal(strategy.definition.max_loss_percent, 30);
    assert.equal(strategy.definition.order_type, "MARKET");
  });

  test("POST /v1/backtest-ai/strategy: the same body as generate; generated_strategy, aggregate, results", async () => {
    const res = await agent("POST", "/v1/backtest-ai/strategy", {
      prompt: "Buy UP below 0.60",
      coin: "BTC",
      marketType: "5m",
      marketCount: 2,
      positionSize: 10,
      maxLossPercent: 50,
      orderType: "MARKET",
    });
    assert.equal(res.status, 200);
    assert.equal(typeof res.body.generated_strategy, "object");
    assert.equal(typeof res.body.aggregate, "object");
    assert.ok(Array.isArray(res.body.results));
    assert.equal(res.body.results.length, 2);

    // POST /v1/backtest-ai/run: an already-generated strategy sent back, spending no quota.
    const before = (await agent("GET", "/v1/backtest-ai/quota")).body;
    const run = await agent("POST", "/v1/backtest-ai/run", {
      strategy: res.body.generated_strategy,
      coin: "BTC",
      marketType: "5m",
      marketCount: 2,
    });
    assert.equal(run.status, 200);
    assert.equal(typeof run.body.aggregate, "object");
    assert.equal(run.body.results.length, 2);
    assert.equal(
      (await agent("GET", "/v1/backtest-ai/quota")).body.used,
      before.used,
      "run consumes no quota",
    );
  });

  test("GET /v1/backtest-ai/quota: Pro includes 5 generations a month; the sixth is 429 BACKTEST_AI_QUOTA_EXCEEDED with Retry-After", async () => {
    const fresh = await t.keyFor("pro");
    const quota = await agent("GET", "/v1/backtest-ai/quota", undefined, fresh);
    assert.equal(quota.status, 200);
    assert.deepEqual([quota.body.limit, quota.body.used], [5, 0]);
    for (let i = 0; i < 5; i++) {
      const ok = await agent(
        "POST",
        "/v1/backtest-ai/generate",
        { prompt: `Buy UP below 0.${i + 3}0` },
        fresh,
      );
      assert.equal(ok.status, 200);
    }
    const sixth = await agent("POST", "/v1/backtest-ai/generate", { prompt: "Buy UP below 0.30" }, fresh);
    assert.equal(sixth.status, 429);
    assert.equal(sixth.body.success, false);
    assert.equal(sixth.body.error.code, "BACKTEST_AI_QUOTA_EXCEEDED");
    assert.ok(Number(sixth.headers["retry-after"]) >= 1);
    assert.equal((await agent("GET", "/v1/backtest-ai/quota", undefined, fresh)).body.used, 5);
  });

  test("errors: the documented format and codes", async () => {
    const starter = await t.keyFor("starter");
    const required = await agent(
      "POST",
      "/v1/backtest-ai/generate",
      { prompt: "Buy UP below 0.40" },
      starter,
    );
    assert.equal(required.status, 403);
    assert.equal(required.body.error.code, "BACKTEST_AI_REQUIRED");
    assert.equal(required.body.error.details.required_plan, "pro");
    const tier = await replay(
      { marketSlug: RESOLVED, side: "UP", entryConditions: [], exitConditions: [], positionSize: 10 },
      starter,
    );
    assert.equal(tier.status, 403);
    assert.equal(tier.body.error.code, "TIER_ACCESS_DENIED");
    const unauthorized = await agent("GET", "/v1/backtest-ai/quota", undefined, "not-a-key");
    assert.equal(unauthorized.status, 401);
    assert.equal(unauthorized.body.error.code, "UNAUTHORIZED");
    const notFound = await replay({
      marketSlug: "btc-updown-5m-1774975800",
      side: "UP",
      entryConditions: [],
      exitConditions: [],
      positionSize: 10,
    });
    assert.equal(notFound.status, 404);
    assert.equal(notFound.body.error.code, "RESOURCE_NOT_FOUND");
    const invalid = await agent("POST", "/v1/backtest-ai/generate", {
      prompt: "Buy UP below 0.40",
      positionSize: 0,
    });
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body.error.code, "VALIDATION_ERROR");
    for (const e of [required, tier, unauthorized, notFound, invalid]) {
      assert.equal(e.body.success, false);
      assert.equal(typeof e.body.error.message, "string");
      assert.equal(typeof e.body.timestamp, "string");
    }
  });
});
