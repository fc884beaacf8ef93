import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { Ajv2020 } from "ajv/dist/2020.js";
import { loadPlans } from "../../../src/access/plans.ts";
import { seedDemo } from "../../../src/demo/seed.ts";
import { buildApp } from "../../../src/http/app.ts";
import {
  ANCHOR,
  insertHandMarket,
  makeTestApp,
  openSeededStore,
  openSeededTestStore,
  TEST_CONFIG,
  type TestApp,
} from "../../helpers/app.ts";
import { ClaimGate } from "../../helpers/claim-gate.ts";

// The backtest endpoints of DESIGN 3.7 through the app: bodies, the quota, idempotency, runs as jobs,
// the execution price. Every answer here is also held against openapi.json (makeTestApp).

/** Holds runs queued while a test needs a `wait: 0` answer of a run not yet started. */
const gate = new ClaimGate();

/** 2026-08-01T00:00:00Z: the month after the test clock's. */
const AUGUST = 1_785_542_400;

function poster(t: TestApp) {
  return (url: string, payload: unknown, headers: Record<string, string> = {}, key = t.key) =>
    t.app.inject({
      method: "POST",
      url,
      payload: JSON.stringify(payload),
      headers: { "x-api-key": key, "content-type": "application/json", ...headers },
    });
}

const MARKETS = { coin: "btc", market_type: "5m", market_count: 2 };

/** A store of sixty-one 5m markets of btc (sixty resolved), seeded once for the file (once a run). */
const openSixtyMarkets = () =>
  openSeededStore("backtest-btc-5m-61", (store) =>
    seedDemo(store, {
      seed: 3,
      anchor: ANCHOR,
      counts: { "5m": 61, "15m": 0, "1h": 0, "4h": 0, "24h": 0 },
      coins: ["btc"],
    }).then(() => undefined),
  );
const CHEAP_UP = { side: "UP", entry: [{ feature: "price_up", op: "<", value: 0.6 }] };

/**
 * Waits for a run to finish, then answers its GET. Runs are jobs, so their end is an event, not a time:
 * the store is polled, not the API, whose minute window (on the test's fixed clock) a long run would
 * use up and turn the polls into 429s.
 */
async function finished(t: TestApp, id: string): Promise<LightMyRequestResponse> {
  // Generous: on a loaded machine (the suite runs files side by side) a 60-market run takes a while.
  const deadline = performance.now() + 180_000;
  while (performance.now() < deadline) {
    const status = (await t.store.backtests.getRun(id))?.status;
    if (status === "complete" || status === "failed") return t.get(`/v1/backtest-ai/runs/${id}`);
    await sleep(10);
  }
  throw new Error(`run ${id} did not finish`);
}

