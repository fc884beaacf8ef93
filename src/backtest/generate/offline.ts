import {
  checkDefinition,
  type Condition,
  DEFINITION_DEFAULTS,
  DefinitionError,
  type StrategyDefinition,
} from "../definition.ts";
import { type GeneratedStrategy, GenerationError, type StrategyGenerator } from "./generator.ts";
import { presetDefinition } from "./presets.ts";

/**
 * The built-in generator (DESIGN 3.7): offline and deterministic, the same prompt giving the same
 * definition. A prompt is read clause by clause (split at commas, semicolons, full stops and "then");
 * each clause is matched against the phrasings below, every one documented with an example in
 * docs/backtests.md (a test runs each example). A clause that speaks of selling or exiting gives exit
 * conditions; any other gives entry conditions. Book features without a token follow the side bought.
 */

/** What the phrasings build: a definition with `{side}` standing for the token not yet known. */
interface Draft {
  side: "UP" | "DOWN" | null;
  preset: string | null;
  entry: Condition[];
  exit: Condition[];
  fields: Partial<StrategyDefinition>;
  exitFields: Partial<StrategyDefinition["exit"]>;
  name: string | null;
}

interface Phrasing {
  /** The phrasing as docs/backtests.md lists it. */
  doc: string;
  example: string;
  re: RegExp;
  apply(m: RegExpExecArray, draft: Draft, exiting: boolean): void;
}

const NUM = String.raw`(\d+(?:\.\d+)?|\.\d+)`;
const UNIT = String.raw`\s*(cents?\b|c\b|¢|%)?`;
const SECONDS = String.raw`(\d+(?:\.\d+)?)\s*(seconds?|secs?|s|minutes?|mins?|m)\b`;

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

function seconds(n: string, unit: string): number {
  return Math.round(Number(n) * (unit.startsWith("m") ? 60 : 1));
}

function add(draft: Draft, exiting: boolean, c: Condition): void {
  (exiting ? draft.exit : draft.entry).push(c);
}

const SUBJECT = String.raw`((?:the )?(?:up|down|yes|no|best bid|bid|best ask|ask|price|it|coin|bitcoin|btc|eth|ether|ethereum|sol|solana|spot|spread|book imbalance|imbalance|bid depth|ask depth)(?: token)?(?:'s)?(?: price)?|price(?:_| of )(?:the )?(?:up|down)(?: token)?)`;
const COMPARE = String.raw`(?:is |trades |goes |gets |sits |stays )?(at most|at or below|no more than|below|under|less than|lower than|drops below|falls below|falls under|at least|at or above|no less than|above|over|more than|greater than|higher than|rises above|climbs above|<=|>=|<|>)`;

const COMPARISON: Phrasing = {
  doc: "SUBJECT (is) below|under|at most|above|over|at least|<|<=|>|>= VALUE",
  example: "buy up when the up price is below 40c",
  re: new RegExp(String.raw`\b${SUBJECT}\s*${COMPARE}\s*${NUM}${UNIT}`, "g"),
  apply(m, draft, exiting) {
    const feature = subjectOf(m[1]);
    const op = COMPARATORS.find(([re]) => re.test(m[2]))?.[1];
    if (feature === null || op === undefined) return;
    add(draft, exiting, { feature, op, value: priceValue(m[3], m[4], feature) });
  },
};

const CROSS: Phrasing = {
  doc: "SUBJECT crosses above|over|below|under VALUE (or another SUBJECT)",
  example: "buy up when the up price crosses above 0.6",
  re: new RegExp(
    String.raw`\b${SUBJECT}\s+cross(?:es)?\s+(above|over|below|under)\s+(?:${NUM}${UNIT}|${SUBJECT})`,
    "g",
  ),
  apply(m, draft, exiting) {
    const feature = subjectOf(m[1]);
    const op = /above|over/.test(m[2]) ? "crosses_above" : "crosses_below";
    const other = m[5] === undefined ? null : subjectOf(m[5]);
    if (feature === null) return;
    if (m[3] !== undefined) add(draft, exiting, { feature, op, value: priceValue(m[3], m[4], feature) });
    else if (other !== null) add(draft, exiting, { feature, op, value: other });
  },
};

const COIN_MOVE: Phrasing = {
  doc: "(the coin|bitcoin|btc|eth|sol) is up|down|rises|falls|drops (by) (at least) N bps",
  example: "buy down when bitcoin is down 10 bps",
  re: /(?:the coin|coin|bitcoin|btc|eth|ether|ethereum|sol|solana|spot)\s+(?:is |has )?(up|down|rises|rose|falls|fell|drops|dropped)\s+(?:by\s+)?(?:at least\s+|more than\s+)?(\d+(?:\.\d+)?)\s*(?:bps|basis points|bp)/g,
  apply(m, draft, exiting) {
    const up = /up|ris|rose/.test(m[1]);
    const n = Number(m[2]);
    add(draft, exiting, { feature: "coin_return_bps", op: up ? ">=" : "<=", value: up ? n : -n });
  },
};

