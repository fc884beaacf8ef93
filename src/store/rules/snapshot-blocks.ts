import type { SnapshotRow } from "../../domain/snapshot.ts";
import type { Micros } from "../../domain/time.ts";
import type { PageWriter, SnapshotQuery } from "../ports/market-store.ts";
import type { JsonBytes } from "../../wire/json-bytes.ts";
import {
  type FetchedRendering,
  RenderedBlock,
  type RenderedStep,
  renderRows,
  writeRenderedPage,
} from "./rendered-blocks.ts";

/**
 * Snapshot blocks: a resolved market's snapshots kept as runs of up to BLOCK_ROWS consecutive seconds,
 * one stored row a run, so that a page of 1000 reads a handful of rows instead of 1000 (and as many
 * book rows). Said once for both stores; a dialect stores and fetches the rows, this file encodes,
 * decodes, plans which blocks a page needs and how an insert changes them.
 *
 * A block row: (market, first_us, last_us, n, render_version, prices, books, rendered).
 *   prices: byte 0 the format (1); varint n; varint first time, then n - 1 varint steps (µs, > 0);
 *           n × 3 float64 little-endian (coin price, Up, Down, row by row); n varint book lengths
 *           (0: no books that second).
 *   books:  the compact book blobs of the seconds that have books (book-codec.ts), end to end, byte
 *           for byte as recorded; null when none has.
 *   rendered, render_version: the seconds' JSON without books (rendered-blocks.ts), a cache stamped
 *           with the wire layer's RENDER_VERSION that wrote it; a stale one is rendered again on read
 *           and by migrate(), never trusted.
 *
 * Invariant both stores keep: a market's snapshots are all in blocks or all in the row tables
 * (`snapshots`, `snapshot_books`), never some in each. Live markets use the rows (one insert a
 * second); a market is moved into blocks when it resolves (MarketStore.upsertMarket), and from then on
 * inserts are merged into its blocks. A page reads blocks when the market has any, rows otherwise.
 */

export const BLOCK_ROWS = 256;
const FORMAT = 1;

export interface BlockHeader {
  first: Micros;
  last: Micros;
  n: number;
}

export interface EncodedBlock extends BlockHeader {
  prices: Uint8Array;
  books: Uint8Array | null;
  rendered: Uint8Array;
}

/**
 * A stored block as fetched: its header and blobs (books null when not asked for or none; rendered
 * only when asked for, null when stale or not rendered; prices empty when only the rendered form was
 * asked for and is current).
 */
export interface StoredBlock extends BlockHeader {
  prices: Uint8Array;
  books: Uint8Array | null;
  rendered?: FetchedRendering | null;
}

class Writer {
  buf: Uint8Array;
  view: DataView;
  pos = 0;
  constructor(size: number) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
  }
  varint(v: number): void {
    while (v >= 128) {
      this.buf[this.pos++] = (v % 128) | 128;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }
  double(x: number): void {
    this.view.setFloat64(this.pos, x, true);
    this.pos += 8;
  }
}

/** One block of rows in time order (distinct times, at most BLOCK_ROWS of them). */
export function encodeBlock(rows: readonly SnapshotRow[]): EncodedBlock {
  const n = rows.length;
  const w = new Writer(1 + 10 + 10 * n + 24 * n + 5 * n);
  w.buf[w.pos++] = FORMAT;
  w.varint(n);
  let bookBytes = 0;
  for (let i = 0; i < n; i++) {
    w.varint(i === 0 ? rows[0].time : rows[i].time - rows[i - 1].time);
    bookBytes += rows[i].books?.length ?? 0;
  }
  for (const r of rows) {
    w.double(r.coinPrice);
    w.double(r.priceUp);
    w.double(r.priceDown);
  }
  for (const r of rows) w.varint(r.books?.length ?? 0);
  let books: Uint8Array | null = null;
  if (bookBytes > 0) {
    books = new Uint8Array(bookBytes);
    let p = 0;
    for (const r of rows) {
      if (!r.books) continue;
      books.set(r.books, p);
      p += r.books.length;
    }
  }
  return {
    first: rows[0].time,
    last: rows[n - 1].time,
    n,
    prices: w.buf.slice(0, w.pos),
    books,
    rendered: renderRows(rows),
  };
}

