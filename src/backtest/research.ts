import {
  type Benchmark,
  type BenchmarkSettings,
  DEFAULT_BENCHMARK_SETTINGS,
  type Intervals,
} from "./benchmarks.ts";
import type { SweepAxis, SweepTable, WalkForward } from "./sweep.ts";

/**
 * What a run computes beside its own result (DESIGN 3.12): what it is asked (stored in the run's
 * selection) and what it gives (stored beside its aggregate, answered as the run answer's last fields).
 */

export interface ResearchSpec extends BenchmarkSettings {
  sweep: SweepAxis[] | null;
  /** Walk-forward: the fraction of the markets (oldest first) the sweep's best combination is chosen on. */
  train_fraction: number | null;
}

export const NO_RESEARCH: ResearchSpec = { ...DEFAULT_BENCHMARK_SETTINGS, sweep: null, train_fraction: null };

export interface Research {
  benchmarks: Benchmark[];
  intervals: Intervals;
  sweep: SweepTable | null;
  walk_forward: WalkForward | null;
}
