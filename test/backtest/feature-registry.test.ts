import assert from "node:assert/strict";
import { test } from "node:test";
import { Value } from "typebox/value";
import { DEFINITION_DEFAULTS, DEFINITION_SCHEMA } from "../../src/backtest/definition.ts";
import {
  BOOK_FEATURES,
  FEATURE_PATTERN,
  inVersion1,
  LOOKBACK_FEATURES,
  MOMENT_FEATURES,
  parseFeature,
  PLAIN_FEATURES,
} from "../../src/backtest/feature-registry.ts";
import { featureFn } from "../../src/backtest/features.ts";

/** Every name the registry holds, the book features with and without a depth. */
const NAMES = [
  ...PLAIN_FEATURES,
  ...MOMENT_FEATURES,
  ...BOOK_FEATURES.flatMap((f) =>
    ["up", "down"].flatMap((t) => [`${f}_${t}`, `${f}_${t}_1`, `${f}_${t}_99`]),
  ),
  ...LOOKBACK_FEATURES.flatMap((f) => [`${f}_1s`, `${f}_30s`, `${f}_9999s`]),
];

const definitionWith = (feature: string) => ({
  ...DEFINITION_DEFAULTS,
  side: "UP",
  entry: [{ feature, op: ">", value: 0.5 }],
});

test("the definition schema accepts exactly the registry's features, and the engine computes each", () => {
  for (const name of NAMES) {
    assert.ok(new RegExp(FEATURE_PATTERN).test(name), name);
    assert.ok(Value.Check(DEFINITION_SCHEMA, definitionWith(name)), name);
    assert.equal(typeof featureFn(name), "function", name);
  }
  for (const name of [
    "price",
    "depth_bid_up_0",
    "depth_bid_up_100",
    "book_imbalance_up_",
    "PRICE_UP",
    "spread_up_3",
    "coin_return_bps_0s",
    "coin_return_bps_10000s",
    "coin_volatility_bps_30",
    "price_change_cents_30s",
    "spot_mid_30s",
    "hour_utc_1s",
    "traded_volume",
    "beat_distance_sd_0s",
  ]) {
    assert.equal(parseFeature(name), null, name);
    assert.equal(Value.Check(DEFINITION_SCHEMA, definitionWith(name)), false, name);
    assert.throws(() => featureFn(name), /unknown feature/);
  }
});

test("a book feature's name gives its family, token and depth", () => {
  assert.deepEqual(parseFeature("depth_ask_down_12"), {
    kind: "book",
    family: "depth_ask",
    token: "down",
    ticks: 12,
  });
  assert.deepEqual(parseFeature("book_imbalance_up"), {
    kind: "book",
    family: "book_imbalance",
    token: "up",
    ticks: null,
  });
  assert.deepEqual(parseFeature("remaining_pct"), { kind: "plain", name: "remaining_pct" });
  assert.deepEqual(parseFeature("price_down_change_cents_60s"), {
    kind: "lookback",
    family: "price_down_change_cents",
    seconds: 60,
  });
});

test("the moment's features and the lookbacks need version 2; the plain and book features do not", () => {
  assert.deepEqual(parseFeature("futures_funding_rate"), { kind: "moment", name: "futures_funding_rate" });
  assert.deepEqual(parseFeature("beat_distance_sd_120s"), {
    kind: "lookback",
    family: "beat_distance_sd",
    seconds: 120,
  });
  assert.deepEqual(
    ["price_up", "depth_bid_up_3", "hour_utc", "spot_mid", "traded_volume_30s"].map(inVersion1),
    [true, true, false, false, false],
  );
});
