import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  DEFINITION_DEFAULTS,
  DefinitionError,
  type StrategyDefinition,
} from "../../src/backtest/definition.ts";
import type { MarketResult, TradeResult } from "../../src/backtest/engine.ts";
import {
  combinations,
  MAX_SWEEP_COMBINATIONS,
  readSweep,
  trainCount,
  walkForward,
} from "../../src/backtest/sweep.ts";

// Sweeps and walk-forward on small grids whose every figure can be checked by hand.

const BASE: StrategyDefinition = {
  ...DEFINITION_DEFAULTS,
  exit: { ...DEFINITION_DEFAULTS.exit },
  side: "UP",
  entry: [{ feature: "price_up", op: "<", value: 0.6 }],
};

/** The DefinitionError `work` throws: its pointer and words. */
function refusal(work: () => unknown): { pointer: string; message: string } {
  try {
    work();
  } catch (err) {
    assert.ok(err instanceof DefinitionError, String(err));
    return { pointer: err.pointer, message: err.message };
  }
  throw new Error("no refusal");
}

describe("readSweep", () => {
  test("a list of values, or from/to/step with both ends (no float noise)", () => {
    assert.deepEqual(
      readSweep(
        [
          { field: "exit.take_profit_pct", values: [10, 20] },
          { field: "entry.0.value", from: 0.1, to: 0.3, step: 0.1 },
        ],
        "/sweep",
      ),
      [
        { field: "exit.take_profit_pct", values: [10, 20] },
        { field: "entry.0.value", values: [0.1, 0.2, 0.3] },
      ],
    );
    // A step that does not land on `to` stops before it.
    assert.deepEqual(
      readSweep([{ field: "position_size", from: 10, to: 25, step: 10 }], "/sweep")[0].values,
      [10, 20],
    );
  });

  test(`more than ${MAX_SWEEP_COMBINATIONS} combinations, or a malformed axis, is refused where it is`, () => {
    assert.deepEqual(
      refusal(() =>
        readSweep(
          [
            { field: "position_size", from: 1, to: 11, step: 1 },
            { field: "latency_ms", values: [0, 100, 200, 300, 400, 500, 600, 700, 800, 900] },
          ],
          "/sweep",
        ),
      ),
      { pointer: "/sweep", message: "/sweep has 110 combinations; at most 100" },
    );
    assert.equal(
      refusal(() => readSweep([{ field: "position_size", from: 1, to: 1000, step: 1 }], "/sweep")).pointer,
      "/sweep/0/step",
    );
    assert.equal(refusal(() => readSweep([], "/sweep")).pointer, "/sweep");
    assert.equal(
      refusal(() => readSweep([{ field: "position_size", values: ["10"] }], "/sweep")).pointer,
      "/sweep/0/values",
    );
    assert.equal(
      refusal(() => readSweep([{ field: "position_size", values: [1], from: 1 }], "/sweep")).pointer,
      "/sweep/0/values",
    );
    assert.equal(
      refusal(() => readSweep([{ field: "position_size", from: 5, to: 1, step: 1 }], "/sweep")).pointer,
      "/sweep/0/from",
    );
    assert.equal(
      refusal(() => readSweep([{ field: "Position Size", values: [1] }], "/sweep")).pointer,
      "/sweep/0/field",
    );
    assert.equal(
      refusal(() => readSweep([{ field: "position_size", values: [1], by: 2 }], "/sweep")).pointer,
      "/sweep/0/by",
    );
  });
});

