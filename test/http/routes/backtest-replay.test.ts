import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ANCHOR, makeTestApp, openSeededTestStore, type TestApp } from "../../helpers/app.ts";
import { ClaimGate } from "../../helpers/claim-gate.ts";

// POST /v1/replay (DESIGN 3.7): PolyHistorical's one-market replay through the app, its body, its
// answer's shape, and its refusals. Every answer is also held against openapi.json (makeTestApp).

/** The demo's btc 5m markets: the two before the live one are resolved. */
const LIVE = ANCHOR - (ANCHOR % 300);
const RESOLVED = `btc-updown-5m-${LIVE - 300}`;

const gate = new ClaimGate();

describe("POST /v1/replay", () => {
  let t: TestApp;
  const post = (payload: unknown, headers: Record<string, string> = {}, key = t.key) =>
    t.app.inject({
      method: "POST",
      url: "/v1/replay",
      payload: JSON.stringify(payload),
      headers: { "x-api-key": key, "content-type": "application/json", ...headers },
    });
  before(async () => {
    t = await makeTestApp({ store: gate.wrap(await openSeededTestStore()), seed: false });
  });
  after(() => t.close());

  const BODY = {
    marketSlug: RESOLVED,
    side: "UP",
    entryConditions: [{ field: "price_up", operator: "<", value: 0.9 }],
    exitConditions: [{ field: "price_up", operator: ">=", value: 0.95 }],
    positionSize: 10,
  };

  test("one resolved market: {success, data: {market, strategy, performance, trades, pnl_curve, total_snapshots}, timestamp}", async () => {
    const res = await post(BODY);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.success, true);
    assert.deepEqual(Object.keys(body), ["success", "data", "timestamp"]);
    assert.deepEqual(Object.keys(body.data), [
      "market",
      "strategy",
      "performance",
      "trades",
      "pnl_curve",
      "total_snapshots",
    ]);
    assert.equal(body.data.market.slug, RESOLVED);
    assert.ok(["Up", "Down", "50-50"].includes(body.data.market.winner));
    const d = body.data.strategy;
    assert.deepEqual(d.entry, [{ feature: "price_up", op: "<", value: 0.9 }]);
    assert.deepEqual(d.exit.conditions, [{ feature: "price_up", op: ">=", value: 0.95 }]);
    assert.deepEqual([d.position_size, d.order_type, d.max_loss_percent], [10, "MARKET", 50]);
    assert.ok(body.data.total_snapshots > 200, "a 5m market's seconds");
    assert.equal(body.data.performance.markets, 1);
    assert.equal(body.data.performance.trades, body.data.trades.length);
    assert.equal(body.data.performance.equity_curve, undefined, "the curve is pnl_curve");
    assert.equal(body.data.pnl_curve.length, body.data.trades.length);
    assert.ok(body.data.trades.length >= 1, "price_up < 0.9 holds at some second");
    assert.equal(body.data.trades[0].entry.size, 10);
    assert.match(body.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  test("maxLossPercent and orderType as sent; the same body gives the same data bytes", async () => {
    const res = await post({ ...BODY, maxLossPercent: 20, orderType: "LIMIT" });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      [res.json().data.strategy.max_loss_percent, res.json().data.strategy.order_type],
      [20, "LIMIT"],
    );
    const one = (await post(BODY)).json().data;
    const two = (await post(BODY)).json().data;
    assert.equal(JSON.stringify(one), JSON.stringify(two));
  });

  test("wait 0: 202 with the run's id and Location, the run then readable by id", async () => {
    // Held queued until the answer is in (ClaimGate says why).
    await gate.closedDuring(async () => {
      const res = await post({ ...BODY, wait: 0 });
      assert.equal(res.statusCode, 202, res.body);
      const { data } = res.json();
      assert.equal(res.headers.location, `/v1/backtest-ai/runs/${data.run_id}`);
      assert.equal(data.location, res.headers.location);
      assert.ok(["queued", "running"].includes(data.status));
    });
  });

  test("bad bodies: 400 naming the field; unknown market 404; a live market 400", async () => {
    const cases: [unknown, string][] = [
      [{ ...BODY, marketSlug: undefined }, "/marketSlug"],
      [{ ...BODY, side: undefined }, "/side"],
      [{ ...BODY, entryConditions: undefined }, "/entryConditions"],
      [{ ...BODY, positionSize: 0 }, "/positionSize"],
      [{ ...BODY, maxLossPercent: 101 }, "/maxLossPercent"],
      [{ ...BODY, orderType: "STOP" }, "/orderType"],
      [{ ...BODY, coin: "btc" }, "/coin"],
      [{ ...BODY, market_slug: RESOLVED }, "/market_slug"],
      [
        { ...BODY, entryConditions: [{ field: "price_up", operator: "~", value: 1 }] },
        "/entryConditions/0/operator",
      ],
    ];
    for (const [body, pointer] of cases) {
      const res = await post(body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.equal(res.json().error.code, "VALIDATION_ERROR");
      assert.equal(res.json().error.details.pointer, pointer, JSON.stringify(body));
    }
    const unknown = await post({ ...BODY, marketSlug: "btc-updown-5m-1" });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error.code, "RESOURCE_NOT_FOUND");
    const live = await post({ ...BODY, marketSlug: `btc-updown-5m-${LIVE}` });
    assert.equal(live.statusCode, 400);
    assert.deepEqual(
      [live.json().error.details.pointer, live.json().error.details.rule],
      ["/marketSlug", "resolved"],
    );
  });

  test("starter: 403 TIER_ACCESS_DENIED with required_plan (Strategy Replay is a plan feature)", async () => {
    const res = await post(BODY, {}, await t.keyFor("starter"));
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().error.code, "TIER_ACCESS_DENIED");
    assert.equal(res.json().error.details.required_plan, "pro");
  });
});
