/**
 * Sweeps (issue 25): a 100-combination sweep over 100 resolved BTC 5m markets (300 snapshots each,
 * books at every second) in a SQLite file of its own, against a single run of the same definition,
 * measured in the same process, alternately, BENCH_SWEEP_ROUNDS times (default 3; medians).
 *
 * - single: what one definition costs alone: each market's snapshots and trades read from the store as
 *   a run reads them, and replayed once by the engine (src/backtest/engine.ts replayMarket).
 * - sweep: the same markets through src/backtest/jobs/replay.ts replayMarkets with a 10 x 10 grid, as a
 *   sweep's job runs it: each market read and decoded once, then the definition, its four benchmarks
 *   and the 100 combinations replayed over the shared views, the table and intervals computed.
 *
 * The figure is seconds per combination (the sweep's time over 100) as a ratio to the single run's
 * seconds. Target: at most 1.2. Also reported: a single run as runs execute now (with its benchmarks
 * and intervals), against which the same sweep is cheaper still.
 */
import { join } from "node:path";
import { DEFINITION_DEFAULTS, type StrategyDefinition } from "../src/backtest/definition.ts";
import { replayMarket } from "../src/backtest/engine.ts";
import { readPrints, readSnapshots, replayMarketOf, replayMarkets } from "../src/backtest/jobs/replay.ts";
import { NO_RESEARCH } from "../src/backtest/research.ts";
import type { SweepAxis } from "../src/backtest/sweep.ts";
import { seedDemo } from "../src/demo/seed.ts";
import { SqliteStore } from "../src/store/dialects/sqlite/sqlite-store.ts";
import type { StoredMarket } from "../src/store/ports/market-store.ts";

const TARGET = 1.2;
/** 2026-07-24T00:20:34Z, as the other benchmarks. */
const ANCHOR = 1784852434;
const MARKETS = 100;

/** A threshold strategy with a take profit and a time limit: it trades, exits and re-enters. */
const DEFINITION: StrategyDefinition = {
  ...DEFINITION_DEFAULTS,
  name: "Sweep bench",
  side: "UP",
  entry: [{ feature: "price_up", op: "<", value: 0.5 }],
  exit: { ...DEFINITION_DEFAULTS.exit, take_profit_pct: 20, time_limit_s: 120 },
  max_entries_per_market: 3,
};

/** 10 x 10 = 100 combinations. */
const SWEEP: SweepAxis[] = [
  { field: "entry.0.value", values: [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75] },
  { field: "exit.take_profit_pct", values: [5, 10, 15, 20, 25, 30, 35, 40, 45, 50] },
];

export interface SweepBenchResult {
  markets: number;
  snapshots: number;
  combinations: number;
  rounds: number;
  /** A single replay of the definition over the markets (read, decode, one engine pass a market). */
  singleMs: number[];
  /** A single run as runs execute now: the definition, its benchmarks and intervals. */
  runMs: number[];
  sweepMs: number[];
  singleMedianMs: number;
  runMedianMs: number;
  sweepMedianMs: number;
  /** Sweep ms per combination over single ms: the target's figure. */
  ratio: number;
  /** Sweep ms per combination over a run's ms (benchmarks included). */
  ratioToRun: number;
  target: number;
  pass: boolean;
  trades: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

/** The definition alone: every market read as a run reads it and replayed once. */
async function single(store: SqliteStore, markets: readonly StoredMarket[]): Promise<number> {
  let trades = 0;
  for (const m of markets) {
    const snapshots = await readSnapshots(store.markets, m.key);
    const prints = await readPrints(store.trades, m.key);
    trades += replayMarket(DEFINITION, replayMarketOf(m), snapshots, prints).trades.length;
  }
  return trades;
}

export async function measureSweep(options: {
  tmp: string;
  log: (line: string) => void;
}): Promise<SweepBenchResult> {
  const { log } = options;
  const rounds = Math.max(1, Number(process.env.BENCH_SWEEP_ROUNDS ?? 3));
  const store = new SqliteStore(join(options.tmp, "sweep.db"));
  try {
    await store.migrate();
    log(`\nsweep: seeding ${MARKETS} resolved btc 5m markets`);
    await seedDemo(store, {
      seed: 42,
      anchor: ANCHOR,
      counts: { "5m": MARKETS + 1, "15m": 0, "1h": 0, "4h": 0, "24h": 0 },
      coins: ["btc"],
    });
    const listed = await store.markets.listMarkets({
      coin: "btc",
      marketType: "5m",
      resolved: true,
      limit: MARKETS,
      offset: 0,
    });
    const markets = listed.markets.reverse();
    const snapshots = markets.reduce((n, m) => n + m.snapshotCount, 0);
    const spec = { ...NO_RESEARCH, sweep: SWEEP };
    const singleMs: number[] = [];
    const runMs: number[] = [];
    const sweepMs: number[] = [];
    let trades = 0;
    let combinations = 0;
    // A warm-up of each, then alternate rounds, so that neither is measured colder than the other.
    await single(store, markets);
    await replayMarkets(store, DEFINITION, markets, {}, spec);
    for (let round = 0; round < rounds; round++) {
      singleMs.push(await timed(async () => (trades = await single(store, markets))));
      runMs.push(await timed(() => replayMarkets(store, DEFINITION, markets)));
      sweepMs.push(
        await timed(async () => {
          const done = await replayMarkets(store, DEFINITION, markets, {}, spec);
          combinations = done?.research.sweep?.combinations ?? 0;
        }),
      );
      log(
        `  round ${round + 1}: single ${singleMs[round].toFixed(0)} ms, run ${runMs[round].toFixed(0)} ms, sweep ${sweepMs[round].toFixed(0)} ms`,
      );
    }
    if (combinations !== 100) throw new Error(`the sweep had ${combinations} combinations, not 100`);
    const singleMedianMs = median(singleMs);
    const runMedianMs = median(runMs);
    const sweepMedianMs = median(sweepMs);
    const ratio = sweepMedianMs / combinations / singleMedianMs;
    const ratioToRun = sweepMedianMs / combinations / runMedianMs;
    log(
      `  ${combinations} combinations over ${markets.length} markets (${snapshots} snapshots): ${sweepMedianMs.toFixed(0)} ms, ` +
        `${(sweepMedianMs / combinations).toFixed(1)} ms a combination vs ${singleMedianMs.toFixed(0)} ms a single replay -> ` +
        `${ratio.toFixed(3)} (target <= ${TARGET}): ${ratio <= TARGET ? "PASS" : "FAIL"}; vs a run with benchmarks ` +
        `(${runMedianMs.toFixed(0)} ms) -> ${ratioToRun.toFixed(3)}`,
    );
    return {
      markets: markets.length,
      snapshots,
      combinations,
      rounds,
      singleMs,
      runMs,
      sweepMs,
      singleMedianMs,
      runMedianMs,
      sweepMedianMs,
      ratio,
      ratioToRun,
      target: TARGET,
      pass: ratio <= TARGET,
      trades,
    };
  } finally {
    await store.close();
  }
}
