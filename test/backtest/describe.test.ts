import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DEFINITION_DEFAULTS, type StrategyDefinition } from "../../src/backtest/definition.ts";
import { describeDefinition } from "../../src/backtest/describe.ts";
import { presetDefinition } from "../../src/backtest/generate/presets.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

// The definition that ran, in plain words (DESIGN 3.7): one function, the same words everywhere.

describe("describeDefinition", () => {
  test("a tree with lookbacks, a limit order with an expiry, exits", () => {
    const d: StrategyDefinition = {
      ...DEFINITION_DEFAULTS,
      name: "tree",
      side: "DOWN",
      entry: [
        {
          any: [
            {
              all: [
                { feature: "price_down", op: ">=", value: 0.3 },
                { feature: "price_down", op: "<=", value: 0.4 },
              ],
            },
            { feature: "coin_return_bps_60s", op: "<=", value: -10 },
          ],
        },
        { not: { feature: "remaining_s", op: "<=", value: 30 } },
        { feature: "depth_bid_down_3", op: ">", value: 500 },
      ],
      exit: {
        conditions: [{ feature: "price_down_change_cents_30s", op: ">=", value: 5 }],
        take_profit_pct: 20,
        stop_loss_pct: 10,
        time_limit_s: 90,
        hold_to_resolution: false,
      },
      order_type: "LIMIT",
      limit_price: { reference: "best_bid", offset: -0.01 },
      limit_expiry_s: 20,
      position_size: 50,
      max_entries_per_market: 2,
      max_fill_price: 0.45,
      latency_ms: 250,
    };
    assert.equal(
      describeDefinition(d),
      [
        '"tree" (definition version 2)',
        "Buy Down: 50 shares per entry, limit order at the best bid - 1 cents, cancelled after 20 s unfilled, at most 2 entries per market.",
        "Enter when: ((the Down price is at least 0.3 and the Down price is at most 0.4) or the coin's return over the last 60 s (bps) is at most -10) and not (the seconds remaining is at most 30) and the Down bid depth (shares) within 3 ticks is above 500.",
        "Exit (sell at market) at the first of: when the Down price's change over the last 30 s (cents) is at least 5; take profit at +20%; stop loss at -10%; after 90 s held; else settle at resolution.",
        "Pay at most 0.45 a share; latency 250 ms.",
      ].join("\n"),
    );
  });

  test("the features of the moment and the newer lookbacks in words", () => {
    const d: StrategyDefinition = {
      ...DEFINITION_DEFAULTS,
      name: "context",
      side: "UP",
      entry: [
        { feature: "beat_distance_sd_60s", op: ">", value: 1.5 },
        { feature: "traded_volume_30s", op: ">=", value: 500 },
        { feature: "traded_usdc_30s", op: ">=", value: 200 },
        {
          any: [
            { feature: "spot_return_bps_10s", op: ">", value: 3 },
            { feature: "futures_return_bps_10s", op: ">", value: 3 },
          ],
        },
        { feature: "spot_mid", op: "<", value: "futures_mid" },
        { feature: "futures_funding_rate", op: "<=", value: 0.0001 },
        { feature: "futures_open_interest", op: ">", value: 1000 },
        { not: { feature: "hour_utc", op: "<", value: 8 } },
        { feature: "minute_of_day_utc", op: "<", value: 1200 },
      ],
    };
    assert.equal(
      describeDefinition(d).split("\n")[2],
      "Enter when: the coin's distance to the price to beat in standard deviations for the time left (volatility over the last 60 s) is above 1.5" +
        " and the shares traded over the last 30 s is at least 500 and the USDC traded over the last 30 s is at least 200" +
        " and (Binance spot's return over the last 10 s (bps) is above 3 or Binance futures' return over the last 10 s (bps) is above 3)" +
        " and Binance spot's mid price is below Binance futures' mid price and Binance futures' last funding rate is at most 0.0001" +
        " and Binance futures' open interest (contracts) is above 1000 and not (the hour of the day (UTC, 0-23) is below 8)" +
        " and the minute of the day (UTC, 0-1439) is below 1200.",
    );
  });

  test("a preset of version 1 days: market orders, hold to resolution, no entry condition", () => {
    const d: StrategyDefinition = {
      ...(presetDefinition("momentum_entry") as StrategyDefinition),
      version: 1,
      entry: [],
    };
    assert.equal(
      describeDefinition(d),
      [
        '"Momentum entry" (definition version 1)',
        "Buy Up: 100 shares per entry, market order, at most 1 entry per market.",
        "Enter: at the first snapshot.",
        "Exit: none, every position is held to resolution.",
        "Orders fill at the next snapshot.",
      ].join("\n"),
    );
  });
});

describe("the API: definition_text beside every definition; version 1 kept as it was", () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  const run = (definition: unknown) =>
    t.app.inject({
      method: "POST",
      url: "/v1/backtest-ai/run",
      payload: { definition, coin: "btc", market_type: "5m", market_count: 2, wait: 60 },
      headers: { "x-api-key": t.key },
    });

  test("a version 1 definition runs as version 1, with the same results as version 2", async () => {
    const rules = { side: "UP", entry: [{ feature: "price_up", op: "<", value: 0.6 }] };
    const v1 = await run({ version: 1, ...rules });
    const v2 = await run({ version: 2, ...rules });
    assert.equal(v1.statusCode, 200, v1.body);
    assert.equal(v2.statusCode, 200, v2.body);
    const [a, b] = [v1.json(), v2.json()];
    // Version 1 is kept and answered as it was; the definitions differ in their version alone.
    assert.deepEqual([a.run.definition.version, b.run.definition.version], [1, 2]);
    assert.deepEqual({ ...a.run.definition, version: 2 }, b.run.definition);
    assert.equal(JSON.stringify(a.results), JSON.stringify(b.results));
    assert.equal(JSON.stringify(a.aggregate), JSON.stringify(b.aggregate));
    assert.equal(a.run.definition_text, describeDefinition(a.run.definition));
    assert.match(a.run.definition_text, /^"Custom strategy" \(definition version 1\)\n/);
  });

  test("a tree in a version 1 definition is a 400 saying to set version 2", async () => {
    const res = await run({
      version: 1,
      side: "UP",
      entry: [{ not: { feature: "price_up", op: ">", value: 0.6 } }],
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().error.message, /\/definition\/entry\/0 .*needs version 2/);
  });

  test("a feature of version 2 in a version 1 definition is a 400 saying to set version 2", async () => {
    const res = await run({
      version: 1,
      side: "UP",
      entry: [{ feature: "hour_utc", op: ">=", value: 8 }],
    });
    assert.equal(res.statusCode, 400);
    assert.match(
      res.json().error.message,
      /\/definition\/entry\/0 names the feature hour_utc, which needs version 2/,
    );
  });

  test("a generated strategy carries its words", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/backtest-ai/generate",
      payload: { prompt: "buy up when the up price is between 0.30 and 0.40" },
      headers: { "x-api-key": t.key },
    });
    assert.equal(res.statusCode, 200, res.body);
    const s = res.json().strategy;
    assert.equal(s.definition_text, describeDefinition(s.definition));
    assert.match(
      s.definition_text,
      /Enter when: the Up price is at least 0.3 and the Up price is at most 0.4\./,
    );
  });
});