const LAST: Phrasing = {
  doc: "in the last N seconds|minutes",
  example: "buy up in the last 2 minutes when the up price is below 0.5",
  re: new RegExp(String.raw`(?:in|during|within) the (?:last|final) ${SECONDS}`, "g"),
  apply: (m, draft, exiting) =>
    add(draft, exiting, { feature: "remaining_s", op: "<=", value: seconds(m[1], m[2]) }),
};

const FIRST: Phrasing = {
  doc: "in the first N seconds|minutes",
  example: "buy down in the first 60 seconds",
  re: new RegExp(String.raw`(?:in|during|within) the first ${SECONDS}`, "g"),
  apply: (m, draft, exiting) =>
    add(draft, exiting, { feature: "elapsed_s", op: "<=", value: seconds(m[1], m[2]) }),
};

const AFTER: Phrasing = {
  doc: "after N seconds|minutes (have passed)",
  example: "buy up after 2 minutes when the up price is under 45c",
  re: new RegExp(String.raw`after ${SECONDS}(?: have passed| in)?`, "g"),
  apply: (m, draft, exiting) =>
    add(draft, exiting, { feature: "elapsed_s", op: ">=", value: seconds(m[1], m[2]) }),
};

const LEFT: Phrasing = {
  doc: "with at least N seconds|minutes left|remaining",
  example: "buy up with at least 3 minutes left when the up price is below 0.45",
  re: new RegExp(String.raw`with (?:at least |more than )?${SECONDS} (?:left|remaining|to go)`, "g"),
  apply: (m, draft, exiting) =>
    add(draft, exiting, { feature: "remaining_s", op: ">=", value: seconds(m[1], m[2]) }),
};

const PERCENT = String.raw`(\d+(?:\.\d+)?)\s*(?:%|percent)`;

