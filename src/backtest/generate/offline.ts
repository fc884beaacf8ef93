import {
  checkDefinition,
  type Condition,
  type ConditionNode,
  DEFAULT_LIMIT_PRICE,
  DEFINITION_DEFAULTS,
  DEFINITION_VERSION,
  DefinitionError,
  isCondition,
  type StrategyDefinition,
} from "../definition.ts";
import { MAX_LOOKBACK_S } from "../feature-registry.ts";
import { type GeneratedStrategy, GenerationError, type StrategyGenerator } from "./generator.ts";
import { presetDefinition } from "./presets.ts";

/**
 * The built-in generator (DESIGN 3.7): offline and deterministic, the same prompt giving the same
 * definition, and honest: a prompt is answered only when every clause of it became part of the
 * definition; otherwise the generation fails quoting each clause that did not (docs/backtests.md).
 *
 * A prompt is read clause by clause (split at commas, semicolons, full stops, "then", and before a verb
 * of exiting). A clause may hold one negation ("unless", "except when", "but not", "don't buy"): what
 * follows it is read on its own and becomes a `not`. Each side of a negation may hold alternatives
 * joined by "or": each is read on its own and they become an `any`. Each alternative is matched
 * against the phrasings below, every one documented with an example in docs/backtests.md (a test runs
 * each example); once the phrasings have taken their text, only filler words may remain. A clause that
 * speaks of selling or exiting gives exit conditions (its own conditions all holding, as one); any
 * other gives entry conditions. Book features without a token follow the side bought.
 */

/** What the phrasings build: a definition with `{side}` standing for the token not yet known. */
interface Draft {
  side: "UP" | "DOWN" | null;
  preset: string | null;
  entry: ConditionNode[];
  exit: ConditionNode[];
  fields: Partial<StrategyDefinition>;
  exitFields: Partial<StrategyDefinition["exit"]>;
  name: string | null;
  /** A size in USDC and the clause that gave it: shares once the price is known to be fixed. */
  usdc: { amount: number; clause: string } | null;
  /** The clause that asked for an expiry, which needs a limit order. */
  expiryClause: string | null;
  /** The feature the last comparison was about, for a comparison that names none (`... or above 0.7`). */
  lastFeature: string | null;
}

/** One alternative being read: the draft, the conditions it gives, and what it says that cannot be built. */
interface Reading {
  draft: Draft;
  out: ConditionNode[];
  problems: string[];
  /** The clause as the prompt wrote it. */
  clause: string;
  /** Whether the clause speaks of selling or exiting. */
  exiting: boolean;
}

interface Phrasing {
  /** The phrasing as docs/backtests.md lists it. */
  doc: string;
  example: string;
  re: RegExp;
  apply(m: RegExpExecArray, r: Reading): void;
}

const NUM = String.raw`(\d+(?:\.\d+)?|\.\d+)`;
const UNIT = String.raw`\s*(cents?\b|c\b|¢|%)?`;
const SECONDS = String.raw`(\d+(?:\.\d+)?)\s*(seconds?|secs?|s|minutes?|mins?|m)\b`;
/** A lookback's length: `30 seconds`, `2 minutes`, `a minute`, `one minute`. */
const WINDOW = String.raw`(\d+(?:\.\d+)?|an?|one)?\s*(seconds?|secs?|minutes?|mins?|(?<=\d\s*)s|(?<=\d\s*)m)\b`;

