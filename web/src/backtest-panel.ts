import type { Api, BacktestRunAnswer, RunBacktestBody, RunStrategyBody, StrategyDefinition } from "./api.ts";
import { CompareView } from "./compare-view.ts";
import { checkDefinition, type Problem } from "./definition-check.ts";
import { el, field, replace, select } from "./dom.ts";
import { errorBox } from "./errors.ts";
import { ResultsView } from "./results-view.ts";
import { SweepForm, type SweepInput } from "./sweep-form.ts";

/**
 * The backtest panel (DESIGN 3.9): a preset, a prompt, or a definition edited as JSON and checked
 * against the API's schema before it is sent; then the results, the equity curve, and the trades on
 * the market's chart (through `onResults`). docs/backtests.md says what every field means.
 */

type Mode = "preset" | "prompt" | "definition";

/** A complete definition (every field of version 2) that trades in most markets, to edit from. */
const EXAMPLE_DEFINITION = {
  version: 2,
  name: "Up under 60c, take profit 20%",
  side: "UP",
  entry: [{ feature: "price_up", op: "<", value: 0.6 }],
  exit: {
    conditions: [],
    take_profit_pct: 20,
    stop_loss_pct: null,
    time_limit_s: 120,
    hold_to_resolution: false,
  },
  order_type: "MARKET",
  limit_price: null,
  limit_expiry_s: null,
  count_rebates: false,
  position_size: 100,
  max_fill_price: null,
  max_loss_percent: null,
  max_entries_per_market: 1,
  latency_ms: null,
};

export interface BacktestPanelOptions {
  api: () => Api | null;
  onResults: (answer: BacktestRunAnswer) => void;
  onOpen: (slug: string) => void;
  /** After every request that may spend the month's quota (a preset or a prompt), answered or not. */
  onQuotaSpent: () => void;
}

export class BacktestPanel {
  private readonly modes = new Map<Mode, HTMLInputElement>();
  private readonly preset = select("bt-preset", []);
  private readonly prompt = el(
    "textarea",
    { id: "bt-prompt", rows: 2, maxlength: 2000 },
    "buy up below 45c, take profit at 20%",
  );
  private readonly definition = el(
    "textarea",
    { id: "bt-definition", rows: 14, spellcheck: "false" },
    JSON.stringify(EXAMPLE_DEFINITION, null, 2),
  );
  private readonly problems = el("ul", {
    id: "definition-problems",
    class: "problems",
    role: "status",
    "aria-live": "polite",
  });
  private readonly coin = select("bt-coin", []);
  private readonly type = select("bt-type", []);
  private readonly count = el("input", { id: "bt-count", type: "number", min: 1, max: 100, value: 10 });
  private readonly run = el("button", { type: "submit", id: "bt-run" }, "Run backtest");
  private readonly message = el("div", { id: "backtest-message", "aria-live": "polite" });
  private readonly results: ResultsView;
  private readonly sweep = new SweepForm();
  private readonly compare: CompareView;
  private readonly parts: Record<Mode, HTMLElement>;
  private schema: object | null = null;

  private readonly options: BacktestPanelOptions;

