import { DEFINITION_DEFAULTS, type StrategyDefinition } from "../definition.ts";

/**
 * The four presets of DESIGN 3.7, as complete definitions (docs/backtests.md describes each). They
 * buy Up; `side` in a prompt that names a preset (`mean reversion on down`) turns them to Down.
 */

const base = { ...DEFINITION_DEFAULTS, exit: { ...DEFINITION_DEFAULTS.exit } };

export const PRESETS: Record<string, StrategyDefinition> = {
  mean_reversion: {
    ...base,
    name: "Mean reversion",
    side: "UP",
    entry: [
      { feature: "price_up", op: "<=", value: 0.35 },
      { feature: "elapsed_s", op: ">=", value: 30 },
      { feature: "remaining_pct", op: ">=", value: 40 },
    ],
    exit: { ...base.exit, conditions: [{ feature: "price_up", op: ">=", value: 0.5 }], stop_loss_pct: 40 },
  },
  dip_buying: {
    ...base,
    name: "Dip buying",
    side: "UP",
    entry: [
      { feature: "coin_return_bps", op: "<=", value: -10 },
      { feature: "price_up", op: "<=", value: 0.45 },
      { feature: "remaining_pct", op: ">=", value: 30 },
    ],
    exit: { ...base.exit, take_profit_pct: 20, stop_loss_pct: 25 },
  },
  momentum_entry: {
    ...base,
    name: "Momentum entry",
    side: "UP",
    entry: [
      { feature: "price_up", op: "crosses_above", value: 0.6 },
      { feature: "coin_return_bps", op: ">", value: 0 },
    ],
    exit: { ...base.exit, hold_to_resolution: true },
  },
  quick_scalp: {
    ...base,
    name: "Quick scalp",
    side: "UP",
    entry: [
      { feature: "spread_up", op: "<=", value: 0.02 },
      { feature: "book_imbalance_up", op: ">=", value: 0.3 },
      { feature: "remaining_s", op: ">=", value: 60 },
    ],
    exit: { ...base.exit, take_profit_pct: 5, stop_loss_pct: 5, time_limit_s: 30 },
    order_type: "LIMIT",
    limit_price: { reference: "best_bid", offset: 0 },
    limit_expiry_s: 10,
    max_entries_per_market: 3,
  },
};

export const PRESET_NAMES = Object.keys(PRESETS);

/** A preset's definition; a fresh copy, so that callers may change it. */
export function presetDefinition(name: string): StrategyDefinition | null {
  const preset = Object.hasOwn(PRESETS, name) ? PRESETS[name] : undefined;
  return preset ? (JSON.parse(JSON.stringify(preset)) as StrategyDefinition) : null;
}
