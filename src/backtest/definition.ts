import { type Static, type TSchema, Type } from "typebox";
// typebox/schema's Errors is what typebox/value's calls; importing it alone loads 60 to 80 ms less at start.
import { Errors } from "typebox/schema";
import { FEATURE_PATTERN, inVersion1, parseFeature } from "./feature-registry.ts";

/**
 * The strategy definition (DESIGN 3.7): versioned JSON, and its JSON schema. DEFINITION_SCHEMA is the
 * one schema of a definition: it validates what users and generators give, is served at
 * `GET /v1/backtest-ai/schema`, constrains the output of a language model, and is the `StrategyDefinition`
 * component of the API document. Every field is required and every optional one nullable, so that the
 * schema is one a model's structured output can follow strictly; users may leave fields out, and
 * normalizeDefinition fills them in with the defaults the descriptions name.
 */

/**
 * The version definitions are written in now. Version 2 added condition trees (`all`, `any`, `not`)
 * and lookback and moment features; a version 1 definition (plain conditions, no lookback) is
 * still accepted as it is, kept as version 1, and runs exactly as before.
 */
export const DEFINITION_VERSION = 2;
export const DEFINITION_VERSIONS = [1, 2] as const;

/** Groups nest at most this deep (a group's members may be groups of conditions, no deeper). */
export const MAX_GROUP_DEPTH = 2;

/** Members of one group, at most. */
export const MAX_GROUP_MEMBERS = 10;

/** Features with a depth in ticks take it as a suffix (`depth_bid_up_3`); without one, 5 ticks. */
export const DEFAULT_DEPTH_TICKS = 5;

export const OPERATORS = ["<", "<=", ">", ">=", "crosses_above", "crosses_below"] as const;

const Feature = Type.String({
  pattern: FEATURE_PATTERN,
  description:
    "price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] " +
    "(shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, " +
    "coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds " +
    "hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest " +
    "(Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, " +
    "price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to " +
    "beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, " +
    "spot_return_bps_Ns, futures_return_bps_Ns",
});

const Condition = Type.Object(
  {
    feature: Feature,
    op: Type.Enum([...OPERATORS]),
    value: Type.Union([Type.Number(), Type.String({ pattern: FEATURE_PATTERN })], {
      description: "A number, or another feature to compare with",
    }),
  },
  { additionalProperties: false },
);

/**
 * A condition, or a group of `member`s (version 2): `all` holds when every member holds, `any` when
 * one does, `not` when its member does not. The schema nests groups to MAX_GROUP_DEPTH by building
 * each level from the one below, so that it needs no recursive reference (which neither the API
 * document's generators nor a model's strict structured output take everywhere).
 */
function nodeOf(member: TSchema, depth: number): TSchema {
  const members = Type.Array(member, { minItems: 1, maxItems: MAX_GROUP_MEMBERS });
  const group = (key: string, schema: TSchema) =>
    Type.Object({ [key]: schema }, { additionalProperties: false });
  return Type.Union([Condition, group("all", members), group("any", members), group("not", member)], {
    description:
      depth === MAX_GROUP_DEPTH
        ? "A condition, or (version 2) a group: {all: [...]}, {any: [...]} or {not: ...}"
        : "A condition, or a group of conditions",
  });
}

let Node: TSchema = Condition;
for (let depth = 1; depth <= MAX_GROUP_DEPTH; depth++) Node = nodeOf(Node, depth);

const Exit = Type.Object(
  {
    conditions: Type.Array(Node, {
      maxItems: 10,
      description: "Any of them closes the position (a market sell, retried until sold or the market ends)",
    }),
    take_profit_pct: Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 10000 }), Type.Null()], {
      description:
        "Sell once the best bid less the exit's fee is this many percent above the cost of a share held; null: none",
    }),
    stop_loss_pct: Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 100 }), Type.Null()], {
      description:
        "Sell once the best bid less the exit's fee is this many percent below the cost of a share held; null: none",
    }),
    time_limit_s: Type.Union([Type.Integer({ minimum: 1, maximum: 86400 }), Type.Null()], {
      description: "Sell once the position is this many seconds old; null: none",
    }),
    hold_to_resolution: Type.Boolean({
      description: "true: no exit rule, every position settles (the other exit fields must be empty)",
    }),
  },
  { additionalProperties: false },
);

