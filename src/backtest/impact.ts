import type { Level, OrderBook } from "../domain/book.ts";

/**
 * Self-impact within one market's replay (DESIGN 3.7): liquidity our fills took stays taken until the
 * recorded book shows it refilled. The recorded book never saw our orders, so after we take shares from
 * a level it still shows them; we subtract what we took from that level's displayed size for as long as
 * the level stays in the book without growing. The level is refilled (and forgotten here) when its
 * displayed size rises above what the book last showed, or when it leaves the book (a later return is
 * new liquidity). A level that shrinks keeps what we took subtracted, measured from its new size.
 */

export type BookSide = "bids" | "asks";

interface Taken {
  /** Shares our fills took from the level and the book has not shown refilled. */
  taken: number;
  /** The displayed size the book last showed at the level. */
  shown: number;
}

const key = (token: string, side: BookSide, price: number) => `${token} ${side} ${price}`;

export class TakenLiquidity {
  private readonly levels = new Map<string, Taken>();

  /** Forgets what a snapshot's books show refilled; called once per snapshot with books, before its fills. */
  observe(books: (token: string) => OrderBook | null): void {
    for (const [k, t] of this.levels) {
      const [token, side, price] = k.split(" ");
      const level = books(token)?.[side as BookSide].find((l) => l.price === Number(price));
      if (level === undefined || level.size > t.shown) this.levels.delete(k);
      else t.shown = level.size;
    }
  }

  /** One side of a token's book as our orders meet it: the displayed sizes less what we took. */
  available(token: string, side: BookSide, levels: readonly Level[]): Level[] {
    if (this.levels.size === 0) return levels as Level[];
    const out: Level[] = [];
    for (const l of levels) {
      const taken = this.levels.get(key(token, side, l.price))?.taken ?? 0;
      const size = l.size - taken;
      if (size > 1e-9) out.push(taken === 0 ? l : { price: l.price, size });
    }
    return out;
  }

  /** Records a fill's levels as taken from a side whose displayed levels are `shown`. */
  take(token: string, side: BookSide, shown: readonly Level[], filled: readonly Level[]): void {
    for (const f of filled) {
      const k = key(token, side, f.price);
      const displayed = shown.find((l) => l.price === f.price)?.size ?? 0;
      const t = this.levels.get(k);
      if (t === undefined) this.levels.set(k, { taken: f.size, shown: displayed });
      else t.taken += f.size;
    }
  }
}
