import type { BacktestRunAnswer } from "./api.ts";
import { el, scroller, table } from "./dom.ts";
import { count, fixed, MISSING, percent, ratio, usdc } from "./format.ts";

/**
 * What stands beside a run (DESIGN 3.12): its benchmarks on the same markets and fill rules, the
 * bootstrap intervals of its PnL, ROI and win rate over markets, and, for a sweep, its table of
 * combinations as a heat map with the walk-forward's choice.
 */

type Benchmark = NonNullable<BacktestRunAnswer["benchmarks"]>[number];
type Sweep = NonNullable<BacktestRunAnswer["sweep"]>;
type SweepRow = Sweep["rows"][number];
type WalkForward = NonNullable<BacktestRunAnswer["walk_forward"]>;

const BENCHMARK_NAMES: Record<Benchmark["name"], string> = {
  always_up: "Always Up",
  always_down: "Always Down",
  favourite: "Buy the favourite",
  random: "Random entry (seeded)",
};

/** The columns every summary of a set of trades has: the run's, a benchmark's, a combination's. */
interface Summary {
  pnl: number;
  roi: number | null;
  win_rate: number | null;
  trades: number;
  max_drawdown: number;
  sharpe: number | null;
}

const SUMMARY_HEAD = ["PnL (USDC)", "ROI", "Win rate", "Trades", "Max drawdown (USDC)", "Sharpe"];

function summaryCells(s: Summary): string[] {
  return [
    usdc(s.pnl),
    percent(s.roi),
    percent(s.win_rate),
    count(s.trades),
    usdc(s.max_drawdown),
    ratio(s.sharpe),
  ];
}

/** The run against its benchmarks, and its intervals; null when the answer has neither. */
export function benchmarksView(answer: BacktestRunAnswer): HTMLElement | null {
  const { aggregate, benchmarks, intervals } = answer;
  if (!aggregate || (!benchmarks && !intervals)) return null;
  const box = el("section", { id: "backtest-benchmarks", "aria-label": "Benchmarks and intervals" });
  if (benchmarks && benchmarks.length > 0) {
    const rows = [
      ["This strategy", ...summaryCells(aggregate)],
      ...benchmarks.map((b) => [BENCHMARK_NAMES[b.name], ...summaryCells(b)]),
    ];
    box.append(
      el("h3", {}, "Against benchmarks (the same markets and fill rules, held to resolution)"),
      scroller(
        table("The run and its benchmarks", ["Strategy", ...SUMMARY_HEAD], rows, { id: "benchmarks-table" }),
        "Benchmarks",
      ),
    );
  }
  if (intervals) {
    const range = (r: { low: number | null; high: number | null }, write: (n: number | null) => string) =>
      r.low === null || r.high === null ? MISSING : `${write(r.low)} to ${write(r.high)}`;
    const level = `${count(intervals.level * 100)}%`;
    const facts: [string, string][] = [
      ["PnL (USDC)", range(intervals.pnl, usdc)],
      ["ROI", range(intervals.roi, percent)],
      ["Win rate", range(intervals.win_rate, percent)],
    ];
    box.append(
      el("h3", {}, `${level} intervals over markets`),
      el(
        "p",
        { class: "note" },
        `Percentile bootstrap: ${count(intervals.samples)} resamples of the run's markets, seed ${intervals.seed} (the same run gives the same bounds).`,
      ),
      el(
        "dl",
        { class: "facts", id: "backtest-intervals" },
        facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-interval": k }, v)]),
      ),
    );
  }
  return box;
}

/** A value of a swept field as written in the grid (enough decimals for 0.05 steps, no more). */
function axisValue(n: number): string {
  return Number.isInteger(n) ? count(n) : fixed(n, 4).replace(/0+$/, "");
}

/** Green for a gain, red for a loss, stronger as |PnL| nears the sweep's largest. */
function heat(pnl: number, largest: number): string {
  const strength = largest > 0 ? Math.min(1, Math.abs(pnl) / largest) : 0;
  const alpha = (0.1 + 0.6 * strength).toFixed(3);
  return pnl >= 0 ? `rgba(27, 138, 58, ${alpha})` : `rgba(198, 40, 40, ${alpha})`;
}