/** A block's prices decoded: times, the three prices, and where each second's books lie in `books`. */
export interface BlockColumns {
  n: number;
  times: Float64Array;
  coin: Float64Array;
  up: Float64Array;
  down: Float64Array;
  /** bookStart[i]..bookStart[i + 1] is second i's blob; equal when it has none. */
  bookStart: Int32Array;
}

export function decodeBlock(prices: Uint8Array): BlockColumns {
  if (prices[0] !== FORMAT) throw new Error(`unknown snapshot block format ${prices[0]}`);
  let p = 1;
  const varint = () => {
    let b = prices[p++];
    let v = b & 127;
    for (let mul = 128; b >= 128; mul *= 128) {
      b = prices[p++];
      v += (b & 127) * mul;
    }
    return v;
  };
  const n = varint();
  const times = new Float64Array(n);
  let t = 0;
  for (let i = 0; i < n; i++) times[i] = t += varint();
  const view = new DataView(prices.buffer, prices.byteOffset, prices.byteLength);
  const coin = new Float64Array(n);
  const up = new Float64Array(n);
  const down = new Float64Array(n);
  for (let i = 0; i < n; i++, p += 24) {
    coin[i] = view.getFloat64(p, true);
    up[i] = view.getFloat64(p + 8, true);
    down[i] = view.getFloat64(p + 16, true);
  }
  return { n, times, coin, up, down, bookStart: bookStartsAt(prices, p, n) };
}

/** The n varint book lengths at `p` as where each second's books start (n + 1 offsets). */
function bookStartsAt(prices: Uint8Array, p: number, n: number): Int32Array {
  const bookStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    let b = prices[p++];
    let v = b & 127;
    for (let mul = 128; b >= 128; mul *= 128) {
      b = prices[p++];
      v += (b & 127) * mul;
    }
    bookStart[i + 1] = bookStart[i] + v;
  }
  if (p > prices.length) throw new Error("a snapshot block's prices end early");
  return bookStart;
}

/**
 * Where each second's books lie in a block's `books` (decodeBlock's bookStart), read past the times and
 * prices without decoding them: what a page with books needs of the prices beside its rendered seconds.
 */
export function bookStartsOf(prices: Uint8Array): Int32Array {
  if (prices[0] !== FORMAT) throw new Error(`unknown snapshot block format ${prices[0]}`);
  let p = 1;
  let n = 0;
  for (let mul = 1; ; mul *= 128) {
    const b = prices[p++];
    n += (b & 127) * mul;
    if (b < 128) break;
  }
  // n varint time steps (a byte ends each: the one below 128), then n × 3 float64 prices.
  for (let ended = 0; ended < n && p < prices.length;) if (prices[p++] < 128) ended++;
  return bookStartsAt(prices, p + 24 * n, n);
}

/** Rows [from, to) of a decoded block, books as views of `books` (null when not asked for). */
export function blockRows(
  c: BlockColumns,
  books: Uint8Array | null,
  from: number,
  to: number,
): SnapshotRow[] {
  const out = new Array<SnapshotRow>(Math.max(0, to - from));
  for (let i = from; i < to; i++) {
    const start = c.bookStart[i];
    const end = c.bookStart[i + 1];
    out[i - from] = {
      time: c.times[i],
      coinPrice: c.coin[i],
      priceUp: c.up[i],
      priceDown: c.down[i],
      books: books !== null && end > start ? books.subarray(start, end) : null,
    };
  }
  return out;
}

