import {
  booksEqual,
  decimalsOf,
  type Level,
  mirrorBook,
  type OrderBook,
  pow10,
  sortBestFirst,
} from "./book.ts";

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

function maxDecimals(levels: Iterable<Level>, key: "price" | "size", max: number): number {
  let d = 0;
  for (const l of levels) {
    if (!Number.isFinite(l[key]) || l[key] < 0) throw new BookEncodingError(`invalid ${key} ${l[key]}`);
    const ld = decimalsOf(l[key], max);
    if (ld < 0) throw new BookEncodingError(`${key} ${l[key]} has more than ${max} decimals`);
    if (ld > d) d = ld;
  }
  return d;
}

function* allLevels(books: OrderBook[]): Iterable<Level> {
  for (const b of books) {
    yield* b.bids;
    yield* b.asks;
  }
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
  const pd = maxDecimals(allLevels([upSorted, downSorted]), "price", MAX_PRICE_DECIMALS);
  const sd = maxDecimals(allLevels([upSorted, downSorted]), "size", MAX_SIZE_DECIMALS);
  const mirrored = booksEqual(mirrorBook(upSorted), downSorted);
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

/** Reads the blob side by side, giving integer price ticks and size units to a visitor. */
class BookReader {
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
    let result = 0;
    let mul = 1;
    for (;;) {
      const b = this.buf[this.pos++];
      result += (b & 127) * mul;
      if (b < 128) return result;
      mul *= 128;
    }
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

export function decodeBooks(buf: Uint8Array): { up: OrderBook; down: OrderBook } {
  const { up, down, pd, sd } = readRaw(buf);
  const ps = pow10(pd);
  const ss = pow10(sd);
  return {
    up: { bids: toLevels(up.bids, ps, ss), asks: toLevels(up.asks, ps, ss) },
    down: { bids: toLevels(down.bids, ps, ss), asks: toLevels(down.asks, ps, ss) },
  };
}

/**
 * A growable byte buffer that JSON text is written into directly, so that a page of snapshots
 * becomes bytes without building (and then UTF-8 encoding) one long string. Meant to be reused:
 * `reset()` and write, then copy the bytes out with `toBuffer()`.
 */
export class JsonBytes {
  buf: Uint8Array;
  pos = 0;
  private static readonly encoder = new TextEncoder();

  constructor(capacity = 1 << 16) {
    this.buf = new Uint8Array(capacity);
  }

  reset(): void {
    this.pos = 0;
  }

  /** Makes room for `n` more bytes; writers that index `buf` themselves call it first. */
  reserve(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n);
  }

  private grow(n: number): void {
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  byte(b: number): void {
    if (this.pos === this.buf.length) this.grow(1);
    this.buf[this.pos++] = b;
  }

  /** Text the caller knows is ASCII (JSON punctuation, numbers, ISO times). */
  ascii(s: string): void {
    this.reserve(s.length);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < s.length; i++) buf[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** Any text, as UTF-8. */
  utf8(s: string): void {
    this.reserve(s.length * 3);
    this.pos += JsonBytes.encoder.encodeInto(s, this.buf.subarray(this.pos)).written;
  }

  /** A copy of the bytes written, exactly as long as they are. */
  toBuffer(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }

  /** Bytes [start, end) as a string; the text written is ASCII, so latin1 decoding is exact. */
  text(start = 0, end = this.pos): string {
    return Buffer.from(this.buf.buffer, this.buf.byteOffset + start, end - start).toString("latin1");
  }
}

// Price texts repeat across every snapshot (at most 10^decimals of them), so each level's opening,
// `{"price":0.53,"size":`, is made once per tick as bytes.
const CACHED_TICKS = 100_000;
const levelHeadCache: Uint8Array[][] = [];

function levelHeadText(tick: number, pd: number): string {
  return `{"price":${tick / pow10(pd)},"size":`;
}

function levelHead(tick: number, pd: number): Uint8Array {
  let cache = levelHeadCache[pd];
  if (!cache) {
    cache = [];
    levelHeadCache[pd] = cache;
  }
  if (tick >= 0 && tick <= CACHED_TICKS) {
    let head = cache[tick];
    if (head === undefined) {
      head = Buffer.from(levelHeadText(tick, pd), "latin1");
      cache[tick] = head;
    }
    return head;
  }
  return Buffer.from(levelHeadText(tick, pd), "latin1");
}

const digitScratch = new Uint8Array(24);
/** Sizes below this many units (per size decimals) print in exponent form; see writeUnits. */
const MIN_FIXED_UNITS = [1, 1, 1, 1, 1, 1, 1, 10, 100, 1_000, 10_000];

/**
 * Writes `units / 10^sd` as JavaScript prints that number, from the integer: for an integer below
 * 10^15 (at most 15 significant digits) the shortest text that reads back as the double is the
 * decimal itself, so printing its digits gives the same bytes as String(units / 10^sd). Values that
 * JavaScript prints in exponent form (below 1e-6) or with more digits go through String().
 * The caller reserves 32 bytes.
 */
function writeUnits(w: JsonBytes, units: number, sd: number): void {
  const buf = w.buf;
  let p = w.pos;
  if (units === 0) {
    buf[p] = 48;
    w.pos = p + 1;
    return;
  }
  if (!(units < 1e15) || units < MIN_FIXED_UNITS[sd] || !Number.isInteger(units)) {
    w.ascii(String(units / pow10(sd)));
    return;
  }
  const d = digitScratch;
  let n = 0;
  let v = units;
  while (v > 0) {
    const q = Math.floor(v / 10);
    d[n++] = v - q * 10;
    v = q;
  }
  // Integer part: digits n-1 .. sd (least significant first in d), or 0.
  if (n > sd) for (let k = n - 1; k >= sd; k--) buf[p++] = 48 + d[k];
  else buf[p++] = 48;
  // Fraction: digits sd-1 .. z, where digits below z are trailing zeros.
  let z = 0;
  while (z < sd && (z >= n || d[z] === 0)) z++;
  if (z < sd) {
    buf[p++] = 46;
    for (let k = sd - 1; k >= z; k--) buf[p++] = k < n ? 48 + d[k] : 48;
  }
  w.pos = p;
}

/**
 * Writes one side as a JSON array of levels straight from the blob, from `p` (at its count);
 * returns the blob offset after the side. `flipOne` > 0 writes each price as flipOne - tick (the
 * mirror of the other token's side).
 */
function writeSideJson(
  w: JsonBytes,
  blob: Uint8Array,
  p: number,
  descending: boolean,
  flipOne: number,
  pd: number,
  sd: number,
): number {
  let n = 0;
  let mul = 1;
  let c: number;
  do {
    c = blob[p++];
    n += (c & 127) * mul;
    mul *= 128;
  } while (c >= 128);
  w.byte(91); // [
  let prev = 0;
  for (let i = 0; i < n; i++) {
    let step = 0;
    mul = 1;
    do {
      c = blob[p++];
      step += (c & 127) * mul;
      mul *= 128;
    } while (c >= 128);
    let units = 0;
    mul = 1;
    do {
      c = blob[p++];
      units += (c & 127) * mul;
      mul *= 128;
    } while (c >= 128);
    const tick = i === 0 ? step : descending ? prev - step : prev + step;
    prev = tick;
    const head = levelHead(flipOne > 0 ? flipOne - tick : tick, pd);
    w.reserve(head.length + 34);
    const buf = w.buf;
    let q = w.pos;
    if (i > 0) buf[q++] = 44; // ,
    for (let k = 0; k < head.length; k++) buf[q++] = head[k];
    w.pos = q;
    writeUnits(w, units, sd);
    w.buf[w.pos++] = 125; // }
  }
  w.byte(93); // ]
  if (p > blob.length) throw new BookEncodingError("truncated order book blob");
  return p;
}

/**
 * Writes the Up book as JSON, then `between`, then the Down book, straight from the blob: the same
 * bytes as JSON.stringify of decodeBooks()'s books, without building them. Returns the offset in
 * `w` where the Up book ends (where `between` starts).
 */
export function writeBooksJson(w: JsonBytes, blob: Uint8Array, between: string): number {
  const mirrored = (blob[0] & FLAG_MIRRORED) !== 0;
  const pd = blob[1] & 15;
  const sd = blob[1] >> 4;
  w.ascii('{"bids":');
  const upAsks = writeSideJson(w, blob, 2, true, 0, pd, sd);
  w.ascii(',"asks":');
  const upEnd = writeSideJson(w, blob, upAsks, false, 0, pd, sd);
  w.byte(125);
  const mid = w.pos;
  w.ascii(between);
  w.ascii('{"bids":');
  if (mirrored) {
    // Down bids are the Up asks at 1 - p, Down asks the Up bids at 1 - p, in the same order.
    const one = pow10(pd);
    writeSideJson(w, blob, upAsks, false, one, pd, sd);
    w.ascii(',"asks":');
    writeSideJson(w, blob, 2, true, one, pd, sd);
  } else {
    const downAsks = writeSideJson(w, blob, upEnd, true, 0, pd, sd);
    w.ascii(',"asks":');
    writeSideJson(w, blob, downAsks, false, 0, pd, sd);
  }
  w.byte(125);
  return mid;
}

const booksScratch = new JsonBytes(1 << 14);

/**
 * The two books as JSON text, straight from the blob; the same bytes as JSON.stringify of
 * decodeBooks()'s books, without building the objects.
 */
export function renderBooksJson(buf: Uint8Array): { up: string; down: string } {
  const w = booksScratch;
  w.reset();
  const mid = writeBooksJson(w, buf, "");
  return { up: w.text(0, mid), down: w.text(mid, w.pos) };
}