describe("POST /v1/backtest-ai/generate", () => {
  let t: TestApp;
  let post: ReturnType<typeof poster>;
  before(async () => {
    t = await makeTestApp();
    post = poster(t);
  });
  after(() => t.close());

  test("a prompt gives a stored strategy and the quota after it; the POST counts as one request", async () => {
    const key = await t.keyFor("pro");
    const res = await post(
      "/v1/backtest-ai/generate",
      { prompt: "buy up below 40c, take profit at 25%" },
      {},
      key,
    );
    assert.equal(res.statusCode, 200);
    const { strategy, quota } = res.json();
    assert.deepEqual(strategy.definition.entry, [{ feature: "price_up", op: "<", value: 0.4 }]);
    assert.equal(strategy.definition.exit.take_profit_pct, 25);
    assert.deepEqual(
      [strategy.source, strategy.generator, strategy.prompt],
      ["prompt", "offline", "buy up below 40c, take profit at 25%"],
    );
    assert.deepEqual([quota.plan, quota.used, quota.remaining, quota.month], ["pro", 1, 4, "2026-07"]);
    assert.equal(res.headers["x-ratelimit-remaining"], "49999");
    const again = await post("/v1/backtest-ai/generate", { prompt: "" }, {}, key);
    assert.equal(again.statusCode, 400);
    assert.equal(again.headers["x-ratelimit-remaining"], "49998", "a refused POST counts too");
    const stored = await t.get(`/v1/backtest-ai/strategies/${strategy.id}`, { "x-api-key": key });
    assert.deepEqual(stored.json(), strategy);
    const list = await t.get("/v1/backtest-ai/strategies", { "x-api-key": key });
    assert.deepEqual(
      list.json().strategies.map((s: { id: string }) => s.id),
      [strategy.id],
    );
    assert.equal((await t.get(`/v1/backtest-ai/strategies/${strategy.id}`)).statusCode, 404, "another key's");
  });

  test("a preset, with the body's overrides laid over it", async () => {
    const res = await post("/v1/backtest-ai/generate", {
      preset: "quick_scalp",
      positionSize: 25,
      name: "Scalp 25",
    });
    assert.equal(res.statusCode, 200);
    const d = res.json().strategy.definition;
    assert.deepEqual(
      [d.name, d.position_size, d.order_type, d.limit_price.reference],
      ["Scalp 25", 25, "LIMIT", "best_bid"],
    );
  });

  test("PolyHistorical's body: prompt with a preset, and coin, marketType, marketCount (checked, not used)", async () => {
    const key = await t.keyFor("pro");
    const res = await post(
      "/v1/backtest-ai/generate",
      { prompt: "buy up below 40c", preset: "quick_scalp", coin: "BTC", marketType: "5m", marketCount: 20 },
      {},
      key,
    );
    assert.equal(res.statusCode, 200, res.body);
    const { strategy } = res.json();
    assert.deepEqual(
      [strategy.source, strategy.prompt, strategy.preset],
      ["prompt", "buy up below 40c", "quick_scalp"],
    );
    // The prompt's entry, over the preset's limit order.
    assert.deepEqual(strategy.definition.entry, [{ feature: "price_up", op: "<", value: 0.4 }]);
    assert.equal(strategy.definition.order_type, "LIMIT");
    for (const [body, pointer] of [
      [{ prompt: "buy up below 40c", coin: "dogecoin2" }, "/coin"],
      [{ prompt: "buy up below 40c", marketType: "2m" }, "/marketType"],
      [{ prompt: "buy up below 40c", marketCount: 101 }, "/marketCount"],
    ] as const) {
      const bad = await post("/v1/backtest-ai/generate", body, {}, key);
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error.details.pointer, pointer);
    }
  });

  test("bad bodies: 400 naming the JSON pointer of the field", async () => {
    const cases: [unknown, string, RegExp][] = [
      [{}, "", /one of prompt or preset/],
      [{ prompt: "buy up", preset: "nope" }, "/preset", /one of mean_reversion/],
      [{ preset: "dip_buying", definition: CHEAP_UP }, "/definition", /not a field of a generate request/],
      [{ preset: "nope" }, "/preset", /one of mean_reversion/],
      [{ prompt: "buy up", colour: "red" }, "/colour", /not a field of a generate request/],
      [
        { prompt: "buy up", position_size: 5, positionSize: 6 },
        "/positionSize",
        /two spellings of position_size/,
      ],
      [{ prompt: "buy up", position_size: 0 }, "/position_size", /from 1 to 10000/],
      [{ prompt: "buy up", order_type: "STOP" }, "/order_type", /MARKET, LIMIT/],
      [[1, 2], "", /must be a JSON object/],
    ];
    for (const [body, pointer, message] of cases) {
      const res = await post("/v1/backtest-ai/generate", body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      const error = res.json().error;
      assert.equal(error.code, "VALIDATION_ERROR");
      assert.equal(error.details.pointer, pointer, JSON.stringify(body));
      assert.match(error.message, message);
    }
    const notJson = await t.app.inject({
      method: "POST",
      url: "/v1/backtest-ai/generate",
      payload: "{nope",
      headers: { "x-api-key": t.key, "content-type": "application/json" },
    });
    assert.equal(notJson.statusCode, 400);
    const badKey = await post(
      "/v1/backtest-ai/generate",
      { preset: "dip_buying" },
      { "idempotency-key": "a b" },
    );
    assert.equal(badKey.json().error.details.parameter, "Idempotency-Key");
  });

  test("a prompt no rule can be read from: 422 GENERATION_FAILED, nothing charged", async () => {
    const key = await t.keyFor("pro");
    const res = await post("/v1/backtest-ai/generate", { prompt: "what a lovely day" }, {}, key);
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().error.code, "GENERATION_FAILED");
    // The clause quoted as the prompt wrote it, in the message and in details.clauses.
    assert.match(res.json().error.message, /Not understood.*: "what a lovely day".*not charged/);
    assert.deepEqual(res.json().error.details.clauses, ["what a lovely day"]);
    assert.equal(res.json().error.details.charged, false);
    assert.equal((await t.get("/v1/backtest-ai/quota", { "x-api-key": key })).json().used, 0);
  });

  test("starter: 403 BACKTEST_AI_REQUIRED naming the plan that has backtests", async () => {
    const starter = await t.keyFor("starter");
    for (const res of [
      await post("/v1/backtest-ai/generate", { preset: "dip_buying" }, {}, starter),
      await post("/v1/backtest-ai/run", { definition: CHEAP_UP, ...MARKETS }, {}, starter),
      await t.get("/v1/backtest-ai/strategies", { "x-api-key": starter }),
    ]) {
      assert.equal(res.statusCode, 403);
      assert.equal(res.json().error.code, "BACKTEST_AI_REQUIRED");
      assert.deepEqual(res.json().error.details, { required_plan: "pro" });
    }
  });
});