/** Index of the first time >= t in a block's times (n when none). */
export function lowerBound(times: Float64Array, t: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The blocks that hold a time range [from, to], in time order. */
export function blocksInRange(headers: readonly BlockHeader[], from: Micros, to: Micros): BlockHeader[] {
  return headers.filter((h) => h.last >= from && h.first <= to);
}

/**
 * What a page needs, once the range's blocks and the rows each holds within the range are known:
 * `within[i]` = [start, end) of block i's rows inside the range. Returns, per block the page touches,
 * the slice of its rows the page takes, in ascending time; the caller reverses for newest first.
 */
export function planPage(
  within: readonly [number, number][],
  q: Pick<SnapshotQuery, "order" | "limit" | "offset">,
): { block: number; from: number; to: number }[] {
  const total = within.reduce((sum, [s, e]) => sum + (e - s), 0);
  // The page as positions among the range's rows in ascending time.
  const lo = q.order === "asc" ? q.offset : Math.max(0, total - q.offset - q.limit);
  const hi = q.order === "asc" ? Math.min(total, q.offset + q.limit) : total - q.offset;
  const plan: { block: number; from: number; to: number }[] = [];
  if (hi <= lo) return plan;
  let base = 0;
  for (let i = 0; i < within.length && base < hi; i++) {
    const [s, e] = within[i];
    const count = e - s;
    const a = Math.max(lo, base);
    const b = Math.min(hi, base + count);
    if (b > a) plan.push({ block: i, from: s + (a - base), to: s + (b - base) });
    base += count;
  }
  return plan;
}

/**
 * How an insert into a market's blocks goes: which stored blocks it rewrites (`affected`: those the
 * new rows' span overlaps, and the last block before it when that one has room, so that appends fill
 * it), given the headers in time order.
 */
export function affectedBlocks(headers: readonly BlockHeader[], lo: Micros, hi: Micros): BlockHeader[] {
  const affected = headers.filter((h) => h.last >= lo && h.first <= hi);
  const before = headers.filter((h) => h.last < lo).at(-1);
  if (before && before.n < BLOCK_ROWS && !affected.includes(before)) affected.unshift(before);
  return affected;
}

/**
 * The new rows merged into the affected blocks' rows: stored seconds win, and of a second given twice
 * in `added` the first. Returns the blocks to write in their place and how many rows were new.
 */
export function mergeRows(
  stored: readonly SnapshotRow[],
  added: readonly SnapshotRow[],
): { blocks: EncodedBlock[]; added: number } {
  const byTime = new Map<number, SnapshotRow>();
  for (const r of stored) byTime.set(r.time, r);
  let fresh = 0;
  for (const r of added) {
    if (byTime.has(r.time)) continue;
    byTime.set(r.time, r);
    fresh++;
  }
  const rows = [...byTime.values()].sort((a, b) => a.time - b.time);
  const blocks: EncodedBlock[] = [];
  for (let i = 0; i < rows.length; i += BLOCK_ROWS) blocks.push(encodeBlock(rows.slice(i, i + BLOCK_ROWS)));
  return { blocks, added: fresh };
}

/**
 * The affected blocks' rows before `from`, as the blocks to write in their place (a removal of a
 * market's snapshots from a time on rewrites the blocks `blocksFrom` names); and how many rows went.
 */
export function rowsBefore(
  stored: readonly SnapshotRow[],
  from: Micros,
): { blocks: EncodedBlock[]; removed: number } {
  const kept = stored.filter((r) => r.time < from);
  const blocks: EncodedBlock[] = [];
  for (let i = 0; i < kept.length; i += BLOCK_ROWS) blocks.push(encodeBlock(kept.slice(i, i + BLOCK_ROWS)));
  return { blocks, removed: stored.length - kept.length };
}

/** The blocks holding a second at or after `from`: those a removal from `from` on rewrites or drops. */
export function blocksFrom(headers: readonly BlockHeader[], from: Micros): BlockHeader[] {
  return headers.filter((h) => h.last >= from);
}

/** Every row of fetched blocks, in time order, books included when fetched. */
export function allRows(blocks: readonly StoredBlock[]): SnapshotRow[] {
  const out: SnapshotRow[] = [];
  for (const b of blocks) {
    const c = decodeBlock(b.prices);
    for (const r of blockRows(c, b.books, 0, c.n)) out.push(r);
  }
  return out;
}

/** The rows of a range in fetched blocks within [from, to], as (start, end) per block. */
export function rowsWithin(blocks: readonly StoredBlock[], from: Micros, to: Micros): [number, number][] {
  return blocks.map((b) => {
    if (b.first >= from && b.last <= to) return [0, b.n];
    const c = decodeBlock(b.prices);
    return [lowerBound(c.times, from), lowerBound(c.times, to + 1)];
  });
}

/** The page's rows from the blocks the plan names (fetched in the same order as `blocks`). */
export function pageFromBlocks(
  blocks: readonly StoredBlock[],
  plan: readonly { block: number; from: number; to: number }[],
  order: SnapshotQuery["order"],
  books: boolean,
): SnapshotRow[] {
  const rows: SnapshotRow[] = [];
  for (const step of plan) {
    const b = blocks[step.block];
    for (const r of blockRows(decodeBlock(b.prices), books ? b.books : null, step.from, step.to))
      rows.push(r);
  }
  return order === "asc" ? rows : rows.reverse();
}

/** Where a market's snapshots lie, from its blocks (see MarketStore.snapshotSpan). */
export function spanOfBlocks(blocks: readonly StoredBlock[], maxStep: Micros) {
  const holes: { after: Micros; before: Micros }[] = [];
  let prev: number | null = null;
  for (const b of blocks) {
    const c = decodeBlock(b.prices);
    for (let i = 0; i < c.n; i++) {
      const t = c.times[i];
      if (prev !== null && t - prev > maxStep) holes.push({ after: prev, before: t });
      prev = t;
    }
  }
  return { first: blocks[0]?.first ?? null, last: blocks.at(-1)?.last ?? null, holes };
}

/**
 * The block reads, for a dialect's placeholders ($1 or ?1). Every fetch gives the columns
 * (first_us, last_us, n, prices, books, rendered), NULL where not asked for; blockOfRow reads them.
 * `rendered` is how the dialect reads the rendered column (SQLite: its text alone, FetchedRendering).
 *
 * The rendered column is a cache stamped with the render version that wrote it (`render_version`):
 * the rendered reads give it only when the stamp is `renderVersion` (the reading store's, the wire
 * layer's RENDER_VERSION unless a test says otherwise), and the prices in its place otherwise, so that
 * a stale block is rendered from its prices on read. `stale` finds the blocks migrate() re-renders,
 * in key order after (market, first_us) = (param 1, param 2).
 */
export function blockReadSql(param: (i: number) => string, renderVersion: number, rendered = "rendered") {
  if (!Number.isSafeInteger(renderVersion))
    throw new Error(`a render version is an integer: ${renderVersion}`);
  const fresh = `render_version = ${renderVersion} AND rendered IS NOT NULL`;
  const where = `FROM snapshot_blocks WHERE market = ${param(1)} AND first_us >= ${param(2)} AND first_us <= ${param(3)} ORDER BY first_us`;
  return {
    headers: `SELECT first_us, last_us, n FROM snapshot_blocks WHERE market = ${param(1)} ORDER BY first_us`,
    prices: `SELECT first_us, last_us, n, prices, NULL, NULL ${where}`,
    books: `SELECT first_us, last_us, n, prices, books, NULL ${where}`,
    rendered: `SELECT first_us, last_us, n, CASE WHEN ${fresh} THEN NULL ELSE prices END, NULL, CASE WHEN ${fresh} THEN ${rendered} END ${where}`,
    renderedBooks: `SELECT first_us, last_us, n, prices, books, CASE WHEN ${fresh} THEN ${rendered} END ${where}`,
    stale: `SELECT market, first_us, last_us, n, prices FROM snapshot_blocks
      WHERE (market, first_us) > (${param(1)}, ${param(2)})
        AND (rendered IS NULL OR render_version IS NULL OR render_version <> ${renderVersion})
      ORDER BY market, first_us LIMIT ${STALE_BATCH}`,
  };
}

/** Blocks re-rendered by migrate() in one transaction. */
const STALE_BATCH = 512;

export const headerOfRow = (r: readonly unknown[]): BlockHeader => ({
  first: r[0] as number,
  last: r[1] as number,
  n: r[2] as number,
});

/** A fetched row of blockReadSql, its blobs as the dialect gives them made plain byte views. */
export function blockOfRow(r: readonly unknown[], bytes: (v: unknown) => Uint8Array | null): StoredBlock {
  return {
    ...headerOfRow(r),
    prices: bytes(r[3]) ?? EMPTY,
    books: bytes(r[4]),
    rendered: bytes(r[5]),
  };
}
const EMPTY = new Uint8Array(0);

/** How a dialect fetches a market's blocks (reads go through readers below, once for both stores). */
export interface BlockSource {
  /**
   * Every block's header, in time order. `total`, when given, is how many snapshots the caller knows
   * the market holds: a source may then answer from memory (HeaderMemory) with headers that hold as
   * many.
   */
  headers(total?: number): Promise<BlockHeader[]>;
  /** The blocks whose first time is within [lo, hi], in time order; books only when asked. */
  blocks(lo: Micros, hi: Micros, books: boolean): Promise<StoredBlock[]>;
  /**
   * The same blocks with their rendered form; prices only where a page needs them (books asked for,
   * or the block not yet rendered).
   */
  rendered(lo: Micros, hi: Micros, books: boolean): Promise<StoredBlock[]>;
  /**
   * Stores blocks' renderings made on read (their stamp was not the reader's version), stamped with
   * the reader's version, each only if the block still holds the prices it was rendered from.
   */
  restamp(blocks: readonly Rendering[]): Promise<void>;
}

/** A block's rendering made from its prices (renderStored), for the store to keep. */
export interface Rendering {
  first: Micros;
  prices: Uint8Array;
  rendered: Uint8Array;
}

/**
 * Block headers of markets remembered between reads, so that a page of a market read before plans
 * without asking the store for them (a query per page, and for a 4h market 57 rows). Only a read that
 * knows how many snapshots the market holds uses them, and only when they hold exactly that many: the
 * count comes from the market's record, which the same transaction updates as its blocks. The blocks
 * fetched must then be the ones the headers named, or the read starts over from the store's headers
 * (consistently). A store forgets a market whose blocks it writes; another process's writes show as
 * a different count or different blocks.
 */
export class HeaderMemory {
  private readonly markets = new Map<number, { headers: BlockHeader[]; total: number }>();
  private held = 0;
  private readonly maxHeaders: number;

  constructor(maxHeaders = 1 << 16) {
    this.maxHeaders = maxHeaders;
  }

  /** src, its headers answered from memory when a caller's count matches what is remembered. */
  source(marketKey: number, src: BlockSource): BlockSource {
    return {
      ...src,
      headers: async (total) => {
        const known = total === undefined ? undefined : this.markets.get(marketKey);
        if (known && known.total === total) return known.headers;
        const headers = await src.headers();
        this.remember(marketKey, headers);
        return headers;
      },
    };
  }

  forget(marketKey: number): void {
    const known = this.markets.get(marketKey);
    if (!known) return;
    this.held -= known.headers.length;
    this.markets.delete(marketKey);
  }

  private remember(marketKey: number, headers: BlockHeader[]): void {
    this.forget(marketKey);
    if (headers.length === 0 || headers.length > this.maxHeaders) return;
    if (this.held + headers.length > this.maxHeaders) {
      this.markets.clear();
      this.held = 0;
    }
    const total = headers.reduce((sum, h) => sum + h.n, 0);
    this.markets.set(marketKey, { headers, total });
    this.held += headers.length;
  }
}

const MIN = Number.MIN_SAFE_INTEGER;
const MAX = Number.MAX_SAFE_INTEGER;

/** Whether fetched blocks are the ones the headers named (a concurrent merge may have rewritten them). */
function same(fetched: readonly BlockHeader[], expected: readonly BlockHeader[]): boolean {
  return (
    fetched.length === expected.length &&
    fetched.every(
      (b, i) => b.first === expected[i].first && b.last === expected[i].last && b.n === expected[i].n,
    )
  );
}

/**
 * Reads with a plan made from headers, then fetches; a merge between the two (an import into a resolved
 * market) shows as blocks that differ from their headers, and the read starts over.
 */
async function consistently<T>(read: (attempt: number) => Promise<T | typeof STALE>): Promise<T> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const result = await read(attempt);
    if (result !== STALE) return result;
  }
  throw new Error("snapshot blocks kept changing under a read");
}
const STALE = Symbol("stale");

