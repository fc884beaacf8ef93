import type { SnapshotRow } from "../../domain/snapshot.ts";
import type { SnapshotQuery } from "../ports/market-store.ts";

/** Pages at smaller offsets skip too few rows for reading from the far end to pay. */
const FAR_END_MIN_OFFSET = 256;

/** How a page is read: the direction of the range scan, its LIMIT and OFFSET, and whether to reverse. */
export interface PageScan {
  ascending: boolean;
  limit: number;
  offset: number;
  /** The scan runs against the page's order: its rows go into the page last first. */
  reversed: boolean;
}

/**
 * OFFSET steps over every row it skips, so a deep page (the oldest seconds, newest first) is read
 * from the other end of its range, which skips fewer rows, and reversed, when the caller says how many
 * rows the range holds (`total`).
 */
export function pageScan(q: SnapshotQuery): PageScan {
  const asc = q.order === "asc";
  if (q.total !== undefined && q.offset >= FAR_END_MIN_OFFSET) {
    const left = q.total - q.offset; // rows from the page's first to the last of the range
    const farOffset = Math.max(0, left - q.limit);
    if (left > 0 && farOffset < q.offset) {
      return { ascending: !asc, limit: Math.min(q.limit, left), offset: farOffset, reversed: true };
    }
  }
  return { ascending: asc, limit: q.limit, offset: q.offset, reversed: false };
}

/**
 * The rows of a page from its prices as read by the scan, [time, coin price, up, down] each, in page
 * order; books null until merged.
 */
export function pageRows(prices: readonly (readonly unknown[])[], reversed: boolean): SnapshotRow[] {
  const n = prices.length;
  const rows = new Array<SnapshotRow>(n);
  for (let i = 0; i < n; i++) {
    const r = prices[i];
    rows[reversed ? n - 1 - i : i] = {
      time: r[0] as number,
      coinPrice: r[1] as number,
      priceUp: r[2] as number,
      priceDown: r[3] as number,
      books: null,
    };
  }
  return rows;
}

/** The inclusive time range a page's rows cover, whatever its order: where its books are read. */
export function pageTimeRange(rows: readonly SnapshotRow[], asc: boolean): { lo: number; hi: number } {
  const first = rows[0].time;
  const last = rows[rows.length - 1].time;
  return asc ? { lo: first, hi: last } : { lo: last, hi: first };
}

/**
 * Gives each row of a page the books of its second from `books`, [time, stored books] pairs of the
 * page's time range in page order (two ordered streams merged, cheaper than a join, which looks each
 * second's books up separately); a second without books gets null. `bytesOf` reads a driver's value.
 */
export function mergeBooks(
  rows: SnapshotRow[],
  books: readonly (readonly unknown[])[],
  asc: boolean,
  bytesOf: (stored: unknown) => Uint8Array | null,
): void {
  let j = 0;
  for (let i = 0; i < rows.length; i++) {
    rows[i].books = null;
    const t = rows[i].time;
    while (j < books.length && (asc ? (books[j][0] as number) < t : (books[j][0] as number) > t)) j++;
    if (j < books.length && books[j][0] === t) {
      rows[i].books = bytesOf(books[j][1]);
      j++;
    }
  }
}
