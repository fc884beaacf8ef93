import { decimalsOf, type Level, mirrors, type OrderBook, pow10, sortBestFirst } from "../domain/book.ts";

/**
 * Compact encoding of a snapshot's two order books (DESIGN 5): integer ticks and sizes as varints,
 * prices delta-coded from the best level, and the Down book left out when it is the exact mirror of
 * the Up book (as it is on Polymarket, where both tokens share one matching engine).
 *
 *   byte 0   flags: bit 0 = Down book is the mirror of the Up book
 *   byte 1   price decimals (low nibble), size decimals (high nibble)
 *   then the sides up.bids, up.asks[, down.bids, down.asks], each:
 *     varint count, then per level: varint price step from the previous level (the first level's
 *     step is from 0), varint size in units of 10^-size_decimals
 *
 * Steps are non-negative because levels are stored best first (bids down, asks up in price).
 */

const FLAG_MIRRORED = 1;
const MAX_PRICE_DECIMALS = 8;
const MAX_SIZE_DECIMALS = 10;

export class BookEncodingError extends Error {}

function maxDecimals(books: readonly OrderBook[], key: "price" | "size", max: number): number {
  let d = 0;
  // Plain loops over the four sides: this runs for every snapshot written.
  for (const b of books)
    for (const side of [b.bids, b.asks])
      for (let i = 0; i < side.length; i++) {
        const v = side[i][key];
        if (!Number.isFinite(v) || v < 0) throw new BookEncodingError(`invalid ${key} ${v}`);
        const scale = pow10(d);
        if (Math.round(v * scale) / scale === v) continue; // no more decimals than found already
        const ld = decimalsOf(v, max);
        if (ld < 0) throw new BookEncodingError(`${key} ${v} has more than ${max} decimals`);
        if (ld > d) d = ld;
      }
  return d;
}

class ByteWriter {
  buf = new Uint8Array(256);
  len = 0;
  byte(v: number): void {
    if (this.len === this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.len++] = v;
  }
  /** Unsigned LEB128 for integers up to 2^53 (arithmetic, since bit operators truncate to 32 bits). */
  varint(v: number): void {
    while (v >= 128) {
      this.byte((v % 128) | 128);
      v = Math.floor(v / 128);
    }
    this.byte(v);
  }
}

function writeSide(
  w: ByteWriter,
  levels: Level[],
  descending: boolean,
  pScale: number,
  sScale: number,
): void {
  w.varint(levels.length);
  let prev = 0;
  for (let i = 0; i < levels.length; i++) {
    const p = Math.round(levels[i].price * pScale);
    const step = i === 0 ? p : descending ? prev - p : p - prev;
    w.varint(step);
    w.varint(Math.round(levels[i].size * sScale));
    prev = p;
  }
}

export function encodeBooks(up: OrderBook, down: OrderBook): Uint8Array {
  const upSorted = sortBestFirst(up);
  const downSorted = sortBestFirst(down);
  const pd = maxDecimals([upSorted, downSorted], "price", MAX_PRICE_DECIMALS);
  const sd = maxDecimals([upSorted, downSorted], "size", MAX_SIZE_DECIMALS);
  const mirrored = mirrors(upSorted, downSorted);
  const w = new ByteWriter();
  w.byte(mirrored ? FLAG_MIRRORED : 0);
  w.byte(pd | (sd << 4));
  const ps = pow10(pd);
  const ss = pow10(sd);
  writeSide(w, upSorted.bids, true, ps, ss);
  writeSide(w, upSorted.asks, false, ps, ss);
  if (!mirrored) {
    writeSide(w, downSorted.bids, true, ps, ss);
    writeSide(w, downSorted.asks, false, ps, ss);
  }
  return w.buf.slice(0, w.len);
}

/**
 * Reads the blob side by side, giving integer price ticks and size units; the JSON writer
 * (book-json.ts) and the columns (book-columns.ts) read the blob through it without decoding books.
 */
