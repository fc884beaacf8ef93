import * as arrow from "apache-arrow";
import { pow10 } from "../domain/book.ts";
import { BookReader } from "./book-codec.ts";

/**
 * Books as columns (the Parquet export's): each side's levels of many snapshots in typed arrays, read
 * straight from the compact encoding (book-codec.ts), and their Arrow type.
 */

/**
 * Levels of one side of many snapshots as columns (a Parquet export's list columns): prices and sizes
 * in growing typed arrays, and where each snapshot's levels end.
 */
export class SideColumns {
  prices = new Float64Array(4096);
  sizes = new Float64Array(4096);
  length = 0;
  /** ends[i] is the end of snapshot i's levels, after a leading 0. */
  ends = new Int32Array(1024);
  rows = 0;

  /** Makes room for `n` more levels, so that they can be written straight into the arrays. */
  reserve(n: number): void {
    if (this.length + n <= this.prices.length) return;
    let capacity = this.prices.length * 2;
    while (capacity < this.length + n) capacity *= 2;
    const prices = new Float64Array(capacity);
    const sizes = new Float64Array(capacity);
    prices.set(this.prices.subarray(0, this.length));
    sizes.set(this.sizes.subarray(0, this.length));
    this.prices = prices;
    this.sizes = sizes;
  }

  /** Closes the current snapshot's list. */
  endRow(): void {
    if (this.rows + 2 > this.ends.length) {
      const ends = new Int32Array(this.ends.length * 2);
      ends.set(this.ends);
      this.ends = ends;
    }
    this.ends[++this.rows] = this.length;
  }

  /** Empties the columns, keeping their arrays for the next rows. */
  clear(): void {
    this.length = 0;
    this.rows = 0;
  }

  /** The offsets Arrow wants: rows + 1 of them, starting at 0. */
  get offsets(): Int32Array {
    return this.ends.subarray(0, this.rows + 1);
  }
}

/** Reads one side at the reader's position into columns, as decodeBooks gives its levels. */
function sideInto(
  r: BookReader,
  descending: boolean,
  out: SideColumns,
  ps: number,
  ss: number,
  flipOne: number,
) {
  const n = r.varint();
  // Room for the side's levels once, then written straight in: a check a level cost about a sixth of this.
  out.reserve(n);
  const { prices, sizes } = out;
  let k = out.length;
  let prev = 0;
  for (let i = 0; i < n; i++) {
    const step = r.varint();
    const tick = i === 0 ? step : descending ? prev - step : prev + step;
    prev = tick;
    prices[k] = (flipOne > 0 ? flipOne - tick : tick) / ps;
    sizes[k++] = r.varint() / ss;
  }
  out.length = k;
  out.endRow();
}

/**
 * Appends a snapshot's four sides (up bids, up asks, down bids, down asks) to columns, best first,
 * with the very doubles decodeBooks gives (and the JSON prints), straight from the blob; no books
 * appends four empty lists.
 */
export function appendBookColumns(blob: Uint8Array | null, sides: readonly SideColumns[]): void {
  if (blob === null) {
    for (const side of sides) side.endRow();
    return;
  }
  const r = new BookReader(blob);
  const ps = pow10(r.pd);
  const ss = pow10(r.sd);
  sideInto(r, true, sides[0], ps, ss, 0);
  const upAsks = r.pos;
  sideInto(r, false, sides[1], ps, ss, 0);
  if (r.mirrored) {
    // Down bids are the Up asks at 1 - p, Down asks the Up bids at 1 - p, in the same order.
    const one = pow10(r.pd);
    r.pos = upAsks;
    sideInto(r, false, sides[2], ps, ss, one);
    r.pos = 2;
    sideInto(r, true, sides[3], ps, ss, one);
  } else {
    sideInto(r, true, sides[2], ps, ss, 0);
    sideInto(r, false, sides[3], ps, ss, 0);
  }
}

const f64 = () => new arrow.Float64();
const LEVEL = new arrow.Struct([
  new arrow.Field("price", f64(), false),
  new arrow.Field("size", f64(), false),
]);
const LEVELS = new arrow.List(new arrow.Field("element", LEVEL, false));

/** A book's Arrow type: struct<bids: list<struct<price, size>>, asks: list<struct<price, size>>>. */
const BOOK_TYPE = new arrow.Struct([
  new arrow.Field("bids", LEVELS, false),
  new arrow.Field("asks", LEVELS, false),
]);

function levelsData(side: SideColumns, length: number) {
  const child = arrow.makeData({
    type: LEVEL,
    length: side.length,
    nullCount: 0,
    children: [
      arrow.makeData({ type: f64(), data: side.prices.subarray(0, side.length) }),
      arrow.makeData({ type: f64(), data: side.sizes.subarray(0, side.length) }),
    ],
  });
  return arrow.makeData({ type: LEVELS, length, nullCount: 0, valueOffsets: side.offsets, child });
}

/** One book column (BOOK_TYPE) of `length` rows from its bids' and asks' columns. */
export function bookData(bids: SideColumns, asks: SideColumns, length: number) {
  return arrow.makeData({
    type: BOOK_TYPE,
    length,
    nullCount: 0,
    children: [levelsData(bids, length), levelsData(asks, length)],
  });
}
