import type { Outcome } from "./market.ts";
import type { Micros } from "./time.ts";

/** The taker's side of a Polymarket trade. */
export type TradeSide = "BUY" | "SELL";

/**
 * One trade of a market's outcome token, as the CLOB market channel reports it (`last_trade_price`).
 * The upstream gives trades no id, so a trade is identified by all its values but the fee and the
 * transaction hash: the same trade received twice (a reconnect, a restart) is stored once, and a trade
 * recorded live without its hash and imported later with it (PMXT) is one trade, the hash filled in.
 */
export interface TradeRow {
  /** The upstream's millisecond time, in µs. */
  time: Micros;
  outcome: Outcome;
  side: TradeSide;
  price: number;
  size: number;
  feeRateBps: number;
  /** The on-chain transaction that settled it (`transaction_hash`), when the message carried one. */
  transactionHash: string | null;
}