/** The rows of the range within each of its blocks, decoding only the blocks the range cuts. */
async function withinRange(
  src: BlockSource,
  inRange: readonly BlockHeader[],
  from: Micros,
  to: Micros,
): Promise<[number, number][] | typeof STALE> {
  const within: [number, number][] = [];
  for (const h of inRange) {
    if (h.first >= from && h.last <= to) {
      within.push([0, h.n]);
      continue;
    }
    const [b] = await src.blocks(h.first, h.first, false);
    if (!b || !same([b], [h])) return STALE;
    within.push(rowsWithin([b], from, to)[0]);
  }
  return within;
}

type Fetch = (src: BlockSource, lo: Micros, hi: Micros, books: boolean) => Promise<StoredBlock[]>;

/** The blocks a page takes rows from and the rows of each; null when the market has no blocks. */
async function fetchPage(src: BlockSource, q: SnapshotQuery, fetch: Fetch, attempt: number) {
  // Remembered headers serve a page of the whole market on a first attempt, checked by the count the
  // caller gives and by the fetched blocks being the ones planned from; a ranged page asks the store.
  const whole = q.from === undefined && q.to === undefined && attempt === 0;
  const headers = await src.headers(whole ? q.total : undefined);
  if (headers.length === 0) return null;
  const from = q.from ?? MIN;
  const to = q.to ?? MAX;
  const inRange = blocksInRange(headers, from, to);
  const within = await withinRange(src, inRange, from, to);
  if (within === STALE) return STALE;
  const plan = planPage(within, q);
  if (plan.length === 0) return { blocks: [], plan };
  const a = plan[0].block;
  const b = plan[plan.length - 1].block;
  const blocks = await fetch(src, inRange[a].first, inRange[b].first, q.books);
  if (!same(blocks, inRange.slice(a, b + 1))) return STALE;
  return { blocks, plan: plan.map((step) => ({ ...step, block: step.block - a })) };
}