  constructor(root: HTMLElement, options: BacktestPanelOptions) {
    this.options = options;
    const modes = el("fieldset", { class: "modes" }, el("legend", {}, "Strategy from"));
    for (const [mode, text] of [
      ["preset", "a preset"],
      ["prompt", "a prompt"],
      ["definition", "a definition"],
    ] as const) {
      const radio = el("input", {
        type: "radio",
        name: "bt-mode",
        id: `bt-mode-${mode}`,
        value: mode,
        checked: mode === "preset",
      });
      radio.addEventListener("change", () => this.showMode());
      this.modes.set(mode, radio);
      modes.append(el("span", { class: "choice" }, radio, el("label", { for: radio.id }, text)));
    }
    this.parts = {
      preset: field("Preset", this.preset, "Spends one of the month's generations."),
      prompt: field(
        "Prompt",
        this.prompt,
        "In words (docs/backtests.md lists the phrasings). Spends one generation.",
      ),
      definition: el(
        "div",
        {},
        field(
          "Definition (JSON)",
          this.definition,
          "Checked against the API's schema before it is sent. Spends no generation.",
        ),
        this.problems,
      ),
    };
    this.definition.addEventListener("input", () => void this.validate());
    const form = el(
      "form",
      { "aria-label": "Backtest" },
      modes,
      this.parts.preset,
      this.parts.prompt,
      this.parts.definition,
      this.sweep.root,
      el(
        "div",
        { class: "row" },
        field("Coin", this.coin),
        field("Type", this.type),
        field("Latest resolved markets", this.count),
        this.run,
      ),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.submit();
    });
    const resultsBox = el("div", { id: "backtest-results-box" });
    this.compare = new CompareView(options.api);
    this.results = new ResultsView(resultsBox, {
      api: options.api,
      onOpen: options.onOpen,
      onEdit: (definition) => this.edit(definition),
    });
    root.append(form, this.message, resultsBox, this.compare.root);
    this.showMode();
  }

  setChoices(presets: string[], coins: string[], marketTypes: string[]): void {
    for (const p of presets) this.preset.append(el("option", { value: p }, p.replaceAll("_", " ")));
    for (const c of coins)
      this.coin.append(el("option", { value: c, selected: c === "btc" }, c.toUpperCase()));
    for (const t of marketTypes) this.type.append(el("option", { value: t, selected: t === "5m" }, t));
  }

  /** A new key: its schema is fetched again when needed. */
  reset(): void {
    this.schema = null;
    this.results.clear();
    this.compare.clear();
    this.message.replaceChildren();
  }

  /** A definition back in the editor (the one a run showed), to change and run again. */
  edit(definition: StrategyDefinition): void {
    this.definition.value = JSON.stringify(definition, null, 2);
    const radio = this.modes.get("definition");
    if (radio) radio.checked = true;
    this.showMode();
    this.definition.focus();
  }

  private mode(): Mode {
    for (const [mode, radio] of this.modes) if (radio.checked) return mode;
    return "preset";
  }

  private showMode(): void {
    const mode = this.mode();
    for (const [m, part] of Object.entries(this.parts)) part.hidden = m !== mode;
    if (mode === "definition") void this.validate();
  }

  /** Problems of the definition as typed, by JSON pointer; null when it could not be checked. */
  private async validate(): Promise<Problem[] | null> {
    const api = this.options.api();
    if (!api) return null;
    try {
      this.schema ??= await api.strategySchema();
    } catch (err) {
      replace(this.problems, el("li", {}, errorBox(err)));
      return null;
    }
    const checked = checkDefinition(this.schema, this.definition.value);
    if (checked.ok) this.sweep.offer(checked.definition);
    const problems = checked.ok ? [] : checked.problems;
    replace(
      this.problems,
      problems.length === 0
        ? el("li", { class: "ok" }, "The definition matches the schema.")
        : problems.map((p) =>
            el("li", { class: "problem" }, el("code", {}, p.pointer || "(the definition)"), ` ${p.message}`),
          ),
    );
    this.definition.setAttribute("aria-invalid", String(problems.length > 0));
    return problems;
  }

  private markets() {
    return {
      coin: this.coin.value,
      market_type: this.type.value,
      market_count: Number(this.count.value) || 10,
      wait: 20,
    };
  }

  private async request(api: Api, sweep: SweepInput): Promise<BacktestRunAnswer | null> {
    const mode = this.mode();
    const research =
      sweep.kind === "sweep"
        ? {
            sweep: sweep.sweep,
            ...(sweep.train_fraction === undefined ? {} : { train_fraction: sweep.train_fraction }),
          }
        : {};
    if (mode === "definition") {
      const problems = await this.validate();
      if (problems === null || problems.length > 0) {
        replace(
          this.message,
          el(
            "p",
            { class: "error", role: "alert" },
            "Fix the definition first: its problems are listed under it.",
          ),
        );
        return null;
      }
      const body = {
        definition: JSON.parse(this.definition.value),
        ...this.markets(),
        ...research,
      } as RunBacktestBody;
      return api.runBacktest(body);
    }
    const source = mode === "preset" ? { preset: this.preset.value } : { prompt: this.prompt.value };
    return api.runStrategy({ ...source, ...this.markets(), ...research } as RunStrategyBody);
  }

  private async submit(): Promise<void> {
    const api = this.options.api();
    if (!api) {
      replace(this.message, el("p", {}, "Enter a key first."));
      return;
    }
    const sweep = this.sweep.read();
    if (sweep.kind === "error") {
      replace(this.message, el("p", { class: "error", role: "alert" }, sweep.message));
      return;
    }
    this.run.disabled = true;
    // A preset, a prompt and a sweep each spend one of the month's generations.
    const spends = this.mode() !== "definition" || sweep.kind === "sweep";
    this.results.clear();
    replace(this.message, el("p", { class: "busy" }, "Running the backtest…"));
    try {
      let answer = await this.request(api, sweep);
      if (!answer) return;
      if (answer.run.status === "queued" || answer.run.status === "running") {
        replace(
          this.message,
          el("p", { class: "busy" }, `Run ${answer.run.id} is ${answer.run.status}; waiting for it…`),
        );
        answer = await api.waitForRun(answer.run.id, { pollMs: 1000 });
      }
      this.message.replaceChildren();
      this.results.show(answer);
      if (answer.run.status === "complete") this.compare.add(answer.run.id);
      this.options.onResults(answer);
    } catch (err) {
      replace(this.message, errorBox(err));
    } finally {
      this.run.disabled = false;
      if (spends) this.options.onQuotaSpent();
    }
  }
}
