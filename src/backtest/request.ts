import { type Coin, knownCoin, MARKET_TYPES, type MarketType, parseMarketType } from "../domain/market.ts";
import { type Micros, parseUserTime } from "../domain/time.ts";
import { DEFAULT_LIMIT_PRICE, DefinitionError, type StrategyDefinition } from "./definition.ts";
import { type Field, normalizeDefinition, readFields } from "./input.ts";
import { PRESET_NAMES } from "./generate/presets.ts";
import { NO_RESEARCH, type ResearchSpec } from "./research.ts";
import { readSweep } from "./sweep.ts";

/**
 * The bodies of the three POSTs of DESIGN 3.7, read into one request: where the strategy comes from,
 * which markets it runs over, what of the definition the body overrides, and how long to wait.
 */

export type Endpoint = "generate" | "strategy" | "run" | "replay";

export type StrategySource =
  /** A prompt; with a preset (PolyHistorical's optional `preset` beside it), the preset is its starting point. */
  | { kind: "prompt"; prompt: string; preset: string | null }
  | { kind: "preset"; preset: string }
  | { kind: "definition"; definition: StrategyDefinition }
  | { kind: "stored"; strategyId: string };

/** Which markets a run replays: the latest `count` resolved ones of a series, within a range if given. */
export interface MarketSelection {
  coin: Coin;
  marketType: MarketType;
  count: number;
  /** Markets starting at or after this Unix second. */
  from: number | null;
  /** Markets starting at or before this Unix second. */
  to: number | null;
}

/** Definition fields a body may set for this run (DESIGN 3.7's body fields). */
export interface Overrides {
  position_size?: number;
  max_loss_percent?: number;
  order_type?: "MARKET" | "LIMIT";
  latency_ms?: number;
  max_fill_price?: number;
}

export interface BacktestRequest {
  source: StrategySource;
  name: string | null;
  markets: MarketSelection | null;
  /** `POST /v1/replay`'s one market, by the slug the caller gave. */
  marketSlug: string | null;
  overrides: Overrides;
  /** Seconds to wait for the run before answering 202. */
  wait: number;
  /** A sweep, its walk-forward, the benchmarks' settings (`strategy` and `run`; the defaults elsewhere). */
  research: ResearchSpec;
}

export const DEFAULT_MARKET_COUNT = 10;
export const DEFAULT_WAIT_SECONDS = 25;
export const MAX_WAIT_SECONDS = 60;

/** The body fields, canonical spelling; camelCase spellings are aliases (readFields). */
const SOURCE_FIELDS = [
  "prompt",
  "preset",
  "definition",
  "strategy_id",
  "side",
  "entry_conditions",
  "exit_conditions",
];
const MARKET_FIELDS = ["coin", "market_type", "market_count", "start_time", "end_time"];
/** What `generate` takes of the markets (PolyHistorical's body): checked, not used (see docs/backtests.md). */
const TARGET_FIELDS = ["coin", "market_type", "market_count"];
const OVERRIDE_FIELDS = ["position_size", "max_loss_percent", "order_type", "latency_ms", "max_fill_price"];
/** A sweep and what every run computes beside its result (docs/backtests.md "Sweeps", "Benchmarks"). */
const RESEARCH_FIELDS = ["sweep", "train_fraction", "seed", "favourite_at_pct"];

/** Which fields each endpoint takes. */
const ENDPOINT_FIELDS: Record<Endpoint, string[]> = {
  generate: ["prompt", "preset", "name", ...TARGET_FIELDS, ...OVERRIDE_FIELDS],
  strategy: [
    ...SOURCE_FIELDS.filter((f) => f !== "strategy_id"),
    "name",
    ...MARKET_FIELDS,
    ...OVERRIDE_FIELDS,
    ...RESEARCH_FIELDS,
    "wait",
  ],
  run: [
    ...SOURCE_FIELDS.filter((f) => f !== "prompt" && f !== "preset"),
    "name",
    ...MARKET_FIELDS,
    ...OVERRIDE_FIELDS,
    ...RESEARCH_FIELDS,
    "wait",
  ],
  replay: ["market_slug", "side", "entry_conditions", "exit_conditions", "name", ...OVERRIDE_FIELDS, "wait"],
};

/** PolyHistorical's default of max_loss_percent on its replay-shaped bodies: a forced exit at a 50 % drawdown. */
export const REPLAY_MAX_LOSS_PERCENT = 50;

const SOURCES_OF: Record<Endpoint, string> = {
  generate: "one of prompt or preset",
  strategy: "one of prompt, preset, definition, or side with entryConditions",
  run: "one of strategy_id, definition, or side with entryConditions",
  replay: "side with entryConditions",
};