const LimitPrice = Type.Object(
  {
    reference: Type.Enum(["best_bid", "best_ask", "mid", "fixed"], {
      description: "The price the limit is set from, at the decision; fixed: offset is the price",
    }),
    offset: Type.Number({ minimum: -1, maximum: 1, description: "Added to the reference price" }),
  },
  { additionalProperties: false },
);

export const DEFINITION_SCHEMA = Type.Object(
  {
    version: Type.Enum([...DEFINITION_VERSIONS], {
      description: "2 (condition trees, lookbacks); 1 is still accepted as it was",
    }),
    name: Type.String({ minLength: 1, maxLength: 120 }),
    side: Type.Enum(["UP", "DOWN"], { description: "The outcome token bought" }),
    entry: Type.Array(Node, {
      maxItems: 10,
      description: "All must hold to enter; none: enter at the first snapshot",
    }),
    exit: Exit,
    order_type: Type.Enum(["MARKET", "LIMIT"], {
      description: "How entries are placed (exits sell at market)",
    }),
    limit_price: Type.Union([LimitPrice, Type.Null()], {
      description: "A LIMIT entry's price rule; null for MARKET (default for LIMIT: the best bid)",
    }),
    limit_expiry_s: Type.Union([Type.Integer({ minimum: 1, maximum: 86400 }), Type.Null()], {
      description:
        "A resting limit order is cancelled this many seconds after it joins the book (alias expire_after_s); null: at the market's end",
    }),
    count_rebates: Type.Boolean({
      description:
        "true: resting (maker) fills earn the market's fee_schedule.rebate_rate of the taker fee, added to PnL and reported as rebate_usdc",
    }),
    position_size: Type.Number({ minimum: 1, maximum: 10000, description: "Shares bought per entry" }),
    max_fill_price: Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 1 }), Type.Null()], {
      description: "A buy takes no level above this price; null: no cap",
    }),
    max_loss_percent: Type.Union([Type.Number({ minimum: 1, maximum: 100 }), Type.Null()], {
      description:
        "Sell a position once it has lost this percent of its cost, valued at the best bid less the exit's fee (also when held to resolution); null: none",
    }),
    max_entries_per_market: Type.Integer({ minimum: 1, maximum: 100 }),
    latency_ms: Type.Union([Type.Integer({ minimum: 0, maximum: 60000 }), Type.Null()], {
      description:
        "An order fills at the first snapshot at or after decision + latency; null (default): the next snapshot",
    }),
  },
  {
    $id: "StrategyDefinition",
    additionalProperties: false,
    description: "A backtest strategy (version 2, or 1); docs/backtests.md explains every rule",
  },
);

export type Condition = Static<typeof Condition>;

/** A condition or a group of them, at any depth (the schema bounds the depth). */
export type ConditionNode =
  Condition | { all: ConditionNode[] } | { any: ConditionNode[] } | { not: ConditionNode };
/** A definition as the schema reads it, its condition lists typed as the trees they are. */
export type ExitRules = Omit<Static<typeof Exit>, "conditions"> & { conditions: ConditionNode[] };
export type StrategyDefinition = Omit<Static<typeof DEFINITION_SCHEMA>, "entry" | "exit"> & {
  entry: ConditionNode[];
  exit: ExitRules;
};
export type LimitPriceRule = Static<typeof LimitPrice>;

