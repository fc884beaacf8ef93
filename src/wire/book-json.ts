import { pow10 } from "../domain/book.ts";
import { BookEncodingError, BookReader } from "./book-codec.ts";
import { wasmBookWriter } from "./book-json-wasm.ts";
import { JsonBytes } from "./json-bytes.ts";

/**
 * Books as JSON, written straight from their compact encoding (book-codec.ts): the same bytes as
 * JSON.stringify of decodeBooks()'s books, without building them. What the snapshot route sends with
 * include_orderbook, a level's price text looked up by tick, its size printed from integer units.
 * The books Polymarket sends (sizes of two decimals, prices of at most four) are written by the
 * WebAssembly of book-json.wat (book-json-wasm.ts); this JavaScript writes the rest, and is the
 * reference the WebAssembly is tested against byte for byte.
 */

// Price texts repeat across every snapshot (at most 10^decimals of them), so each level's opening,
// `{"price":0.53,"size":`, is made once per tick as bytes.
const CACHED_TICKS = 100_000;
const levelHeadCache: Uint8Array[][] = [];

function levelHeadsFor(pd: number): Uint8Array[] {
  let cache = levelHeadCache[pd];
  if (!cache) {
    cache = [];
    levelHeadCache[pd] = cache;
  }
  return cache;
}

function levelHead(cache: Uint8Array[], tick: number, pd: number): Uint8Array {
  if (tick >= 0 && tick <= CACHED_TICKS) {
    let head = cache[tick];
    if (head === undefined) {
      head = Buffer.from(`{"price":${tick / pow10(pd)},"size":`, "latin1");
      cache[tick] = head;
    }
    return head;
  }
  return Buffer.from(`{"price":${tick / pow10(pd)},"size":`, "latin1");
}

/** "00" to "99" as bytes, for writing integers two digits at a time. */
const DIGIT_PAIRS = new Uint8Array(200);
for (let i = 0; i < 100; i++) {
  DIGIT_PAIRS[2 * i] = 48 + Math.floor(i / 10);
  DIGIT_PAIRS[2 * i + 1] = 48 + (i % 10);
}

/** writeUint for 0..9999 (most share sizes), by digit pairs without working out the length first. */
function writeSmallUint(buf: Uint8Array, p: number, v: number): number {
  if (v >= 100) {
    const hi = (v / 100) | 0;
    if (hi >= 10) buf[p++] = 48 + ((hi / 10) | 0);
    buf[p++] = 48 + (hi % 10);
    const lo = (v - hi * 100) << 1;
    buf[p++] = DIGIT_PAIRS[lo];
    buf[p++] = DIGIT_PAIRS[lo + 1];
  } else if (v >= 10) {
    buf[p++] = DIGIT_PAIRS[v << 1];
    buf[p++] = DIGIT_PAIRS[(v << 1) + 1];
  } else {
    buf[p++] = 48 + v;
  }
  return p;
}

/** Writes a non-negative int32 in decimal at `p`; returns the offset after it. */
function writeUint(buf: Uint8Array, p: number, v: number): number {
  if (v < 10) {
    buf[p] = 48 + v;
    return p + 1;
  }
  const len =
    v < 100
      ? 2
      : v < 1e3
        ? 3
        : v < 1e4
          ? 4
          : v < 1e5
            ? 5
            : v < 1e6
              ? 6
              : v < 1e7
                ? 7
                : v < 1e8
                  ? 8
                  : v < 1e9
                    ? 9
                    : 10;
  let e = p + len;
  while (v >= 100) {
    const q = (v / 100) | 0;
    const r = (v - q * 100) << 1;
    buf[--e] = DIGIT_PAIRS[r + 1];
    buf[--e] = DIGIT_PAIRS[r];
    v = q;
  }
  // The leading one or two digits, at p.
  if (v >= 10) {
    buf[p] = DIGIT_PAIRS[2 * v];
    buf[p + 1] = DIGIT_PAIRS[2 * v + 1];
  } else {
    buf[p] = 48 + v;
  }
  return p + len;
}

/** Per size decimals, the fewest units JavaScript prints without an exponent (1e-6 and up). */
const MIN_FIXED_UNITS = Array.from({ length: 16 }, (_, sd) => (sd <= 6 ? 1 : 10 ** (sd - 6)));

/**
 * Writes `units / 10^sd` at `p` exactly as JavaScript prints that number (String()), from the
 * integer; returns the offset after it. For an integer of at most 15 significant digits, the
 * shortest text that reads back as the double units / 10^sd is the decimal itself, so printing the
 * integer's digits with the point put back and trailing zeros dropped gives the same bytes. This fast
 * path takes units up to 2^31 - 1 and up to 9 decimals, at 1e-6 and above (below, JavaScript uses an
 * exponent); anything else goes through String() (at most 25 characters).
 */
