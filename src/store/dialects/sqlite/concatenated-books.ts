import type { SnapshotRow } from "../../../domain/snapshot.ts";

/**
 * Gives each row its books from one aggregate row: the times and the blobs' lengths as text
 * (comma-separated) and the blobs concatenated. node:sqlite copies every blob it returns into a new
 * ArrayBuffer; one blob for the page instead of one per second is most of the cost saved. The times
 * and lengths come from the same aggregate step as the blobs, so they pair up whatever order SQLite
 * aggregates in; anything unexpected (out of page order, unparsable, lengths not adding up) returns
 * false, and the caller reads the books a row per second instead.
 */
export function attachConcatenatedBooks(
  rows: SnapshotRow[],
  times: string,
  lengths: string,
  blobs: Uint8Array,
  asc: boolean,
): boolean {
  let i = 0;
  let tp = 0;
  let lp = 0;
  let bp = 0;
  let prev = asc ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  while (tp < times.length) {
    // An integer time up to the next comma, and the blob's length likewise.
    let t = 0;
    let c = times.charCodeAt(tp);
    const negative = c === 45;
    if (negative) tp++;
    let start = tp;
    while (tp < times.length && (c = times.charCodeAt(tp)) !== 44) {
      if (c < 48 || c > 57) return false;
      t = t * 10 + (c - 48);
      tp++;
    }
    if (tp === start || t > Number.MAX_SAFE_INTEGER) return false;
    tp++;
    let length = 0;
    start = lp;
    while (lp < lengths.length && (c = lengths.charCodeAt(lp)) !== 44) {
      if (c < 48 || c > 57) return false;
      length = length * 10 + (c - 48);
      lp++;
    }
    if (lp === start) return false;
    lp++;
    if (negative) t = -t;
    if (asc ? t < prev : t > prev) return false;
    prev = t;
    const end = bp + length;
    if (end > blobs.length) return false;
    while (i < rows.length && (asc ? rows[i].time < t : rows[i].time > t)) i++;
    if (i < rows.length && rows[i].time === t) rows[i++].books = blobs.subarray(bp, end);
    bp = end;
  }
  return bp === blobs.length && lp >= lengths.length;
}
