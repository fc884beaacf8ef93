import { JsonBytes } from "../../wire/json-bytes.ts";
import type { SnapshotRow } from "../../domain/snapshot.ts";
import { writeSecondsWithBooks, writeSnapshotHead, writeSnapshotTail } from "../../wire/wire.ts";

/**
 * A block's snapshots kept rendered (issue 14: cold pages): the JSON of each of its seconds without
 * books, exactly as the snapshot route writes it, so that a page of a resolved market is a few copies
 * of stored bytes instead of formatting 1000 times and 3000 prices. Kept beside the block's prices
 * (snapshot-blocks.ts) in its own column, a cache stamped with the wire layer's RENDER_VERSION (a block
 * of another version is rendered again from its prices); books are not rendered (their JSON is about
 * ten times their stored size) but written from their compact form after the rendered head.
 *
 * Format: byte 0 the format (1); varint n; n × uint16 little-endian, the end of each second's JSON in
 * the text; then the text: the seconds' JSON, NEWEST FIRST, joined by commas. Newest first because
 * that is the default order of a page, which then copies one run of bytes per block.
 */

const FORMAT = 1;
/** The text's ends are uint16: 256 seconds of at most ~150 bytes each stay far below. */
const MAX_TEXT = 0xffff;

const scratch = new JsonBytes(1 << 16);

/** The rendered form of a block's rows (in time order, as the block holds them). */
export function renderRows(rows: readonly SnapshotRow[]): Uint8Array {
  const n = rows.length;
  const w = scratch;
  w.reset();
  const ends = new Array<number>(n);
  for (let d = 0; d < n; d++) {
    if (d > 0) w.byte(44);
    writeSnapshotHead(w, rows[n - 1 - d]);
    w.byte(125);
    ends[d] = w.pos;
  }
  if (w.pos > MAX_TEXT) throw new Error(`a rendered block of ${w.pos} bytes exceeds ${MAX_TEXT}`);
  const header: number[] = [FORMAT];
  for (let v = n; ; v = Math.floor(v / 128)) {
    if (v < 128) {
      header.push(v);
      break;
    }
    header.push((v % 128) | 128);
  }
  const out = new Uint8Array(header.length + 2 * n + w.pos);
  out.set(header, 0);
  let p = header.length;
  for (const e of ends) {
    out[p++] = e & 0xff;
    out[p++] = e >> 8;
  }
  out.set(w.buf.subarray(0, w.pos), p);
  return out;
}

/**
 * A rendered block as a store fetched it: the stored bytes whole, or (SQLite) the text alone as a
 * string. SQLite reads the text as TEXT because a string lives on the young heap, where a short-lived
 * one is freed by a scavenge, while every blob read becomes an ArrayBuffer whose bytes count toward the
 * external memory that starts full collections (docs/decisions.md). Without the ends, a second's end
 * is found in the text: each second's JSON is flat and closes with the only brace it has.
 */
export type FetchedRendering = Uint8Array | string;

/** A rendered block opened for reading: second d (0 = newest) is text[start(d), end(d)). */
export class RenderedBlock {
  readonly n: number;
  private readonly text: Uint8Array | string;
  /** The stored bytes, whose ends say where each second's JSON ends; null for text alone. */
  private readonly blob: Uint8Array | null;
  private readonly endsAt: number;
  /**
   * Ends found in text fetched alone, as far as reads have needed them: seconds [0, scanned). A page
   * needs one end inside each of its two partial blocks (and every end only when it has books), so
   * the text is searched no further than the last second asked for.
   */
  private found: Int32Array | null = null;
  private scanned = 0;

  constructor(fetched: FetchedRendering, n: number) {
    if (typeof fetched === "string") {
      this.n = n;
      this.text = fetched;
      this.blob = null;
      this.endsAt = 0;
      return;
    }
    if (fetched[0] !== FORMAT) throw new Error(`unknown rendered block format ${fetched[0]}`);
    let p = 1;
    let stored = 0;
    for (let mul = 1; ; mul *= 128) {
      const b = fetched[p++];
      stored += (b & 127) * mul;
      if (b < 128) break;
    }
    if (stored !== n) throw new Error(`a rendered block of ${stored} seconds where its header says ${n}`);
    this.n = n;
    this.blob = fetched;
    this.endsAt = p;
    this.text = fetched.subarray(p + 2 * n);
  }

  end(d: number): number {
    if (d === this.n - 1) return this.text.length;
    if (this.blob !== null) {
      const p = this.endsAt + 2 * d;
      return this.blob[p] | (this.blob[p + 1] << 8);
    }
    return d < this.scanned ? (this.found as Int32Array)[d] : this.endInText(d);
  }