describe("the monthly quota over the endpoints", () => {
  let t: TestApp;
  let post: ReturnType<typeof poster>;
  before(async () => {
    t = await makeTestApp();
    post = poster(t);
  });
  after(() => t.close());

  test("50 concurrent generate calls on a fresh pro key: exactly 5 succeed, 45 are 429 BACKTEST_AI_QUOTA_EXCEEDED", async () => {
    const key = await t.keyFor("pro");
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        post("/v1/backtest-ai/generate", { prompt: `buy up below ${10 + i}c` }, {}, key),
      ),
    );
    assert.equal(answers.filter((a) => a.statusCode === 200).length, 5);
    const refused = answers.filter((a) => a.statusCode === 429);
    assert.equal(refused.length, 45);
    // Retry-After runs to 2026-08-01T00:00:00Z from the clock's 2026-07-24T00:20:34.123456Z.
    const retryAfter = String(Math.ceil(AUGUST - (ANCHOR + 0.123456)));
    for (const r of refused) {
      assert.equal(r.json().error.code, "BACKTEST_AI_QUOTA_EXCEEDED");
      assert.equal(r.headers["retry-after"], retryAfter);
      assert.equal(r.json().error.details.resets_at, "2026-08-01T00:00:00Z");
    }
    const quota = (await t.get("/v1/backtest-ai/quota", { "x-api-key": key })).json();
    assert.deepEqual([quota.used, quota.remaining], [5, 0]);
    const strategies = (await t.get("/v1/backtest-ai/strategies", { "x-api-key": key })).json();
    assert.equal(strategies.total, 5, "a strategy for each unit, none for a refusal");
  });

  test("a retry with the same Idempotency-Key is not charged; the key with another body is refused", async () => {
    const key = await t.keyFor("pro");
    const body = { prompt: "buy down below 30c" };
    const first = await post("/v1/backtest-ai/generate", body, { "idempotency-key": "retry-1" }, key);
    const again = await post("/v1/backtest-ai/generate", body, { "idempotency-key": "retry-1" }, key);
    assert.deepEqual([first.statusCode, again.statusCode], [200, 200]);
    assert.equal(again.json().strategy.id, first.json().strategy.id);
    assert.equal(again.json().quota.used, 1);
    const other = await post(
      "/v1/backtest-ai/generate",
      { prompt: "buy up" },
      { "idempotency-key": "retry-1" },
      key,
    );
    assert.equal(other.statusCode, 400);
    assert.equal(other.json().error.details.parameter, "Idempotency-Key");
    assert.equal((await t.get("/v1/backtest-ai/quota", { "x-api-key": key })).json().used, 1);
  });

  test("the month boundary resets the quota (injected clock)", async () => {
    const key = await t.keyFor("pro");
    for (let i = 0; i < 5; i++)
      assert.equal(
        (await post("/v1/backtest-ai/generate", { preset: "dip_buying" }, {}, key)).statusCode,
        200,
      );
    assert.equal((await post("/v1/backtest-ai/generate", { preset: "dip_buying" }, {}, key)).statusCode, 429);
    t.clock.set(AUGUST * 1e6 - 1);
    assert.equal(
      (await post("/v1/backtest-ai/generate", { preset: "dip_buying" }, {}, key)).statusCode,
      429,
      "a µs before",
    );
    t.clock.set(AUGUST * 1e6);
    const res = await post("/v1/backtest-ai/generate", { preset: "dip_buying" }, {}, key);
    assert.equal(res.statusCode, 200);
    assert.deepEqual([res.json().quota.month, res.json().quota.used], ["2026-08", 1]);
    t.clock.set(ANCHOR * 1e6 + 123_456);
  });
});

