import type { Micros } from "./time.ts";

/**
 * A coin's code, lowercase: `btc`, `eth`, `xrp`. Which coins the service knows is configuration (the
 * `COINS` option, default DEFAULT_COINS), not this type: a code is checked against the configured list
 * where it comes in (a query, a command line), and only its shape anywhere else.
 */
export type Coin = string;

/** The coins Polymarket runs Up or Down series for (DESIGN 3.4): the default of the `COINS` option. */
export const DEFAULT_COINS: readonly Coin[] = ["btc", "eth", "sol", "xrp", "doge", "bnb", "hype"];

export const MARKET_TYPES = ["5m", "15m", "1h", "4h", "24h"] as const;
export type MarketType = (typeof MARKET_TYPES)[number];

export type Outcome = "Up" | "Down";

/**
 * How a market resolved: an outcome, or `50-50` when the upstream split the payout (a daily market's
 * exact tie, or a market it could not settle). Stored and served as the upstream has it.
 */
export type Winner = Outcome | "50-50";
export const WINNERS: readonly Winner[] = ["Up", "Down", "50-50"];

/** Which price feed settles a market of this type before TWAP settlement (Polymarket's resolution sources). */
export type SettlementFeed = "chainlink" | "binance";

export const MARKET_TYPE_SECONDS: Record<MarketType, number> = {
  "5m": 300,
  "15m": 900,
  "1h": 3_600,
  "4h": 14_400,
  "24h": 86_400,
};

export const SETTLEMENT_FEED: Record<MarketType, SettlementFeed> = {
  "5m": "chainlink",
  "15m": "chainlink",
  "1h": "binance",
  "4h": "chainlink",
  "24h": "binance",
};

const TYPE_ALIASES: Record<string, MarketType> = {
  "5m": "5m",
  "15m": "15m",
  "1h": "1h",
  "1hr": "1h",
  "4h": "4h",
  "4hr": "4h",
  "24h": "24h",
  "24hr": "24h",
};

const COIN_CODE_RE = /^[a-z][a-z0-9]{1,11}$/;

/** A coin code in any case, lowercased; null when it is not the shape of one (2 to 12 letters and digits). */
export function parseCoin(text: string): Coin | null {
  const lower = text.toLowerCase();
  return COIN_CODE_RE.test(lower) ? lower : null;
}

/** A coin code, only if it is one of `known` (the configured coins). */
export function knownCoin(text: string, known: readonly Coin[]): Coin | null {
  const coin = parseCoin(text);
  return coin !== null && known.includes(coin) ? coin : null;
}

/** What we know of a coin beyond its code; a coin not listed here gets defaultsOf(code). */
export interface CoinFacts {
  /** The name in Polymarket's slugs of hourly and daily markets (`bitcoin-up-or-down-...`). */
  name: string;
  /** The series Polymarket runs for it. */
  types: readonly MarketType[];
}

const ALL_TYPES: readonly MarketType[] = ["5m", "15m", "1h", "4h", "24h"];
const SHORT_TYPES: readonly MarketType[] = ["5m", "15m"];

const KNOWN_COINS: Record<string, CoinFacts> = {
  btc: { name: "bitcoin", types: ALL_TYPES },
  eth: { name: "ethereum", types: ALL_TYPES },
  sol: { name: "solana", types: ALL_TYPES },
  xrp: { name: "xrp", types: SHORT_TYPES },
  doge: { name: "dogecoin", types: SHORT_TYPES },
  bnb: { name: "bnb", types: SHORT_TYPES },
  hype: { name: "hyperliquid", types: SHORT_TYPES },
};

/** A coin's facts; a coin configured but not known here is taken to run every series, named by its code. */
export function coinFacts(coin: Coin): CoinFacts {
  return KNOWN_COINS[coin] ?? { name: coin, types: ALL_TYPES };
}

export function parseMarketType(text: string): MarketType | null {
  // Own keys only: `__proto__` or `constructor` from a query must not find Object's own members.
  const key = text.toLowerCase();
  return Object.hasOwn(TYPE_ALIASES, key) ? TYPE_ALIASES[key] : null;
}

export function marketTypeFromSeconds(seconds: number): MarketType | null {
  for (const t of MARKET_TYPES) if (MARKET_TYPE_SECONDS[t] === seconds) return t;
  return null;
}

/** The winner rule of these markets: Up when the end price is at least the start price. */
export function winnerOf(coinPriceStart: number, coinPriceEnd: number): Outcome {
  return coinPriceEnd >= coinPriceStart ? "Up" : "Down";
}

/** Where a market's start and end prices come from (DESIGN 3.4): `lookbackS` only for a TWAP stream. */
export type SettlementSource = "chainlink" | "chainlink_twap" | "binance";

export interface Settlement {
  source: SettlementSource;
  /** The TWAP stream's lookback in seconds (30 or 60); null for the instantaneous sources. */
  lookbackS: number | null;
}

/** Polymarket's fees of a market (Gamma's `feeSchedule`): a taker pays `rate * (p * (1 - p)) ^ exponent` a share. */
export interface FeeSchedule {
  rate: number;
  exponent: number;
  takerOnly: boolean;
  rebateRate: number;
}

/**
 * A market record as stored. Times of the market's interval are Unix seconds; bookkeeping times are
 * microseconds. Fields that only exist after resolution are null until then.
 */
export interface Market {
  slug: string;
  /** Polymarket's own slug where it differs from ours (hourly and daily markets); accepted in paths. */
  polymarketSlug: string | null;
  coin: Coin;
  marketType: MarketType;
  marketId: string;
  eventId: string;
  startTime: number;
  endTime: number;
  coinPriceStart: number | null;
  coinPriceEnd: number | null;
  conditionId: string;
  clobTokenUp: string;
  clobTokenDown: string;
  winner: Winner | null;
  finalVolume: number | null;
  finalLiquidity: number | null;
  resolvedAt: number | null;
  createdAt: Micros;
  updatedAt: Micros;
  /** Which feed settles it, from its upstream record (DESIGN 3.4). */
  settlement: Settlement;
  /** Null when the market charges no fees. */
  feeSchedule: FeeSchedule | null;
}

/**
 * Where a market's data came from (issue 23): `recorded`, our collector followed it live; `pmxt`, its
 * events and snapshots were imported from the PMXT archive; `gamma`, only its record was imported from
 * Gamma (no book data). A market holds a set of them, combined by one rule (MarketStore.markSource):
 * `recorded` and `pmxt` add to the set and each takes `gamma` out of it, since a market with book data
 * is no longer "Gamma only"; `gamma` is kept only when nothing else is there. So a market recorded live
 * and later filled in from PMXT is `recorded` and `pmxt`, and importing its Gamma record again changes
 * nothing. Served in this order.
 */
export const MARKET_SOURCES = ["recorded", "pmxt", "gamma"] as const;
export type MarketSource = (typeof MARKET_SOURCES)[number];

export function isResolved(market: Market): boolean {
  return market.winner !== null;
}
