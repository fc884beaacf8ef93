import type { Level } from "../domain/book.ts";
import type { FeeSchedule, Outcome } from "../domain/market.ts";
import type { Micros } from "../domain/time.ts";
import type { TradeRow } from "../domain/trade.ts";

/**
 * Fills and fees (DESIGN 3.7), shared by the engine and `GET /v1/markets/{slug}/execution-price`:
 * a market order walks the recorded opposite side best first, level by level, and stops where depth
 * runs out or at its price cap; a resting limit order fills from what traded at or through its price
 * after the queue ahead of it (fillFromPrint). A taker fill of C shares at p pays C * rate * (p * (1 - p)) ^ exponent USDC, taken in shares
 * on a buy; makers pay nothing when the schedule charges takers only.
 */

export type OrderSide = "buy" | "sell";

export interface Fill {
  side: OrderSide;
  /** Shares traded. */
  size: number;
  /** Shares asked for and not traded (depth ran out, or the cap stopped the walk). */
  unfilled: number;
  /** USDC that changed hands before fees: the sum of size * price over the levels taken. */
  notional: number;
  /** notional / size; null when nothing filled. */
  avgPrice: number | null;
  /** The first level's price; null when nothing filled. */
  bestPrice: number | null;
  /** The fee in USDC (a buy pays it in shares: feeShares of them). */
  feeUsdc: number;
  feeShares: number;
  /** Each level taken: its price and the shares taken there. */
  levels: Level[];
}

/** The fee in USDC of a fill of `shares` at `price`; 0 without a fee schedule. */
export function feeOf(schedule: FeeSchedule | null, shares: number, price: number): number {
  if (schedule === null || shares === 0) return 0;
  return shares * schedule.rate * Math.pow(price * (1 - price), schedule.exponent);
}

/**
 * A market order of `size` shares against one side of a book, best level first. A buy takes asks up to
 * `cap` (null: any price); a sell takes bids down to `cap` (null: any price). Levels priced past the cap
 * are left, as is everything once the size is filled.
 */
export function walkBook(
  levels: readonly Level[],
  side: OrderSide,
  size: number,
  cap: number | null,
  schedule: FeeSchedule | null,
): Fill {
  const taken: Level[] = [];
  let left = size;
  let notional = 0;
  let feeUsdc = 0;
  let feeShares = 0;
  for (const level of levels) {
    if (left <= 0) break;
    if (cap !== null && (side === "buy" ? level.price > cap : level.price < cap)) break;
    const shares = Math.min(left, level.size);
    if (shares <= 0) continue;
    const fee = feeOf(schedule, shares, level.price);
    taken.push({ price: level.price, size: shares });
    notional += shares * level.price;
    feeUsdc += fee;
    if (side === "buy") feeShares += fee / level.price;
    left -= shares;
  }
  const filled = size - left;
  return {
    side,
    size: filled,
    unfilled: left,
    notional,
    avgPrice: filled > 0 ? notional / filled : null,
    bestPrice: taken[0]?.price ?? null,
    feeUsdc,
    feeShares,
    levels: taken,
  };
}

/**
 * What traded of a market's outcome tokens, oldest first: the volume resting limit orders fill from.
 * Today the market's recorded Polymarket trades (the trade store); book events, where recorded, will
 * be the other source, read into the same prints by a function of their own.
 */
export interface Print {
  time: Micros;
  outcome: Outcome;
  price: number;
  size: number;
}

/** The prints of a market's recorded trades (given oldest first, as the trade store pages them). */
export function printsOfTrades(trades: readonly TradeRow[]): Print[] {
  return trades.map((t) => ({ time: t.time, outcome: t.outcome, price: t.price, size: t.size }));
}

/** Prices are compared to a billionth: a trade at 0.34 is at a limit of 0.34 however it was computed. */
const PRICE_EPSILON = 1e-9;

/**
 * A resting limit order (DESIGN 3.7): a buy of `outcome` at `limit` that joined the book at `placedAt`
 * behind `queueAhead` shares (the size displayed at its price then), with `size` shares still wanted.
 */
export interface RestingOrder {
  outcome: Outcome;
  limit: number;
  placedAt: Micros;
  queueAhead: number;
  size: number;
}

/**
 * The one rule of what a print gives a resting buy: shares of its outcome that traded at its price or
 * through it (at or below the limit), after it joined the book. Of those, the queue ahead of it trades
 * first (FIFO), then the order, up to the size it still wants. Mutates the order's queue and size;
 * returns the shares the order bought from this print, at its own price.
 */
export function fillFromPrint(order: RestingOrder, print: Print): number {
  if (print.time <= order.placedAt || print.outcome !== order.outcome) return 0;
  if (print.price > order.limit + PRICE_EPSILON) return 0;
  const toQueue = Math.min(order.queueAhead, print.size);
  order.queueAhead -= toQueue;
  const ours = Math.min(order.size, print.size - toQueue);
  order.size -= ours;
  return ours;
}

/** The fee a maker pays on a fill of `shares` at `price`: none when the schedule charges takers only. */
export function makerFeeOf(schedule: FeeSchedule | null, shares: number, price: number): number {
  return schedule !== null && !schedule.takerOnly ? feeOf(schedule, shares, price) : 0;
}

/** The rebate a maker earns on a fill: `rebate_rate` of the fee the taker it met paid (in USDC). */
export function makerRebateOf(schedule: FeeSchedule | null, shares: number, price: number): number {
  return schedule === null ? 0 : feeOf(schedule, shares, price) * schedule.rebateRate;
}

/** What a trader receives per share selling at `price`, after the taker fee: price - rate * (price * (1 - price)) ^ exponent. */
export function netSalePrice(schedule: FeeSchedule | null, price: number): number {
  return price - feeOf(schedule, 1, price);
}

/** How far a fill's average price is from a reference (the mid), in basis points; positive is worse. */
export function slippageBps(side: OrderSide, avgPrice: number, reference: number): number {
  if (reference <= 0) return 0;
  const diff = side === "buy" ? avgPrice - reference : reference - avgPrice;
  return (diff / reference) * 10_000;
}
