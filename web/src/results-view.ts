import { createChart, type IChartApi, LineSeries, type UTCTimestamp } from "lightweight-charts";
import type { Api, BacktestAggregate, BacktestRunAnswer, StrategyDefinition } from "./api.ts";
import { BASE_OPTIONS, COLORS, LINE } from "./chart-theme.ts";
import { snippetBox } from "./code-snippet.ts";
import { el, scroller, table } from "./dom.ts";
import { downloadButton, runDefinition, runExport } from "./downloads.ts";
import {
  bps,
  count,
  epochSeconds,
  percent,
  percentOf,
  ratio,
  seconds,
  usdc,
  usdcText,
  utc,
} from "./format.ts";
import { benchmarksView, sweepView } from "./research-view.ts";
import { regularTimes } from "./time-axis.ts";
import { tradesTable } from "./trades-table.ts";

/**
 * A backtest's answer: the definition that ran (in words and as JSON, to copy back into the editor),
 * the aggregate, the equity curve, one row per market (opening it on click), every trade, downloads,
 * and the run as code.
 */

export interface ResultsViewOptions {
  api: () => Api | null;
  onOpen: (slug: string) => void;
  /** Puts a definition back into the editor. */
  onEdit: (definition: StrategyDefinition) => void;
}

/** The definition as the JSON download and the view show it: two-space indents, a final newline. */
export function definitionJson(definition: StrategyDefinition): string {
  return `${JSON.stringify(definition, null, 2)}\n`;
}

function aggregateFacts(a: BacktestAggregate): HTMLElement {
  const facts: [string, string][] = [
    ["Markets replayed, traded", `${count(a.markets)}, ${count(a.markets_traded)}`],
    ["Trades", count(a.trades)],
    ["PnL", usdcText(a.pnl)],
    ["Cost", usdcText(a.cost)],
    ["ROI", percent(a.roi)],
    ["Win rate", percent(a.win_rate)],
    ["Profit factor", ratio(a.profit_factor)],
    ["Max drawdown", usdcText(a.max_drawdown)],
    ["Sharpe, Sortino", `${ratio(a.sharpe)}, ${ratio(a.sortino)}`],
    ["Fees paid", usdcText(a.fees_paid)],
    ["Average slippage", bps(a.avg_slippage_bps)],
    ["Time in market", `${seconds(a.time_in_market_s)} (${percentOf(a.time_in_market_pct)})`],
    ["Orders unfilled", count(a.orders_unfilled)],
  ];
  return el(
    "dl",
    { class: "facts", id: "backtest-aggregate" },
    facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-fact": k }, v)]),
  );
}

/**
 * The equity curve: cumulative PnL at each trade's close (two closes in one second share a point),
 * drawn as a line between the closes over a time axis at regular steps.
 */
function equityChart(container: HTMLElement, a: BacktestAggregate): IChartApi {
  const chart = createChart(container, { ...BASE_OPTIONS, rightPriceScale: { visible: true } });
  const line = chart.addSeries(LineSeries, { ...LINE, color: COLORS.equity });
  const points = new Map<number, number | null>();
  for (const p of a.equity_curve) points.set(epochSeconds(p.time), p.equity);
  const times = [...points.keys()];
  // Empty points at a regular step between the closes: the time labels fall at regular steps.
  for (const t of regularTimes(Math.min(...times), Math.max(...times)))
    if (!points.has(t)) points.set(t, null);
  line.setData(
    [...points]
      .sort((x, y) => x[0] - y[0])
      .map(([t, v]) => (v === null ? { time: t as UTCTimestamp } : { time: t as UTCTimestamp, value: v })),
  );
  chart.timeScale().fitContent();
  return chart;
}

export class ResultsView {
  private chart: IChartApi | null = null;

  private readonly root: HTMLElement;
  private readonly options: ResultsViewOptions;

  constructor(root: HTMLElement, options: ResultsViewOptions) {
    this.root = root;
    this.options = options;
  }

  clear(): void {
    this.chart?.remove();
    this.chart = null;
    this.root.replaceChildren();
  }