export class BookReader {
  pos = 2;
  readonly pd: number;
  readonly sd: number;
  readonly mirrored: boolean;
  readonly buf: Uint8Array;
  constructor(buf: Uint8Array) {
    this.buf = buf;
    this.mirrored = (buf[0] & FLAG_MIRRORED) !== 0;
    this.pd = buf[1] & 15;
    this.sd = buf[1] >> 4;
  }
  varint(): number {
    const buf = this.buf;
    let p = this.pos;
    let b = buf[p++];
    let result = b & 127;
    // Most price steps fit one byte; longer varints go on seven bits at a time.
    for (let mul = 128; b >= 128; mul *= 128) {
      b = buf[p++];
      result += (b & 127) * mul;
    }
    this.pos = p;
    return result;
  }
  side(descending: boolean): { ticks: number[]; sizes: number[] } {
    const n = this.varint();
    const ticks = new Array<number>(n);
    const sizes = new Array<number>(n);
    let prev = 0;
    for (let i = 0; i < n; i++) {
      const step = this.varint();
      const p = i === 0 ? step : descending ? prev - step : prev + step;
      ticks[i] = p;
      sizes[i] = this.varint();
      prev = p;
    }
    return { ticks, sizes };
  }
}

interface RawBook {
  bids: { ticks: number[]; sizes: number[] };
  asks: { ticks: number[]; sizes: number[] };
}

function readRaw(buf: Uint8Array): { up: RawBook; down: RawBook; pd: number; sd: number } {
  const r = new BookReader(buf);
  const up: RawBook = { bids: r.side(true), asks: r.side(false) };
  let down: RawBook;
  if (r.mirrored) {
    const one = pow10(r.pd);
    const flip = (s: { ticks: number[]; sizes: number[] }) => ({
      ticks: s.ticks.map((t) => one - t),
      sizes: s.sizes,
    });
    down = { bids: flip(up.asks), asks: flip(up.bids) };
  } else {
    down = { bids: r.side(true), asks: r.side(false) };
  }
  return { up, down, pd: r.pd, sd: r.sd };
}

function toLevels(s: { ticks: number[]; sizes: number[] }, ps: number, ss: number): Level[] {
  return s.ticks.map((t, i) => ({ price: t / ps, size: s.sizes[i] / ss }));
}

/**
 * One side's best price, the very double decodeBooks gives as its first level's (null: the side is
 * empty), read from the blob without decoding the books: a backtest's best bid and ask features read
 * it every second, and decoding four sides of levels for one number cost more than the replay's reading.
 */
export function bestPrice(buf: Uint8Array, token: "up" | "down", side: "bids" | "asks"): number | null {
  const r = new BookReader(buf);
  const ps = pow10(r.pd);
  // Stored order: up bids, up asks, then down bids, down asks, unless the Down book is the mirror:
  // then its bids are the Up asks at 1 - p, and its asks the Up bids at 1 - p.
  let index = (token === "up" ? 0 : 2) + (side === "bids" ? 0 : 1);
  let flipOne = 0;
  if (index >= 2 && r.mirrored) {
    index = 3 - index;
    flipOne = ps;
  }
  for (let i = 0; i < index; i++) {
    const levels = r.varint();
    for (let k = 0; k < 2 * levels; k++) r.varint();
  }
  if (r.varint() === 0) return null;
  const tick = r.varint();
  return (flipOne > 0 ? flipOne - tick : tick) / ps;
}

export function decodeBooks(buf: Uint8Array): { up: OrderBook; down: OrderBook } {
  const { up, down, pd, sd } = readRaw(buf);
  const ps = pow10(pd);
  const ss = pow10(sd);
  return {
    up: { bids: toLevels(up.bids, ps, ss), asks: toLevels(up.asks, ps, ss) },
    down: { bids: toLevels(down.bids, ps, ss), asks: toLevels(down.asks, ps, ss) },
  };
}