/** A page from a market's blocks; null when the market has none (its snapshots are in the rows). */
export function readBlockPage(src: BlockSource, q: SnapshotQuery): Promise<SnapshotRow[] | null> {
  return consistently(async (attempt) => {
    const page = await fetchPage(src, q, (s, lo, hi, books) => s.blocks(lo, hi, books), attempt);
    if (page === null || page === STALE) return page;
    return pageFromBlocks(page.blocks, page.plan, q.order, q.books);
  });
}

/** The rendered form of a block stored without a current one (stale or none), from its prices. */
export function renderStored(b: StoredBlock): Uint8Array {
  return renderRows(allRows([{ ...b, books: null }]));
}

/**
 * A page from a market's blocks as their rendered JSON, to be written once the caller is ready; null
 * when the market has none. The bytes are writeSnapshotJson's for the same rows (readBlockPage's). A
 * block whose rendering is stale (another render version's, or none) is rendered from its prices, and
 * the rendering kept for the next read.
 */
export function readRenderedPage(src: BlockSource, q: SnapshotQuery): Promise<PageWriter | null> {
  return consistently(async (attempt) => {
    const page = await fetchPage(src, q, (s, lo, hi, books) => s.rendered(lo, hi, books), attempt);
    if (page === null || page === STALE) return page;
    const made: Rendering[] = [];
    const steps: RenderedStep[] = page.plan.map((step) => {
      const b = page.blocks[step.block];
      let fetched = b.rendered ?? null;
      if (fetched === null) {
        fetched = renderStored(b);
        made.push({ first: b.first, prices: b.prices, rendered: fetched });
      }
      const rendered = new RenderedBlock(fetched, b.n);
      const books = q.books ? { bytes: b.books, bookStart: bookStartsOf(b.prices) } : null;
      return { block: rendered, from: step.from, to: step.to, books };
    });
    if (made.length > 0) {
      // Keeping the rendering is a cache write: should it fail (a locked or read-only database), the
      // page is still right, the block is rendered again on the next read, and migrate() renders it.
      await src.restamp(made).catch(() => {});
    }
    return (w: JsonBytes) => writeRenderedPage(w, steps, q.order !== "asc");
  });
}

