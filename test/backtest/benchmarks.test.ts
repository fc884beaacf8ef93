import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  BENCHMARK_NAMES,
  benchmarkDefinitions,
  benchmarksOf,
  bootstrapIntervals,
  seededRandom,
} from "../../src/backtest/benchmarks.ts";
import { DEFINITION_DEFAULTS, type StrategyDefinition } from "../../src/backtest/definition.ts";
import {
  type MarketResult,
  prepareMarket,
  replayPrepared,
  type TradeResult,
} from "../../src/backtest/engine.ts";
import type { ReplayMarket } from "../../src/backtest/features.ts";
import { mirrorBook, type OrderBook } from "../../src/domain/book.ts";
import type { Winner } from "../../src/domain/market.ts";
import type { SnapshotRow } from "../../src/domain/snapshot.ts";
import { encodeBooks } from "../../src/wire/book-codec.ts";

// Benchmarks on hand-built markets whose winners are known, and the bootstrap's reproducibility.

const T0 = 1_784_851_200;

function market(k: number, winner: Winner): ReplayMarket {
  const start = T0 + k * 300;
  return {
    slug: `btc-updown-5m-${start}`,
    coin: "btc",
    marketType: "5m",
    startTime: start,
    endTime: start + 300,
    coinPriceStart: 100,
    winner,
    feeSchedule: null,
  };
}

/** Up: bids 50 @ 0.48; asks 10 @ 0.50, 20 @ 0.51, 100 @ 0.52 (Down the mirror: asks 50 @ 0.52). */
const UP: OrderBook = {
  bids: [{ price: 0.48, size: 50 }],
  asks: [
    { price: 0.5, size: 10 },
    { price: 0.51, size: 20 },
    { price: 0.52, size: 100 },
  ],
};

/** Snapshots at 0, 1, 150 and 151 s, priced at the book's mid (Up 0.49, Down 0.51: Down the favourite). */
function snapshots(m: ReplayMarket): SnapshotRow[] {
  return [0, 1, 150, 151].map((sec) => ({
    time: (m.startTime + sec) * 1e6,
    coinPrice: 100,
    priceUp: 0.49,
    priceDown: 0.51,
    books: encodeBooks(UP, mirrorBook(UP)),
  }));
}

const RUN: StrategyDefinition = {
  ...DEFINITION_DEFAULTS,
  exit: { ...DEFINITION_DEFAULTS.exit, take_profit_pct: 5 },
  side: "UP",
  entry: [{ feature: "price_up", op: "<", value: 0.3 }],
  position_size: 30,
  max_loss_percent: 20,
};

function benchmarks(winners: Winner[], seed = 1) {
  const results: Record<string, MarketResult[]> = {};
  for (const name of BENCHMARK_NAMES) results[name] = [];
  winners.forEach((w, k) => {
    const prepared = prepareMarket(market(k, w), snapshots(market(k, w)));
    const defs = benchmarkDefinitions(RUN, prepared, { seed, favourite_at_pct: 50 });
    for (const name of BENCHMARK_NAMES) results[name].push(replayPrepared(defs[name], prepared, []));
  });
  return {
    results,
    table: benchmarksOf(results as Record<(typeof BENCHMARK_NAMES)[number], MarketResult[]>),
  };
}