const field =
  (apply: (m: RegExpExecArray, draft: Draft) => void) =>
  (m: RegExpExecArray, draft: Draft): void =>
    apply(m, draft);

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
    apply(m, draft, exiting) {
      const op = BELOW.test(m[2]) ? "<" : ">";
      const suffix = m[4] === undefined ? "" : `_${Math.max(1, Math.min(99, Number(m[4])))}`;
      add(draft, exiting, { feature: `depth_${m[1]}_{side}${suffix}`, op, value: Number(m[3]) });
    },
  },
  {
    doc: "PRESET (mean reversion, dip buying, momentum entry, quick scalp), (on up|down)",
    example: "mean reversion on down",
    re: /\b(mean[ _-]reversion|dip[ _-]buying|momentum(?:[ _-]entry)?|quick[ _-]scalp)\b(?: on (up|down))?/g,
    apply: field((m, d) => {
      const name = m[1].replace(/[ -]/g, "_");
      d.preset = name === "momentum" ? "momentum_entry" : name;
      if (m[2]) d.side = m[2] === "up" ? "UP" : "DOWN";
    }),
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
    doc: "pay at most PRICE | max price PRICE | no higher than PRICE",
    example: "buy up below 0.5, pay at most 52c",
    re: new RegExp(
      String.raw`(?:pay(?:ing)? at most|max(?:imum)? (?:fill )?price(?: of)?|no higher than|never above) ${NUM}${UNIT}`,
      "g",
    ),
    apply: field((m, d) => (d.fields.max_fill_price = Math.min(1, priceValue(m[1], m[2], "price_up")))),
  },
  {
    doc: "limit order(s) (at the bid|ask|mid) (N cents below|above the bid|ask|mid)",
    example: "buy up below 0.45 with a limit order 1 cent below the bid",
    re: /limit orders?(?: at the (best )?(bid|ask|mid))?(?: (\d+) ?(?:c|cents?|ticks?) (below|under|above|over) the (?:best )?(bid|ask|mid))?/g,
    apply: field((m, d) => {
      const ref = (m[5] ?? m[2] ?? "bid") as "bid" | "ask" | "mid";
      const cents = m[3] === undefined ? 0 : Number(m[3]) * (/below|under/.test(m[4]) ? -1 : 1);
      d.fields.order_type = "LIMIT";
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
    doc: "buy up|down below|under|at most|above|over|at least PRICE",
    example: "buy up below 40c",
    re: new RegExp(
      String.raw`\b(?:buy|bet on|back)\s+(?:of\s+)?(?:the\s+)?(up|down|yes|no)\s+(?:when (?:it is|it's|the price is) )?(at most|at or below|below|under|at least|at or above|above|over)\s*${NUM}${UNIT}`,
      "g",
    ),
    apply: field((m, d) => {
      d.side = m[1] === "up" || m[1] === "yes" ? "UP" : "DOWN";
      const op = COMPARATORS.find(([re]) => re.test(m[2]))?.[1] ?? "<";
      d.entry.push({ feature: "price_{side}", op, value: priceValue(m[3], m[4], "price_up") });
    }),
  },
  {
    doc: "buy|bet on|go long|back up|down",
    example: "bet on down when the down price is below 0.3",
    re: /\b(?:buy(?:ing)?|bet(?:ting)? on|go long(?: on)?|back(?:ing)?)\s+(?:of\s+)?(?:the\s+)?(up|down|yes|no)\b/g,
    apply: field((m, d) => (d.side = m[1] === "up" || m[1] === "yes" ? "UP" : "DOWN")),
  },
  CROSS,
  COIN_MOVE,
  LAST,
  FIRST,
  LEFT,
  AFTER,
  COMPARISON,
];

/** Words that carry no rule: what remains of a clause once the phrasings have taken theirs. */
const FILLER =
  /\b(i|we|want|wanna|would|like|to|a|an|the|strategy|that|which|please|and|when|if|whenever|once|then|on|in|of|for|with|markets?|it|them|btc|eth|sol|bitcoin|ethereum|solana|5m|15m|1h|4h|24h|minute|hour|every|each|only|just|trade|trading|position|positions|also|but|so|backtest|test|buy|sell|exit|close|get|out|is|are)\b/g;

function leftover(text: string): string {
  return text
    .replace(FILLER, " ")
    .replace(/[^a-z0-9%."]+/g, " ")
    .trim();
}

const EXITING = /\b(sell|exit|close|get out|take profit|cash out)\b/;

/** Where one clause ends: punctuation, "then", and before a verb of exiting (`... and sell when ...`). */
const CLAUSE_BREAK =
  /[,;!?]|\.(?!\d)|\bthen\b|(?=\b(?:sell|exit|close|get out|take profit|stop loss|cash out)\b)/;

/** Runs every phrasing over a clause, taking each match's text out so that no other phrasing reads it. */
function readClause(clause: string, draft: Draft): string {
  let text = clause;
  const exiting = EXITING.test(clause);
  for (const p of PHRASINGS) {
    p.re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = p.re.exec(text)) !== null) {
      p.apply(m, draft, exiting);
      text = text.slice(0, m.index) + " ".repeat(m[0].length) + text.slice(m.index + m[0].length);
      p.re.lastIndex = m.index + m[0].length;
    }
  }
  return leftover(text);
}

/** Lowercased, `¢` and curly quotes made plain, `0.40` spellings left as they are. */
function normalized(prompt: string): string {
  return prompt.toLowerCase().replace(/[“”]/g, '"').replace(/[’]/g, "'").replace(/\s+/g, " ");
}

function withSide(c: Condition, side: "up" | "down"): Condition {
  const fill = (s: string) => s.replace("{side}", side);
  return { ...c, feature: fill(c.feature), value: typeof c.value === "string" ? fill(c.value) : c.value };
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
  return {
    ...d,
    side,
    entry: d.entry.map(flip),
    exit: { ...d.exit, conditions: d.exit.conditions.map(flip) },
  };
}

function build(draft: Draft, prompt: string): StrategyDefinition {
  const preset = draft.preset === null ? null : presetDefinition(draft.preset);
  const side = draft.side ?? preset?.side ?? null;
  if (side === null) {
    throw new GenerationError(
      'The prompt does not say which side to buy: say "buy up" or "buy down" (docs/backtests.md lists the phrasings).',
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
    side,
    name: draft.name ?? (preset && prompt.trim().length < 30 ? preset.name : prompt.trim().slice(0, 120)),
    entry: [...start.entry, ...draft.entry.map((c) => withSide(c, token))],
    exit,
  };
  if (definition.order_type === "MARKET") definition.limit_price = null;
  if (definition.order_type === "MARKET") definition.limit_expiry_s = null;
  return definition;
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
    };
    const ignored: string[] = [];
    for (const clause of normalized(prompt).split(CLAUSE_BREAK)) {
      const rest = readClause(clause, draft);
      if (rest !== "") ignored.push(rest);
    }
    const understood = draft.side !== null || draft.preset !== null || draft.entry.length > 0;
    if (!understood) {
      throw new GenerationError(
        `No rule of a strategy was found in the prompt${ignored.length ? ` (not understood: "${ignored.join('", "')}")` : ""}; docs/backtests.md lists the phrasings the built-in generator reads.`,
      );
    }
    let definition: StrategyDefinition;
    try {
      definition = checkDefinition(build(draft, prompt));
    } catch (err) {
      if (err instanceof DefinitionError)
        throw new GenerationError(`The prompt gives a definition that ${err.message}.`);
      throw err;
    }
    const notes = ignored.map((text) => `not understood, left out: "${text}"`);
    return { definition, generator: this.kind, model: null, notes };
  }
}
