import { type ApiKeyRecord, PLAN_NAMES, type PlanName } from "./api-key.ts";
import { type Coin, MARKET_TYPES, type MarketType, parseCoin } from "./market.ts";

export const FEATURES = ["spot", "futures", "backtest"] as const;
export type Feature = (typeof FEATURES)[number];

/**
 * What a plan buys (DESIGN 3.3). `null` means "no limit" wherever a number is allowed. The shape
 * mirrors the plans file (config/plans.json), with camelCase names.
 */
export interface Plan {
  name: PlanName;
  requestsPerMinute: number | null;
  requestsPerDay: number | null;
  /** Active keys one account may hold on this plan. */
  keysPerAccount: number | null;
  /**
   * Per coin, how many of its latest markets of each type the plan opens (the free plan's history
   * window); a coin not named here is open in full.
   */
  history: Record<Coin, Record<MarketType, number>>;
  features: Record<Feature, boolean>;
  /** 0 when backtest generations are not included at all. */
  backtestGenerationsPerMonth: number | null;
}

export type Plans = Record<PlanName, Plan>;

/** The two windows a request is counted in, with the limits that apply to one key. */
export interface RequestLimits {
  perMinute: number | null;
  perDay: number | null;
}

export class PlanConfigError extends Error {}

/** A key's limits: its plan's, where an enterprise key may carry its own. */
export function limitsOf(plans: Plans, key: ApiKeyRecord): RequestLimits {
  const plan = plans[key.plan];
  return {
    perMinute: key.perMinuteLimit ?? plan.requestsPerMinute,
    perDay: key.perDayLimit ?? plan.requestsPerDay,
  };
}

/** The first plan, in price order, that has the feature; what a 403 tells the caller to buy. */
export function cheapestPlanWith(plans: Plans, has: (plan: Plan) => boolean): PlanName | null {
  return PLAN_NAMES.find((name) => has(plans[name])) ?? null;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function limitAt(where: string, value: unknown): number | null {
  if (value === null) return null;
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) return value;
  throw new PlanConfigError(`${where} must be a whole number >= 0 or null, got ${JSON.stringify(value)}`);
}

function windowAt(where: string, value: unknown): Record<MarketType, number> {
  if (!isObject(value)) throw new PlanConfigError(`${where} must be an object of market types or null`);
  const out = {} as Record<MarketType, number>;
  for (const type of MARKET_TYPES) {
    const n = limitAt(`${where}.${type}`, value[type] ?? null);
    if (n === null) throw new PlanConfigError(`${where}.${type} is required when a coin's window is set`);
    out[type] = n;
  }
  for (const name of Object.keys(value)) {
    if (!(MARKET_TYPES as readonly string[]).includes(name)) {
      throw new PlanConfigError(`${where}.${name} is not a market type (${MARKET_TYPES.join(", ")})`);
    }
  }
  return out;
}

/** `history`: per coin a window of market types, or null (open in full, as a coin left out). */
function historyAt(where: string, value: unknown): Record<Coin, Record<MarketType, number>> {
  if (!isObject(value)) throw new PlanConfigError(`${where} must be an object of coins`);
  const out: Record<Coin, Record<MarketType, number>> = {};
  for (const [name, window] of Object.entries(value)) {
    const coin = parseCoin(name);
    if (coin === null || coin !== name) throw new PlanConfigError(`${where}.${name} is not a coin code`);
    if (window !== null) out[coin] = windowAt(`${where}.${name}`, window);
  }
  return out;
}

function featuresAt(where: string, value: unknown): Record<Feature, boolean> {
  if (!isObject(value)) throw new PlanConfigError(`${where} must be an object`);
  const out = {} as Record<Feature, boolean>;
  for (const feature of FEATURES) {
    if (typeof value[feature] !== "boolean")
      throw new PlanConfigError(`${where}.${feature} must be true or false`);
    out[feature] = value[feature];
  }
  return out;
}

const PLAN_FIELDS = [
  "requests_per_minute",
  "requests_per_day",
  "keys_per_account",
  "history",
  "features",
  "backtest_generations_per_month",
];

function planFrom(name: PlanName, raw: Json): Plan {
  for (const field of Object.keys(raw)) {
    if (!PLAN_FIELDS.includes(field)) {
      throw new PlanConfigError(`plans.${name}.${field} is not a plan setting (${PLAN_FIELDS.join(", ")})`);
    }
  }
  for (const field of PLAN_FIELDS) {
    if (!(field in raw)) throw new PlanConfigError(`plans.${name}.${field} is missing`);
  }
  const at = (field: string) => `plans.${name}.${field}`;
  return {
    name,
    requestsPerMinute: limitAt(at("requests_per_minute"), raw.requests_per_minute),
    requestsPerDay: limitAt(at("requests_per_day"), raw.requests_per_day),
    keysPerAccount: limitAt(at("keys_per_account"), raw.keys_per_account),
    history: historyAt(at("history"), raw.history),
    features: featuresAt(at("features"), raw.features),
    backtestGenerationsPerMonth: limitAt(
      at("backtest_generations_per_month"),
      raw.backtest_generations_per_month,
    ),
  };
}

/**
 * Plans from the defaults file, with an override file laid over it: each plan and each setting the
 * override names replaces the default one (`features` merged per feature), the rest stay.
 */
export function parsePlans(defaults: unknown, override: unknown = {}): Plans {
  if (!isObject(defaults)) throw new PlanConfigError("the default plans file must hold an object");
  if (!isObject(override)) throw new PlanConfigError("the plans file must hold an object of plans");
  for (const name of Object.keys(override)) {
    if (!(PLAN_NAMES as readonly string[]).includes(name)) {
      throw new PlanConfigError(`"${name}" is not a plan (${PLAN_NAMES.join(", ")})`);
    }
  }
  const plans = {} as Plans;
  for (const name of PLAN_NAMES) {
    const base = defaults[name];
    const over = override[name] ?? {};
    if (!isObject(base)) throw new PlanConfigError(`the default plans file has no plan "${name}"`);
    if (!isObject(over)) throw new PlanConfigError(`plans.${name} must be an object`);
    const merged = { ...base, ...over };
    if (isObject(base.features) && isObject(over.features))
      merged.features = { ...base.features, ...over.features };
    // `history` is laid over per coin. Plans files written before coins were configuration set
    // `btc_history` (null: all); it stands for history.btc.
    const overHistory = isObject(over.history) ? { ...over.history } : {};
    if ("btc_history" in over) {
      overHistory.btc = over.btc_history;
      delete merged.btc_history;
    }
    const historyGiven = "history" in over;
    if (isObject(base.history) && (!historyGiven || isObject(over.history))) {
      merged.history = { ...base.history, ...overHistory };
    }
    plans[name] = planFrom(name, merged);
  }
  return plans;
}
