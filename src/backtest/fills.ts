import type { Level } from "../domain/book.ts";
import type { FeeSchedule } from "../domain/market.ts";

/**
 * Fills and fees (DESIGN 3.7), shared by the engine and `GET /v1/markets/{slug}/execution-price`:
 * a market order walks the recorded opposite side best first, level by level, and stops where depth
 * runs out or at its price cap; a resting limit order fills once the opposite side trades through its
 * price. A taker fill of C shares at p pays C * rate * (p * (1 - p)) ^ exponent USDC, taken in shares
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
 * A resting limit order's fill at its own price, once the opposite side has traded through it: a
 * resting buy at `limit` fills when the best ask is below it (a seller went past our price, so ours was
 * taken first), whatever the size, as no queue priority is assumed only a price strictly through ours
 * counts. Makers pay the taker formula only when the schedule does not charge takers only.
 */
export function restingFill(
  bestOpposite: number | null,
  side: OrderSide,
  limit: number,
  size: number,
  schedule: FeeSchedule | null,
): Fill | null {
  if (bestOpposite === null) return null;
  const through = side === "buy" ? bestOpposite < limit : bestOpposite > limit;
  if (!through) return null;
  const fee = schedule !== null && !schedule.takerOnly ? feeOf(schedule, size, limit) : 0;
  return {
    side,
    size,
    unfilled: 0,
    notional: size * limit,
    avgPrice: limit,
    bestPrice: limit,
    feeUsdc: fee,
    feeShares: side === "buy" ? fee / limit : 0,
    levels: [{ price: limit, size }],
  };
}

/** How far a fill's average price is from a reference (the mid), in basis points; positive is worse. */
export function slippageBps(side: OrderSide, avgPrice: number, reference: number): number {
  if (reference <= 0) return 0;
  const diff = side === "buy" ? avgPrice - reference : reference - avgPrice;
  return (diff / reference) * 10_000;
}
