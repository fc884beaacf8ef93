import { el, field } from "./dom.ts";

/**
 * The sweep part of the backtest form (docs/backtests.md, "Sweeps"): up to two numeric fields of the
 * definition, each with its values (`10, 20, 30`, or `from:to:step`), and a walk-forward's training
 * fraction. Empty: no sweep. A sweep runs as one job and spends one generation.
 */

const AXES = 2;

/** An axis as the API takes it. */
export type SweepAxis =
  { field: string; values: number[] } | { field: string; from: number; to: number; step: number };

/** What the form adds to a run's body: nothing, the sweep (and its walk-forward), or what is wrong. */
export type SweepInput =
  | { kind: "none" }
  | { kind: "sweep"; sweep: SweepAxis[]; train_fraction?: number }
  | { kind: "error"; message: string };

const number = (text: string) => (text.trim() === "" ? Number.NaN : Number(text.trim()));

/** `10, 20, 30` or `10:30:10` as an axis of `field`, or why not. */
export function axisOf(fieldPath: string, text: string): SweepAxis | string {
  const parts = text.split(":");
  if (parts.length === 3) {
    const [from, to, step] = parts.map(number);
    if (![from, to, step].every(Number.isFinite)) return `${fieldPath}: from:to:step must be three numbers`;
    return { field: fieldPath, from, to, step };
  }
  const values = text.split(",").map(number);
  if (values.length === 0 || !values.every(Number.isFinite))
    return `${fieldPath}: give numbers separated by commas, or from:to:step`;
  return { field: fieldPath, values };
}

/** The dotted paths of the numbers in a definition, but its version: what a sweep may vary. */
export function numericFields(definition: unknown, prefix = ""): string[] {
  if (typeof definition === "number") return prefix === "version" ? [] : [prefix];
  if (typeof definition !== "object" || definition === null) return [];
  return Object.entries(definition).flatMap(([key, value]) =>
    numericFields(value, prefix === "" ? key : `${prefix}.${key}`),
  );
}

export class SweepForm {
  readonly root: HTMLElement;
  private readonly fields: HTMLInputElement[] = [];
  private readonly values: HTMLInputElement[] = [];
  private readonly train = el("input", {
    id: "sweep-train",
    type: "number",
    min: 0.01,
    max: 0.99,
    step: 0.01,
    placeholder: "none",
  });
  private readonly choices = el("datalist", { id: "sweep-field-choices" });

  constructor() {
    const rows: HTMLElement[] = [];
    for (let i = 1; i <= AXES; i++) {
      const name = el("input", {
        id: `sweep-field-${i}`,
        type: "text",
        list: "sweep-field-choices",
        placeholder: i === 1 ? "exit.take_profit_pct" : "entry.0.value",
        spellcheck: "false",
      });
      const values = el("input", {
        id: `sweep-values-${i}`,
        type: "text",
        placeholder: i === 1 ? "10, 20, 30" : "0.4:0.6:0.1",
        spellcheck: "false",
      });
      this.fields.push(name);
      this.values.push(values);
      rows.push(
        el("div", { class: "row" }, field(`Sweep field ${i}`, name), field(`Values of field ${i}`, values)),
      );
    }
    this.root = el(
      "fieldset",
      { class: "sweep", id: "sweep-form" },
      el("legend", {}, "Sweep (optional: one job over a grid; spends one generation)"),
      ...rows,
      field(
        "Walk-forward: train on this fraction",
        this.train,
        "Chooses the best combination by PnL on the first markets and reports it on the rest.",
      ),
      this.choices,
    );
  }

  /** Offers the numeric fields of the definition being edited. */
  offer(definition: unknown): void {
    this.choices.replaceChildren(...numericFields(definition).map((f) => el("option", { value: f })));
  }

  read(): SweepInput {
    const sweep: SweepAxis[] = [];
    for (let i = 0; i < AXES; i++) {
      const name = this.fields[i].value.trim();
      const text = this.values[i].value.trim();
      if (name === "" && text === "") continue;
      if (name === "" || text === "")
        return { kind: "error", message: `Sweep field ${i + 1}: give both a field and its values.` };
      const axis = axisOf(name, text);
      if (typeof axis === "string") return { kind: "error", message: axis };
      sweep.push(axis);
    }
    const train = this.train.value.trim();
    if (sweep.length === 0)
      return train === ""
        ? { kind: "none" }
        : { kind: "error", message: "A walk-forward needs a sweep to choose from." };
    return train === "" ? { kind: "sweep", sweep } : { kind: "sweep", sweep, train_fraction: Number(train) };
  }
}