describe("runs", () => {
  let t: TestApp;
  let post: ReturnType<typeof poster>;
  before(async () => {
    t = await makeTestApp({ store: gate.wrap(await openSeededTestStore()), seed: false });
    post = poster(t);
  });
  after(() => t.close());

  test("a definition over the latest resolved markets: one result per market, the live one listed apart", async () => {
    const res = await post("/v1/backtest-ai/run", {
      definition: CHEAP_UP,
      coin: "btc",
      market_type: "5m",
      market_count: 5,
    });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.run.status, "complete");
    assert.equal(body.strategy, null);
    // The demo has three btc 5m markets: two resolved, the latest live.
    assert.equal(body.results.length, 2);
    assert.deepEqual(body.run.progress, { markets_done: 2, markets_total: 2 });
    assert.deepEqual(
      body.unresolved.map((u: { slug: string }) => u.slug),
      [`btc-updown-5m-${ANCHOR - (ANCHOR % 300)}`],
    );
    assert.ok(body.results[0].start_time < body.results[1].start_time, "oldest first");
    assert.equal(body.aggregate.markets, 2);
    assert.equal(
      body.aggregate.trades,
      body.results.reduce((n: number, r: { trades: unknown[] }) => n + r.trades.length, 0),
    );
  });

  test("the same inputs give the same bytes", async () => {
    const one = (await post("/v1/backtest-ai/run", { definition: CHEAP_UP, ...MARKETS })).json();
    const two = (await post("/v1/backtest-ai/run", { definition: CHEAP_UP, ...MARKETS })).json();
    assert.equal(JSON.stringify([one.aggregate, one.results]), JSON.stringify([two.aggregate, two.results]));
  });

  test("PolyHistorical's replay body, camelCase and entryConditions of {field, operator, value}", async () => {
    const res = await post("/v1/backtest-ai/run", {
      side: "UP",
      entryConditions: [{ field: "priceUp", operator: "lt", value: 0.6 }],
      exitConditions: [{ field: "priceUp", operator: "gt", value: 0.7 }],
      coin: "BTC",
      marketType: "5m",
      marketCount: 2,
      positionSize: 10,
      orderType: "market",
    });
    assert.equal(res.statusCode, 200);
    const d = res.json().run.definition;
    assert.deepEqual(d.entry, [{ feature: "price_up", op: "<", value: 0.6 }]);
    assert.deepEqual(d.exit.conditions, [{ feature: "price_up", op: ">", value: 0.7 }]);
    assert.deepEqual([d.position_size, d.order_type], [10, "MARKET"]);
    const both = await post("/v1/backtest-ai/run", { definition: CHEAP_UP, ...MARKETS, marketType: "5m" });
    assert.equal(both.json().error.details.pointer, "/marketType");
    const bad = await post("/v1/backtest-ai/run", {
      side: "UP",
      entryConditions: [{ field: "price_up", operator: "<", value: "cheap" }],
      ...MARKETS,
    });
    assert.equal(bad.json().error.details.pointer, "/entryConditions/0/value");
  });

  test("a definition valid under the served schema is taken as it is", async () => {
    const schema = (await t.get("/v1/backtest-ai/schema")).json();
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const definition = (await post("/v1/backtest-ai/generate", { preset: "momentum_entry" })).json().strategy
      .definition;
    assert.ok(validate(definition), JSON.stringify(validate.errors));
    const res = await post("/v1/backtest-ai/run", { definition, ...MARKETS });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().run.definition, definition);
  });

  test("strategy: generated, charged and run in one request", async () => {
    const key = await t.keyFor("pro");
    const res = await post(
      "/v1/backtest-ai/strategy",
      { prompt: "buy up below 60c and hold to resolution", ...MARKETS },
      {},
      key,
    );
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.run.strategy_id, body.strategy.id);
    assert.equal(body.results.length, 2);
    assert.equal((await t.get("/v1/backtest-ai/quota", { "x-api-key": key })).json().used, 1);
    const again = await post(
      "/v1/backtest-ai/strategy",
      { prompt: "buy up below 60c and hold to resolution", ...MARKETS },
      {},
      key,
    );
    assert.notEqual(again.json().run.id, body.run.id);
    const byId = await post("/v1/backtest-ai/run", { strategy_id: body.strategy.id, ...MARKETS }, {}, key);
    assert.equal(byId.json().strategy.id, body.strategy.id);
    assert.equal(
      (await t.get("/v1/backtest-ai/quota", { "x-api-key": key })).json().used,
      2,
      "run spends none",
    );
  });

  test("results paged by market; a market's trades on their own route, paged, the same as inline", async () => {
    const body = (await post("/v1/backtest-ai/run", { definition: CHEAP_UP, ...MARKETS })).json();
    const id = body.run.id;
    assert.deepEqual(body.results_page, { total: 2, limit: 100, offset: 0 });
    const second = (await t.get(`/v1/backtest-ai/runs/${id}?results_limit=1&results_offset=1`)).json();
    assert.deepEqual(second.results_page, { total: 2, limit: 1, offset: 1 });
    assert.deepEqual(second.results, [body.results[1]]);
    assert.deepEqual(second.aggregate, body.aggregate, "the aggregate is the whole run's");
    const bad = await t.get(`/v1/backtest-ai/runs/${id}?results_limit=0`);
    assert.equal(bad.json().error.details.parameter, "results_limit");
    const market = body.results.find((r: { trades: unknown[] }) => r.trades.length > 0);
    assert.ok(market, "a market with trades");
    const url = `/v1/backtest-ai/runs/${id}/markets/${market.slug}/trades`;
    const all = (await t.get(url)).json();
    assert.deepEqual(all, {
      run_id: id,
      slug: market.slug,
      total: market.trades.length,
      limit: 1000,
      offset: 0,
      trades: market.trades,
    });
    const last = (await t.get(`${url}?limit=1&offset=${market.trades.length - 1}`)).json();
    assert.deepEqual(last.trades, [market.trades.at(-1)]);
    assert.equal((await t.get(`/v1/backtest-ai/runs/${id}/markets/btc-updown-5m-1/trades`)).statusCode, 404);
    const other = await t.keyFor("pro");
    assert.equal((await t.get(url, { "x-api-key": other })).statusCode, 404, "another key's run");
  });

  test("strategy answers generated_strategy, the definition that ran; a definition's run has none", async () => {
    const res = await post("/v1/backtest-ai/strategy", { preset: "dip_buying", ...MARKETS });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().generated_strategy, res.json().run.definition);
    const plain = await post("/v1/backtest-ai/run", { definition: CHEAP_UP, ...MARKETS });
    assert.equal(plain.json().generated_strategy, null);
  });

  test("wait 0: 202 with the run and its Location, then the run by id", async () => {
    // Held queued until the answer is in (ClaimGate): a run that ended first would rightly answer 200.
    const res = await gate.closedDuring(() =>
      post("/v1/backtest-ai/run", { definition: CHEAP_UP, ...MARKETS, wait: 0 }),
    );
    assert.equal(res.statusCode, 202);
    const id = res.json().run.id;
    assert.equal(res.headers.location, `/v1/backtest-ai/runs/${id}`);
    assert.ok(["queued", "running"].includes(res.json().run.status));
    assert.equal(res.json().aggregate, null);
    const done = await finished(t, id);
    assert.equal(done.json().run.status, "complete");
    assert.equal(done.json().results.length, 2);
    assert.equal((await t.get("/v1/backtest-ai/runs/nope")).statusCode, 404);
    const other = await t.keyFor("pro");
    assert.equal((await t.get(`/v1/backtest-ai/runs/${id}`, { "x-api-key": other })).statusCode, 404);
  });

  test("a retried run with the same Idempotency-Key is the same run", async () => {
    const body = { definition: CHEAP_UP, ...MARKETS };
    const first = await post("/v1/backtest-ai/run", body, { "idempotency-key": "run-1" });
    const again = await post("/v1/backtest-ai/run", body, { "idempotency-key": "run-1" });
    assert.equal(again.json().run.id, first.json().run.id);
  });

  test("the same fields in another order, at every depth, are the same request for an Idempotency-Key", async () => {
    const reversed = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reversed)
        : v !== null && typeof v === "object"
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reversed(x)]),
            )
          : v;
    const body = { definition: CHEAP_UP, ...MARKETS };
    const text = JSON.stringify(body);
    const reorderedText = JSON.stringify(reversed(body));
    assert.notEqual(reorderedText, text, "the retry's bytes differ");
    const first = await post("/v1/backtest-ai/run", body, { "idempotency-key": "run-order" });
    const again = await post("/v1/backtest-ai/run", reversed(body), { "idempotency-key": "run-order" });
    assert.equal(again.statusCode < 300, true, again.body);
    assert.equal(again.json().run.id, first.json().run.id);
    const key = await t.keyFor("pro");
    const gen = { prompt: "buy down below 30c", name: "order" };
    const g1 = await post("/v1/backtest-ai/generate", gen, { "idempotency-key": "gen-order" }, key);
    const g2 = await post("/v1/backtest-ai/generate", reversed(gen), { "idempotency-key": "gen-order" }, key);
    assert.deepEqual([g1.statusCode, g2.statusCode], [200, 200]);
    assert.equal(g2.json().strategy.id, g1.json().strategy.id);
    assert.equal(g2.json().quota.used, 1, "the retry is not charged");
  });
});

