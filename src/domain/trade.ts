import type { Outcome } from "./market.ts";
import type { Micros } from "./time.ts";

/** The taker's side of a Polymarket trade. */
export type TradeSide = "BUY" | "SELL";

/**
 * One trade of a market's outcome token, as the CLOB market channel reports it (`last_trade_price`).
 * The upstream gives trades no id, so a trade is identified by all its values: the same trade
 * received twice (a reconnect, a restart) is stored once.
 */
export interface TradeRow {
  /** The upstream's millisecond time, in µs. */
  time: Micros;
  outcome: Outcome;
  side: TradeSide;
  price: number;
  size: number;
  feeRateBps: number;
}
