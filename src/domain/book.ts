/** One price level of an order book. Prices are 0..1 (probability units), sizes are shares. */
export interface Level {
  price: number;
  size: number;
}

/** An order book best first: bids by price descending, asks by price ascending. */
export interface OrderBook {
  bids: Level[];
  asks: Level[];
}

export const EMPTY_BOOK: OrderBook = { bids: [], asks: [] };

/**
 * Upstream sends bids ascending and asks descending (best last); we always serve best first. A book
 * best first already (as derived books are) is returned as it is, not copied.
 */
export function sortBestFirst(book: OrderBook): OrderBook {
  if (ordered(book.bids, -1) && ordered(book.asks, 1)) return book;
  return {
    bids: [...book.bids].sort((a, b) => b.price - a.price),
    asks: [...book.asks].sort((a, b) => a.price - b.price),
  };
}

/** Whether the levels' prices run in `direction` (1 ascending, -1 descending); ties allowed. */
function ordered(levels: readonly Level[], direction: 1 | -1): boolean {
  for (let i = 1; i < levels.length; i++)
    if ((levels[i].price - levels[i - 1].price) * direction < 0) return false;
  return true;
}

const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

export function pow10(d: number): number {
  return POW10[d];
}

/**
 * The fewest decimal places (up to `max`) at which `value` is exactly a decimal number; -1 when it
 * needs more. Values read from upstream decimal strings always have such a count.
 */
export function decimalsOf(value: number, max: number): number {
  for (let d = 0; d <= max; d++) {
    if (Math.round(value * POW10[d]) / POW10[d] === value) return d;
  }
  return -1;
}

/** `1 - p` computed in decimal so that 1 - 0.51 is 0.49, not 0.49000000000000005. */
export function complementPrice(price: number): number {
  const d = Math.max(decimalsOf(price, 12), 0);
  return (POW10[d] - Math.round(price * POW10[d])) / POW10[d];
}

/**
 * The other token's book: on Polymarket a bid for Up at p is an ask for Down at 1-p, so the Down book
 * is the Up book mirrored (its bids are the Up asks at 1-p, its asks the Up bids at 1-p).
 */
export function mirrorBook(book: OrderBook): OrderBook {
  return {
    bids: book.asks.map((l) => ({ price: complementPrice(l.price), size: l.size })),
    asks: book.bids.map((l) => ({ price: complementPrice(l.price), size: l.size })),
  };
}

/** Whether `down` is `up` mirrored (booksEqual(mirrorBook(up), down)), without making the mirror. */
export function mirrors(up: OrderBook, down: OrderBook): boolean {
  return mirroredSide(up.asks, down.bids) && mirroredSide(up.bids, down.asks);
}

function mirroredSide(a: Level[], b: Level[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i].size !== b[i].size || complementPrice(a[i].price) !== b[i].price) return false;
  }
  return true;
}

export function booksEqual(a: OrderBook, b: OrderBook): boolean {
  return sidesEqual(a.bids, b.bids) && sidesEqual(a.asks, b.asks);
}

function sidesEqual(a: Level[], b: Level[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i].price !== b[i].price || a[i].size !== b[i].size) return false;
  }
  return true;
}

/** Widest spread at which Polymarket still shows the midpoint rather than the last trade. */
export const DISPLAY_MAX_SPREAD = 0.1;

/**
 * The token price Polymarket displays: the midpoint of best bid and best ask, or the last trade price
 * when the spread is wider than 0.10 or a side is empty. With neither (no trade yet on a one-sided or
 * empty book) it falls back to the one best price there is, then to null.
 */
export function displayedPrice(book: OrderBook, lastTradePrice: number | null): number | null {
  const bid = book.bids[0]?.price;
  const ask = book.asks[0]?.price;
  if (bid !== undefined && ask !== undefined) {
    const d = Math.max(decimalsOf(bid, 12), decimalsOf(ask, 12), 0);
    const bi = Math.round(bid * POW10[d]);
    const ai = Math.round(ask * POW10[d]);
    // Compare in integers: 0.61 - 0.51 is 0.09999999999999998 in floating point.
    if (ai - bi <= Math.round(DISPLAY_MAX_SPREAD * POW10[d])) return (bi + ai) / (2 * POW10[d]);
  }
  if (lastTradePrice !== null) return lastTradePrice;
  return bid ?? ask ?? null;
}
