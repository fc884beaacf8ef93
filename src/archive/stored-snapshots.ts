import type { SnapshotRow } from "../domain/snapshot.ts";
import type { Micros } from "../domain/time.ts";
import type { MarketStore } from "../store/ports/market-store.ts";

/** Stored snapshots read a page at a time. */
const PAGE = 4096;

/**
 * A market's stored snapshots beside the ones its derivation gives again (docs/archives.md, "An earlier
 * hour imported later"): read in time order with the derived rows, they say the first second from
 * which the two differ (a stored second the derivation gives otherwise, or not at all), from which the
 * stored ones are to be replaced. Events only ever join a market's stream, so where nothing earlier
 * joined, the derivation gives the stored rows again and nothing is replaced.
 *
 * The stored coin prices stand in for seconds the import's price files do not cover (a later run given
 * only the new hours' feeds): those seconds are derived again with the coin price they were derived
 * with, rather than dropped.
 */
export class StoredSnapshots {
  private readonly markets: MarketStore;
  private readonly marketKey: number;
  private readonly coinPrices: ReadonlyMap<Micros, number>;
  private readonly from: Micros;
  private readonly to: Micros;
  private page: SnapshotRow[] = [];
  private index = 0;
  private offset = 0;
  private exhausted = false;
  /** A difference was found: what follows is being replaced, nothing more to compare. */
  private replacing = false;

  private constructor(
    markets: MarketStore,
    marketKey: number,
    coinPrices: ReadonlyMap<Micros, number>,
    from: Micros,
    to: Micros,
  ) {
    this.markets = markets;
    this.marketKey = marketKey;
    this.coinPrices = coinPrices;
    this.from = from;
    this.to = to;
  }

  /** The market's stored snapshots within [from, to) (the derivation's times). */
  static async of(
    markets: MarketStore,
    marketKey: number,
    from: Micros,
    to: Micros,
  ): Promise<StoredSnapshots> {
    const coinPrices = new Map<Micros, number>();
    for (let offset = 0; ; offset += PAGE) {
      const rows = await markets.snapshotPage(marketKey, {
        order: "asc",
        limit: PAGE,
        offset,
        from,
        to: to - 1,
        books: false,
      });
      for (const r of rows) coinPrices.set(r.time, r.coinPrice);
      if (rows.length < PAGE) break;
    }
    return new StoredSnapshots(markets, marketKey, coinPrices, from, to);
  }

  /** The coin price the stored snapshot at `time` has; null when none is stored. */
  coinPriceAt(time: Micros): number | null {
    return this.coinPrices.get(time) ?? null;
  }

  /**
   * The next derived row (rows in time order): the time from which the stored snapshots are to be
   * replaced, the first time they differ; null while they agree (and after the first difference).
   */
  async differsAt(row: SnapshotRow): Promise<Micros | null> {
    if (this.replacing) return null;
    const head = await this.head();
    if (head === null || head.time > row.time) return null;
    if (head.time < row.time) return this.replaceFrom(head.time);
    this.index++;
    return sameSnapshot(head, row) ? null : this.replaceFrom(row.time);
  }

  /** The derivation is over: a stored snapshot left is one it no longer gives. */
  async differsAtEnd(): Promise<Micros | null> {
    if (this.replacing) return null;
    const head = await this.head();
    return head === null ? null : this.replaceFrom(head.time);
  }

  private replaceFrom(time: Micros): Micros {
    this.replacing = true;
    this.page = [];
    return time;
  }

  private async head(): Promise<SnapshotRow | null> {
    if (this.index < this.page.length) return this.page[this.index];
    if (this.exhausted || this.coinPrices.size === 0) return null;
    this.page = await this.markets.snapshotPage(this.marketKey, {
      order: "asc",
      limit: PAGE,
      offset: this.offset,
      from: this.from,
      to: this.to - 1,
      books: true,
    });
    this.offset += this.page.length;
    this.index = 0;
    if (this.page.length < PAGE) this.exhausted = true;
    return this.page[0] ?? null;
  }
}

function sameSnapshot(a: SnapshotRow, b: SnapshotRow): boolean {
  return (
    a.time === b.time &&
    a.coinPrice === b.coinPrice &&
    a.priceUp === b.priceUp &&
    a.priceDown === b.priceDown &&
    sameBytes(a.books, b.books)
  );
}

function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}
