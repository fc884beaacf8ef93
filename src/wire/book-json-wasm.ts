import { pow10 } from "../domain/book.ts";
import { BOOK_JSON_WASM } from "./book-json-wasm-binary.ts";
import type { JsonBytes } from "./json-bytes.ts";

/**
 * The WebAssembly writer of books as JSON (book-json.wat), laid out and filled here: the fast path of
 * writeBooksJson (book-json.ts), which falls back to its JavaScript for whatever this does not take.
 * Why WebAssembly: a cold page with books is 2 MB of level JSON, and the JavaScript writer spent about
 * 26 ns a level on it (typed-array stores through bounds checks); the same loop compiled from the text
 * format takes about 9 ns, copies in and out included (docs/decisions.md, "Book JSON in WebAssembly").
 */

/**
 * The part of the WebAssembly JavaScript API used here: TypeScript declares it with the DOM's types,
 * which this project's `lib` leaves out.
 */
interface WasmApi {
  Module: new (binary: Uint8Array) => object;
  Instance: new (module: object) => { exports: object };
}

interface BookJsonExports {
  memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  mid: { readonly value: number };
  secondsDone: { readonly value: number };
  secondsEnd: { readonly value: number };
  books(blob: number, end: number, out: number, between: number, betweenLength: number): number;
  seconds(spans: number, count: number, out: number, comma: number, tail: number): number;
}

/** Fixed places in memory, as book-json.wat reads them. */
const WHOLE = 0;
const WHOLE_LENGTHS = 40_000;
const CENTS = 50_000;
const CENTS_LENGTHS = 50_400;
/** Per price decimals, four words: the head table's address, its lengths' address, last tick, 10^decimals. */
const PRICES = 50_512;
/** Two words: where a mirrored book's Up bids and Up asks are kept while its Down book is written. */
const KEEP = 50_592;
/** The tail texts' addresses and lengths (six words), then the texts. */
const TAIL = 50_600;
const TAIL_TEXTS = TAIL + 24;
const MAX_TAIL_TEXTS = 560;
const TABLES = 51_200;
/** Price decimals with a table (10^decimals + 1 ticks of 24 bytes each and a length byte). */
const MAX_TABLE_DECIMALS = 4;
const HEAD_BYTES = 24;
const MAX_BETWEEN = 256;
/** A blob larger than this (8,000 levels and more) is written by the JavaScript. */
const MAX_BLOB = 16_384;
/** A kept side: its count, then 24 bytes a level (at most one level per two blob bytes). */
const KEPT_SIDE = 8 + (MAX_BLOB / 2) * 24;
/** A block's rendered heads (rendered-blocks.ts keeps them below 64 KB) and book blobs, copied in. */
const MAX_TEXT = 65_536;
const MAX_BOOKS = 1 << 20;
/** Seconds one call of `seconds` writes at most (a block holds 256), and the output it has room for. */
const MAX_SECONDS = 1024;
const SECONDS_OUT = 2 << 20;
/**
 * Output bytes per blob byte, bounded: a level is at least two blob bytes and is written at most twice
 * (a mirrored book's Up sides are the Down sides too), as at most 36 bytes (a 24-byte head, eight
 * digits, `.25}`), rounded up; the stores past the last text (at most eight bytes) fit the slack.
 */
const OUT_PER_BLOB_BYTE = 40;

interface PriceTable {
  table: number;
  lengths: number;
  last: number;
  one: number;
}

/** What follows a snapshot's head, as the snapshot JSON has it (wire.ts). */
export interface BookTails {
  /** Before the Up book: `,"orderbook_up":`. */
  up: Uint8Array;
  /** Between the books: `,"orderbook_down":`. */
  down: Uint8Array;
  /** A second without books, closing brace included. */
  empty: Uint8Array;
}

function put(bytes: Uint8Array, at: number, text: string): void {
  for (let i = 0; i < text.length; i++) bytes[at + i] = text.charCodeAt(i);
}

