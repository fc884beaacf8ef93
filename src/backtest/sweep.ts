import type { TSchema } from "typebox";
import {
  checkDefinition,
  DEFINITION_SCHEMA,
  DefinitionError,
  type StrategyDefinition,
} from "./definition.ts";
import type { MarketResult } from "./engine.ts";
import { isPlainObject } from "./input.ts";
import { aggregate } from "./metrics.ts";

/**
 * Parameter sweeps and walk-forward splits (DESIGN 3.12, docs/backtests.md "Sweeps"): a grid over
 * numeric fields of a definition, each combination a definition of its own, replayed as one job over
 * markets decoded once (jobs/replay.ts); its results as a table, and the best combination on the first
 * part of the markets reported on the rest.
 */

/** Combinations a sweep may have, at most (the product of its axes' value counts). */
export const MAX_SWEEP_COMBINATIONS = 100;

/** Axes of one sweep, at most. */
export const MAX_SWEEP_AXES = 4;

/** What a walk-forward chooses by: the highest total PnL on the training markets (ties: the earlier combination). */
export const WALK_FORWARD_METRIC = "pnl";

/** One axis: a field of the definition (a dotted path, `exit.take_profit_pct`, `entry.0.value`) and its values. */
export interface SweepAxis {
  field: string;
  values: number[];
}

/** One combination: each axis' field and value, in axis order. */
export type SweepValues = Record<string, number>;

/** Values are kept to this many decimals, so that from 0.1 by 0.1 gives 0.3, not 0.30000000000000004. */
const VALUE_DECIMALS = 10;
const tidy = (x: number) => Math.round(x * 10 ** VALUE_DECIMALS) / 10 ** VALUE_DECIMALS;

/** Fields a sweep may not vary, though they are numbers: which schema the definition follows. */
const NOT_SWEPT = new Set(["version"]);

function fail(pointer: string, rule: string): never {
  throw new DefinitionError(pointer, rule);
}

/** An axis's values: a list, or `from`, `to` and `step` (both ends included when the step lands on `to`). */
function axisValues(axis: Record<string, unknown>, at: string): number[] {
  const finite = (v: unknown) => typeof v === "number" && Number.isFinite(v);
  if (axis.values !== undefined) {
    if (axis.from !== undefined || axis.to !== undefined || axis.step !== undefined)
      fail(`${at}/values`, "and from/to/step are two ways to give values; give one");
    const values = axis.values;
    if (!Array.isArray(values) || values.length === 0 || !values.every(finite))
      fail(`${at}/values`, "must be a non-empty array of numbers");
    if (values.length > MAX_SWEEP_COMBINATIONS)
      fail(`${at}/values`, `must have at most ${MAX_SWEEP_COMBINATIONS} values`);
    return values as number[];
  }
  for (const k of ["from", "to", "step"]) {
    if (!finite(axis[k])) fail(`${at}/${k}`, "must be a number (or give values instead)");
  }
  const { from, to, step } = axis as { from: number; to: number; step: number };
  if (step <= 0) fail(`${at}/step`, "must be above 0");
  if (from > to) fail(`${at}/from`, "must not be above to");
  const count = Math.floor(tidy((to - from) / step)) + 1;
  if (count > MAX_SWEEP_COMBINATIONS)
    fail(`${at}/step`, `gives ${count} values; a sweep has at most ${MAX_SWEEP_COMBINATIONS} combinations`);
  return Array.from({ length: count }, (_, k) => tidy(from + k * step));
}

/** A body's `sweep`: a list of axes `{field, values}` or `{field, from, to, step}`; throws DefinitionError. */
export function readSweep(value: unknown, at: string): SweepAxis[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_SWEEP_AXES)
    fail(at, `must be an array of 1 to ${MAX_SWEEP_AXES} axes {field, values} or {field, from, to, step}`);
  const axes: SweepAxis[] = [];
  for (const [i, axis] of value.entries()) {
    const here = `${at}/${i}`;
    if (!isPlainObject(axis)) fail(here, "must be an object {field, values} or {field, from, to, step}");
    for (const key of Object.keys(axis)) {
      if (!["field", "values", "from", "to", "step"].includes(key))
        fail(`${here}/${key}`, "is not a field of a sweep axis (fields: field, values, from, to, step)");
    }
    const field = axis.field;
    if (typeof field !== "string" || !/^[a-z_]+(\.[a-z0-9_]+)*$/.test(field))
      fail(`${here}/field`, "must be a dotted path into the definition, e.g. exit.take_profit_pct");
    if (axes.some((a) => a.field === field)) fail(`${here}/field`, `names ${field} twice`);
    axes.push({ field, values: axisValues(axis, here) });
  }
  const combinations = axes.reduce((n, a) => n * a.values.length, 1);
  if (combinations > MAX_SWEEP_COMBINATIONS)
    fail(at, `has ${combinations} combinations; at most ${MAX_SWEEP_COMBINATIONS}`);
  return axes;
}

/** Whether a schema takes a number (a nullable number is `anyOf` of a number and null). */
function takesNumber(schema: TSchema | undefined): boolean {
  if (schema === undefined) return false;
  const s = schema as { type?: string; anyOf?: TSchema[] };
  if (s.type === "number" || s.type === "integer") return true;
  return (s.anyOf ?? []).some(takesNumber);
}

/** The schema of a top-level or exit field, for one whose value is null now (nothing else is looked up). */
function fieldSchema(path: string[]): TSchema | undefined {
  const top = DEFINITION_SCHEMA.properties as Record<string, TSchema>;
  if (path.length === 1) return top[path[0]];
  if (path.length === 2 && path[0] === "exit") {
    return (top.exit as unknown as { properties: Record<string, TSchema> }).properties[path[1]];
  }
  return undefined;
}

