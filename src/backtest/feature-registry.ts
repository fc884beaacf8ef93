/**
 * The features a strategy definition may name (DESIGN 3.7, 3.12), listed once: the definition schema's
 * pattern is derived from this list, and features.ts computes each of them (a Record over the plain
 * and lookback ones, so that none can be listed without its computation, nor computed without being
 * listed).
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

/**
 * Features of the decision's moment beyond the snapshot (definition version 2): the UTC time of day,
 * and Binance's spot and futures values at the time where recorded (null where not): the mid of the
 * latest depth snapshot, the latest settled funding rate, the latest open interest (contracts).
 */
export const MOMENT_FEATURES = [
  "hour_utc",
  "minute_of_day_utc",
  "spot_mid",
  "futures_mid",
  "futures_funding_rate",
  "futures_open_interest",
] as const;
export type MomentFeature = (typeof MOMENT_FEATURES)[number];

/** Features of one token's book within N ticks of the best: `<family>_<token>[_N]`, N from 1 to 99. */
export const BOOK_FEATURES = ["depth_bid", "depth_ask", "book_imbalance"] as const;
export type BookFeature = (typeof BOOK_FEATURES)[number];

/**
 * Features over a lookback of N seconds before the decision (`<family>_<N>s`, N from 1 to 9999),
 * computed from what was recorded at or before it only (definition version 2):
 * the coin's return in basis points since N s ago, the Up or Down price's change in cents since N s
 * ago, the coin's realized volatility in basis points over the last N s, the distance of the coin to the
 * price to beat in standard deviations of its move over the time left (sigma from the last N s), the
 * shares and the USDC the market's outcome tokens traded over the last N s, and Binance's spot and
 * futures price return in basis points since N s ago.
 */
export const LOOKBACK_FEATURES = [
  "coin_return_bps",
  "price_up_change_cents",
  "price_down_change_cents",
  "coin_volatility_bps",
  "beat_distance_sd",
  "traded_volume",
  "traded_usdc",
  "spot_return_bps",
  "futures_return_bps",
] as const;
export type LookbackFeature = (typeof LOOKBACK_FEATURES)[number];

/** The longest lookback a feature may name, in seconds. */
export const MAX_LOOKBACK_S = 9999;

const TOKEN = "(up|down)";
const TICKS = "(_[1-9][0-9]?)?";
const WINDOW = "_([1-9][0-9]{0,3})s";

/** Every name the registry holds, as one anchored pattern (the definition schema's). */
export const FEATURE_PATTERN = `^(${[
  ...PLAIN_FEATURES,
  ...MOMENT_FEATURES,
  ...BOOK_FEATURES.map((f) => `${f}_${TOKEN}${TICKS}`),
  ...LOOKBACK_FEATURES.map((f) => `${f}${WINDOW}`),
].join("|")})$`;

/** A feature's name read: a plain feature, a book feature with its token and ticks (null: default), or a lookback. */
export type ParsedFeature =
  | { kind: "plain"; name: PlainFeature }
  | { kind: "moment"; name: MomentFeature }
  | { kind: "book"; family: BookFeature; token: "up" | "down"; ticks: number | null }
  | { kind: "lookback"; family: LookbackFeature; seconds: number };

const BOOK_RE = new RegExp(`^(${BOOK_FEATURES.join("|")})_${TOKEN}${TICKS}$`);
const LOOKBACK_RE = new RegExp(`^(${LOOKBACK_FEATURES.join("|")})${WINDOW}$`);

/** The feature a name means, or null for a name that is not one. */
export function parseFeature(name: string): ParsedFeature | null {
  if ((PLAIN_FEATURES as readonly string[]).includes(name))
    return { kind: "plain", name: name as PlainFeature };
  if ((MOMENT_FEATURES as readonly string[]).includes(name))
    return { kind: "moment", name: name as MomentFeature };
  const lookback = LOOKBACK_RE.exec(name);
  if (lookback)
    return { kind: "lookback", family: lookback[1] as LookbackFeature, seconds: Number(lookback[2]) };
  const m = BOOK_RE.exec(name);
  if (!m) return null;
  const ticks = m[3] === undefined ? null : Number(m[3].slice(1));
  return { kind: "book", family: m[1] as BookFeature, token: m[2] as "up" | "down", ticks };
}

/** Whether a definition of version 1 may name the feature (lookbacks and the moment's features came with version 2). */
export function inVersion1(name: string): boolean {
  const kind = parseFeature(name)?.kind;
  return kind !== "lookback" && kind !== "moment";
}