/** Where the tables, kept sides, inputs and outputs lie, above the fixed places. */
function layout() {
  const tables: PriceTable[] = [];
  let at = TABLES;
  for (let pd = 0; pd <= MAX_TABLE_DECIMALS; pd++) {
    const ticks = pow10(pd) + 1;
    tables.push({ table: at, lengths: at + ticks * HEAD_BYTES, last: ticks - 1, one: pow10(pd) });
    at = (at + ticks * (HEAD_BYTES + 1) + 7) & ~7;
  }
  const between = at;
  const input = between + MAX_BETWEEN;
  const output = input + MAX_BLOB;
  const text = output + MAX_BLOB * OUT_PER_BLOB_BYTE + MAX_BETWEEN;
  const books = text + MAX_TEXT;
  const spans = books + MAX_BOOKS;
  const secondsOut = spans + MAX_SECONDS * 16;
  const kept = secondsOut + SECONDS_OUT + 64;
  return { tables, between, input, output, text, books, spans, secondsOut, kept, size: kept + 2 * KEPT_SIDE };
}

/** Fills the tables book-json.wat reads: digits, hundredths, and per price decimals the level heads. */
function fillTables(bytes: Uint8Array, words: Int32Array, tables: readonly PriceTable[]): void {
  for (let i = 0; i < 10_000; i++) {
    const digits = String(i);
    put(bytes, WHOLE + 4 * i, digits);
    bytes[WHOLE_LENGTHS + i] = digits.length;
  }
  for (let i = 0; i < 100; i++) {
    const cents = i === 0 ? "}" : `${String(i / 100).slice(1)}}`;
    put(bytes, CENTS + 4 * i, cents);
    bytes[CENTS_LENGTHS + i] = cents.length;
  }
  tables.forEach((t, pd) => {
    words.set([t.table, t.lengths, t.last, t.one], (PRICES >> 2) + 4 * pd);
    for (let tick = 0; tick <= t.last; tick++) {
      const head = `,{"price":${tick / t.one},"size":`;
      // A longer head (none up to four decimals) has length 0: the JavaScript writes that book.
      if (head.length > HEAD_BYTES) continue;
      put(bytes, t.table + tick * HEAD_BYTES, head);
      bytes[t.lengths + tick] = head.length;
    }
  });
}

/** The module's instance on this thread, its memory laid out and filled. */
export class WasmBooks {
  private readonly bytes: Buffer;
  private readonly words: Int32Array;
  private readonly at: ReturnType<typeof layout>;
  private lastBetween: Uint8Array | null = null;
  private lastTails: BookTails | null = null;
  private readonly exports: BookJsonExports;

  constructor(exports: BookJsonExports) {
    this.exports = exports;
    this.at = layout();
    const memory = exports.memory;
    const missing = this.at.size - memory.buffer.byteLength;
    if (missing > 0) memory.grow(Math.ceil(missing / 65_536));
    this.bytes = Buffer.from(memory.buffer);
    this.words = new Int32Array(memory.buffer);
    this.words[KEEP >> 2] = this.at.kept;
    this.words[(KEEP >> 2) + 1] = this.at.kept + KEPT_SIDE;
    fillTables(this.bytes, this.words, this.at.tables);
  }

  /**
   * Writes the books of `blob` into `w` as writeBooksJson does; answers where in `w` the Up book ends
   * (where `between` starts), or null, with nothing written, for a blob it leaves to the JavaScript.
   */
  write(w: JsonBytes, blob: Uint8Array, between: Uint8Array): number | null {
    const at = this.at;
    if (blob.length > MAX_BLOB) return null;
    if (between !== this.lastBetween) {
      if (between.length > MAX_BETWEEN) return null;
      this.bytes.set(between, at.between);
      this.lastBetween = between;
    }
    this.bytes.set(blob, at.input);
    const end = this.exports.books(at.input, at.input + blob.length, at.output, at.between, between.length);
    if (end < 0) return null;
    const start = w.pos;
    w.bytes(this.bytes.subarray(at.output, end));
    return start + (this.exports.mid.value - at.output);
  }

