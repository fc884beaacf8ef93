import { createChart, type IChartApi, LineSeries, type UTCTimestamp } from "lightweight-charts";
import type { BacktestAggregate, BacktestRunAnswer } from "./api.ts";
import { BASE_OPTIONS, COLORS, LINE } from "./chart-theme.ts";
import { el, scroller, table } from "./dom.ts";
import { epochSeconds, num, pct, usd, utc } from "./format.ts";

/** A backtest's answer: the aggregate, the equity curve, one row per market (opening it on click). */

function aggregateFacts(a: BacktestAggregate): HTMLElement {
  const facts: [string, string][] = [
    ["Markets replayed, traded", `${a.markets}, ${a.markets_traded}`],
    ["Trades", String(a.trades)],
    ["PnL", usd(a.pnl)],
    ["Cost", usd(a.cost)],
    ["ROI", pct(a.roi)],
    ["Win rate", pct(a.win_rate)],
    ["Profit factor", num(a.profit_factor, 2)],
    ["Max drawdown", usd(a.max_drawdown)],
    ["Sharpe, Sortino", `${num(a.sharpe, 2)}, ${num(a.sortino, 2)}`],
    ["Fees paid", usd(a.fees_paid)],
    ["Average slippage", a.avg_slippage_bps === null ? "—" : `${num(a.avg_slippage_bps, 1)} bps`],
    ["Time in market", `${num(a.time_in_market_s, 0)} s (${num(a.time_in_market_pct, 1)} %)`],
    ["Orders unfilled", String(a.orders_unfilled)],
  ];
  return el(
    "dl",
    { class: "facts", id: "backtest-aggregate" },
    facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]),
  );
}

/** The equity curve: cumulative PnL at each trade's close (two closes in one second share a point). */
function equityChart(container: HTMLElement, a: BacktestAggregate): IChartApi {
  const chart = createChart(container, { ...BASE_OPTIONS, rightPriceScale: { visible: true } });
  const line = chart.addSeries(LineSeries, { ...LINE, color: COLORS.equity });
  const points = new Map<number, number>();
  for (const p of a.equity_curve) points.set(epochSeconds(p.time), p.equity);
  line.setData(
    [...points].sort((x, y) => x[0] - y[0]).map(([t, v]) => ({ time: t as UTCTimestamp, value: v })),
  );
  chart.timeScale().fitContent();
  return chart;
}

export class ResultsView {
  private chart: IChartApi | null = null;

  private readonly root: HTMLElement;
  private readonly onOpen: (slug: string) => void;

  constructor(root: HTMLElement, onOpen: (slug: string) => void) {
    this.root = root;
    this.onOpen = onOpen;
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
    this.root.append(
      el(
        "section",
        { id: "backtest-definition", "aria-label": "The definition that ran" },
        el("h3", {}, "The definition that ran"),
        el("pre", { id: "backtest-definition-text" }, run.definition_text),
      ),
    );
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
    const rows = results.map((r) => {
      const open = el("button", { type: "button", class: "link" }, r.slug);
      open.addEventListener("click", () => this.onOpen(r.slug));
      return [
        open,
        utc(r.start_time),
        r.winner,
        String(r.trades.length),
        usd(r.pnl),
        pct(r.roi),
        usd(r.fees_usdc),
      ];
    });
    this.root.append(
      el("h3", {}, "Markets (open one to see its trades on the chart)"),
      scroller(
        table("Results per market", ["Market", "Starts", "Winner", "Trades", "PnL", "ROI", "Fees"], rows, {
          id: "backtest-results",
        }),
        "Results per market",
      ),
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
}