describe("at most two runs in flight per key", () => {
  let t: TestApp;
  let post: ReturnType<typeof poster>;
  before(async () => {
    // Sixty resolved markets, so that a run lasts while the next requests arrive.
    t = await makeTestApp({ seed: false, store: await openSixtyMarkets() });
    post = poster(t);
  });
  after(() => t.close());

  test("four at once: two run, two are 429 with Retry-After; a later one runs once they are done", async () => {
    const body = { definition: CHEAP_UP, coin: "btc", market_type: "5m", market_count: 60, wait: 0 };
    const answers = await Promise.all([1, 2, 3, 4].map(() => post("/v1/backtest-ai/run", body)));
    const statuses = answers.map((a) => a.statusCode).sort();
    assert.deepEqual(statuses, [202, 202, 429, 429]);
    for (const a of answers.filter((x) => x.statusCode === 429)) {
      assert.equal(a.json().error.code, "RATE_LIMIT_EXCEEDED");
      assert.deepEqual(
        [a.json().error.details.reason, a.json().error.details.in_flight],
        ["runs_in_flight", 2],
      );
      assert.equal(a.headers["retry-after"], "5");
    }
    for (const a of answers.filter((x) => x.statusCode === 202)) await finished(t, a.json().run.id);
    assert.equal((await post("/v1/backtest-ai/run", body)).statusCode, 202);
  });
});