/** Who a comparison is about: the words and the feature they name (`{side}`: the token bought). */
const SUBJECTS: [RegExp, string][] = [
  [/^(the )?(up|yes)( token)?('s)? price$|^price(_| of )(the )?up( token)?$|^up$|^price_up$/, "price_up"],
  [
    /^(the )?(down|no)( token)?('s)? price$|^price(_| of )(the )?down( token)?$|^down$|^price_down$/,
    "price_down",
  ],
  [/^(the )?(best )?bid$/, "best_bid_{side}"],
  [/^(the )?(best )?ask$/, "best_ask_{side}"],
  [/^(the )?(price|it)$/, "price_{side}"],
  [/^(the )?(coin|bitcoin|btc|eth|ether|ethereum|sol|solana|spot)( price)?$/, "coin_price"],
  [/^(the )?spread$/, "spread_{side}"],
  [/^(the )?(book )?imbalance$/, "book_imbalance_{side}"],
  [/^(the )?bid depth$/, "depth_bid_{side}"],
  [/^(the )?ask depth$/, "depth_ask_{side}"],
];

const BELOW =
  /^(below|under|less than|lower than|at most|at or below|<|<=|drops below|falls below|falls under)$/;

const COMPARATORS: [RegExp, Condition["op"]][] = [
  [/^(at most|at or below|<=|no more than)$/, "<="],
  [/^(below|under|less than|lower than|<|drops below|falls below|falls under)$/, "<"],
  [/^(at least|at or above|>=|no less than)$/, ">="],
  [/^(above|over|more than|greater than|higher than|>|rises above|climbs above)$/, ">"],
];

function subjectOf(words: string): string | null {
  const w = words.trim();
  for (const [re, feature] of SUBJECTS) if (re.test(w)) return feature;
  return null;
}

/** A price-like value: `40c`, `40 cents`, `40%` and a bare 40 are 0.40; 0.4 stays. */
function priceValue(n: string, unit: string | undefined, feature: string): number {
  const v = Number(n);
  const priced = !feature.startsWith("coin_") && !feature.startsWith("depth_");
  if (unit !== undefined && unit !== "") return v / 100;
  return priced && v > 1 ? v / 100 : v;
}

/** `2 minutes` is 120; a count left out (`the last minute`) or `a`, `an`, `one` is 1. */
function seconds(n: string | undefined, unit: string): number {
  const count = n === undefined || /^(an?|one)$/.test(n) ? 1 : Number(n);
  return Math.round(count * (unit.startsWith("m") ? 60 : 1));
}

function setSide(r: Reading, word: string): void {
  const side = word === "up" || word === "yes" ? "UP" : "DOWN";
  if (r.draft.side !== null && r.draft.side !== side) {
    r.problems.push(`a strategy buys one side, and the prompt already buys ${r.draft.side}`);
    return;
  }
  r.draft.side = side;
}

function compare(r: Reading, feature: string, op: Condition["op"], value: number | string): void {
  r.out.push({ feature, op, value });
  r.draft.lastFeature = feature;
}

const SUBJECT = String.raw`((?:the )?(?:up|down|yes|no|best bid|bid|best ask|ask|price|it|coin|bitcoin|btc|eth|ether|ethereum|sol|solana|spot|spread|book imbalance|imbalance|bid depth|ask depth)(?: token)?(?:'s)?(?: price)?|price(?:_| of )(?:the )?(?:up|down)(?: token)?)`;
const COMPARE_WORDS = String.raw`(at most|at or below|no more than|below|under|less than|lower than|drops below|falls below|falls under|at least|at or above|no less than|above|over|more than|greater than|higher than|rises above|climbs above|<=|>=|<|>)`;
const VERB = String.raw`(?:is |trades |goes |gets |sits |stays )?`;

const COMPARISON: Phrasing = {
  doc: "SUBJECT (is) (not) below|under|at most|above|over|at least|<|<=|>|>= VALUE",
  example: "buy up when the up price is below 40c",
  re: new RegExp(String.raw`\b${SUBJECT}\s*${VERB}(not )?${COMPARE_WORDS}\s*\$?${NUM}${UNIT}`, "g"),
  apply(m, r) {
    const feature = subjectOf(m[1]);
    const op = COMPARATORS.find(([re]) => re.test(m[3]))?.[1];
    if (feature === null || op === undefined) return r.problems.push(`"${m[0].trim()}" names nothing known`);
    const c: Condition = { feature, op, value: priceValue(m[4], m[5], feature) };
    r.draft.lastFeature = feature;
    r.out.push(m[2] ? { not: c } : c);
  },
};

const BETWEEN: Phrasing = {
  doc: "SUBJECT (is) between VALUE and VALUE",
  example: "buy up when the up price is between 0.30 and 0.40",
  re: new RegExp(String.raw`\b${SUBJECT}\s*${VERB}between\s*${NUM}${UNIT}\s*and\s*${NUM}${UNIT}`, "g"),
  apply(m, r) {
    const feature = subjectOf(m[1]);
    if (feature === null) return r.problems.push(`"${m[0].trim()}" names nothing known`);
    between(r, feature, priceValue(m[2], m[3], feature), priceValue(m[4], m[5], feature));
  },
};

/** `between a and b`, both ends included, whichever way round they were written. */
function between(r: Reading, feature: string, a: number, b: number): void {
  compare(r, feature, ">=", Math.min(a, b));
  compare(r, feature, "<=", Math.max(a, b));
}

const BARE_COMPARISON: Phrasing = {
  doc: "... or below|above VALUE (the subject of the comparison before)",
  example: "buy up when the up price is below 0.3 or above 0.7",
  re: new RegExp(String.raw`^\s*(?:when |if )?(?:it is |it's |is )?${COMPARE_WORDS}\s*${NUM}${UNIT}`, "g"),
  apply(m, r) {
    const feature = r.draft.lastFeature;
    const op = COMPARATORS.find(([re]) => re.test(m[1]))?.[1];
    if (feature === null || op === undefined) return r.problems.push(`"${m[0].trim()}" says not of what`);
    compare(r, feature, op, priceValue(m[2], m[3], feature));
  },
};

const CROSS: Phrasing = {
  doc: "SUBJECT crosses above|over|below|under VALUE (or another SUBJECT)",
  example: "buy up when the up price crosses above 0.6",
  re: new RegExp(
    String.raw`\b${SUBJECT}\s+cross(?:es)?\s+(above|over|below|under)\s+(?:${NUM}${UNIT}|${SUBJECT})`,
    "g",
  ),
  apply(m, r) {
    const feature = subjectOf(m[1]);
    const op = /above|over/.test(m[2]) ? "crosses_above" : "crosses_below";
    const other = m[5] === undefined ? null : subjectOf(m[5]);
    if (feature === null) return r.problems.push(`"${m[0].trim()}" names nothing known`);
    if (m[3] !== undefined) compare(r, feature, op, priceValue(m[3], m[4], feature));
    else if (other !== null) compare(r, feature, op, other);
    else r.problems.push(`"${m[0].trim()}" names nothing known`);
  },
};

const COIN_WORDS = String.raw`(?:the coin|coin|bitcoin|btc|eth|ether|ethereum|sol|solana|spot)(?: price)?`;
const RISE = String.raw`(?:rose|risen|rises|climbed|climbs|gained|gains|jumped|jumps|went up|goes up|moved up|increased|is up|was up|up)`;
const FALL = String.raw`(?:fell|fallen|falls|dropped|drops|lost|loses|went down|goes down|moved down|decreased|declined|is down|was down|down)`;

const COIN_LOOKBACK: Phrasing = {
  doc: "the coin|bitcoin|btc|eth|sol rose|fell|dropped (by) (at least|more than) N bps|% in|over the last N seconds|minutes (in a minute)",
  example: "buy up when bitcoin rose 5 bps in the last 30 seconds",
  re: new RegExp(
    String.raw`${COIN_WORDS}\s+(?:has\s+)?(${RISE}|${FALL})\s+(?:by\s+)?(at least\s+|more than\s+)?${NUM}\s*(bps|basis points|bp|%|percent)\s+(?:in|over|within|during)\s+(?:the\s+)?(?:last\s+|past\s+)?${WINDOW}`,
    "g",
  ),
  apply(m, r) {
    const up = new RegExp(`^${RISE}$`).test(m[1]);
    const bps = Number(m[3]) * (/%|percent/.test(m[4]) ? 100 : 1);
    lookback(r, `coin_return_bps`, seconds(m[5], m[6]), up, m[2], bps);
  },
};

const PRICE_WORDS = String.raw`((?:the )?(?:up|down|yes|no)(?: token)?(?:'s)? price|(?:the )?price|it)`;

const PRICE_LOOKBACK: Phrasing = {
  doc: "the up|down price rose|fell|dropped (by) (at least|more than) N cents in|over the last N seconds|minutes (in a minute)",
  example: "buy up when the up price dropped 10 cents in a minute",
  re: new RegExp(
    String.raw`${PRICE_WORDS}\s+(?:has\s+)?(${RISE}|${FALL})\s+(?:by\s+)?(at least\s+|more than\s+)?${NUM}\s*(cents?|c|¢|points?)?\s+(?:in|over|within|during)\s+(?:the\s+)?(?:last\s+|past\s+)?${WINDOW}`,
    "g",
  ),
  apply(m, r) {
    const feature = subjectOf(m[1]);
    if (feature === null) return r.problems.push(`"${m[0].trim()}" names nothing known`);
    const up = new RegExp(`^${RISE}$`).test(m[2]);
    // A bare number is cents when whole (5), a price when a fraction (0.05 is 5 cents).
    const value = Number(m[4]);
    const cents = m[5] !== undefined || value >= 1 ? value : value * 100;
    const family = `${feature}_change_cents`;
    lookback(r, family, seconds(m[6], m[7]), up, m[3], Math.round(cents * 1e6) / 1e6);
  },
};

/** A movement over a lookback: rising N is at least +N (more than: above), falling N at most -N. */
function lookback(
  r: Reading,
  family: string,
  window: number,
  up: boolean,
  bound: string | undefined,
  n: number,
) {
  if (window < 1 || window > MAX_LOOKBACK_S) {
    r.problems.push(`a lookback is 1 to ${MAX_LOOKBACK_S} seconds`);
    return;
  }
  const strict = bound !== undefined && bound.startsWith("more");
  const op = up ? (strict ? ">" : ">=") : strict ? "<" : "<=";
  compare(r, `${family}_${window}s`, op, up ? n : -n);
}

const VOLATILITY: Phrasing = {
  doc: "(realized) volatility (of the coin) over|in the last N seconds|minutes (is) above|below N (bps)",
  example: "buy up when realized volatility over the last 60 seconds is above 8 bps",
  re: new RegExp(
    String.raw`(?:realized |realised )?vol(?:atility)?(?: of ${COIN_WORDS})?\s+(?:over|in|during|for)\s+(?:the\s+)?(?:last|past)\s+${WINDOW}\s+${VERB}${COMPARE_WORDS}\s*${NUM}\s*(?:bps|basis points|bp)?`,
    "g",
  ),
  apply(m, r) {
    const window = seconds(m[1], m[2]);
    const op = COMPARATORS.find(([re]) => re.test(m[3]))?.[1];
    if (op === undefined || window < 1 || window > MAX_LOOKBACK_S)
      return r.problems.push(`"${m[0].trim()}" cannot be built`);
    compare(r, `coin_volatility_bps_${window}s`, op, Number(m[4]));
  },
};

/** The lookback the distance to the price to beat takes its volatility over when a prompt names none. */
export const DEFAULT_BEAT_WINDOW_S = 60;

const BEAT_DISTANCE: Phrasing = {
  doc: "(the coin|btc|...) is (at least|more than) N standard deviations|sd above|below the price to beat (with volatility over the last N s)",
  example: "buy up when btc is more than 1.5 sd above the price to beat",
  re: new RegExp(
    String.raw`(?:${COIN_WORDS}\s+)?(?:is\s+)?(at least\s+|more than\s+)?${NUM}\s*(?:standard deviations?|std devs?|sds?|sigmas?)\s+(above|over|below|under)\s+the (?:price to beat|strike|start price)(?:\s*,?\s*(?:with|using|on)\s+(?:the\s+)?vol(?:atility)?\s+(?:over|in|of|from)\s+the\s+(?:last|past)\s+${WINDOW})?`,
    "g",
  ),
  apply(m, r) {
    const window = m[4] === undefined && m[5] === undefined ? DEFAULT_BEAT_WINDOW_S : seconds(m[4], m[5]);
    if (window < 1 || window > MAX_LOOKBACK_S)
      return r.problems.push(`a lookback is 1 to ${MAX_LOOKBACK_S} seconds`);
    const above = /above|over/.test(m[3]);
    const strict = m[1] !== undefined && m[1].startsWith("more");
    const n = Number(m[2]);
    const op = above ? (strict ? ">" : ">=") : strict ? "<" : "<=";
    compare(r, `beat_distance_sd_${window}s`, op, above ? n : -n);
  },
};

const VOLUME: Phrasing = {
  doc: "(traded) volume over|in the last N seconds|minutes (is) above|below N (shares) | $N | N usdc",
  example: "buy up when volume over the last 30 seconds is above 500 shares",
  re: new RegExp(
    String.raw`(?:the\s+)?(?:traded\s+)?volume\s+(?:over|in|during|for)\s+(?:the\s+)?(?:last|past)\s+${WINDOW}\s+${VERB}${COMPARE_WORDS}\s*(\$)?${NUM}\s*(shares?|usdc|usd|dollars?)?`,
    "g",
  ),
  apply(m, r) {
    const window = seconds(m[1], m[2]);
    const op = COMPARATORS.find(([re]) => re.test(m[3]))?.[1];
    if (op === undefined || window < 1 || window > MAX_LOOKBACK_S)
      return r.problems.push(`"${m[0].trim()}" cannot be built`);
    const usdc = m[4] !== undefined || (m[6] !== undefined && !m[6].startsWith("share"));
    compare(r, `${usdc ? "traded_usdc" : "traded_volume"}_${window}s`, op, Number(m[5]));
  },
};

const VENUE = String.raw`binance\s+(spot|futures|perps?|perpetuals?)`;
const venueOf = (word: string) => (word === "spot" ? "spot" : "futures");

const BINANCE_LOOKBACK: Phrasing = {
  doc: "binance spot|futures (price) rose|fell (by) (at least|more than) N bps|% in|over the last N seconds|minutes",
  example: "buy down when binance futures fell 10 bps in the last minute",
  re: new RegExp(
    String.raw`${VENUE}(?:\s+price)?\s+(?:has\s+)?(${RISE}|${FALL})\s+(?:by\s+)?(at least\s+|more than\s+)?${NUM}\s*(bps|basis points|bp|%|percent)\s+(?:in|over|within|during)\s+(?:the\s+)?(?:last\s+|past\s+)?${WINDOW}`,
    "g",
  ),
  apply(m, r) {
    const up = new RegExp(`^${RISE}$`).test(m[2]);
    const bps = Number(m[4]) * (/%|percent/.test(m[5]) ? 100 : 1);
    lookback(r, `${venueOf(m[1])}_return_bps`, seconds(m[6], m[7]), up, m[3], bps);
  },
};

const BINANCE_MID: Phrasing = {
  doc: "binance spot|futures (mid|price) (is) above|below VALUE | above|below binance spot|futures",
  example: "buy up when the binance futures mid is above binance spot",
  re: new RegExp(
    String.raw`(?:the\s+)?${VENUE}(?:\s+(?:mid(?:\s+price)?|price))?\s+${VERB}${COMPARE_WORDS}\s*(?:\$?${NUM}|(?:the\s+)?${VENUE}(?:\s+(?:mid(?:\s+price)?|price))?)`,
    "g",
  ),
  apply(m, r) {
    const op = COMPARATORS.find(([re]) => re.test(m[2]))?.[1];
    if (op === undefined) return r.problems.push(`"${m[0].trim()}" cannot be built`);
    const other = m[4] === undefined ? Number(m[3]) : `${venueOf(m[4])}_mid`;
    compare(r, `${venueOf(m[1])}_mid`, op, other);
  },
};

const FUNDING: Phrasing = {
  doc: "(the) funding (rate) (is) above|below N(%) | is positive|negative",
  example: "buy down when the funding rate is above 0.01%",
  re: new RegExp(
    String.raw`(?:the\s+)?(?:binance\s+)?(?:futures\s+)?funding(?:\s+rate)?\s+(?:is\s+)?(?:(positive|negative)|${COMPARE_WORDS}\s*(-?${NUM.slice(1, -1)})\s*(%|percent)?)`,
    "g",
  ),
  apply(m, r) {
    if (m[1] !== undefined) return compare(r, "futures_funding_rate", m[1] === "positive" ? ">" : "<", 0);
    const op = COMPARATORS.find(([re]) => re.test(m[2]))?.[1];
    if (op === undefined) return r.problems.push(`"${m[0].trim()}" cannot be built`);
    const value = Number(m[3]) / (m[4] === undefined ? 1 : 100);
    compare(r, "futures_funding_rate", op, Math.round(value * 1e12) / 1e12);
  },
};

const OPEN_INTEREST: Phrasing = {
  doc: "(the) open interest (is) above|below N (contracts)",
  example: "buy up when open interest is above 80000 contracts",
  re: new RegExp(
    String.raw`(?:the\s+)?(?:binance\s+)?(?:futures\s+)?open interest\s+${VERB}${COMPARE_WORDS}\s*${NUM}\s*(?:contracts?)?`,
    "g",
  ),
  apply(m, r) {
    const op = COMPARATORS.find(([re]) => re.test(m[1]))?.[1];
    if (op === undefined) return r.problems.push(`"${m[0].trim()}" cannot be built`);
    compare(r, "futures_open_interest", op, Number(m[2]));
  },
};

/** A time of day: `14:30`, `14`, `2pm`, `2:30 pm`; the minute of the UTC day, or null when no time. */
function minuteOfDay(hour: string, minute: string | undefined, half: string | undefined): number | null {
  let h = Number(hour);
  const min = minute === undefined ? 0 : Number(minute);
  if (half !== undefined) {
    if (h < 1 || h > 12) return null;
    h = (h % 12) + (half === "pm" ? 12 : 0);
  }
  return h > 23 || min > 59 ? null : h * 60 + min;
}

const CLOCK = String.raw`(\d{1,2})(?::(\d{2}))?\s*(am|pm)?`;
const UTC = String.raw`\s*(?:utc|gmt|z)\b`;

const TIME_OF_DAY: Phrasing = {
  doc: "between HH(:MM) and HH(:MM) UTC | before|after HH(:MM) UTC (am/pm too; UTC must be said)",
  example: "buy up between 13:30 and 16:00 utc when the up price is below 0.45",
  re: new RegExp(
    String.raw`(?:(between|from)\s+${CLOCK}(?:${UTC})?\s+(?:and|to|until)\s+${CLOCK}${UTC}|(before|after|from)\s+${CLOCK}${UTC})`,
    "g",
  ),
  apply(m, r) {
    if (m[1] !== undefined) {
      const from = minuteOfDay(m[2], m[3], m[4]);
      const to = minuteOfDay(m[5], m[6], m[7]);
      if (from === null || to === null || from === to)
        return r.problems.push(`"${m[0].trim()}" is not a span of the day`);
      const after = { feature: "minute_of_day_utc", op: ">=" as const, value: from };
      const before = { feature: "minute_of_day_utc", op: "<" as const, value: to };
      // A span across midnight (22:00 to 02:00) is after its start or before its end.
      if (from < to) r.out.push(after, before);
      else r.out.push({ any: [after, before] });
      return;
    }
    const at = minuteOfDay(m[9], m[10], m[11]);
    if (at === null) return r.problems.push(`"${m[0].trim()}" is not a time of day`);
    r.out.push({ feature: "minute_of_day_utc", op: m[8] === "before" ? "<" : ">=", value: at });
  },
};

const HOUR: Phrasing = {
  doc: "the UTC hour | the hour (of the day) (in) UTC (is) above|below|at least|at most N | between N and N",
  example: "buy down when the utc hour is between 0 and 6",
  re: new RegExp(
    String.raw`(?:the\s+)?(?:utc\s+hour|hour(?:\s+of\s+the\s+day)?\s+(?:in\s+)?utc)\s+(?:is\s+)?(?:between\s+(\d{1,2})\s+and\s+(\d{1,2})|${COMPARE_WORDS}\s*(\d{1,2}))`,
    "g",
  ),
  apply(m, r) {
    if (m[1] !== undefined) return between(r, "hour_utc", Number(m[1]), Number(m[2]));
    const op = COMPARATORS.find(([re]) => re.test(m[3]))?.[1];
    if (op === undefined) return r.problems.push(`"${m[0].trim()}" cannot be built`);
    compare(r, "hour_utc", op, Number(m[4]));
  },
};

const COIN_MOVE: Phrasing = {
  doc: "(the coin|bitcoin|btc|eth|sol) is up|down|rises|falls|drops (by) (at least) N bps",
  example: "buy down when bitcoin is down 10 bps",
  re: /(?:the coin|coin|bitcoin|btc|eth|ether|ethereum|sol|solana|spot)\s+(?:is |has )?(up|down|rises|rose|falls|fell|drops|dropped)\s+(?:by\s+)?(?:at least\s+|more than\s+)?(\d+(?:\.\d+)?)\s*(?:bps|basis points|bp)/g,
  apply(m, r) {
    const up = /up|ris|rose/.test(m[1]);
    const n = Number(m[2]);
    compare(r, "coin_return_bps", up ? ">=" : "<=", up ? n : -n);
  },
};

const LAST: Phrasing = {
  doc: "in the last N seconds|minutes",
  example: "buy up in the last 2 minutes when the up price is below 0.5",
  re: new RegExp(String.raw`(?:in|during|within) the (?:last|final) ${SECONDS}`, "g"),
  apply: (m, r) => r.out.push({ feature: "remaining_s", op: "<=", value: seconds(m[1], m[2]) }),
};

const FIRST: Phrasing = {
  doc: "in the first N seconds|minutes",
  example: "buy down in the first 60 seconds",
  re: new RegExp(String.raw`(?:in|during|within) the first ${SECONDS}`, "g"),
  apply: (m, r) => r.out.push({ feature: "elapsed_s", op: "<=", value: seconds(m[1], m[2]) }),
};

const AFTER: Phrasing = {
  doc: "after N seconds|minutes (have passed)",
  example: "buy up after 2 minutes when the up price is under 45c",
  re: new RegExp(String.raw`after ${SECONDS}(?: have passed| in)?`, "g"),
  apply(m, r) {
    // In an exit, "after 2 minutes" may mean 2 minutes held or 2 minutes into the market: not guessed.
    if (r.exiting) {
      r.problems.push(
        `"${m[0].trim()}" in an exit is ambiguous: say "sell after N seconds" (held) or "in the last N seconds"`,
      );
      return;
    }
    r.out.push({ feature: "elapsed_s", op: ">=", value: seconds(m[1], m[2]) });
  },
};

const LEFT: Phrasing = {
  doc: "with at least N seconds|minutes left|remaining",
  example: "buy up with at least 3 minutes left when the up price is below 0.45",
  re: new RegExp(String.raw`with (?:at least |more than )?${SECONDS} (?:left|remaining|to go)`, "g"),
  apply: (m, r) => r.out.push({ feature: "remaining_s", op: ">=", value: seconds(m[1], m[2]) }),
};

const PERCENT = String.raw`(\d+(?:\.\d+)?)\s*(?:%|percent)`;

const field =
  (apply: (m: RegExpExecArray, draft: Draft) => void) =>
  (m: RegExpExecArray, r: Reading): void =>
    apply(m, r.draft);

const BUY = String.raw`\b(?:buy(?:ing)?|bet(?:ting)? on|go long(?: on)?|back(?:ing)?)\s+(?:of\s+)?(?:the\s+)?(up|down|yes|no)`;

/** The phrasings, most specific first: a clause's text a phrasing took is not read again. */
export const PHRASINGS: Phrasing[] = [
  {
    doc: '(called|named) "NAME"',
    example: 'buy up below 0.3 called "cheap up"',
    re: /(?:called|named) "([^"]{1,120})"/g,
    apply: field((m, d) => (d.name = m[1])),
  },
  {
    doc: "(bid|ask) depth above|below N (shares) (within K ticks)",
    example: "buy up when bid depth is above 500 shares within 3 ticks",
    re: /(bid|ask) depth (?:is )?(above|over|at least|below|under|at most) (\d+(?:\.\d+)?)(?: shares)?(?: within (\d{1,2}) ticks?)?/g,
    apply(m, r) {
      const op = BELOW.test(m[2]) ? "<" : ">";
      const suffix = m[4] === undefined ? "" : `_${Math.max(1, Math.min(99, Number(m[4])))}`;
      r.out.push({ feature: `depth_${m[1]}_{side}${suffix}`, op, value: Number(m[3]) });
    },
  },
  TIME_OF_DAY,
  HOUR,
  BEAT_DISTANCE,
  VOLUME,
  BINANCE_LOOKBACK,
  BINANCE_MID,
  FUNDING,
  OPEN_INTEREST,
  {
    doc: "PRESET (mean reversion, dip buying, momentum entry, quick scalp) (preset), (on up|down)",
    example: "mean reversion on down",
    re: /\b(mean[ _-]reversion|dip[ _-]buying|momentum(?:[ _-]entry)?|quick[ _-]scalp)\b(?: preset| strategy)?(?: on (up|down))?/g,
    apply(m, r) {
      const name = m[1].replace(/[ -]/g, "_");
      r.draft.preset = name === "momentum" ? "momentum_entry" : name;
      if (m[2]) setSide(r, m[2]);
    },
  },
  {
    doc: "take profit (at) N%",
    example: "buy up below 40c, take profit at 25%",
    re: new RegExp(String.raw`take[ -]profits?(?: at| of)? \+?${PERCENT}`, "g"),
    apply: field((m, d) => (d.exitFields.take_profit_pct = Number(m[1]))),
  },
  {
    doc: "stop loss (at) N%",
    example: "buy up below 40c, stop loss at 10%",
    re: new RegExp(String.raw`stop[ -]loss(?: at| of)? -?${PERCENT}`, "g"),
    apply: field((m, d) => (d.exitFields.stop_loss_pct = Number(m[1]))),
  },
  {
    doc: "max loss N% | stop trading after losing N%",
    example: "buy up below 0.4, max loss 20%",
    re: new RegExp(String.raw`(?:max(?:imum)? loss(?: of)?|stop trading after losing) ${PERCENT}`, "g"),
    apply: field((m, d) => (d.fields.max_loss_percent = Math.max(1, Math.min(100, Number(m[1]))))),
  },
  {
    doc: "hold (it) to|until resolution|expiry|settlement|the end",
    example: "buy down under 0.35 and hold to resolution",
    re: /hold(?: it| them| the position)? (?:to|until|till) (?:the )?(?:resolution|expiry|expiration|settlement|end|close)/g,
    apply: field((m, d) => (d.exitFields.hold_to_resolution = true)),
  },
  {
    doc: "cancel|expire (the order) (if unfilled) after N seconds|minutes",
    example: "buy up at 0.45, cancel after 20 seconds",
    re: new RegExp(
      String.raw`(?:cancel(?:led)?|expire[sd]?|pull(?:ed)?)(?: it| the order| the orders| the bid| unfilled orders?)?(?: if (?:not |un)filled)? after ${SECONDS}`,
      "g",
    ),
    apply(m, r) {
      r.draft.fields.limit_expiry_s = Math.max(1, Math.min(86400, seconds(m[1], m[2])));
      r.draft.expiryClause = r.clause;
    },
  },
  {
    doc: "exit|sell|close after N seconds|minutes | time limit N seconds|minutes",
    example: "buy up below 0.45, sell after 90 seconds",
    re: new RegExp(
      String.raw`(?:(?:exit|sell|close|get out)(?: it| them)? after|time limit(?: of)?|hold for) ${SECONDS}`,
      "g",
    ),
    apply: field((m, d) => (d.exitFields.time_limit_s = seconds(m[1], m[2]))),
  },
  {
    doc: "N shares | size N | position size N",
    example: "buy 50 shares of up when the up price is below 0.4",
    re: /(?:(?:position )?size (?:of )?(\d+(?:\.\d+)?)(?: shares)?|(\d+(?:\.\d+)?) shares)/g,
    apply: field((m, d) => (d.fields.position_size = Math.max(1, Math.min(10000, Number(m[1] ?? m[2]))))),
  },
  {
    doc: "$N | N usdc|usd|dollars (worth) | spend|risk $N on up|down (at PRICE): needs a fixed price",
    example: "buy $40 of up at 0.40",
    re: new RegExp(
      String.raw`\b(?:spend|risk|invest|stake|put)\s+(?:\$${NUM}|${NUM}\s*(?:usdc|usd|dollars?)\b)(?:\s+worth)?(?:\s+(?:on|of)\s+(?:the\s+)?(up|down|yes|no)\b(?:\s+at\s+${NUM}${UNIT})?)?|(?:\$${NUM}(?=\s+(?:worth|of|on)\b)|\b${NUM}\s*(?:usdc|usd|dollars?)\b)(?:\s+worth)?`,
      "g",
    ),
    apply(m, r) {
      r.draft.usdc = { amount: Number(m[1] ?? m[2] ?? m[6] ?? m[7]), clause: r.clause };
      if (m[3] !== undefined) setSide(r, m[3]);
      if (m[4] !== undefined) {
        r.draft.fields.order_type = "LIMIT";
        r.draft.fields.limit_price = { reference: "fixed", offset: priceValue(m[4], m[5], "price_up") };
      }
    },
  },
  {
    doc: "pay at most PRICE | max price PRICE | no higher than PRICE",
    example: "buy up below 0.5, pay at most 52c",
    re: new RegExp(
      String.raw`(?:pay(?:ing)? at most|max(?:imum)? (?:fill )?price(?: of)?|no higher than|never above) ${NUM}${UNIT}`,
      "g",
    ),
    apply: field((m, d) => (d.fields.max_fill_price = Math.min(1, priceValue(m[1], m[2], "price_up")))),
  },
  {
    doc: "limit order(s) (at PRICE | at the bid|ask|mid) (N cents below|above the bid|ask|mid)",
    example: "buy up below 0.45 with a limit order 1 cent below the bid",
    re: new RegExp(
      String.raw`limit (?:orders?|bids?)(?: at ${NUM}${UNIT}| at the (best )?(bid|ask|mid))?(?: (\d+) ?(?:c|cents?|ticks?) (below|under|above|over) the (?:best )?(bid|ask|mid))?`,
      "g",
    ),
    apply: field((m, d) => {
      d.fields.order_type = "LIMIT";
      if (m[1] !== undefined) {
        d.fields.limit_price = { reference: "fixed", offset: priceValue(m[1], m[2], "price_up") };
        return;
      }
      const ref = m[7] ?? m[4];
      if (ref === undefined) return;
      const cents = m[5] === undefined ? 0 : Number(m[5]) * (/below|under/.test(m[6]) ? -1 : 1);
      d.fields.limit_price = {
        reference: ref === "mid" ? "mid" : ref === "ask" ? "best_ask" : "best_bid",
        offset: cents / 100,
      };
    }),
  },
  {
    doc: "market order(s)",
    example: "buy down with market orders when the down price is under 30c",
    re: /market orders?/g,
    apply: field((m, d) => (d.fields.order_type = "MARKET")),
  },
  {
    doc: "N ms (of) latency | latency N ms | no latency",
    example: "buy up below 0.4 with 500 ms latency",
    re: /(?:(\d+) ?(?:ms|milliseconds?) (?:of )?latency|latency(?: of)? (\d+) ?(?:ms|milliseconds?)|(no|zero) latency)/g,
    apply: field((m, d) => (d.fields.latency_ms = m[3] ? 0 : Math.min(60000, Number(m[1] ?? m[2])))),
  },
  {
    doc: "up to|at most N entries|trades|times per market | once per market",
    example: "buy up below 0.4, up to 3 entries per market",
    re: /(?:(?:up to|at most|max(?:imum)?) (\d+) (?:entries|trades|times|positions) (?:per|a|each) market|(once) (?:per|a) market)/g,
    apply: field(
      (m, d) => (d.fields.max_entries_per_market = m[2] ? 1 : Math.max(1, Math.min(100, Number(m[1])))),
    ),
  },
  {
    doc: "buy up|down between PRICE and PRICE",
    example: "buy up between 0.30 and 0.40",
    re: new RegExp(
      String.raw`${BUY}\s+(?:when (?:it is|it's|the price is) )?between\s*${NUM}${UNIT}\s*and\s*${NUM}${UNIT}`,
      "g",
    ),
    apply(m, r) {
      setSide(r, m[1]);
      between(r, "price_{side}", priceValue(m[2], m[3], "price_up"), priceValue(m[4], m[5], "price_up"));
    },
  },
  {
    doc: "buy up|down at PRICE (a limit order at that price)",
    example: "buy down at 35c",
    re: new RegExp(String.raw`${BUY}\s+at\s+${NUM}${UNIT}`, "g"),
    apply(m, r) {
      setSide(r, m[1]);
      r.draft.fields.order_type = "LIMIT";
      r.draft.fields.limit_price = { reference: "fixed", offset: priceValue(m[2], m[3], "price_up") };
    },
  },
  {
    doc: "buy up|down below|under|at most|above|over|at least PRICE",
    example: "buy up below 40c",
    re: new RegExp(
      String.raw`${BUY}\s+(?:when (?:it is|it's|the price is) )?(at most|at or below|below|under|at least|at or above|above|over)\s*${NUM}${UNIT}`,
      "g",
    ),
    apply(m, r) {
      setSide(r, m[1]);
      const op = COMPARATORS.find(([re]) => re.test(m[2]))?.[1] ?? "<";
      compare(r, "price_{side}", op, priceValue(m[3], m[4], "price_up"));
    },
  },
  {
    doc: "buy|bet on|go long|back up|down",
    example: "bet on down when the down price is below 0.3",
    re: new RegExp(`${BUY}\\b`, "g"),
    apply: (m, r) => setSide(r, m[1]),
  },
  CROSS,
  VOLATILITY,
  COIN_LOOKBACK,
  PRICE_LOOKBACK,
  COIN_MOVE,
  LAST,
  FIRST,
  LEFT,
  AFTER,
  BETWEEN,
  COMPARISON,
  BARE_COMPARISON,
];

/** Words that carry no rule: what may remain of a clause once the phrasings have taken theirs. */
const FILLER =
  /\b(i|we|want|wanna|would|like|to|a|an|the|strategy|preset|use|using|run|that|which|please|and|when|if|whenever|once|then|on|in|of|for|with|markets?|it|them|btc|eth|sol|bitcoin|ethereum|solana|5m|15m|1h|4h|24h|minute|hour|every|each|only|just|trade|trading|position|positions|also|but|so|backtest|test|buy|sell|exit|close|get|out|is|are)\b/g;

/**
 * What remains of a text once filler is gone: letters of any script and digits count. Also the check
 * of a model's answer (openai.ts): what of the prompt no quoted clause covers.
 */
export function leftover(text: string): string {
  return text
    .replace(FILLER, " ")
    .replace(/[^\p{L}\p{N}%."$]+/gu, " ")
    .replace(/(^|\s)[."]+(?=\s|$)/g, " ")
    .trim();
}

const EXITING = /\b(sell|exit|close|get out|take profit|cash out)\b/;

/**
 * Where one clause ends: punctuation (not a comma inside a number: 65,000), "then", and before a verb
 * of exiting (`... and sell when ...`).
 */
const CLAUSE_BREAK =
  /,(?!\d)|[;!?]|\.(?!\d)|\bthen\b|(?=\b(?:sell|exit|close|get out|take profit|stop loss|cash out)\b)/i;

/** Where a negation begins in a clause; what follows it becomes a `not`. "don't buy" keeps its verb. */
const NEGATION =
  /\b(?:unless|except (?:when|if|in)|but not|and not|not when|not if|(?:don'?t|do not|never)(?= (?:buy|bet|back|go long|enter)\b))\s*/;

/** "or" joining alternatives, but not the one in "at or below". */
const OR = /(?<!\bat )\bor\b/;

/** Words that ask for the outcome, which no decision can know (DESIGN 3.7: never later than the decision). */
const FUTURE =
  /\b(will|going to|gonna) (resolve|win|end|settle|finish|close)|\bresolves? (up|down)\b|\b(the )?(winner|outcome|result) (is|will)\b|\bknow(s|ing)? (the )?(winner|outcome|result)\b/;

/** Runs every phrasing over one alternative; what is left of it, besides filler, was not understood. */
function readAlternative(text: string, r: Reading): string {
  let rest = text;
  for (const p of PHRASINGS) {
    p.re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = p.re.exec(rest)) !== null) {
      p.apply(m, r);
      rest = rest.slice(0, m.index) + " ".repeat(m[0].length) + rest.slice(m.index + m[0].length);
      p.re.lastIndex = m.index + m[0].length;
    }
  }
  return leftover(rest);
}

const allOf = (nodes: ConditionNode[]): ConditionNode => (nodes.length === 1 ? nodes[0] : { all: nodes });

/**
 * A part of a clause (one side of a negation) read: the conditions of each of its alternatives, or
 * null when some of it was not understood (reasons in `problems`).
 */
function readPart(
  text: string,
  draft: Draft,
  clause: string,
  exiting: boolean,
  problems: string[],
): ConditionNode[][] | null {
  const alternatives = text.split(OR);
  const read: ConditionNode[][] = [];
  for (const alternative of alternatives) {
    const r: Reading = { draft, out: [], problems, clause, exiting };
    if (readAlternative(alternative, r) !== "") return null;
    read.push(r.out);
  }
  if (alternatives.length > 1 && read.some((nodes) => nodes.length === 0)) {
    problems.push('"or" needs a condition on each side');
    return null;
  }
  return problems.length > 0 ? null : read;
}

/** A clause that did not become part of the definition: as the prompt wrote it, and why when known. */
interface Unread {
  clause: string;
  why: string | null;
}

/** Reads one clause into the draft; what it could not read it returns. */
function readClause(clause: string, draft: Draft): Unread | null {
  const text = clause
    .toLowerCase()
    .replace(/(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d.,])/g, (n) => n.replaceAll(",", ""));
  if (FUTURE.test(text)) {
    return { clause, why: "a decision can use only what is known when it is made, never the outcome" };
  }
  const exiting = EXITING.test(text);
  const negation = NEGATION.exec(text);
  const problems: string[] = [];
  const positive = readPart(
    negation ? text.slice(0, negation.index) : text,
    draft,
    clause,
    exiting,
    problems,
  );
  const negative = negation
    ? readPart(text.slice(negation.index + negation[0].length), draft, clause, exiting, problems)
    : [];
  if (positive === null || negative === null) return { clause, why: problems[0] ?? null };
  const negated = negative.flat();
  if (negation && negated.length === 0) return { clause, why: "nothing to negate was understood" };
  const not: ConditionNode[] = negation ? [{ not: allOf(negated) }] : [];
  if (!exiting) {
    const alternatives = positive.filter((nodes) => nodes.length > 0);
    const entry = alternatives.length > 1 ? [{ any: alternatives.map(allOf) }] : (alternatives[0] ?? []);
    draft.entry.push(...entry, ...not);
    return null;
  }
  // An exit closes when any of its conditions holds: a clause's alternatives are each one of them;
  // the conditions of one alternative, and a negation, must all hold together.
  const alternatives = positive.filter((nodes) => nodes.length > 0).map((nodes) => [...nodes, ...not]);
  if (alternatives.length === 0 && not.length > 0) alternatives.push(not);
  draft.exit.push(...alternatives.map(allOf));
  return null;
}

/** Case kept for quoting; curly quotes made plain, space collapsed. */
function normalized(prompt: string): string {
  return prompt.replace(/[“”]/g, '"').replace(/[’]/g, "'").replace(/\s+/g, " ");
}

function withSide(node: ConditionNode, side: "up" | "down"): ConditionNode {
  const fill = (s: string) => s.replace("{side}", side);
  if (isCondition(node)) {
    return {
      ...node,
      feature: fill(node.feature),
      value: typeof node.value === "string" ? fill(node.value) : node.value,
    };
  }
  if ("all" in node) return { all: node.all.map((n) => withSide(n, side)) };
  if ("any" in node) return { any: node.any.map((n) => withSide(n, side)) };
  return { not: withSide(node.not, side) };
}

/** A definition of the other side: every `_up` feature read on the down token and back. */
export function mirrored(d: StrategyDefinition, side: "UP" | "DOWN"): StrategyDefinition {
  if (d.side === side) return d;
  const swap = (s: string) =>
    s.replace(/_(up|down)(?=$|_)/, (_, t: string) => (t === "up" ? "_down" : "_up"));
  const flip = (c: Condition): Condition => ({
    ...c,
    feature: swap(c.feature),
    value: typeof c.value === "string" ? swap(c.value) : c.value,
  });
  const node = (n: ConditionNode): ConditionNode => {
    if (isCondition(n)) return flip(n);
    if ("all" in n) return { all: n.all.map(node) };
    if ("any" in n) return { any: n.any.map(node) };
    return { not: node(n.not) };
  };
  return {
    ...d,
    side,
    entry: d.entry.map(node),
    exit: { ...d.exit, conditions: d.exit.conditions.map(node) },
  };
}

/** Shares a USDC amount buys at a fixed price, to the hundredth of a share (rounded down). */
function sharesFor(usdc: number, price: number): number {
  return Math.floor(Math.round((usdc / price) * 1e6) / 1e4) / 100;
}

function build(draft: Draft, prompt: string, unread: Unread[]): StrategyDefinition | null {
  const preset = draft.preset === null ? null : presetDefinition(draft.preset);
  const side = draft.side ?? preset?.side ?? null;
  if (side === null) {
    throw new GenerationError(
      'The prompt does not say which side to buy: say "buy up" or "buy down" (docs/backtests.md lists the phrasings).',
      unread.map((u) => u.clause),
    );
  }
  const token = side === "UP" ? "up" : "down";
  const start = preset
    ? mirrored(preset, side)
    : { ...DEFINITION_DEFAULTS, exit: { ...DEFINITION_DEFAULTS.exit }, side };
  const exit = { ...start.exit, ...draft.exitFields };
  exit.conditions = [...exit.conditions, ...draft.exit.map((c) => withSide(c, token))];
  if (
    exit.hold_to_resolution &&
    (exit.conditions.length > 0 ||
      exit.take_profit_pct !== null ||
      exit.stop_loss_pct !== null ||
      exit.time_limit_s !== null)
  ) {
    exit.hold_to_resolution = false;
  }
  const definition: StrategyDefinition = {
    ...start,
    ...draft.fields,
    version: DEFINITION_VERSION,
    side,
    name: draft.name ?? (preset && prompt.trim().length < 30 ? preset.name : prompt.trim().slice(0, 120)),
    entry: [...start.entry, ...draft.entry.map((c) => withSide(c, token))],
    exit,
  };
  if (draft.expiryClause !== null && definition.order_type === "MARKET") {
    unread.push({
      clause: draft.expiryClause,
      why: 'an expiry needs a limit order (say e.g. "buy up at 0.45" or "with a limit order"); a market order fills at once',
    });
  }
  if (definition.order_type === "MARKET") {
    definition.limit_price = null;
    definition.limit_expiry_s = null;
  } else if (definition.limit_price === null) {
    definition.limit_price = DEFAULT_LIMIT_PRICE;
  }
  if (draft.usdc !== null) {
    const fixed = definition.limit_price?.reference === "fixed" ? definition.limit_price.offset : null;
    if (definition.order_type !== "LIMIT" || fixed === null || fixed <= 0) {
      unread.push({
        clause: draft.usdc.clause,
        why: 'a size in USDC needs a fixed price ("buy $40 of up at 0.40"); otherwise give the size in shares',
      });
    } else {
      definition.position_size = Math.max(1, Math.min(10000, sharesFor(draft.usdc.amount, fixed)));
    }
  }
  return unread.length > 0 ? null : definition;
}

/** The failure quoting each clause not understood, as the prompt wrote it. */
function notUnderstood(unread: Unread[]): GenerationError {
  const quoted = unread.map((u) => `"${u.clause}"${u.why ? ` (${u.why})` : ""}`);
  return new GenerationError(
    `Not understood, so no strategy was made (every clause must become part of it): ${quoted.join("; ")}. docs/backtests.md lists the phrasings the built-in generator reads.`,
    unread.map((u) => u.clause),
  );
}

export class OfflineGenerator implements StrategyGenerator {
  readonly kind = "offline";

  async generate(prompt: string): Promise<GeneratedStrategy> {
    const draft: Draft = {
      side: null,
      preset: null,
      entry: [],
      exit: [],
      fields: {},
      exitFields: {},
      name: null,
      usdc: null,
      expiryClause: null,
      lastFeature: null,
    };
    const unread: Unread[] = [];
    for (const part of normalized(prompt).split(CLAUSE_BREAK)) {
      const clause = part.trim();
      if (clause === "") continue;
      const missed = readClause(clause, draft);
      if (missed !== null) unread.push(missed);
    }
    if (unread.length > 0) throw notUnderstood(unread);
    const understood =
      draft.side !== null ||
      draft.preset !== null ||
      draft.entry.length > 0 ||
      draft.exit.length > 0 ||
      Object.keys(draft.fields).length > 0 ||
      Object.keys(draft.exitFields).length > 0;
    if (!understood) {
      throw new GenerationError(
        `No rule of a strategy was found in the prompt${unread.length ? ` (not understood: "${unread.map((u) => u.clause).join('", "')}")` : ""}; docs/backtests.md lists the phrasings the built-in generator reads.`,
        unread.map((u) => u.clause),
      );
    }
    const built = build(draft, prompt, unread);
    if (built === null) throw notUnderstood(unread);
    let definition: StrategyDefinition;
    try {
      definition = checkDefinition(built);
    } catch (err) {
      if (err instanceof DefinitionError)
        throw new GenerationError(`The prompt gives a definition that ${err.message}.`);
      throw err;
    }
    return { definition, generator: this.kind, model: null, notes: [] };
  }
}
