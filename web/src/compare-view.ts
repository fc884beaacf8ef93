import type { Api, BacktestComparedRuns } from "./api.ts";
import { el, replace, scroller, table } from "./dom.ts";
import { errorBox } from "./errors.ts";
import { count, MISSING, percent, ratio, usdc } from "./format.ts";

/**
 * The runs of this page's session side by side (`GET /v1/backtest-ai/runs?ids=`), asked for with a
 * button: one request for all of them, only when wanted.
 */

/** The route compares at most this many runs: the latest ones are kept. */
const MAX_COMPARED = 10;

type Compared = BacktestComparedRuns["runs"][number];

function row(c: Compared): string[] {
  const a = c.aggregate;
  const interval = c.intervals?.pnl;
  return [
    c.run.id,
    c.run.definition.name ?? MISSING,
    `${c.run.coin.toUpperCase()} ${c.run.market_type}, ${count(a?.markets)}`,
    usdc(a?.pnl),
    interval && interval.low !== null && interval.high !== null
      ? `${usdc(interval.low)} to ${usdc(interval.high)}`
      : MISSING,
    percent(a?.roi),
    percent(a?.win_rate),
    count(a?.trades),
    usdc(a?.max_drawdown),
    ratio(a?.sharpe),
  ];
}

export class CompareView {
  readonly root: HTMLElement;
  private readonly ids: string[] = [];
  private readonly button = el("button", { type: "button", id: "compare-runs" }, "Compare");
  private readonly body = el("div", { id: "compare-body", "aria-live": "polite" });
  private readonly api: () => Api | null;

  constructor(api: () => Api | null) {
    this.api = api;
    this.button.addEventListener("click", () => void this.load());
    this.root = el(
      "section",
      { id: "compare", "aria-label": "Runs side by side", hidden: true },
      el("h3", {}, "This session's runs side by side"),
      el("div", { class: "row" }, this.button),
      this.body,
    );
  }

  /** A run finished: it joins the ones to compare (the latest MAX_COMPARED). */
  add(id: string): void {
    if (this.ids.includes(id)) return;
    this.ids.push(id);
    if (this.ids.length > MAX_COMPARED) this.ids.shift();
    this.root.hidden = this.ids.length < 2;
    this.button.textContent = `Compare the last ${this.ids.length} runs`;
  }

  clear(): void {
    this.ids.length = 0;
    this.root.hidden = true;
    this.body.replaceChildren();
  }

  private async load(): Promise<void> {
    const api = this.api();
    if (!api) return;
    try {
      const compared = await api.compareRuns(this.ids);
      replace(
        this.body,
        scroller(
          table(
            "Runs side by side, oldest first",
            [
              "Run",
              "Strategy",
              "Markets",
              "PnL (USDC)",
              "PnL 95% interval",
              "ROI",
              "Win rate",
              "Trades",
              "Max drawdown (USDC)",
              "Sharpe",
            ],
            compared.runs.map(row),
            { id: "compare-table" },
          ),
          "Runs side by side",
        ),
      );
    } catch (err) {
      replace(this.body, errorBox(err));
    }
  }
}