/**
 * The value at `path` replaced in a copy of `d`: the field must exist and be numeric (a number now, or
 * a field the schema says takes a number, like `exit.take_profit_pct` when it is null).
 */
function withValue(d: StrategyDefinition, field: string, value: number, at: string): StrategyDefinition {
  const path = field.split(".");
  if (NOT_SWEPT.has(path[0])) fail(at, `${field} cannot be swept`);
  const copy = structuredClone(d) as unknown as Record<string, unknown>;
  let parent: Record<string, unknown> | unknown[] = copy;
  for (let i = 0; i < path.length - 1; i++) {
    const next: unknown = (parent as Record<string, unknown>)[path[i]];
    if (typeof next !== "object" || next === null) fail(at, `${field} is not a field of the definition`);
    parent = next as Record<string, unknown>;
  }
  const last = path[path.length - 1];
  const holder = parent as Record<string, unknown>;
  if (!Object.hasOwn(holder, last) || (Array.isArray(holder) && !/^\d+$/.test(last)))
    fail(at, `${field} is not a field of the definition`);
  const now = holder[last];
  if (typeof now !== "number" && !(now === null && takesNumber(fieldSchema(path))))
    fail(at, `${field} is not a numeric field (it is ${now === null ? "null" : typeof now})`);
  holder[last] = value;
  return copy as unknown as StrategyDefinition;
}

export interface Combination {
  values: SweepValues;
  definition: StrategyDefinition;
}

/**
 * Every combination of the axes over `base`, the first axis varying slowest, each a complete
 * definition checked as any is. A field that does not exist, is not numeric, or a value the
 * definition's rules refuse, is a DefinitionError at `at` (the body's `/sweep`).
 */
export function combinations(
  base: StrategyDefinition,
  axes: readonly SweepAxis[],
  at = "/sweep",
): Combination[] {
  let grid: SweepValues[] = [{}];
  for (const axis of axes) grid = grid.flatMap((g) => axis.values.map((v) => ({ ...g, [axis.field]: v })));
  return grid.map((values) => {
    let d = base;
    for (const [i, axis] of axes.entries())
      d = withValue(d, axis.field, values[axis.field], `${at}/${i}/field`);
    try {
      return { values, definition: checkDefinition(d) };
    } catch (err) {
      if (!(err instanceof DefinitionError)) throw err;
      const which = Object.entries(values)
        .map(([f, v]) => `${f} = ${v}`)
        .join(", ");
      return fail(at, `gives a definition the rules refuse (${which}): ${err.message}`);
    }
  });
}

/** What the tables show of a set of market results: the aggregate's figures (metrics.ts) that compare. */
export interface Figures {
  pnl: number;
  roi: number | null;
  win_rate: number | null;
  trades: number;
  markets: number;
  markets_traded: number;
  max_drawdown: number;
  sharpe: number | null;
}

export function figuresOf(results: readonly MarketResult[]): Figures {
  const a = aggregate(results);
  return {
    pnl: a.pnl,
    roi: a.roi,
    win_rate: a.win_rate,
    trades: a.trades,
    markets: a.markets,
    markets_traded: a.markets_traded,
    max_drawdown: a.max_drawdown,
    sharpe: a.sharpe,
  };
}

export interface SweepRow extends Figures {
  values: SweepValues;
}

export interface SweepTable {
  fields: string[];
  combinations: number;
  rows: SweepRow[];
}

export function sweepTable(
  axes: readonly SweepAxis[],
  combos: readonly Combination[],
  results: readonly (readonly MarketResult[])[],
): SweepTable {
  return {
    fields: axes.map((a) => a.field),
    combinations: combos.length,
    rows: combos.map((c, i) => ({ values: c.values, ...figuresOf(results[i]) })),
  };
}

export interface WalkForward {
  train_fraction: number;
  metric: typeof WALK_FORWARD_METRIC;
  train_markets: number;
  test_markets: number;
  /** The combination with the highest PnL on the training markets; null with fewer than 2 markets. */
  chosen: SweepValues | null;
  train: Figures | null;
  test: Figures | null;
}

/** How many of `n` markets (oldest first) train: `fraction` of them, rounded down, at least 1 and leaving 1. */
export function trainCount(n: number, fraction: number): number {
  return Math.min(n - 1, Math.max(1, Math.floor(n * fraction)));
}

/** Chooses on the first markets (by WALK_FORWARD_METRIC) and reports the choice on the rest. */
export function walkForward(
  fraction: number,
  combos: readonly Combination[],
  results: readonly (readonly MarketResult[])[],
): WalkForward {
  const n = results[0]?.length ?? 0;
  if (n < 2) {
    return {
      train_fraction: fraction,
      metric: WALK_FORWARD_METRIC,
      train_markets: n,
      test_markets: 0,
      chosen: null,
      train: null,
      test: null,
    };
  }
  const k = trainCount(n, fraction);
  let best = 0;
  let bestTrain = figuresOf(results[0].slice(0, k));
  for (let i = 1; i < combos.length; i++) {
    const train = figuresOf(results[i].slice(0, k));
    if (train.pnl > bestTrain.pnl) {
      best = i;
      bestTrain = train;
    }
  }
  return {
    train_fraction: fraction,
    metric: WALK_FORWARD_METRIC,
    train_markets: k,
    test_markets: n - k,
    chosen: combos[best].values,
    train: bestTrain,
    test: figuresOf(results[best].slice(k)),
  };
}
