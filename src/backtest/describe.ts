import { type ConditionNode, isCondition, type StrategyDefinition } from "./definition.ts";
import { type LookbackFeature, type MomentFeature, parseFeature } from "./feature-registry.ts";

/**
 * A definition in plain words (DESIGN 3.7: wherever a strategy is shown, the definition that ran is
 * shown with it). One function for every place that shows one: the API's answers (`definition_text`
 * beside `definition`), `updown backtest`'s table, and through the API the MCP tool and the page. It
 * says every rule the engine follows and nothing it does not, in a line per part.
 */

const TOKEN = { up: "Up", down: "Down" } as const;

const PLAIN_WORDS: Record<string, string> = {
  coin_price: "the coin price",
  coin_return_bps: "the coin's return since the start (bps)",
  elapsed_s: "the seconds elapsed",
  remaining_s: "the seconds remaining",
  remaining_pct: "the % of the market remaining",
};

const MOMENT_WORDS: Record<MomentFeature, string> = {
  hour_utc: "the hour of the day (UTC, 0-23)",
  minute_of_day_utc: "the minute of the day (UTC, 0-1439)",
  spot_mid: "Binance spot's mid price",
  futures_mid: "Binance futures' mid price",
  futures_funding_rate: "Binance futures' last funding rate",
  futures_open_interest: "Binance futures' open interest (contracts)",
};

const LOOKBACK_WORDS: Record<LookbackFeature, (last: string) => string> = {
  coin_return_bps: (last) => `the coin's return ${last} (bps)`,
  coin_volatility_bps: (last) => `the coin's realized volatility ${last} (bps)`,
  price_up_change_cents: (last) => `the Up price's change ${last} (cents)`,
  price_down_change_cents: (last) => `the Down price's change ${last} (cents)`,
  beat_distance_sd: (last) =>
    `the coin's distance to the price to beat in standard deviations for the time left (volatility ${last})`,
  traded_volume: (last) => `the shares traded ${last}`,
  traded_usdc: (last) => `the USDC traded ${last}`,
  spot_return_bps: (last) => `Binance spot's return ${last} (bps)`,
  futures_return_bps: (last) => `Binance futures' return ${last} (bps)`,
};

/** A feature's name in words: `price_up_change_cents_30s` is "the Up price's change over the last 30 s (cents)". */
export function featureWords(name: string): string {
  const f = parseFeature(name);
  if (f === null) return name;
  if (f.kind === "lookback") return LOOKBACK_WORDS[f.family](`over the last ${f.seconds} s`);
  if (f.kind === "moment") return MOMENT_WORDS[f.name];
  if (f.kind === "book") {
    const ticks = f.ticks === null ? "" : ` within ${f.ticks} ticks`;
    const family = {
      depth_bid: "bid depth (shares)",
      depth_ask: "ask depth (shares)",
      book_imbalance: "book imbalance",
    }[f.family];
    return `the ${TOKEN[f.token]} ${family}${ticks}`;
  }
  const m = /^(price|best_bid|best_ask|spread)_(up|down)$/.exec(f.name);
  if (m) {
    const what = { price: "price", best_bid: "best bid", best_ask: "best ask", spread: "spread" }[m[1]];
    return `the ${TOKEN[m[2] as "up" | "down"]} ${what}`;
  }
  return PLAIN_WORDS[f.name] ?? f.name;
}

const OP_WORDS: Record<string, string> = {
  "<": "is below",
  "<=": "is at most",
  ">": "is above",
  ">=": "is at least",
  crosses_above: "crosses above",
  crosses_below: "crosses below",
};

/** A condition tree in words; groups in brackets, so that "and" and "or" never mix unbracketed. */
export function nodeWords(node: ConditionNode): string {
  if (isCondition(node)) {
    const value = typeof node.value === "number" ? String(node.value) : featureWords(node.value);
    return `${featureWords(node.feature)} ${OP_WORDS[node.op]} ${value}`;
  }
  if ("all" in node) return `(${node.all.map(nodeWords).join(" and ")})`;
  if ("any" in node) return `(${node.any.map(nodeWords).join(" or ")})`;
  return `not (${nodeWords(node.not)})`;
}

const cents = (offset: number) => Math.round(Math.abs(offset) * 100);

function orderWords(d: StrategyDefinition): string {
  if (d.order_type === "MARKET") return "market order";
  const rule = d.limit_price ?? { reference: "best_bid", offset: 0 };
  const reference = { best_bid: "the best bid", best_ask: "the best ask", mid: "the mid", fixed: "" }[
    rule.reference
  ];
  const at =
    rule.reference === "fixed"
      ? `${rule.offset}`
      : rule.offset === 0
        ? reference
        : `${reference} ${rule.offset < 0 ? "-" : "+"} ${cents(rule.offset)} cents`;
  const expiry = d.limit_expiry_s;
  return `limit order at ${at}, ${expiry === null ? "cancelled at the market's end if unfilled" : `cancelled after ${expiry} s unfilled`}`;
}

function exitWords(d: StrategyDefinition): string {
  const x = d.exit;
  if (x.hold_to_resolution) return "Exit: none, every position is held to resolution.";
  const rules = x.conditions.map((c) => `when ${nodeWords(c)}`);
  if (x.take_profit_pct !== null) rules.push(`take profit at +${x.take_profit_pct}%`);
  if (x.stop_loss_pct !== null) rules.push(`stop loss at -${x.stop_loss_pct}%`);
  if (x.time_limit_s !== null) rules.push(`after ${x.time_limit_s} s held`);
  if (rules.length === 0) return "Exit: no rule, positions settle at resolution.";
  return `Exit (sell at market) at the first of: ${rules.join("; ")}; else settle at resolution.`;
}

/** The definition in plain words, a line per part. */
export function describeDefinition(d: StrategyDefinition): string {
  const entries = d.max_entries_per_market === 1 ? "1 entry" : `${d.max_entries_per_market} entries`;
  const lines = [
    `"${d.name}" (definition version ${d.version})`,
    `Buy ${d.side === "UP" ? "Up" : "Down"}: ${d.position_size} shares per entry, ${orderWords(d)}, at most ${entries} per market.`,
    d.entry.length === 0
      ? "Enter: at the first snapshot."
      : `Enter when: ${d.entry.map(nodeWords).join(" and ")}.`,
    exitWords(d),
  ];
  const extras: string[] = [];
  if (d.max_fill_price !== null) extras.push(`pay at most ${d.max_fill_price} a share`);
  if (d.max_loss_percent !== null) extras.push(`max loss ${d.max_loss_percent}%`);
  extras.push(d.latency_ms === null ? "orders fill at the next snapshot" : `latency ${d.latency_ms} ms`);
  lines.push(`${extras.join("; ").replace(/^./, (c) => c.toUpperCase())}.`);
  return lines.join("\n");
}
