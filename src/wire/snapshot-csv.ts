import type { SnapshotRow } from "../domain/snapshot.ts";
import { isoMicros } from "../domain/time.ts";
import { decodeBooks } from "./book-codec.ts";

/**
 * Snapshots as the CSV export's rows (DESIGN 3.8): the columns of the Parquet export
 * (snapshot-columns.ts) in the same order, books as JSON text. Apart from the Parquet columns so that
 * a CSV or NDJSON export, and the server's start, do not load Arrow.
 */

/** The CSV export's header line. */
export function csvHeader(books: boolean): string {
  return `slug,time,coin_price,price_up,price_down${books ? ",orderbook_up,orderbook_down" : ""}\n`;
}

function csvQuote(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/** One snapshot as a CSV line: books as JSON text columns. */
export function csvRow(slug: string, r: SnapshotRow, books: boolean): string {
  const base = `${slug},${isoMicros(r.time)},${r.coinPrice},${r.priceUp},${r.priceDown}`;
  if (!books) return `${base}\n`;
  const b = r.books ? decodeBooks(r.books) : { up: { bids: [], asks: [] }, down: { bids: [], asks: [] } };
  return `${base},${csvQuote(JSON.stringify(b.up))},${csvQuote(JSON.stringify(b.down))}\n`;
}
