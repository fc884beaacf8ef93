/**
 * The features a strategy definition may name (DESIGN 3.7), listed once: the definition schema's
 * pattern is derived from this list, and features.ts computes each of them (a Record over the plain
 * ones, so that none can be listed without its computation, nor computed without being listed).
 */

/** Features of one snapshot and the market's record, named as they are. */
export const PLAIN_FEATURES = [
  "price_up",
  "price_down",
  "best_bid_up",
  "best_bid_down",
  "best_ask_up",
  "best_ask_down",
  "spread_up",
  "spread_down",
  "coin_price",
  "coin_return_bps",
  "elapsed_s",
  "remaining_s",
  "remaining_pct",
] as const;
export type PlainFeature = (typeof PLAIN_FEATURES)[number];

/** Features of one token's book within N ticks of the best: `<family>_<token>[_N]`, N from 1 to 99. */
export const BOOK_FEATURES = ["depth_bid", "depth_ask", "book_imbalance"] as const;
export type BookFeature = (typeof BOOK_FEATURES)[number];

const TOKEN = "(up|down)";
const TICKS = "(_[1-9][0-9]?)?";

/** Every name the registry holds, as one anchored pattern (the definition schema's). */
export const FEATURE_PATTERN = `^(${[...PLAIN_FEATURES, ...BOOK_FEATURES.map((f) => `${f}_${TOKEN}${TICKS}`)].join("|")})$`;

/** A feature's name read: a plain feature, or a book feature with its token and ticks (null: default). */
export type ParsedFeature =
  | { kind: "plain"; name: PlainFeature }
  | { kind: "book"; family: BookFeature; token: "up" | "down"; ticks: number | null };

const BOOK_RE = new RegExp(`^(${BOOK_FEATURES.join("|")})_${TOKEN}${TICKS}$`);

/** The feature a name means, or null for a name that is not one. */
export function parseFeature(name: string): ParsedFeature | null {
  if ((PLAIN_FEATURES as readonly string[]).includes(name))
    return { kind: "plain", name: name as PlainFeature };
  const m = BOOK_RE.exec(name);
  if (!m) return null;
  const ticks = m[3] === undefined ? null : Number(m[3].slice(1));
  return { kind: "book", family: m[1] as BookFeature, token: m[2] as "up" | "down", ticks };
}