function fail(field: Field | string, rule: string): never {
  throw new DefinitionError(typeof field === "string" ? field : field.pointer, rule);
}

function text(field: Field, max: number): string {
  if (typeof field.value !== "string" || field.value.trim() === "") fail(field, "must be a non-empty string");
  if (field.value.length > max) fail(field, `must be at most ${max} characters`);
  return field.value.trim();
}

function number(field: Field, min: number, max: number, integer = false): number {
  const v = field.value;
  if (typeof v !== "number" || !Number.isFinite(v)) fail(field, `must be a number from ${min} to ${max}`);
  if (integer && !Number.isInteger(v)) fail(field, "must be an integer");
  if (v < min || v > max) fail(field, `must be from ${min} to ${max}`);
  return v;
}

function time(field: Field): number {
  const v = field.value;
  const us: Micros | null =
    typeof v === "number" && Number.isInteger(v) && v >= 0
      ? v * 1000
      : typeof v === "string"
        ? parseUserTime(v)
        : null;
  if (us === null) fail(field, "must be an ISO 8601 time or epoch milliseconds");
  return Math.floor(us / 1_000_000);
}

function source(endpoint: Endpoint, f: Map<string, Field>): StrategySource {
  // PolyHistorical sends `prompt` with an optional `preset`: together they are one source.
  const promptWithPreset = endpoint !== "run" && f.has("prompt") && f.has("preset");
  const given = ["prompt", "preset", "definition", "strategy_id", "side"].filter(
    (k) => f.has(k) && !(promptWithPreset && k === "preset"),
  );
  if ((f.has("entry_conditions") || f.has("exit_conditions")) && !f.has("side")) {
    fail("/side", "is required with entryConditions and exitConditions");
  }
  if (endpoint === "replay" && !f.has("side")) fail("/side", "is required (UP or DOWN)");
  if (f.has("side") && !f.has("entry_conditions")) fail("/entryConditions", "is required with side");
  if (given.length !== 1) {
    const where = given.length === 0 ? "" : (f.get(given[1])?.pointer ?? "");
    fail(
      where,
      `must give ${SOURCES_OF[endpoint]}${given.length > 1 ? `, not both ${given[0]} and ${given[1]}` : ""}`,
    );
  }
  const [kind] = given;
  const field = f.get(kind) as Field;
  if (kind === "prompt") {
    const presetField = promptWithPreset ? f.get("preset") : undefined;
    return { kind, prompt: text(field, 2000), preset: presetField ? presetName(presetField) : null };
  }
  if (kind === "preset") return { kind, preset: presetName(field) };
  if (kind === "strategy_id") return { kind: "stored", strategyId: text(field, 100) };
  if (kind === "definition") return { kind, definition: normalizeDefinition(field.value, field.pointer) };
  // PolyHistorical's replay form: side, entryConditions (all) and exitConditions (any) in the body.
  const parts: Record<string, unknown> = {};
  for (const name of ["side", "entry_conditions", "exit_conditions", "name"]) {
    const part = f.get(name);
    if (part) parts[part.key] = part.value;
  }
  return { kind: "definition", definition: normalizeDefinition(parts, "") };
}

function presetName(field: Field): string {
  const preset = text(field, 100).toLowerCase();
  if (!PRESET_NAMES.includes(preset)) fail(field, `must be one of ${PRESET_NAMES.join(", ")}`);
  return preset;
}

/** `generate`'s coin, marketType and marketCount: held to the rules of the run's fields. */
function checkTargets(f: Map<string, Field>, coins: readonly Coin[]): void {
  const coinField = f.get("coin");
  if (coinField && (typeof coinField.value !== "string" || knownCoin(coinField.value, coins) === null)) {
    fail(coinField, `must be one of ${coins.join(", ")}`);
  }
  const typeField = f.get("market_type");
  if (typeField && (typeof typeField.value !== "string" || parseMarketType(typeField.value) === null)) {
    fail(typeField, `must be one of ${MARKET_TYPES.join(", ")}`);
  }
  const countField = f.get("market_count");
  if (countField) number(countField, 1, 100, true);
}