function writeUnits(buf: Uint8Array, p: number, units: number, sd: number): number {
  if (sd === 2 && units <= 0x7fffffff) {
    // Share sizes on Polymarket have two decimals: the common case, without a division by a variable.
    const whole = (units / 100) | 0;
    const frac = units - whole * 100;
    p = whole < 10_000 ? writeSmallUint(buf, p, whole) : writeUint(buf, p, whole);
    if (frac !== 0) {
      buf[p++] = 46; // .
      const tens = (frac / 10) | 0;
      buf[p++] = 48 + tens;
      if (frac !== tens * 10) buf[p++] = 48 + (frac - tens * 10);
    }
    return p;
  }
  if (
    !(units <= 0x7fffffff) ||
    sd > 9 ||
    (units < MIN_FIXED_UNITS[sd] && units !== 0) ||
    !Number.isInteger(units)
  ) {
    const text = String(units / pow10(sd));
    for (let i = 0; i < text.length; i++) buf[p++] = text.charCodeAt(i);
    return p;
  }
  const scale = pow10(sd);
  const whole = (units / scale) | 0;
  let frac = units - whole * scale;
  p = writeUint(buf, p, whole);
  if (frac !== 0) {
    let digits = sd;
    while (frac % 10 === 0) {
      frac = (frac / 10) | 0;
      digits--;
    }
    buf[p++] = 46;
    p += digits;
    for (let e = p; e > p - digits;) {
      const q = (frac / 10) | 0;
      buf[--e] = 48 + (frac - q * 10);
      frac = q;
    }
  }
  return p;
}

/**
 * Bytes one level can take: a comma, `{"price":` and `,"size":` (17), two numbers of at most 25
 * characters each, and the closing brace.
 */
const MAX_LEVEL_BYTES = 80;

/** Little-endian word of up to four ASCII bytes. */
function word(text: string): number {
  let v = 0;
  for (let i = text.length - 1; i >= 0; i--) v = v * 256 + text.charCodeAt(i);
  return v;
}

/**
 * Level texts as little-endian 32-bit words, written four bytes a store. A word may carry bytes past
 * the text's end; the writer advances by the text's length, so the next write covers them (writers
 * reserve room for the whole words).
 */
const HEAD_WORDS = 6;
interface HeadTable {
  /** Per tick, HEAD_WORDS words of `,{"price":P,"size":`. */
  words: Uint32Array;
  /** Per tick, the text's length; 0 for a text longer than the words (written the slow way). */
  lengths: Uint8Array;
}
const headTables: HeadTable[] = [];
const NO_HEAD_TABLE: HeadTable = { words: new Uint32Array(0), lengths: new Uint8Array(0) };

/** Prices of up to this many decimals have a table (10^decimals + 1 entries). */
const MAX_TABLE_DECIMALS = 4;

function headTableFor(pd: number): HeadTable | null {
  if (pd > MAX_TABLE_DECIMALS) return null;
  let t = headTables[pd];
  if (!t) {
    const ticks = pow10(pd) + 1;
    t = { words: new Uint32Array(ticks * HEAD_WORDS), lengths: new Uint8Array(ticks) };
    for (let tick = 0; tick < ticks; tick++) {
      const text = `,{"price":${tick / pow10(pd)},"size":`;
      if (text.length > HEAD_WORDS * 4) continue;
      for (let k = 0; k < HEAD_WORDS; k++)
        t.words[tick * HEAD_WORDS + k] = word(text.slice(4 * k, 4 * k + 4));
      t.lengths[tick] = text.length;
    }
    headTables[pd] = t;
  }
  return t;
}

/** 0..9999 in decimal, one word each, and their lengths. */
const WHOLE_WORDS = new Uint32Array(10_000);
const WHOLE_LENGTHS = new Uint8Array(10_000);
for (let i = 0; i < 10_000; i++) {
  WHOLE_WORDS[i] = word(String(i));
  WHOLE_LENGTHS[i] = String(i).length;
}
/** Hundredths 0..99 with the level's closing brace: `}`, `.5}`, `.05}`, `.25}`. */
const CENTS_WORDS = new Uint32Array(100);
const CENTS_LENGTHS = new Uint8Array(100);
for (let i = 0; i < 100; i++) {
  const text = i === 0 ? "}" : `${String(i / 100).slice(1)}}`;
  CENTS_WORDS[i] = word(text);
  CENTS_LENGTHS[i] = text.length;
}

/**
 * Writes the side at the reader's position as a JSON array of levels, straight from the blob, and
 * leaves the reader after it. `flipOne` > 0 writes each price as flipOne - tick (the mirror of the
 * other token's side).
 */
