import {
  checkDefinition,
  type Condition,
  type ConditionNode,
  DEFINITION_DEFAULTS,
  DEFINITION_SCHEMA,
  DefinitionError,
  type ExitRules,
  type StrategyDefinition,
} from "./definition.ts";

/**
 * Reading what callers send (DESIGN 3.7): snake_case is canonical; camelCase spellings and
 * PolyHistorical's names (`entryConditions`, `field`, `operator`) are aliases; a field given in two
 * spellings is refused. Every error names the JSON pointer of the offending field in what was sent.
 */

/** `positionSize` → `position_size`. */
export function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A JSON pointer segment (RFC 6901). */
export function pointerSegment(key: string | number): string {
  return String(key).replaceAll("~", "~0").replaceAll("/", "~1");
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export interface Field {
  value: unknown;
  /** Where the caller put it. */
  pointer: string;
  /** The spelling the caller used. */
  key: string;
}

/**
 * An object's fields by canonical name: each key is taken as itself, as an explicit alias, or in its
 * snake_case spelling. An unknown key or a field given twice is a DefinitionError at that key.
 */
export function readFields(
  value: unknown,
  at: string,
  canonical: readonly string[],
  aliases: Record<string, string> = {},
  what = "object",
): Map<string, Field> {
  if (!isPlainObject(value)) throw new DefinitionError(at, "must be a JSON object");
  const fields = new Map<string, Field>();
  for (const [key, v] of Object.entries(value)) {
    const pointer = `${at}/${pointerSegment(key)}`;
    const name = canonical.includes(key)
      ? key
      : Object.hasOwn(aliases, key)
        ? aliases[key]
        : canonical.includes(snakeCase(key))
          ? snakeCase(key)
          : null;
    if (name === null) {
      throw new DefinitionError(pointer, `is not a field of ${what} (fields: ${canonical.join(", ")})`);
    }
    const earlier = fields.get(name);
    if (earlier) {
      throw new DefinitionError(pointer, `and ${earlier.key} are two spellings of ${name}; give one`);
    }
    fields.set(name, { value: v, pointer, key });
  }
  return fields;
}

/** Canonical pointers (into a normalized value) mapped to where the caller wrote them. */
export class PointerMap {
  private readonly entries = new Map<string, string>();
  private readonly base: string;
  constructor(base: string) {
    this.base = base;
  }
  set(canonical: string, given: string): void {
    this.entries.set(canonical, given);
  }
  /** Where a canonical pointer's field came from; a field filled in by default, under its parent's. */
  given(canonical: string): string {
    let best: string | null = null;
    for (const key of this.entries.keys()) {
      const covers = canonical === key || canonical.startsWith(`${key}/`);
      if (covers && (best === null || key.length > best.length)) best = key;
    }
    if (best === null) return this.base + canonical;
    return (this.entries.get(best) ?? "") + canonical.slice(best.length);
  }
}

const OPERATOR_ALIASES: Record<string, Condition["op"]> = {
  "<": "<",
  "<=": "<=",
  ">": ">",
  ">=": ">=",
  lt: "<",
  lte: "<=",
  gt: ">",
  gte: ">=",
  crosses_above: "crosses_above",
  crossesabove: "crosses_above",
  crosses_below: "crosses_below",
  crossesbelow: "crosses_below",
};

/** A feature in our spelling or camelCase (`priceUp`, `bookImbalanceUp`); anything else as given. */
function featureName(value: unknown): unknown {
  return typeof value === "string" ? snakeCase(value).toLowerCase() : value;
}

function readCondition(value: unknown, at: string, canon: string, map: PointerMap): Condition {
  const f = readFields(
    value,
    at,
    ["feature", "op", "value"],
    { field: "feature", operator: "op" },
    "a condition",
  );
  map.set(canon, at);
  const out: Record<string, unknown> = {};
  for (const [name, field] of f) {
    map.set(`${canon}/${name}`, field.pointer);
    const v = field.value;
    if (name === "op") {
      const alias = typeof v === "string" ? v.toLowerCase().replaceAll(" ", "_") : null;
      out.op = alias !== null && Object.hasOwn(OPERATOR_ALIASES, alias) ? OPERATOR_ALIASES[alias] : v;
    } else {
      out[name] = featureName(v);
    }
  }
  // Checked against the schema by the caller, with the pointers recorded here.
  return out as unknown as Condition;
}

/** A condition with its aliases read, or a group (version 2) with its members read likewise. */
function readNode(value: unknown, at: string, canon: string, map: PointerMap): ConditionNode {
  const keys = isPlainObject(value) ? Object.keys(value) : [];
  if (keys.length === 1 && ["all", "any", "not"].includes(keys[0])) {
    const key = keys[0];
    const members = (value as Record<string, unknown>)[key];
    map.set(canon, at);
    if (key === "not") return { not: readNode(members, `${at}/not`, `${canon}/not`, map) };
    // A group that is no array is left for the schema's check, which names it.
    const read = Array.isArray(members)
      ? members.map((m, i) => readNode(m, `${at}/${key}/${i}`, `${canon}/${key}/${i}`, map))
      : members;
    return { [key]: read } as ConditionNode;
  }
  return readCondition(value, at, canon, map);
}

function readConditions(value: unknown, at: string, canon: string, map: PointerMap): ConditionNode[] {
  map.set(canon, at);
  if (!Array.isArray(value)) throw new DefinitionError(at, "must be an array of conditions");
  return value.map((c, i) => readNode(c, `${at}/${i}`, `${canon}/${i}`, map));
}

const EXIT_FIELDS = Object.keys(DEFINITION_DEFAULTS.exit);

function readExit(value: unknown, at: string, map: PointerMap): ExitRules {
  map.set("/exit", at);
  const f = readFields(value, at, EXIT_FIELDS, {}, "an exit");
  const out: Record<string, unknown> = { ...DEFINITION_DEFAULTS.exit };
  for (const [name, field] of f) {
    map.set(`/exit/${name}`, field.pointer);
    out[name] =
      name === "conditions"
        ? readConditions(field.value, field.pointer, "/exit/conditions", map)
        : field.value;
  }
  return out as unknown as ExitRules;
}

const DEFINITION_FIELDS = Object.keys(DEFINITION_SCHEMA.properties);

/** Fields a definition may hold: its own, and PolyHistorical's exit conditions beside them. */
const DEFINITION_INPUT_FIELDS = [...DEFINITION_FIELDS, "exit_conditions"];

function upperCased(value: unknown): unknown {
  return typeof value === "string" ? value.toUpperCase() : value;
}

/**
 * A definition as a caller wrote it (fields left out take their defaults, aliases accepted) made
 * complete and checked. `at` is where the definition sits in the body; errors point into the body.
 */
export function normalizeDefinition(value: unknown, at: string): StrategyDefinition {
  const map = new PointerMap(at);
  const f = readFields(
    value,
    at,
    DEFINITION_INPUT_FIELDS,
    {
      entryConditions: "entry",
      entry_conditions: "entry",
      expire_after_s: "limit_expiry_s",
      expireAfterS: "limit_expiry_s",
    },
    "a strategy definition",
  );
  const out: Record<string, unknown> = { ...DEFINITION_DEFAULTS, exit: { ...DEFINITION_DEFAULTS.exit } };
  for (const [name, field] of f) {
    if (name === "exit_conditions") continue;
    map.set(`/${name}`, field.pointer);
    if (name === "entry") out.entry = readConditions(field.value, field.pointer, "/entry", map);
    else if (name === "exit") out.exit = readExit(field.value, field.pointer, map);
    else if (name === "side" || name === "order_type") out[name] = upperCased(field.value);
    else out[name] = field.value;
  }
  const exitConditions = f.get("exit_conditions");
  if (exitConditions) {
    const exit = out.exit as ExitRules;
    if (exit.conditions.length > 0) {
      throw new DefinitionError(exitConditions.pointer, "and exit.conditions are two spellings of one field");
    }
    exit.conditions = readConditions(exitConditions.value, exitConditions.pointer, "/exit/conditions", map);
  }
  if (!f.has("side")) throw new DefinitionError(`${at}/side`, "is required (UP or DOWN)");
  try {
    return checkDefinition(out);
  } catch (err) {
    if (err instanceof DefinitionError) {
      throw new DefinitionError(map.given(err.pointer), err.rule);
    }
    throw err;
  }
}