function markets(f: Map<string, Field>, coins: readonly Coin[]): MarketSelection {
  const coinField = f.get("coin");
  if (!coinField) fail("/coin", "is required");
  const coin = typeof coinField.value === "string" ? knownCoin(coinField.value, coins) : null;
  if (coin === null) fail(coinField, `must be one of ${coins.join(", ")}`);
  const typeField = f.get("market_type");
  if (!typeField) fail("/market_type", "is required");
  const marketType = typeof typeField.value === "string" ? parseMarketType(typeField.value) : null;
  if (marketType === null) fail(typeField, `must be one of ${MARKET_TYPES.join(", ")}`);
  const countField = f.get("market_count");
  const count = countField ? number(countField, 1, 100, true) : DEFAULT_MARKET_COUNT;
  const fromField = f.get("start_time");
  const toField = f.get("end_time");
  const from = fromField ? time(fromField) : null;
  const to = toField ? time(toField) : null;
  if (from !== null && to !== null && from > to) fail(fromField as Field, "must not be after end_time");
  return { coin, marketType, count, from, to };
}

function overrides(f: Map<string, Field>): Overrides {
  const out: Overrides = {};
  const get = (name: string) => f.get(name);
  const size = get("position_size");
  if (size) out.position_size = number(size, 1, 10000);
  const maxLoss = get("max_loss_percent");
  if (maxLoss) out.max_loss_percent = number(maxLoss, 1, 100);
  const latency = get("latency_ms");
  if (latency) out.latency_ms = number(latency, 0, 60000, true);
  const cap = get("max_fill_price");
  if (cap) {
    out.max_fill_price = number(cap, 0, 1);
    if (out.max_fill_price === 0) fail(cap, "must be above 0");
  }
  const type = get("order_type");
  if (type) {
    const v = typeof type.value === "string" ? type.value.toUpperCase() : null;
    if (v !== "MARKET" && v !== "LIMIT") fail(type, "must be one of MARKET, LIMIT");
    out.order_type = v;
  }
  return out;
}

function research(f: Map<string, Field>): ResearchSpec {
  const sweepField = f.get("sweep");
  const sweep = sweepField ? readSweep(sweepField.value, sweepField.pointer) : null;
  const fractionField = f.get("train_fraction");
  let trainFraction: number | null = null;
  if (fractionField) {
    if (sweep === null) fail(fractionField, "needs a sweep: walk-forward chooses among its combinations");
    trainFraction = number(fractionField, 0.01, 0.99);
  }
  const seedField = f.get("seed");
  const atField = f.get("favourite_at_pct");
  return {
    sweep,
    train_fraction: trainFraction,
    seed: seedField ? number(seedField, 0, 2 ** 32 - 1, true) : NO_RESEARCH.seed,
    favourite_at_pct: atField ? number(atField, 0, 100) : NO_RESEARCH.favourite_at_pct,
  };
}

/** A POST body of `endpoint` read and checked; throws DefinitionError naming the offending field. */
export function readBacktestBody(endpoint: Endpoint, body: unknown, coins: readonly Coin[]): BacktestRequest {
  // PolyHistorical's run takes back the strategy generate made: `strategy` is our definition there.
  const aliases: Record<string, string> = endpoint === "run" ? { strategy: "definition" } : {};
  const f = readFields(body ?? null, "", ENDPOINT_FIELDS[endpoint], aliases, `a ${endpoint} request`);
  const nameField = f.get("name");
  const waitField = f.get("wait");
  if (endpoint === "generate") checkTargets(f, coins);
  const slugField = f.get("market_slug");
  if (endpoint === "replay" && !slugField) fail("/marketSlug", "is required");
  const read: BacktestRequest = {
    source: source(endpoint, f),
    name: nameField ? text(nameField, 120) : null,
    markets: endpoint === "generate" || endpoint === "replay" ? null : markets(f, coins),
    marketSlug: slugField ? text(slugField, 200) : null,
    overrides: overrides(f),
    wait: waitField ? number(waitField, 0, MAX_WAIT_SECONDS) : DEFAULT_WAIT_SECONDS,
    research: research(f),
  };
  // PolyHistorical's replay-shaped body means a forced exit at a 50 % drawdown when it names none.
  if (f.has("side") && read.overrides.max_loss_percent === undefined) {
    read.overrides.max_loss_percent = REPLAY_MAX_LOSS_PERCENT;
  }
  return read;
}

/** The definition a run uses: the strategy's, with the body's overrides and name laid over it. */
export function applyOverrides(d: StrategyDefinition, o: Overrides, name: string | null): StrategyDefinition {
  const out: StrategyDefinition = { ...d, ...o, name: name ?? d.name };
  if (out.order_type === "MARKET") {
    out.limit_price = null;
    out.limit_expiry_s = null;
  } else if (out.limit_price === null) {
    out.limit_price = DEFAULT_LIMIT_PRICE;
  }
  return out;
}
