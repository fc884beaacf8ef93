import type { Level, OrderBook } from "../../domain/book.ts";

/**
 * One token's order book as the CLOB market channel describes it: a `book` message replaces it, a
 * `price_change` entry sets one level's total size (0 removes the level). Levels are kept by price
 * in maps, so the order messages list them in does not matter; `toOrderBook` sorts best first.
 */
export class LocalBook {
  private readonly bids = new Map<number, number>();
  private readonly asks = new Map<number, number>();
  lastTradePrice: number | null = null;
  tickSize: number | null = null;

  replace(bids: Level[], asks: Level[]): void {
    this.bids.clear();
    this.asks.clear();
    for (const l of bids) if (l.size > 0) this.bids.set(l.price, l.size);
    for (const l of asks) if (l.size > 0) this.asks.set(l.price, l.size);
  }

  /** Sets the total size at a price; BUY is the bid side. */
  setLevel(side: "BUY" | "SELL", price: number, size: number): void {
    const levels = side === "BUY" ? this.bids : this.asks;
    if (size === 0) levels.delete(price);
    else levels.set(price, size);
  }

  toOrderBook(): OrderBook {
    return {
      bids: sortedLevels(this.bids, (a, b) => b - a),
      asks: sortedLevels(this.asks, (a, b) => a - b),
    };
  }
}

function sortedLevels(levels: Map<number, number>, order: (a: number, b: number) => number): Level[] {
  return [...levels.keys()].sort(order).map((price) => ({ price, size: levels.get(price) as number }));
}
