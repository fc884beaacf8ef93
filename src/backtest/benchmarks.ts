import { DEFINITION_VERSION, type StrategyDefinition } from "./definition.ts";
import { type MarketResult, type PreparedMarket, round } from "./engine.ts";
import { figuresOf, type Figures } from "./sweep.ts";

/**
 * What every run is measured against (DESIGN 3.12, docs/backtests.md "Benchmarks and intervals"): the
 * simplest strategies replayed on the same markets with the run's fill rules, and bootstrap intervals
 * of the run's figures over its markets. Both are seeded, so the same run gives the same bytes.
 */

export const BENCHMARK_NAMES = ["always_up", "always_down", "favourite", "random"] as const;
export type BenchmarkName = (typeof BENCHMARK_NAMES)[number];

/** What a run's benchmarks and intervals are computed with (body fields `seed`, `favourite_at_pct`). */
export interface BenchmarkSettings {
  /** Seeds the random benchmark and the bootstrap. */
  seed: number;
  /** The favourite benchmark buys the side priced higher at this percent of the market's length. */
  favourite_at_pct: number;
}

export const DEFAULT_BENCHMARK_SETTINGS: BenchmarkSettings = { seed: 1, favourite_at_pct: 50 };

/** Resamples of the bootstrap, and the interval's level. */
export const BOOTSTRAP_SAMPLES = 1000;
export const INTERVAL_LEVEL = 0.95;

/** mulberry32: a small seeded generator of uniform numbers in [0, 1), the same on every platform. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of a text: a market's own stream of the random benchmark, whatever the order markets come in. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * A benchmark's definition over the run's: its execution fields (order type and limit rule, position
 * size, fill cap, latency, rebates) kept, one entry per market when `elapsed_s` reaches `atSeconds`
 * (0: the first snapshot), held to resolution.
 */
function holdFrom(base: StrategyDefinition, name: string, side: "UP" | "DOWN", atSeconds: number) {
  const d: StrategyDefinition = {
    ...base,
    version: DEFINITION_VERSION,
    name,
    side,
    entry: atSeconds > 0 ? [{ feature: "elapsed_s", op: ">=", value: atSeconds }] : [],
    exit: {
      conditions: [],
      take_profit_pct: null,
      stop_loss_pct: null,
      time_limit_s: null,
      hold_to_resolution: true,
    },
    max_loss_percent: null,
    max_entries_per_market: 1,
  };
  return d;
}

/**
 * The benchmarks' definitions for one market (the favourite and the random entry depend on it): always
 * Up and always Down from the first snapshot; the favourite at `favourite_at_pct` of the market's length
 * (the side whose displayed price is higher at the first snapshot then, Up on a tie); a random side at a
 * random second of the market, drawn from the seed and the market's slug.
 */
export function benchmarkDefinitions(
  base: StrategyDefinition,
  prepared: PreparedMarket,
  settings: BenchmarkSettings,
): Record<BenchmarkName, StrategyDefinition> {
  const { market, views } = prepared;
  const length = market.endTime - market.startTime;
  const at = Math.floor((length * settings.favourite_at_pct) / 100);
  // No snapshot that late: the entry never holds, and the favourite does not trade the market.
  const decision = views.find((v) => v.time / 1e6 - market.startTime >= at);
  const up = decision === undefined || decision.snapshot.priceUp >= decision.snapshot.priceDown;
  const favourite = holdFrom(base, "favourite", up ? "UP" : "DOWN", at);
  const random = seededRandom(settings.seed ^ hashOf(market.slug));
  const side = random() < 0.5 ? "UP" : "DOWN";
  const entryAt = Math.floor(random() * length);
  return {
    always_up: holdFrom(base, "always_up", "UP", 0),
    always_down: holdFrom(base, "always_down", "DOWN", 0),
    favourite,
    random: holdFrom(base, "random", side, entryAt),
  };
}

export interface Benchmark extends Figures {
  name: BenchmarkName;
}

export function benchmarksOf(results: Record<BenchmarkName, MarketResult[]>): Benchmark[] {
  return BENCHMARK_NAMES.map((name) => ({ name, ...figuresOf(results[name]) }));
}

export interface Interval {
  low: number | null;
  high: number | null;
}

export interface Intervals {
  level: number;
  samples: number;
  seed: number;
  pnl: Interval;
  roi: Interval;
  win_rate: Interval;
}

/** The value at quantile q of sorted values (linear between neighbours). */
function quantile(sorted: readonly number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

function intervalOf(values: number[]): Interval {
  if (values.length === 0) return { low: null, high: null };
  values.sort((a, b) => a - b);
  const tail = (1 - INTERVAL_LEVEL) / 2;
  return { low: round(quantile(values, tail)), high: round(quantile(values, 1 - tail)) };
}

/**
 * Percentile bootstrap over markets: BOOTSTRAP_SAMPLES resamples of the run's markets with replacement
 * (seeded), each giving the total PnL, the ROI (PnL over cost) and the win rate (winning trades over
 * trades) as the aggregate defines them; the interval holds the middle INTERVAL_LEVEL of them. A
 * resample without a trade gives no ROI nor win rate; with no market at all every bound is null.
 */
export function bootstrapIntervals(results: readonly MarketResult[], seed: number): Intervals {
  const n = results.length;
  const pnl = results.map((r) => r.pnl);
  const cost = results.map((r) => r.cost);
  const trades = results.map((r) => r.trades.length);
  const wins = results.map((r) => r.trades.filter((t) => t.pnl > 0).length);
  const random = seededRandom(seed);
  const pnls: number[] = [];
  const rois: number[] = [];
  const rates: number[] = [];
  for (let s = 0; n > 0 && s < BOOTSTRAP_SAMPLES; s++) {
    let p = 0;
    let c = 0;
    let t = 0;
    let w = 0;
    for (let k = 0; k < n; k++) {
      const i = Math.floor(random() * n);
      p += pnl[i];
      c += cost[i];
      t += trades[i];
      w += wins[i];
    }
    pnls.push(p);
    if (c > 0) rois.push(p / c);
    if (t > 0) rates.push(w / t);
  }
  return {
    level: INTERVAL_LEVEL,
    samples: n > 0 ? BOOTSTRAP_SAMPLES : 0,
    seed,
    pnl: intervalOf(pnls),
    roi: intervalOf(rois),
    win_rate: intervalOf(rates),
  };
}
