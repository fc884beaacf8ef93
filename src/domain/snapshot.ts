import type { Micros } from "./time.ts";

/**
 * One recorded second of a market as stored: prices as numbers, both order books as one compact blob
 * (see book-codec.ts), or null when the books were not recorded for that second.
 */
export interface SnapshotRow {
  time: Micros;
  coinPrice: number;
  priceUp: number;
  priceDown: number;
  books: Uint8Array | null;
}

export type SortOrder = "asc" | "desc";
