import type { SnapshotRow } from "./snapshot.ts";
import type { Micros } from "./time.ts";

/**
 * Min/max-preserving downsampling for charts (DESIGN 3.8, `GET /v1/markets/{slug}/series`). The time
 * span of the rows is cut into equal buckets; of each bucket's rows, the first, the last, and the rows
 * holding the lowest and the highest value of each of the three series (Up, Down, coin price) are
 * kept, so at most 8 rows a bucket, each a real snapshot. A line drawn through the kept rows of one
 * series reaches every bucket's extremes, and the first and last rows are always kept.
 */

/** Rows one bucket can keep: first, last, and a min and a max for each of three series. */
export const ROWS_PER_BUCKET = 8;

export interface Downsampled {
  /** The kept rows, oldest first. */
  rows: SnapshotRow[];
  /** The width of a bucket, or null when every row was kept (no more rows than points). */
  bucketUs: Micros | null;
}

const VALUES: ((r: SnapshotRow) => number)[] = [(r) => r.priceUp, (r) => r.priceDown, (r) => r.coinPrice];

/** Rows (oldest first) down to at most `points` rows; `points` >= ROWS_PER_BUCKET. */
export function downsample(rows: readonly SnapshotRow[], points: number): Downsampled {
  if (rows.length <= points) return { rows: [...rows], bucketUs: null };
  const buckets = Math.max(1, Math.floor(points / ROWS_PER_BUCKET));
  const first = rows[0].time;
  const span = rows[rows.length - 1].time - first + 1;
  const width = Math.ceil(span / buckets);
  const kept: SnapshotRow[] = [];
  let start = 0;
  while (start < rows.length) {
    const bucket = Math.floor((rows[start].time - first) / width);
    let end = start + 1;
    while (end < rows.length && Math.floor((rows[end].time - first) / width) === bucket) end++;
    keepExtremes(rows, start, end, kept);
    start = end;
  }
  return { rows: kept, bucketUs: width };
}

/** Appends, in time order, the distinct rows of rows[start, end) that the bucket keeps. */
function keepExtremes(rows: readonly SnapshotRow[], start: number, end: number, out: SnapshotRow[]): void {
  const picks = new Set<number>([start, end - 1]);
  for (const value of VALUES) {
    let lo = start;
    let hi = start;
    for (let i = start + 1; i < end; i++) {
      const v = value(rows[i]);
      if (v < value(rows[lo])) lo = i;
      if (v > value(rows[hi])) hi = i;
    }
    picks.add(lo);
    picks.add(hi);
  }
  for (const i of [...picks].sort((a, b) => a - b)) out.push(rows[i]);
}