function writeSideJson(w: JsonBytes, r: BookReader, descending: boolean, flipOne: number): void {
  const n = r.varint();
  // Every level takes at least two bytes of the blob; a larger count means a truncated blob.
  if (!(n <= (r.buf.length - r.pos) / 2)) throw new BookEncodingError("truncated order book blob");
  w.reserve(n * MAX_LEVEL_BYTES + 8);
  const buf = w.buf;
  const view = w.view;
  const start = w.pos;
  let q = start;
  const pd = r.pd;
  const sd = r.sd;
  const table = headTableFor(pd) ?? NO_HEAD_TABLE;
  const words = table.words;
  const lengths = table.lengths;
  const last = lengths.length - 1;
  const heads = levelHeadsFor(pd);
  // The blob's varints are read here rather than through r.varint(): one byte is the common case.
  const src = r.buf;
  let p = r.pos;
  let prev = 0;
  for (let i = 0; i < n; i++) {
    let b = src[p++];
    let step = b & 127;
    for (let mul = 128; b >= 128; mul *= 128) {
      b = src[p++];
      step += (b & 127) * mul;
    }
    b = src[p++];
    let units = b & 127;
    for (let mul = 128; b >= 128; mul *= 128) {
      b = src[p++];
      units += (b & 127) * mul;
    }
    const tick = i === 0 ? step : descending ? prev - step : prev + step;
    prev = tick;
    const shown = flipOne > 0 ? flipOne - tick : tick;
    // Each level starts with its comma; the first one's becomes the array's `[`.
    const len = shown >= 0 && shown <= last ? lengths[shown] : 0;
    if (len !== 0) {
      const k = shown * HEAD_WORDS;
      view.setUint32(q, words[k], true);
      view.setUint32(q + 4, words[k + 1], true);
      view.setUint32(q + 8, words[k + 2], true);
      view.setUint32(q + 12, words[k + 3], true);
      view.setUint32(q + 16, words[k + 4], true);
      view.setUint32(q + 20, words[k + 5], true);
      q += len;
    } else {
      const head = heads[shown] ?? levelHead(heads, shown, pd);
      buf[q++] = 44;
      buf.set(head, q);
      q += head.length;
    }
    if (sd === 2 && units < 1_000_000) {
      const whole = (units / 100) | 0;
      const cents = units - whole * 100;
      view.setUint32(q, WHOLE_WORDS[whole], true);
      q += WHOLE_LENGTHS[whole];
      view.setUint32(q, CENTS_WORDS[cents], true);
      q += CENTS_LENGTHS[cents];
    } else {
      q = writeUnits(buf, q, units, sd);
      buf[q++] = 125; // }
    }
  }
  r.pos = p;
  buf[start] = 91; // [
  if (n === 0) q++;
  buf[q++] = 93; // ]
  w.pos = q;
  if (r.pos > r.buf.length) throw new BookEncodingError("truncated order book blob");
}

const BIDS_OPEN = Uint8Array.from('{"bids":', (c) => c.charCodeAt(0));
const ASKS_KEY = Uint8Array.from(',"asks":', (c) => c.charCodeAt(0));

/**
 * Writes the Up book as JSON, then `between` (ASCII bytes), then the Down book, straight from the
 * blob: the same bytes as JSON.stringify of decodeBooks()'s books, without building them. Returns the
 * offset in `w` where the Up book ends (where `between` starts).
 */
export function writeBooksJson(w: JsonBytes, blob: Uint8Array, between: Uint8Array): number {
  return wasmBookWriter()?.write(w, blob, between) ?? writeBooksJsonScript(w, blob, between);
}

/** writeBooksJson in JavaScript alone: for the books the WebAssembly leaves, and to test it against. */
export function writeBooksJsonScript(w: JsonBytes, blob: Uint8Array, between: Uint8Array): number {
  const r = new BookReader(blob);
  w.bytes(BIDS_OPEN);
  writeSideJson(w, r, true, 0);
  const upAsks = r.pos;
  w.bytes(ASKS_KEY);
  writeSideJson(w, r, false, 0);
  w.byte(125);
  const mid = w.pos;
  w.bytes(between);
  w.bytes(BIDS_OPEN);
  if (r.mirrored) {
    // Down bids are the Up asks at 1 - p, Down asks the Up bids at 1 - p, in the same order.
    const one = pow10(r.pd);
    r.pos = upAsks;
    writeSideJson(w, r, false, one);
    w.bytes(ASKS_KEY);
    r.pos = 2;
    writeSideJson(w, r, true, one);
  } else {
    writeSideJson(w, r, true, 0);
    w.bytes(ASKS_KEY);
    writeSideJson(w, r, false, 0);
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
  const mid = writeBooksJson(w, buf, new Uint8Array(0));
  return { up: w.text(0, mid), down: w.text(mid, w.pos) };
}