describe("benchmarks", () => {
  test("always Up and always Down: the run's size bought at the next snapshot, held to the known winner", () => {
    const { table } = benchmarks(["Up", "Down"]);
    const byName = Object.fromEntries(table.map((b) => [b.name, b]));
    // Up: 30 shares = 10 @ 0.50 + 20 @ 0.51 = 15.20 a market; +14.80 (Up won), -15.20 (Down won).
    assert.deepEqual(
      [byName.always_up.pnl, byName.always_up.trades, byName.always_up.win_rate, byName.always_up.roi],
      [-0.4, 2, 0.5, -0.013158],
    );
    // Down: 30 @ 0.52 = 15.60; -15.60, then +14.40.
    assert.deepEqual([byName.always_down.pnl, byName.always_down.trades], [-1.2, 2]);
    // The favourite at 150 s is Down (0.51 against 0.49), bought at 151 s: the same as always Down.
    assert.deepEqual([byName.favourite.pnl, byName.favourite.trades], [-1.2, 2]);
  });

  test("the run's exit rules are not the benchmarks': held to resolution, no max loss", () => {
    const prepared = prepareMarket(market(0, "Up"), snapshots(market(0, "Up")));
    const defs = benchmarkDefinitions(RUN, prepared, { seed: 1, favourite_at_pct: 50 });
    for (const d of Object.values(defs)) {
      assert.deepEqual(
        [d.exit.hold_to_resolution, d.exit.take_profit_pct, d.max_loss_percent],
        [true, null, null],
      );
      assert.equal(d.position_size, 30);
    }
    assert.deepEqual(defs.favourite.entry, [{ feature: "elapsed_s", op: ">=", value: 150 }]);
    assert.deepEqual(defs.always_up.entry, []);
  });

  test("the random entry is the seed's: the same seed gives the same side and second", () => {
    const prepared = prepareMarket(market(0, "Up"), snapshots(market(0, "Up")));
    const draw = (seed: number) => benchmarkDefinitions(RUN, prepared, { seed, favourite_at_pct: 50 }).random;
    assert.deepEqual(draw(7), draw(7));
    const draws = new Set([1, 2, 3, 4, 5, 6, 7, 8].map((s) => JSON.stringify([draw(s).side, draw(s).entry])));
    assert.ok(draws.size > 1, "other seeds draw otherwise");
    assert.deepEqual(benchmarks(["Up", "Down"], 9).table, benchmarks(["Up", "Down"], 9).table);
  });
});

/** A market result with one trade of `pnl` on a cost of 10. */
function result(pnl: number): MarketResult {
  const trade = { pnl, entry: { cost: 10 } } as unknown as TradeResult;
  return { pnl, cost: 10, trades: [trade] } as unknown as MarketResult;
}

describe("bootstrapIntervals", () => {
  test("reproducible with a seed, different with another, and around the sample's figures", () => {
    const results = [5, -3, 8, -10, 2, 7, -1, 4, -6, 9].map(result);
    const a = bootstrapIntervals(results, 42);
    assert.deepEqual(bootstrapIntervals(results, 42), a);
    assert.notDeepEqual(bootstrapIntervals(results, 43), a);
    assert.deepEqual([a.level, a.samples, a.seed], [0.95, 1000, 42]);
    // The sample's total PnL is 15 on 100 (ROI 0.15), win rate 0.6: each inside its interval.
    const inside = (x: number, i: { low: number | null; high: number | null }) =>
      (i.low as number) <= x && x <= (i.high as number);
    assert.ok(inside(15, a.pnl) && inside(0.15, a.roi) && inside(0.6, a.win_rate), JSON.stringify(a));
    assert.ok((a.pnl.low as number) < 0 && (a.pnl.high as number) > 15);
  });

  test("identical markets give a point; no market gives no interval", () => {
    const same = bootstrapIntervals([2, 2, 2, 2].map(result), 1);
    assert.deepEqual(
      [same.pnl, same.roi, same.win_rate],
      [
        { low: 8, high: 8 },
        { low: 0.2, high: 0.2 },
        { low: 1, high: 1 },
      ],
    );
    const none = bootstrapIntervals([], 1);
    assert.deepEqual(
      [none.samples, none.pnl, none.roi],
      [0, { low: null, high: null }, { low: null, high: null }],
    );
  });

  test("the generator is mulberry32: its first draws are fixed", () => {
    const r = seededRandom(1);
    assert.deepEqual(
      [r(), r()].map((x) => Math.round(x * 1e6) / 1e6),
      [0.627074, 0.002736],
    );
  });
});