describe("a fair queue across accounts, and runs in flight limited per account", () => {
  let t: TestApp;
  let post: ReturnType<typeof poster>;
  before(async () => {
    t = await makeTestApp({
      seed: false,
      store: await openSixtyMarkets(),
      config: { backtest: { ...TEST_CONFIG.backtest, workers: 1, runsPerAccount: 20 } },
    });
    post = poster(t);
  });
  after(() => t.close());

  test("one account's 20 runs through 10 keys: another account's small run starts next, not 21st", async () => {
    const big = await Promise.all(
      Array.from({ length: 10 }, async () => (await t.keys.create({ plan: "pro", account: "big" })).key),
    );
    const heavy = { definition: CHEAP_UP, coin: "btc", market_type: "5m", market_count: 60, wait: 0 };
    const queued: string[] = [];
    for (const key of big) {
      for (let i = 0; i < 2; i++) {
        const res = await post("/v1/backtest-ai/run", heavy, {}, key);
        assert.equal(res.statusCode, 202, res.body);
        queued.push(res.json().run.id);
      }
    }
    // The account's 21st run is refused whichever of its keys asks.
    // (An enterprise key: the account holds all the pro keys its plan allows.)
    const extra = (await t.keys.create({ plan: "enterprise", account: "big" })).key;
    const refused = await post("/v1/backtest-ai/run", heavy, {}, extra);
    assert.equal(refused.statusCode, 429);
    assert.deepEqual(
      [
        refused.json().error.details.reason,
        refused.json().error.details.scope,
        refused.json().error.details.limit,
      ],
      ["runs_in_flight", "account", 20],
    );
    const statusesOf = () =>
      Promise.all(queued.map(async (id) => (await t.store.backtests.getRun(id))?.status));
    const started = (await statusesOf()).filter((s) => s !== "queued").length;
    const small = await post("/v1/backtest-ai/run", {
      definition: CHEAP_UP,
      ...MARKETS,
      market_count: 3,
      wait: 60,
    });
    assert.equal(small.statusCode, 200, small.body);
    assert.equal(small.json().run.status, "complete");
    // One worker: the small run starts as soon as the big account's run executing when it was queued
    // ends. Of the big account's runs, only those started by then have finished before it (one more
    // may have started between the look above and the POST). First in, first out, all twenty would have.
    const statuses = await statusesOf();
    const complete = statuses.filter((s) => s === "complete").length;
    assert.ok(complete <= started + 1 && complete < 20, `${started} started before: ${statuses.join(",")}`);
    for (const id of queued) await finished(t, id);
  });
});

