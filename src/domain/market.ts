import type { Micros } from "./time.ts";

export const COINS = ["btc", "eth", "sol"] as const;
export type Coin = (typeof COINS)[number];

export const MARKET_TYPES = ["5m", "15m", "1h", "4h", "24h"] as const;
export type MarketType = (typeof MARKET_TYPES)[number];

export type Outcome = "Up" | "Down";

/** Which price feed settles a market of this type (Polymarket's resolution sources). */
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

export function parseCoin(text: string): Coin | null {
  const lower = text.toLowerCase();
  return (COINS as readonly string[]).includes(lower) ? (lower as Coin) : null;
}

export function parseMarketType(text: string): MarketType | null {
  return TYPE_ALIASES[text.toLowerCase()] ?? null;
}

export function marketTypeFromSeconds(seconds: number): MarketType | null {
  for (const t of MARKET_TYPES) if (MARKET_TYPE_SECONDS[t] === seconds) return t;
  return null;
}

/** The winner rule of these markets: Up when the end price is at least the start price. */
export function winnerOf(coinPriceStart: number, coinPriceEnd: number): Outcome {
  return coinPriceEnd >= coinPriceStart ? "Up" : "Down";
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
  winner: Outcome | null;
  finalVolume: number | null;
  finalLiquidity: number | null;
  resolvedAt: number | null;
  createdAt: Micros;
  updatedAt: Micros;
}

export function isResolved(market: Market): boolean {
  return market.winner !== null;
}