  /**
   * Writes seconds of a rendered block with their books into `w`, as the page writes them one by one
   * (rendered-blocks.ts): per second `k` of `count`, a comma (before the first too when `comma`), the
   * head `text[spans[4k], spans[4k + 1])` and the books `books[spans[4k + 2], spans[4k + 3])` (none
   * when empty) with the tails around them. A second whose books it does not take (or whose span lies
   * outside its inputs) is handed to `writeOne(k, comma)`, the JavaScript's, and it goes on after it.
   * Answers false, having written nothing, when the block is more than its memory holds.
   */
  seconds(
    w: JsonBytes,
    text: string | Uint8Array,
    books: Uint8Array | null,
    spans: Int32Array,
    count: number,
    comma: boolean,
    tails: BookTails,
    writeOne: (k: number, comma: boolean) => void,
  ): boolean {
    const { bytes, words, at } = this;
    const bookBytes = books?.length ?? 0;
    if (text.length > MAX_TEXT || bookBytes > MAX_BOOKS || !this.placeTails(tails)) return false;
    if (typeof text === "string") bytes.write(text, at.text, text.length, "latin1");
    else bytes.set(text, at.text);
    if (books !== null) bytes.set(books, at.books);
    const fixed = tails.up.length + tails.down.length + tails.empty.length + 64;
    let done = 0;
    while (done < count) {
      // As many seconds as the output has room for, bounded as in write(), up to one it cannot take.
      let room = SECONDS_OUT;
      let k = done;
      for (; k < count && k - done < MAX_SECONDS; k++) {
        const hs = spans[4 * k];
        const he = spans[4 * k + 1];
        const bs = spans[4 * k + 2];
        const be = spans[4 * k + 3];
        const bound = he - hs + fixed + (be - bs) * OUT_PER_BLOB_BYTE;
        if (!(0 <= hs && hs <= he && he <= text.length && 0 <= bs && bs <= be && be <= bookBytes)) break;
        if (bound > room || be - bs > MAX_BLOB) break;
        room -= bound;
        const to = (at.spans >> 2) + 4 * (k - done);
        words[to] = at.text + hs;
        words[to + 1] = at.text + he;
        words[to + 2] = at.books + bs;
        words[to + 3] = at.books + be;
      }
      if (k > done) {
        const end = this.exports.seconds(at.spans, k - done, at.secondsOut, comma || done > 0 ? 1 : 0, TAIL);
        if (end >= 0) {
          w.bytes(bytes.subarray(at.secondsOut, end));
          done = k;
          continue;
        }
        // It stopped before a blob it leaves: the seconds before that one are written whole.
        w.bytes(bytes.subarray(at.secondsOut, this.exports.secondsEnd.value));
        done += this.exports.secondsDone.value;
      }
      writeOne(done, comma || done > 0);
      done++;
    }
    return true;
  }

  /** Puts the tail texts in memory once (they are constants of wire.ts); false when they do not fit. */
  private placeTails(tails: BookTails): boolean {
    if (tails === this.lastTails) return true;
    const texts = [tails.up, tails.down, tails.empty];
    if (texts.reduce((sum, t) => sum + t.length, 0) > MAX_TAIL_TEXTS) return false;
    let p = TAIL_TEXTS;
    texts.forEach((t, k) => {
      this.bytes.set(t, p);
      this.words.set([p, t.length], (TAIL >> 2) + 2 * k);
      p += t.length;
    });
    this.lastTails = tails;
    return true;
  }
}

function instantiate(): WasmBooks {
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  const module = new wasm.Module(Buffer.from(BOOK_JSON_WASM, "base64"));
  return new WasmBooks(new wasm.Instance(module).exports as BookJsonExports);
}

let writer: WasmBooks | null | undefined;

/** The thread's writer, made at first use; null where WebAssembly cannot run. */
export function wasmBookWriter(): WasmBooks | null {
  if (writer === undefined) {
    try {
      writer = instantiate();
    } catch {
      writer = null;
    }
  }
  return writer;
}