describe("a retried run at the replica that does not hold it (two apps over one store)", () => {
  let a: TestApp;
  let b: FastifyInstance;
  before(async () => {
    // Sixty resolved markets, so that the run lasts while the retry arrives.
    a = await makeTestApp({ seed: false, store: await openSixtyMarkets() });
    b = await buildApp({ store: a.store, clock: a.clock, plans: loadPlans(), config: TEST_CONFIG });
    await b.ready();
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  test("waits up to `wait` for the run as the first replica does, and answers 200 once it has finished", async () => {
    const { key, record } = await a.keys.create({ plan: "pro", account: "replicas" });
    // `wait` runs on the apps' clock, which stands still here: both answers wait for the run's end
    // however long a loaded machine makes it take.
    const body = { definition: CHEAP_UP, coin: "btc", market_type: "5m", market_count: 60, wait: 30 };
    const idem = { "idempotency-key": "across-replicas" };
    const atA = poster(a)("/v1/backtest-ai/run", body, idem, key);
    // The retry is sent once replica A has created the run (a row in the store), while it still runs.
    let run = null;
    while (run === null) {
      run = await a.store.backtests.runByIdempotencyKey(record.id, idem["idempotency-key"]);
      if (run === null) await sleep(1);
    }
    assert.ok(run.status === "queued" || run.status === "running", run.status);
    const atB = await b.inject({
      method: "POST",
      url: "/v1/backtest-ai/run",
      payload: JSON.stringify(body),
      headers: { "x-api-key": key, "content-type": "application/json", ...idem },
    });
    assert.equal(atB.statusCode, 200, atB.body);
    assert.equal(atB.json().run.id, run.id);
    assert.equal(atB.json().run.status, "complete");
    assert.equal(atB.json().results.length, 60);
    const first = await atA;
    assert.equal(first.statusCode, 200);
    assert.deepEqual(atB.json(), first.json());
  });
});

describe("GET /v1/markets/{slug}/execution-price", () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ seed: false });
    await insertHandMarket(t.store);
  });
  after(() => t.close());
  const slug = "sol-updown-15m-1784851200";
  const at = "2026-07-24T00:00:01Z";

  test("a buy of 10 Up walks 7.25 @ 0.53 and 2.75 @ 0.54, with the fee of each level", async () => {
    const res = await t.get(`/v1/markets/${slug}/execution-price?outcome=up&side=buy&size=10&time=${at}`);
    assert.equal(res.statusCode, 200);
    const q = res.json();
    // 7.25 * 0.53 + 2.75 * 0.54 = 3.8425 + 1.485 = 5.3275 USDC, average 0.53275.
    // Mid (0.51 + 0.53) / 2 = 0.52: slippage (0.53275 - 0.52) / 0.52 = 245.19 bps.
    // Fee 7.25 * 0.07 * 0.53 * 0.47 + 2.75 * 0.07 * 0.54 * 0.46 = 0.1264183 + 0.047817 = 0.174235 USDC,
    // in shares 0.1264183 / 0.53 + 0.047817 / 0.54 = 0.238525 + 0.08855 = 0.327075.
    assert.deepEqual(
      [q.best_price, q.average_price, q.mid, q.slippage_bps, q.filled, q.unfilled, q.notional],
      [0.53, 0.53275, 0.52, 245.19, 10, 0, 5.3275],
    );
    assert.deepEqual([q.fee_usdc, q.fee_shares], [0.174235, 0.327075]);
    assert.deepEqual(q.levels, [
      { price: 0.53, size: 7.25 },
      { price: 0.54, size: 2.75 },
    ]);
    assert.equal(q.snapshot_time, "2026-07-24T00:00:00.000000Z");
  });

  test("a sell of 200 Down: depth runs out after 10.25 shares", async () => {
    // Down bids are 7.25 @ 0.47 and 3 @ 0.46: 10.25 filled, 189.75 unfilled.
    const q = (
      await t.get(`/v1/markets/${slug}/execution-price?outcome=down&side=sell&size=200&time=${at}`)
    ).json();
    assert.deepEqual([q.filled, q.unfilled, q.best_price], [10.25, 189.75, 0.47]);
  });

  test("before the first snapshot, or at a second without books: 404; bad parameters: 400", async () => {
    const before = await t.get(
      `/v1/markets/${slug}/execution-price?outcome=up&side=buy&size=1&time=2026-07-23T23:59:59Z`,
    );
    assert.equal(before.statusCode, 404);
    const noBooks = await t.get(
      `/v1/markets/${slug}/execution-price?outcome=up&side=buy&size=1&time=2026-07-24T00:00:02Z`,
    );
    assert.match(noBooks.json().error.message, /no recorded books/);
    for (const q of [
      "outcome=left&side=buy&size=1",
      "outcome=up&side=buy&size=0",
      "outcome=up&side=buy&size=1&time=soon",
    ]) {
      const res = await t.get(
        `/v1/markets/${slug}/execution-price?${q}${q.includes("time") ? "" : `&time=${at}`}`,
      );
      assert.equal(res.statusCode, 400, q);
    }
  });
});
