import { JsonBytes } from "../../domain/json-bytes.ts";
import type { SnapshotRow } from "../../domain/snapshot.ts";
import { writeSnapshotHead, writeSnapshotTail } from "../../domain/wire.ts";

/**
 * A block's snapshots kept rendered (issue 14: cold pages): the JSON of each of its seconds without
 * books, exactly as the snapshot route writes it, so that a page of a resolved market is a few copies
 * of stored bytes instead of formatting 1000 times and 3000 prices. Kept beside the block's prices
 * (snapshot-blocks.ts) in its own column; books are not rendered (their JSON is about ten times their
 * stored size) but written from their compact form after the rendered head.
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

/** A rendered block opened for reading: second d (0 = newest) is text[start(d), end(d)). */
export class RenderedBlock {
  readonly n: number;
  readonly text: Uint8Array;
  private readonly blob: Uint8Array;
  private readonly endsAt: number;

  constructor(blob: Uint8Array) {
    if (blob[0] !== FORMAT) throw new Error(`unknown rendered block format ${blob[0]}`);
    let p = 1;
    let n = 0;
    for (let mul = 1; ; mul *= 128) {
      const b = blob[p++];
      n += (b & 127) * mul;
      if (b < 128) break;
    }
    this.n = n;
    this.blob = blob;
    this.endsAt = p;
    this.text = blob.subarray(p + 2 * n);
  }

  end(d: number): number {
    const p = this.endsAt + 2 * d;
    return this.blob[p] | (this.blob[p + 1] << 8);
  }

  start(d: number): number {
    return d === 0 ? 0 : this.end(d - 1) + 1;
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
      w.bytes(block.text.subarray(block.start(n - to), block.end(n - from - 1)));
      first = false;
      continue;
    }
    for (let k = 0; k < to - from; k++) {
      const i = newestFirst ? to - 1 - k : from + k;
      const d = n - 1 - i;
      if (!first) w.byte(44);
      first = false;
      if (step.books === null) {
        w.bytes(block.text.subarray(block.start(d), block.end(d)));
        continue;
      }
      // The head without its closing brace, then the books and the brace as writeSnapshotJson would.
      w.bytes(block.text.subarray(block.start(d), block.end(d) - 1));
      const { bytes, bookStart } = step.books;
      const a = bookStart[i];
      const b = bookStart[i + 1];
      writeSnapshotTail(w, bytes !== null && b > a ? bytes.subarray(a, b) : null, true);
    }
  }
}