describe("combinations", () => {
  test("the grid, first axis slowest, each a checked definition with the values in place", () => {
    const axes = readSweep(
      [
        { field: "entry.0.value", values: [0.4, 0.5] },
        { field: "exit.take_profit_pct", values: [10, 20, 30] },
      ],
      "/sweep",
    );
    const combos = combinations(BASE, axes);
    assert.equal(combos.length, 6);
    assert.deepEqual(
      combos.map((c) => c.values),
      [
        { "entry.0.value": 0.4, "exit.take_profit_pct": 10 },
        { "entry.0.value": 0.4, "exit.take_profit_pct": 20 },
        { "entry.0.value": 0.4, "exit.take_profit_pct": 30 },
        { "entry.0.value": 0.5, "exit.take_profit_pct": 10 },
        { "entry.0.value": 0.5, "exit.take_profit_pct": 20 },
        { "entry.0.value": 0.5, "exit.take_profit_pct": 30 },
      ],
    );
    const last = combos[5].definition;
    assert.deepEqual(
      [last.entry, last.exit.take_profit_pct],
      [[{ feature: "price_up", op: "<", value: 0.5 }], 30],
    );
    // The base is left as it was.
    assert.deepEqual(
      [BASE.entry[0], BASE.exit.take_profit_pct],
      [{ feature: "price_up", op: "<", value: 0.6 }, null],
    );
  });

  test("an unknown field, a field that is not numeric, and a value the rules refuse", () => {
    const axis = (field: string, values: number[]) => [{ field, values }];
    assert.deepEqual(
      refusal(() => combinations(BASE, axis("exit.nope", [1]))),
      { pointer: "/sweep/0/field", message: "/sweep/0/field exit.nope is not a field of the definition" },
    );
    assert.equal(
      refusal(() => combinations(BASE, axis("entry.3.value", [1]))).message,
      "/sweep/0/field entry.3.value is not a field of the definition",
    );
    assert.equal(
      refusal(() => combinations(BASE, axis("side", [1]))).message,
      "/sweep/0/field side is not a numeric field (it is string)",
    );
    assert.equal(
      refusal(() => combinations(BASE, axis("limit_price", [1]))).message,
      "/sweep/0/field limit_price is not a numeric field (it is null)",
    );
    assert.equal(
      refusal(() => combinations(BASE, axis("version", [1]))).message,
      "/sweep/0/field version cannot be swept",
    );
    assert.match(
      refusal(() => combinations(BASE, axis("exit.stop_loss_pct", [50, 150]))).message,
      /exit\.stop_loss_pct = 150.*\/exit\/stop_loss_pct must be <= 100/,
    );
  });
});

/** A market result with one trade of `pnl` on `cost` (or none with pnl null). */
function result(slug: string, pnl: number | null, cost = 10): MarketResult {
  const trades =
    pnl === null
      ? []
      : [
          {
            pnl,
            roi: pnl / cost,
            entry: { cost, slippage_bps: 0 },
            exit: null,
            closed_at: "2026-07-24T00:05:00Z",
          },
        ];
  return {
    slug,
    start_time: "2026-07-24T00:00:00Z",
    end_time: "2026-07-24T00:05:00Z",
    winner: "Up",
    snapshots: 300,
    trades: trades as unknown as TradeResult[],
    orders_unfilled: 0,
    pnl: pnl ?? 0,
    cost: pnl === null ? 0 : cost,
    roi: pnl === null ? null : pnl / cost,
    fees_usdc: 0,
    rebates_usdc: 0,
    time_in_market_s: 0,
  };
}

describe("walkForward", () => {
  test("the training markets' best PnL chosen, then reported on the rest", () => {
    const combos = combinations(BASE, [{ field: "exit.take_profit_pct", values: [10, 20, 30] }]);
    // Four markets: the first two train (0.5), the last two test.
    const results = [
      [result("a", 1), result("b", 1), result("c", 5), result("d", 5)], // train 2: not chosen
      [result("a", 4), result("b", -1), result("c", -3), result("d", null)], // train 3: chosen
      [result("a", 3), result("b", 0), result("c", 9), result("d", 9)], // train 3: a tie, the earlier wins
    ];
    const wf = walkForward(0.5, combos, results);
    assert.deepEqual(
      [wf.train_markets, wf.test_markets, wf.metric, wf.chosen],
      [2, 2, "pnl", { "exit.take_profit_pct": 20 }],
    );
    // Train: +4 and -1 on 20 = 3, ROI 0.15, one win in two trades. Test: -3 on 10, one market traded of two.
    assert.deepEqual([wf.train?.pnl, wf.train?.roi, wf.train?.win_rate, wf.train?.trades], [3, 0.15, 0.5, 2]);
    assert.deepEqual(
      [
        wf.test?.pnl,
        wf.test?.roi,
        wf.test?.win_rate,
        wf.test?.trades,
        wf.test?.markets,
        wf.test?.markets_traded,
      ],
      [-3, -0.3, 0, 1, 2, 1],
    );
  });

  test("the split keeps a market on each side; one market cannot be split", () => {
    assert.deepEqual(
      [trainCount(10, 0.7), trainCount(10, 0.01), trainCount(10, 0.99), trainCount(2, 0.5)],
      [7, 1, 9, 1],
    );
    const combos = combinations(BASE, [{ field: "exit.take_profit_pct", values: [10] }]);
    const wf = walkForward(0.5, combos, [[result("a", 1)]]);
    assert.deepEqual(
      [wf.chosen, wf.train, wf.test, wf.train_markets, wf.test_markets],
      [null, null, null, 1, 0],
    );
  });
});