/** How many snapshots of the range a market's blocks hold; null when it has none. */
export function countInBlocks(src: BlockSource, from?: Micros, to?: Micros): Promise<number | null> {
  return consistently(async () => {
    const headers = await src.headers();
    if (headers.length === 0) return null;
    const within = await withinRange(
      src,
      blocksInRange(headers, from ?? MIN, to ?? MAX),
      from ?? MIN,
      to ?? MAX,
    );
    if (within === STALE) return STALE;
    return within.reduce((sum, [s, e]) => sum + (e - s), 0);
  });
}

/** The latest snapshot at or before `time` in a market's blocks: a row, null (none), or undefined (no blocks). */
export function atOrBeforeInBlocks(
  src: BlockSource,
  time: Micros,
  books: boolean,
): Promise<SnapshotRow | null | undefined> {
  return consistently(async () => {
    const headers = await src.headers();
    if (headers.length === 0) return undefined;
    const h = headers.filter((x) => x.first <= time).at(-1);
    if (!h) return null;
    const [b] = await src.blocks(h.first, h.first, books);
    if (!b || !same([b], [h])) return STALE;
    const c = decodeBlock(b.prices);
    const i = lowerBound(c.times, time + 1) - 1;
    return blockRows(c, books ? b.books : null, i, i + 1)[0];
  });
}

/** Every block of a market, prices only, for its span. */
export function allBlocks(src: BlockSource): Promise<StoredBlock[]> {
  return src.blocks(MIN, MAX, false);
}
