import {
  type FeeSchedule,
  type MarketType,
  type Outcome,
  SETTLEMENT_FEED,
  type Settlement,
  type Winner,
} from "./market.ts";

/**
 * How Polymarket settles each market (DESIGN 3.4), as pure rules: which feed a market's own upstream
 * record names, at which moments (and, for Binance, from which 1m candle and which of its prices) the
 * start and end prices are taken, and who wins.
 */

/**
 * 2026-08-07T00:00:00Z: from this day on Polymarket's 5m and 15m markets settle on Chainlink's TWAP
 * streams. A market's own record says so (`cryptoMarketConfig`); this date only places generated demo
 * markets on the right side of the switch.
 */
export const TWAP_SWITCH_SECOND = 1_786_060_800;

/** The lookback of the TWAP streams after the switch's first weeks (the 30 s stream came first). */
export const DEMO_TWAP_LOOKBACK_S = 60;

/** What a market's Gamma record says of TWAP settlement (`cryptoMarketConfig`). */
export interface TwapConfig {
  lookbackS: number;
}

/** The settlement of a market of this type: a TWAP stream when its record enables one, else its type's feed. */
export function settlementOf(type: MarketType, twap: TwapConfig | null): Settlement {
  if (twap !== null) return { source: "chainlink_twap", lookbackS: twap.lookbackS };
  return { source: SETTLEMENT_FEED[type], lookbackS: null };
}

/** The settlement of a demo market, as the upstream's record of such a market would say. */
export function demoSettlement(type: MarketType, startTime: number): Settlement {
  const twap = (type === "5m" || type === "15m") && startTime >= TWAP_SWITCH_SECOND;
  return settlementOf(type, twap ? { lookbackS: DEMO_TWAP_LOOKBACK_S } : null);
}

/** The fees of every demo market: Polymarket's crypto fee schedule of 2026. */
export const DEMO_FEE_SCHEDULE: FeeSchedule = { rate: 0.07, exponent: 1, takerOnly: true, rebateRate: 0.2 };

/** A feed's name in reports and logs: `chainlink`, `chainlink_twap 60 s`, `binance`. */
export function settlementName(s: Settlement): string {
  return s.lookbackS === null ? s.source : `${s.source} ${s.lookbackS} s`;
}

/**
 * Where one of a market's two prices is read: the tick in effect at a second (Chainlink, instantaneous
 * or TWAP), or a price of Binance's 1m candle opening at a second.
 */
export type PricePoint =
  { kind: "tick"; second: number } | { kind: "candle"; openTime: number; field: "open" | "close" };

/**
 * The start and end points of a market. 1h: the open and close of the hour's candle, i.e. the open
 * of its first 1m candle and the close of its last; 24h: the close of the 1m candle at 12:00 US
 * Eastern (the market's start) against the next day's (its end); Chainlink: the ticks in effect at
 * the start and the end.
 */
export function pricePoints(
  type: MarketType,
  settlement: Settlement,
  startTime: number,
  endTime: number,
): { start: PricePoint; end: PricePoint } {
  if (settlement.source !== "binance") {
    return { start: { kind: "tick", second: startTime }, end: { kind: "tick", second: endTime } };
  }
  if (type === "24h") {
    return {
      start: { kind: "candle", openTime: startTime, field: "close" },
      end: { kind: "candle", openTime: endTime, field: "close" },
    };
  }
  return {
    start: { kind: "candle", openTime: startTime, field: "open" },
    end: { kind: "candle", openTime: endTime - 60, field: "close" },
  };
}

/** The second from which a price point can be known: a candle's price once the candle has closed. */
export function knownFrom(point: PricePoint): number {
  return point.kind === "tick" ? point.second : point.openTime + 60;
}

/** Who wins by the upstream's rule: Up iff end >= start, except that a daily market's exact tie splits 50-50. */
export function settleWinner(type: MarketType, start: number, end: number): Winner {
  if (type === "24h" && start === end) return "50-50";
  const outcome: Outcome = end >= start ? "Up" : "Down";
  return outcome;
}

/**
 * Whether two prices of one settlement say the same: Gamma's price to beat against the stream's value.
 * Gamma may round where the stream keeps 18 decimals, so they agree within a millionth of the price.
 */
export function pricesAgree(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-6 * Math.max(Math.abs(a), Math.abs(b));
}
