import * as arrow from "apache-arrow";
import type { SnapshotRow } from "../domain/snapshot.ts";
import { bookData, SideColumns, appendBookColumns } from "./book-columns.ts";

/**
 * Snapshots as the Parquet export's typed columns (DESIGN 3.8; the CSV export's rows are
 * snapshot-csv.ts), one row a snapshot, in the order of the JSON's fields.
 *
 *   slug            string
 *   time            timestamp[µs, UTC]
 *   coin_price, price_up, price_down   double
 *   orderbook_up, orderbook_down       struct<bids: list<struct<price: double, size: double>>,
 *                                             asks: list<struct<price: double, size: double>>>
 *                                      (with books only; best first; empty lists where a second has
 *                                      no recorded books, as the JSON has)
 */

const TIME = new arrow.TimestampMicrosecond("UTC");
const encoder = new TextEncoder();

/** The double columns after `time`, by name, in order (the writers of the file take them from here). */
export const PRICE_COLUMNS = ["coin_price", "price_up", "price_down"] as const;

/** A batch's rows, column by column, as SnapshotColumns holds them. */
export interface SnapshotColumnsView {
  readonly length: number;
  /** Each market's slug with the row its run of rows starts at (a market's rows are consecutive). */
  readonly runs: readonly { readonly slug: string; readonly from: number }[];
  /** Microseconds as int64: two int32 words a row, little-endian. */
  readonly times: Int32Array;
  /** The double columns, in PRICE_COLUMNS' order. */
  readonly prices: readonly Float64Array[];
  /** up bids, up asks, down bids, down asks; none without books. */
  readonly sides: readonly SideColumns[];
}

/** The rows of one record batch (of at most `capacity` rows), column by column in typed arrays. */
export class SnapshotColumns {
  readonly books: boolean;
  /** Rows the batch holds at most. */
  readonly capacity: number;
  length = 0;
  /** Rows of a market are consecutive: each slug once, with the row its run starts at. */
  private runs: { slug: string; from: number }[] = [];
  /** Times as int64 (two int32 words a row, little-endian), written without a BigInt a row. */
  private readonly times: Int32Array;
  private readonly coin: Float64Array;
  private readonly up: Float64Array;
  private readonly down: Float64Array;
  /** up bids, up asks, down bids, down asks. */
  readonly sides = [new SideColumns(), new SideColumns(), new SideColumns(), new SideColumns()];

  constructor(books: boolean, capacity: number) {
    this.books = books;
    this.capacity = capacity;
    this.times = new Int32Array(2 * capacity);
    this.coin = new Float64Array(capacity);
    this.up = new Float64Array(capacity);
    this.down = new Float64Array(capacity);
  }

  /** Empties the batch for its next rows, keeping its arrays. */
  clear(): void {
    this.length = 0;
    this.runs = [];
    for (const side of this.sides) side.clear();
  }

  add(slug: string, r: SnapshotRow): void {
    const i = this.length++;
    if (this.runs.at(-1)?.slug !== slug) this.runs.push({ slug, from: i });
    // Times are below 2^53: the low word is the remainder by 2^32, the high word the quotient.
    this.times[2 * i] = r.time % 4294967296;
    this.times[2 * i + 1] = Math.floor(r.time / 4294967296);
    this.coin[i] = r.coinPrice;
    this.up[i] = r.priceUp;
    this.down[i] = r.priceDown;
    if (this.books) appendBookColumns(r.books, this.sides);
  }

  /** The rows as they are held, for a writer of its own format (src/archive/parquet/snapshot-writer.ts). */
  view(): SnapshotColumnsView {
    const n = this.length;
    return {
      length: n,
      runs: this.runs,
      times: this.times.subarray(0, 2 * n),
      prices: [this.coin, this.up, this.down].map((column) => column.subarray(0, n)),
      sides: this.books ? this.sides : [],
    };
  }

  /** The slug column as Arrow's UTF-8 data: each run's bytes repeated, with their offsets. */
  private slugData() {
    const offsets = new Int32Array(this.length + 1);
    const encoded = this.runs.map((run) => encoder.encode(run.slug));
    let bytes = 0;
    this.runs.forEach((run, k) => {
      const end = this.runs[k + 1]?.from ?? this.length;
      bytes += (end - run.from) * encoded[k].length;
    });
    const data = new Uint8Array(bytes);
    let p = 0;
    this.runs.forEach((run, k) => {
      const end = this.runs[k + 1]?.from ?? this.length;
      for (let i = run.from; i < end; i++) {
        data.set(encoded[k], p);
        p += encoded[k].length;
        offsets[i + 1] = p;
      }
    });
    return arrow.makeData({
      type: new arrow.Utf8(),
      length: this.length,
      nullCount: 0,
      valueOffsets: offsets,
      data,
    });
  }

  /** The rows as an Arrow table, the columns named and typed as above. */
  toArrow(): arrow.Table {
    const n = this.length;
    const times = new BigInt64Array(this.times.buffer, 0, n);
    const columns: Record<string, arrow.Vector> = {
      slug: arrow.makeVector(this.slugData()),
      time: arrow.makeVector(arrow.makeData({ type: TIME, length: n, data: times })),
    };
    const { prices } = this.view();
    PRICE_COLUMNS.forEach((name, k) => (columns[name] = arrow.makeVector(prices[k])));
    if (this.books) {
      columns.orderbook_up = arrow.makeVector(bookData(this.sides[0], this.sides[1], n));
      columns.orderbook_down = arrow.makeVector(bookData(this.sides[2], this.sides[3], n));
    }
    return new arrow.Table(columns);
  }
}