function valuesText(values: Record<string, number>): string {
  return Object.entries(values)
    .map(([field, v]) => `${field} = ${axisValue(v)}`)
    .join(", ");
}

/**
 * The heat map of a sweep's PnL: the first field's values down, the second's across (one row for a
 * single field). A sweep of more fields is shown as its table only.
 */
function heatMap(sweep: Sweep): HTMLElement | null {
  const [down, across] = sweep.fields;
  if (sweep.fields.length > 2 || down === undefined) return null;
  const unique = (field: string) => [...new Set(sweep.rows.map((r) => r.values[field]))];
  const rowsValues = unique(down);
  const columnValues = across === undefined ? [null] : unique(across);
  const largest = Math.max(...sweep.rows.map((r) => Math.abs(r.pnl)));
  const find = (a: number, b: number | null) =>
    sweep.rows.find((r) => r.values[down] === a && (across === undefined || r.values[across] === b));
  const head = el(
    "tr",
    {},
    el("th", { scope: "col" }, across === undefined ? down : `${down} (down), ${across} (across)`),
    columnValues.map((v) => el("th", { scope: "col" }, v === null ? "PnL (USDC)" : axisValue(v))),
  );
  const body = rowsValues.map((a) =>
    el(
      "tr",
      {},
      el("th", { scope: "row" }, axisValue(a)),
      columnValues.map((b) => {
        const row: SweepRow | undefined = find(a, b);
        if (!row) return el("td", {}, MISSING);
        const cell = el(
          "td",
          {
            class: "heat",
            title: `${valuesText(row.values)}: PnL ${usdc(row.pnl)} USDC, ROI ${percent(row.roi)}, ${count(row.trades)} trades`,
          },
          usdc(row.pnl),
        );
        cell.style.background = heat(row.pnl, largest); // CSSOM, which the page's CSP allows
        return cell;
      }),
    ),
  );
  return scroller(
    el(
      "table",
      { id: "sweep-heatmap", class: "heatmap" },
      el("caption", {}, "PnL of each combination (USDC): green a gain, red a loss"),
      el("thead", {}, head),
      el("tbody", {}, body),
    ),
    "Sweep heat map",
  );
}

function walkForwardView(w: WalkForward): HTMLElement {
  const side = (name: string, s: Summary | null) => [
    name,
    ...(s ? summaryCells(s) : SUMMARY_HEAD.map(() => MISSING)),
  ];
  return el(
    "div",
    { id: "walk-forward" },
    el("h4", {}, "Walk-forward"),
    el(
      "p",
      {},
      `Chosen by ${w.metric === "pnl" ? "PnL" : w.metric} on the first ${count(w.train_markets)} markets (${percent(w.train_fraction)}): ` +
        (w.chosen ? valuesText(w.chosen) : "nothing (no combination traded)") +
        `; reported on the other ${count(w.test_markets)}.`,
    ),
    scroller(
      table(
        "The chosen combination, on the markets it was chosen on and on the rest",
        ["Markets", ...SUMMARY_HEAD],
        [side("Chosen on (train)", w.train), side("Reported on (test)", w.test)],
        { id: "walk-forward-table" },
      ),
      "Walk-forward",
    ),
  );
}

/** A sweep's heat map, its table and its walk-forward; null for a run that is not a sweep. */
export function sweepView(answer: BacktestRunAnswer): HTMLElement | null {
  const { sweep, walk_forward: walkForward } = answer;
  if (!sweep) return null;
  const rows = sweep.rows.map((r) => [
    ...sweep.fields.map((f) => axisValue(r.values[f])),
    ...summaryCells(r),
  ]);
  return el(
    "section",
    { id: "backtest-sweep", "aria-label": "Sweep" },
    el("h3", {}, `Sweep: ${count(sweep.combinations)} combinations of ${sweep.fields.join(", ")}`),
    heatMap(sweep),
    scroller(
      table("Every combination", [...sweep.fields, ...SUMMARY_HEAD], rows, { id: "sweep-table" }),
      "Sweep results",
    ),
    walkForward ? walkForwardView(walkForward) : null,
  );
}