  /** Second d's end in text fetched alone: each second's JSON is flat and closes with its only brace. */
  private endInText(d: number): number {
    const text = this.text as string;
    const found = (this.found ??= new Int32Array(this.n));
    let p = this.scanned === 0 ? -1 : found[this.scanned - 1] - 1;
    while (this.scanned <= d) {
      p = text.indexOf("}", p + 1);
      if (p < 0 || p === text.length - 1) {
        throw new Error(`a rendered block's text does not hold ${this.n} seconds`);
      }
      found[this.scanned++] = p + 1;
    }
    return found[d];
  }

  start(d: number): number {
    return d === 0 ? 0 : this.end(d - 1) + 1;
  }

  /** The text whole (its seconds at start(d)..end(d)). */
  get source(): Uint8Array | string {
    return this.text;
  }

  /** Writes text[start, end) (ASCII). */
  write(w: JsonBytes, start: number, end: number): void {
    if (typeof this.text === "string") w.latin1(this.text, start, end);
    else w.bytes(this.text.subarray(start, end));
  }
}

/** One block's part of a page: rows [from, to) in time order, and its books when the page has them. */
export interface RenderedStep {
  block: RenderedBlock;
  from: number;
  to: number;
  /** The block's book blobs end to end and where each second's lies (bookStart[i]..bookStart[i + 1]). */
  books: { bytes: Uint8Array | null; bookStart: Int32Array } | null;
}

/** Per second of a step with books: its head's start and end (without the brace) and its blob's. */
let spans = new Int32Array(4 * 256);

/** Row i of the block as the page writes it with its books: the head without its brace, then the tail. */
function writeWithBooks(w: JsonBytes, step: RenderedStep, i: number): void {
  const { block } = step;
  const { bytes, bookStart } = step.books as NonNullable<RenderedStep["books"]>;
  const d = block.n - 1 - i;
  block.write(w, block.start(d), block.end(d) - 1);
  const a = bookStart[i];
  const b = bookStart[i + 1];
  writeSnapshotTail(w, bytes !== null && b > a ? bytes.subarray(a, b) : null, true);
}

/**
 * Writes a step's seconds with their books in one call (writeSecondsWithBooks), a second it does not
 * take by writeWithBooks; false, with nothing written, where it cannot.
 */
function writeStepWithBooks(w: JsonBytes, step: RenderedStep, newestFirst: boolean, comma: boolean): boolean {
  const { block, from, to } = step;
  const { bytes, bookStart } = step.books as NonNullable<RenderedStep["books"]>;
  const count = to - from;
  const rowOf = (k: number) => (newestFirst ? to - 1 - k : from + k);
  if (spans.length < 4 * count) spans = new Int32Array(4 * count);
  for (let k = 0; k < count; k++) {
    const i = rowOf(k);
    const d = block.n - 1 - i;
    spans[4 * k] = block.start(d);
    spans[4 * k + 1] = block.end(d) - 1;
    spans[4 * k + 2] = bytes === null ? 0 : bookStart[i];
    spans[4 * k + 3] = bytes === null ? 0 : bookStart[i + 1];
  }
  return writeSecondsWithBooks(w, block.source, bytes, spans, count, comma, (k, withComma) => {
    if (withComma) w.byte(44);
    writeWithBooks(w, step, rowOf(k));
  });
}

/** Writes a page's snapshots (comma-separated, no brackets) from the steps, given in time order. */
export function writeRenderedPage(w: JsonBytes, steps: readonly RenderedStep[], newestFirst: boolean): void {
  let first = true;
  const ordered = newestFirst ? [...steps].reverse() : steps;
  for (const step of ordered) {
    const { block, from, to } = step;
    const n = block.n;
    if (newestFirst && step.books === null) {
      // Rows [from, to) in time order are seconds n - to .. n - from - 1 newest first: one run.
      if (!first) w.byte(44);
      block.write(w, block.start(n - to), block.end(n - from - 1));
      first = false;
      continue;
    }
    if (step.books !== null && to > from && writeStepWithBooks(w, step, newestFirst, !first)) {
      first = false;
      continue;
    }
    for (let k = 0; k < to - from; k++) {
      const i = newestFirst ? to - 1 - k : from + k;
      const d = n - 1 - i;
      if (!first) w.byte(44);
      first = false;
      if (step.books === null) block.write(w, block.start(d), block.end(d));
      else writeWithBooks(w, step, i);
    }
  }
}
