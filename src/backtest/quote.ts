import type { Level } from "../domain/book.ts";
import type { SnapshotRow } from "../domain/snapshot.ts";
import { round } from "./engine.ts";
import { type ReplayMarket, SnapshotView, type Token } from "./features.ts";
import { slippageBps, walkBook } from "./fills.ts";

/** What a market order would have got from one snapshot's book: the engine's fill of that order. */
export interface ExecutionQuote {
  mid: number;
  best_price: number | null;
  average_price: number | null;
  slippage_bps: number | null;
  filled: number;
  unfilled: number;
  notional: number;
  fee_usdc: number;
  fee_shares: number;
  levels: Level[];
}

/** The market order of `size` shares of a token against the snapshot's book, as the engine fills one. */
export function executionQuote(
  market: ReplayMarket,
  snapshot: SnapshotRow,
  token: Token,
  side: "buy" | "sell",
  size: number,
): ExecutionQuote {
  const view = new SnapshotView(market, snapshot);
  const book = view.book(token);
  const levels = side === "buy" ? (book?.asks ?? []) : (book?.bids ?? []);
  const fill = walkBook(levels, side, size, null, market.feeSchedule);
  const mid = view.mid(token);
  return {
    mid: round(mid),
    best_price: fill.bestPrice,
    average_price: fill.avgPrice === null ? null : round(fill.avgPrice),
    slippage_bps: fill.avgPrice === null ? null : round(slippageBps(side, fill.avgPrice, mid), 2),
    filled: round(fill.size),
    unfilled: round(fill.unfilled),
    notional: round(fill.notional),
    fee_usdc: round(fill.feeUsdc),
    fee_shares: round(fill.feeShares),
    levels: fill.levels.map((l) => ({ price: l.price, size: round(l.size) })),
  };
}