  show(answer: BacktestRunAnswer): void {
    this.clear();
    const { run, aggregate, results, unresolved } = answer;
    this.root.append(
      el(
        "p",
        { id: "backtest-status" },
        `Run ${run.id}: ${run.status}, ${run.progress.markets_done} of ${run.progress.markets_total ?? "?"} markets.`,
      ),
    );
    this.root.append(this.definitionView(answer));
    if (run.status === "failed") {
      this.root.append(
        el("p", { class: "error", role: "alert" }, `The run failed: ${run.error ?? "no reason given"}`),
      );
      return;
    }
    if (aggregate) {
      const box = el("div", {
        class: "chart equity",
        id: "equity-chart",
        role: "img",
        "aria-label": "Equity curve",
      });
      this.root.append(
        el("h3", {}, "Aggregate"),
        aggregateFacts(aggregate),
        el("h3", {}, "Equity curve (cumulative PnL, USDC)"),
      );
      if (aggregate.equity_curve.length > 0) {
        this.root.append(box);
        this.chart = equityChart(box, aggregate);
      } else {
        this.root.append(el("p", { class: "note" }, "No trade was made, so there is no curve."));
      }
    }
    const research = [benchmarksView(answer), sweepView(answer)].filter((x) => x !== null);
    this.root.append(...research);
    this.root.append(...this.marketsView(answer));
    this.root.append(el("h3", {}, "Trades"), tradesTable(results), this.downloads(answer));
    this.root.append(
      snippetBox("run-snippet", "the run", {
        path: `/v1/backtest-ai/runs/${encodeURIComponent(run.id)}`,
        python: `backtest_run(${JSON.stringify(run.id)})`,
      }),
    );
    if (unresolved.length > 0)
      this.root.append(
        el(
          "p",
          { class: "note" },
          `Left out, not resolved yet: ${unresolved.map((u) => u.slug).join(", ")}.`,
        ),
      );
  }

  /** One row per market, each opening the market with the run's trades on its chart. */
  private marketsView(answer: BacktestRunAnswer): HTMLElement[] {
    const rows = answer.results.map((r) => {
      const open = el("button", { type: "button", class: "link" }, r.slug);
      open.addEventListener("click", () => this.options.onOpen(r.slug));
      return [
        open,
        utc(r.start_time),
        r.winner,
        count(r.trades.length),
        usdc(r.pnl),
        percent(r.roi),
        usdc(r.fees_usdc),
      ];
    });
    return [
      el("h3", {}, "Markets (open one to see its trades on the chart)"),
      scroller(
        table(
          "Results per market",
          ["Market", "Starts", "Winner", "Trades", "PnL (USDC)", "ROI", "Fees (USDC)"],
          rows,
          { id: "backtest-results" },
        ),
        "Results per market",
      ),
    ];
  }

  private definitionView(answer: BacktestRunAnswer): HTMLElement {
    const { definition, definition_text: text } = answer.run;
    const edit = el("button", { type: "button", id: "definition-to-editor" }, "Copy into the editor");
    edit.addEventListener("click", () => this.options.onEdit(definition));
    return el(
      "section",
      { id: "backtest-definition", "aria-label": "The definition that ran" },
      el("h3", {}, "The definition that ran"),
      el("pre", { id: "backtest-definition-text" }, text),
      el(
        "details",
        {},
        el("summary", {}, "As JSON"),
        el("pre", { id: "backtest-definition-json", class: "code", tabindex: 0 }, definitionJson(definition)),
      ),
      el("div", { class: "row" }, edit),
    );
  }

  private downloads(answer: BacktestRunAnswer): HTMLElement {
    const { run } = answer;
    const message = el("div", { id: "download-message", "aria-live": "polite" });
    const api = () => {
      const current = this.options.api();
      if (!current) throw new Error("Enter a key first.");
      return current;
    };
    const definition = downloadButton("download-definition", "Definition (JSON)", message, () =>
      runDefinition(api(), run.id),
    );
    const csv = downloadButton("download-csv", "Trades (CSV)", message, () =>
      runExport(api(), run.id, "csv"),
    );
    const parquet = downloadButton("download-parquet", "Trades (Parquet)", message, () =>
      runExport(api(), run.id, "parquet"),
    );
    return el(
      "section",
      { id: "backtest-downloads", "aria-label": "Downloads" },
      el("h3", {}, "Downloads"),
      el("div", { class: "row" }, definition, csv, parquet),
      message,
    );
  }
}