/** A definition's field names, and what a definition left out becomes. */
export const DEFINITION_DEFAULTS: Omit<StrategyDefinition, "side"> = {
  version: DEFINITION_VERSION,
  name: "Custom strategy",
  entry: [],
  exit: {
    conditions: [],
    take_profit_pct: null,
    stop_loss_pct: null,
    time_limit_s: null,
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

export const DEFAULT_LIMIT_PRICE: LimitPriceRule = { reference: "best_bid", offset: 0 };

/** A field that breaks a rule: where (a JSON pointer into what the caller sent) and what is wrong. */
export class DefinitionError extends Error {
  readonly pointer: string;
  /** What is wrong, without the pointer: `must be <= 1`. */
  readonly rule: string;
  constructor(pointer: string, rule: string) {
    super(`${pointer || "the body"} ${rule}`);
    this.pointer = pointer;
    this.rule = rule;
  }
}

/** The first way `value` breaks `schema`, as a pointer (relative to `value`) and words. */
export function schemaProblem(schema: TSchema, value: unknown): { pointer: string; message: string } | null {
  const errors: SchemaError[] = Errors(schema, value)[1];
  if (errors.length === 0) return null;
  for (const e of errors) {
    const params = e.params as { additionalProperties?: string[]; requiredProperties?: string[] };
    if (e.keyword === "additionalProperties" && params.additionalProperties?.length) {
      return {
        pointer: `${e.instancePath}/${params.additionalProperties[0]}`,
        message: "is not a known field",
      };
    }
    if (e.keyword === "required" && params.requiredProperties?.length) {
      return { pointer: `${e.instancePath}/${params.requiredProperties[0]}`, message: "is required" };
    }
  }
  const depth = (p: string) => (p === "" ? 0 : p.split("/").length);
  const deepest = Math.max(...errors.map((e) => depth(e.instancePath)));
  const here = errors.filter((e) => depth(e.instancePath) === deepest && e.keyword !== "boolean");
  const pointer = here[0]?.instancePath ?? errors[0].instancePath;
  return { pointer, message: describeErrors(here.length > 0 ? here : errors) };
}

interface SchemaError {
  keyword: string;
  instancePath: string;
  params: unknown;
  message: string;
}

function describeErrors(errors: SchemaError[]): string {
  const enumError = errors.find((e) => e.keyword === "enum" || e.keyword === "const");
  if (enumError) {
    const p = enumError.params as { allowedValues?: unknown[]; allowedValue?: unknown };
    const allowed = p.allowedValues ?? [p.allowedValue];
    return `must be one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}`;
  }
  const alternatives = errors.filter((e) => e.keyword !== "anyOf").map((e) => e.message);
  const unique = [...new Set(alternatives)];
  if (unique.length === 0) return errors[0].message;
  return unique.join(" or ");
}

/**
 * Rules the schema cannot say: a LIMIT order has a price rule and a MARKET one none; holding to
 * resolution means no other exit rule. Pointers are relative to the definition.
 */
export function definitionProblem(d: StrategyDefinition): { pointer: string; message: string } | null {
  if (d.order_type === "MARKET" && d.limit_price !== null) {
    return { pointer: "/limit_price", message: "must be null for a MARKET order (or set order_type LIMIT)" };
  }
  if (d.order_type === "MARKET" && d.limit_expiry_s !== null) {
    return { pointer: "/limit_expiry_s", message: "must be null for a MARKET order" };
  }
  if (d.version === 1) {
    const newer = version2Part(d);
    if (newer) return newer;
  }
  const x = d.exit;
  const rules = x.conditions.length > 0 || x.take_profit_pct !== null || x.stop_loss_pct !== null;
  if (x.hold_to_resolution && (rules || x.time_limit_s !== null)) {
    return {
      pointer: "/exit/hold_to_resolution",
      message: "must be false when the exit has conditions, a take profit, a stop loss or a time limit",
    };
  }
  return null;
}

/**
 * A definition as stored with a strategy or run: stored before a field was added, it gets the field's
 * default (what the engine did before the field existed: `count_rebates` false), so that old strategies
 * and runs still answer in the schema's shape and replay as they did.
 */
export function parseStoredDefinition(text: string): StrategyDefinition {
  const stored = JSON.parse(text) as StrategyDefinition;
  return canonical({
    ...DEFINITION_DEFAULTS,
    ...stored,
    exit: { ...DEFINITION_DEFAULTS.exit, ...stored.exit },
  });
}

/** The first part of a definition that version 1 cannot hold, or null. */
function version2Part(d: StrategyDefinition): { pointer: string; message: string } | null {
  const lists: [string, ConditionNode[]][] = [
    ["/entry", d.entry],
    ["/exit/conditions", d.exit.conditions],
  ];
  for (const [at, nodes] of lists) {
    for (const [i, node] of nodes.entries()) {
      if (!isCondition(node))
        return { pointer: `${at}/${i}`, message: "is a group (all, any, not), which needs version 2" };
      for (const name of [node.feature, node.value]) {
        if (typeof name === "string" && !inVersion1(name))
          return {
            pointer: `${at}/${i}`,
            message: `names the ${parseFeature(name)?.kind === "lookback" ? "lookback" : "feature"} ${name}, which needs version 2`,
          };
      }
    }
  }
  return null;
}

export function isCondition(node: ConditionNode): node is Condition {
  return "feature" in node;
}

/** A node with its keys in the schema's order. */
function canonicalNode(node: ConditionNode): ConditionNode {
  if (isCondition(node)) return { feature: node.feature, op: node.op, value: node.value };
  if ("all" in node) return { all: node.all.map(canonicalNode) };
  if ("any" in node) return { any: node.any.map(canonicalNode) };
  return { not: canonicalNode(node.not) };
}

/** The same definition with its fields in the schema's order, so that equal definitions are equal bytes. */
function canonical(d: StrategyDefinition): StrategyDefinition {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(DEFINITION_SCHEMA.properties)) out[key] = d[key as keyof StrategyDefinition];
  const exit: Record<string, unknown> = {};
  for (const key of Object.keys(Exit.properties)) exit[key] = d.exit[key as keyof ExitRules];
  out.exit = exit;
  out.entry = d.entry.map(canonicalNode);
  exit.conditions = d.exit.conditions.map(canonicalNode);
  return out as StrategyDefinition;
}

const GROUP_KEYS = ["all", "any", "not"];

/**
 * The first problem of a condition tree, said of the node it is in: the schema's union of a condition
 * and three groups would otherwise report what each alternative misses.
 */
function nodeProblem(
  node: unknown,
  pointer: string,
  depth: number,
): { pointer: string; message: string } | null {
  if (typeof node !== "object" || node === null || Array.isArray(node)) {
    return { pointer, message: "must be a condition {feature, op, value} or a group {all|any|not}" };
  }
  const keys = Object.keys(node);
  if (keys.length === 1 && GROUP_KEYS.includes(keys[0])) {
    if (depth >= MAX_GROUP_DEPTH) {
      return { pointer, message: `nests groups deeper than ${MAX_GROUP_DEPTH} levels` };
    }
    const key = keys[0];
    const members = (node as Record<string, unknown>)[key];
    if (key === "not") return nodeProblem(members, `${pointer}/not`, depth + 1);
    if (!Array.isArray(members) || members.length === 0 || members.length > MAX_GROUP_MEMBERS) {
      return {
        pointer: `${pointer}/${key}`,
        message: `must be an array of 1 to ${MAX_GROUP_MEMBERS} conditions or groups`,
      };
    }
    for (const [i, member] of members.entries()) {
      const problem = nodeProblem(member, `${pointer}/${key}/${i}`, depth + 1);
      if (problem) return problem;
    }
    return null;
  }
  if (!keys.includes("feature") && keys.some((k) => GROUP_KEYS.includes(k))) {
    return { pointer, message: "must be a group of one key: all, any or not" };
  }
  const problem = schemaProblem(Condition, node);
  return problem ? { pointer: pointer + problem.pointer, message: problem.message } : null;
}

/** The first problem of the definition's condition lists, or null (the schema checks the rest). */
function treesProblem(value: unknown): { pointer: string; message: string } | null {
  if (typeof value !== "object" || value === null) return null;
  const d = value as { entry?: unknown; exit?: { conditions?: unknown } };
  const lists: [string, unknown][] = [
    ["/entry", d.entry],
    ["/exit/conditions", typeof d.exit === "object" && d.exit !== null ? d.exit.conditions : undefined],
  ];
  for (const [at, list] of lists) {
    if (!Array.isArray(list)) continue;
    for (const [i, node] of list.entries()) {
      const problem = nodeProblem(node, `${at}/${i}`, 0);
      if (problem) return problem;
    }
  }
  return null;
}

/** A complete definition checked against the schema and the rules above; throws DefinitionError. */
export function checkDefinition(value: unknown, at = ""): StrategyDefinition {
  const problem = treesProblem(value) ?? schemaProblem(DEFINITION_SCHEMA, value);
  if (problem) throw new DefinitionError(at + problem.pointer, problem.message);
  const d = value as StrategyDefinition;
  const rule = definitionProblem(d);
  if (rule) throw new DefinitionError(at + rule.pointer, rule.message);
  return canonical(d);
}
