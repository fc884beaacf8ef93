import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFINITION_DEFAULTS, type StrategyDefinition } from "../../../src/backtest/definition.ts";
import { replayMarkets, selectMarkets } from "../../../src/backtest/jobs/replay.ts";
import { NO_RESEARCH } from "../../../src/backtest/research.ts";
import { combinations, figuresOf } from "../../../src/backtest/sweep.ts";
import type { TradeRow } from "../../../src/domain/trade.ts";
import { HAND_MARKET, insertHandMarket, openSeededTestStore, openTestStore } from "../../helpers/app.ts";

// A run's replay reads a market's recorded trades from the store, and a resting limit order fills from
// them (docs/backtests.md, "Limit orders"): the store's trades, not a snapshot's best ask.

const T = HAND_MARKET.startTime;
const at = (sec: number, outcome: TradeRow["outcome"], price: number, size: number): TradeRow => ({
  time: Math.round((T + sec) * 1e6),
  outcome,
  side: "SELL",
  price,
  size,
  feeRateBps: 0,
  transactionHash: null,
});

test("a resting limit order of a run fills from the market's stored trades, behind the displayed queue", async () => {
  const store = await openTestStore();
  try {
    await insertHandMarket(store);
    const selected = await selectMarkets(store.markets, {
      coin: "sol",
      market_type: "15m",
      market_count: 1,
      start_time: null,
      end_time: null,
      hidden: [],
    });
    const key = selected.replay[0].key;
    // The Up book at 0 s bids 120.5 @ 0.51 and asks 7.25 @ 0.53: a limit buy of 10 at 0.51 takes no ask
    // and rests behind 120.5 shares. Up trades: 100 @ 0.51 at 0.5 s (queue 20.5 left), 25 @ 0.50 at 1 s
    // (20.5 to the queue, 4.5 ours), a Down trade (not ours), 3 @ 0.51 at 600 s, after the last snapshot
    // (ours). 7.5 shares at 0.51 = 3.825 USDC; Up won: 7.5 - 3.825 = +3.675.
    await store.trades.insertTrades([
      {
        marketKey: key,
        rows: [
          at(0.5, "Up", 0.51, 100),
          at(1, "Up", 0.5, 25),
          at(1.2, "Down", 0.49, 50),
          at(600, "Up", 0.51, 3),
        ],
      },
    ]);
    const d: StrategyDefinition = {
      ...DEFINITION_DEFAULTS,
      side: "UP",
      order_type: "LIMIT",
      limit_price: { reference: "fixed", offset: 0.51 },
      position_size: 10,
      latency_ms: 0,
      exit: { ...DEFINITION_DEFAULTS.exit, hold_to_resolution: true },
    };
    const done = await replayMarkets(store, d, selected.replay);
    const e = done?.results[0].trades[0].entry;
    assert.deepEqual(
      [e?.size, e?.maker_size, e?.cost, e?.queue_ahead, e?.unfilled, done?.results[0].pnl],
      [7.5, 7.5, 3.825, 120.5, 2.5, 3.675],
    );
  } finally {
    await store.close();
  }
});

test("a sweep's rows and walk-forward are each combination replayed alone; the run's own result is unchanged", async () => {
  const store = await openSeededTestStore(false);
  try {
    const selected = await selectMarkets(store.markets, {
      coin: "btc",
      market_type: "5m",
      market_count: 3,
      start_time: null,
      end_time: null,
      hidden: [],
    });
    assert.equal(selected.replay.length, 2, "the seeded demo's resolved 5m markets");
    const base: StrategyDefinition = {
      ...DEFINITION_DEFAULTS,
      exit: { ...DEFINITION_DEFAULTS.exit },
      side: "UP",
      entry: [{ feature: "price_up", op: "<", value: 0.6 }],
    };
    const sweep = [
      { field: "entry.0.value", values: [0.4, 0.5, 0.6] },
      { field: "exit.take_profit_pct", values: [10, 30] },
    ];
    const spec = { ...NO_RESEARCH, sweep, train_fraction: 0.5 };
    const done = await replayMarkets(store, base, selected.replay, {}, spec);
    const alone = await replayMarkets(store, base, selected.replay);
    assert.deepEqual(done?.results, alone?.results);
    assert.deepEqual(done?.aggregate, alone?.aggregate);
    const table = done?.research.sweep;
    assert.equal(table?.rows.length, 6);
    for (const [i, combo] of combinations(base, sweep).entries()) {
      const one = await replayMarkets(store, combo.definition, selected.replay);
      assert.deepEqual(table?.rows[i], { values: combo.values, ...figuresOf(one?.results ?? []) });
    }
    // Walk-forward: the combination with the best PnL on the first market, reported on the second.
    const wf = done?.research.walk_forward;
    assert.ok(wf?.chosen);
    const chosen = combinations(base, sweep).findIndex(
      (c) => JSON.stringify(c.values) === JSON.stringify(wf?.chosen),
    );
    const per = await Promise.all(
      combinations(base, sweep).map((c) => replayMarkets(store, c.definition, selected.replay)),
    );
    const trainPnls = per.map((p) => p?.results[0].pnl ?? 0);
    assert.equal(chosen, trainPnls.indexOf(Math.max(...trainPnls)));
    assert.deepEqual(wf?.test, figuresOf(per[chosen]?.results.slice(1) ?? []));
    // Benchmarks and intervals are there for every run, and the same for the same run.
    assert.deepEqual(
      done?.research.benchmarks.map((b) => b.name),
      ["always_up", "always_down", "favourite", "random"],
    );
    assert.deepEqual(done?.research.benchmarks, alone?.research.benchmarks);
    assert.deepEqual(done?.research.intervals, alone?.research.intervals);
  } finally {
    await store.close();
  }
});
