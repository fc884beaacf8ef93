import { MARKET_EVENT_TYPES, type MarketEvent, type MarketEventType } from "../../domain/event.ts";
import type { SortOrder } from "../../domain/snapshot.ts";
import {
  type CoinUpdate,
  type BlockForm,
  decodeCoinUpdates,
  decodeEventBlockIndex,
  decodeMarketEvents,
  encodeCoinUpdates,
  encodeMarketEvents,
} from "../../wire/event-block.ts";

/**
 * The layout of stored events (src/store/ports/event-store.ts) and every rule of it that is not SQL,
 * written once for both dialects. A stream (a market's events, or one coin's updates of one topic) is
 * kept as blocks: rows each holding a run of the stream's events in receive order, compressed
 * (src/wire/event-block.ts), with a header (first and last receive time, count, smallest and largest
 * upstream timestamp, which types) a read plans from.
 *
 * - A stream's blocks cover disjoint receive-time spans, and events of one receive time are never
 *   split between two blocks, so the blocks in order of `firstUs` are the stream in receive order.
 * - The live collector appends a few events a second per market. Each append past the stream's end
 *   is written as a small block of its own, in a form quick to write (src/wire/event-block.ts): the
 *   stream's *tail*, everything from the tail's first receive time on (a small row per stream says
 *   where it starts and how many events it holds). Once the tail holds BLOCK_EVENTS events, whole
 *   blocks of that many are *sealed*:
 *   re-encoded in the compressed form into one row each, the rest kept as the tail. A tail nobody has
 *   appended to for SEAL_IDLE_US (the market ended, the coin's feed stopped) is sealed whole by a
 *   later append of any stream, a few streams an append. So an append writes only its new events,
 *   and each event is encoded about twice in all. A batch of BULK_EVENTS or more that starts past the
 *   stream's end with no tail (an import, the demo's seeding) is sealed as it is written.
 * - Idempotence: an event is its receive time and its message (every field); events already stored
 *   are found by decoding only the blocks whose spans the batch overlaps (none when it only extends
 *   the stream, the live case), and a batch's own repeats are dropped. New events that fall inside
 *   stored spans are merged in and the blocks they touch rewritten; among events of one receive time,
 *   those stored first stay first.
 *
 * The work is written as generators over an EventBlockIo whose calls return values (SQLite: run
 * synchronously inside one write transaction) or promises (PostgreSQL: awaited in one transaction
 * under a per-stream lock): `runSync` and `runAsync` drive them.
 */

/** Events a sealed block holds (more only when one receive time holds more). */
export const BLOCK_EVENTS = 4096;
/** A batch of this many events past a stream's end (and no tail) is sealed at once, not made a tail. */
export const BULK_EVENTS = 256;
/** A tail untouched for this long (receive time of later appends) is sealed whole. */
export const SEAL_IDLE_US = 10 * 60 * 1_000_000;
/** Idle tails of other streams sealed by one append, at most. */
const IDLE_SEALS_PER_APPEND = 4;

export interface StreamEvent {
  receivedUs: number;
  timestampMs: number;
  message: Readonly<Record<string, unknown>>;
}

/** How a stream's events are encoded, and the bit of an event's type in a block's `types` mask. */
export interface EventCodec<E extends StreamEvent> {
  encode(events: readonly E[], form: BlockForm): Uint8Array;
  decode(bytes: Uint8Array): E[];
  typeBit(event: E): number;
  /** How many of a block's events a filter keeps, its messages left undecoded. */
  count(bytes: Uint8Array, filter: EventFilter): number;
}

function typeBitOf(type: string): number {
  return type === "" ? 1 : 1 << MARKET_EVENT_TYPES.indexOf(type as MarketEventType);
}

function countMatching(bytes: Uint8Array, f: EventFilter): number {
  const index = decodeEventBlockIndex(bytes);
  let n = 0;
  index.timestampMs.forEach((ts, i) => {
    if (ts >= f.fromMs && ts <= f.toMs && (typeBitOf(index.types[i]) & f.types) !== 0) n++;
  });
  return n;
}

export const MARKET_EVENT_CODEC: EventCodec<MarketEvent> = {
  encode: encodeMarketEvents,
  decode: decodeMarketEvents,
  typeBit: (e) => typeBitOf(e.type),
  count: countMatching,
};

/** Coin updates have no type: "" in a block, bit 1. */
export const COIN_UPDATE_CODEC: EventCodec<CoinUpdate> = {
  encode: encodeCoinUpdates,
  decode: decodeCoinUpdates,
  typeBit: () => 1,
  count: countMatching,
};

/** The type bits of a read's types (all without). */
export function typeMask(types: readonly MarketEventType[] | undefined): number {
  return types === undefined
    ? ALL_TYPES
    : types.reduce((m, t) => m | (1 << MARKET_EVENT_TYPES.indexOf(t)), 0);
}

export interface BlockHeader {
  firstUs: number;
  lastUs: number;
  n: number;
  minTs: number;
  maxTs: number;
  /** The OR of its events' type bits. */
  types: number;
}

export interface StoredBlock extends BlockHeader {
  data: Uint8Array;
}

/** Where a stream's tail starts, its last receive time and how many events it holds. */
export interface Tail {
  firstUs: number;
  lastUs: number;
  n: number;
}

type Maybe<T> = T | Promise<T>;

/** What a dialect does for the rules: every call returns a value or a promise of it. */
export interface EventBlockIo<K> {
  /**
   * Serializes writers of these streams until the transaction ends, taken in the order given (a no-op
   * where writes are serial).
   */
  lock(keys: readonly K[]): Maybe<void>;
  /** As lock, but gives up at once (false) when another transaction holds it. */
  tryLock(key: K): Maybe<boolean>;
  tail(key: K): Maybe<Tail | null>;
  /** The tails of several streams, in the keys' order. */
  tails(keys: readonly K[]): Maybe<(Tail | null)[]>;
  setTail(key: K, tail: Tail | null): Maybe<void>;
  /** Blocks of several streams and their new tails, written at once (the live appends of a batch). */
  extendTails(writes: readonly { key: K; block: StoredBlock; tail: Tail }[]): Maybe<void>;
  /** Streams whose tail's last receive time is before `beforeUs`, at most `limit`. */
  idleTails(beforeUs: number, limit: number): Maybe<K[]>;
  /** The stream's last receive time; null without blocks. */
  lastUs(key: K): Maybe<number | null>;
  /** Blocks with lastUs >= fromUs and firstUs <= toUs, in order, with their data. */
  blocksWithin(key: K, fromUs: number, toUs: number): Maybe<StoredBlock[]>;
  remove(key: K, firstUs: readonly number[]): Maybe<void>;
  insert(key: K, blocks: readonly StoredBlock[]): Maybe<void>;
  /** Every header of the stream, in receive order or its reverse. */
  headers(key: K, order: SortOrder): Maybe<BlockHeader[]>;
  data(key: K, firstUs: number): Maybe<Uint8Array | null>;
}

type Work<T> = Generator<unknown, T, unknown>;

function* call<T>(value: Maybe<T>): Work<T> {
  return (yield value) as T;
}

/** Runs rules' work whose I/O is synchronous (every value handed back as it came). */
export function runSync<T>(work: Work<T>): T {
  let step = work.next();
  while (!step.done) {
    if (step.value instanceof Promise) throw new Error("runSync given asynchronous I/O");
    step = work.next(step.value);
  }
  return step.value;
}

/** Runs rules' work whose I/O returns promises. */
export async function runAsync<T>(work: Work<T>): Promise<T> {
  let step = work.next();
  while (!step.done) step = work.next(await step.value);
  return step.value;
}

/** An event's identity: its receive time and its message, keys in one order. */
export function eventIdentity(e: StreamEvent): string {
  return `${e.receivedUs} ${canonicalJson(e.message)}`;
}

function canonicalJson(value: unknown): string {
  // Built by concatenation (no arrays of parts): it runs on every event whose receive time another shares.
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += (i === 0 ? "" : ",") + canonicalJson(value[i]);
    return `${out}]`;
  }
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    let out = "{";
    for (let i = 0; i < keys.length; i++)
      out += `${i === 0 ? "" : ","}${JSON.stringify(keys[i])}:${canonicalJson(record[keys[i]])}`;
    return `${out}}`;
  }
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  return JSON.stringify(value) ?? "undefined";
}

function headerOf<E extends StreamEvent>(codec: EventCodec<E>, events: readonly E[]): BlockHeader {
  let minTs = Infinity;
  let maxTs = -Infinity;
  let types = 0;
  for (const e of events) {
    minTs = Math.min(minTs, e.timestampMs);
    maxTs = Math.max(maxTs, e.timestampMs);
    types |= codec.typeBit(e);
  }
  return {
    firstUs: events[0].receivedUs,
    lastUs: events.at(-1)!.receivedUs,
    n: events.length,
    minTs,
    maxTs,
    types,
  };
}

function blockOf<E extends StreamEvent>(
  codec: EventCodec<E>,
  events: readonly E[],
  form: BlockForm,
): StoredBlock {
  return { ...headerOf(codec, events), data: codec.encode(events, form) };
}

/**
 * Cuts events (in receive order) into runs of at least `size` (the last may be shorter), never
 * between two events of one receive time.
 */
function cut<E extends StreamEvent>(events: readonly E[], size: number): E[][] {
  const runs: E[][] = [];
  let start = 0;
  for (let i = size; i < events.length; i++) {
    if (i - start >= size && events[i].receivedUs !== events[i - 1].receivedUs) {
      runs.push(events.slice(start, i));
      start = i;
    }
  }
  if (start < events.length) runs.push(events.slice(start));
  return runs;
}

/** Runs of about equal size, none above BLOCK_EVENTS but for one receive time's events. */
function evenRuns<E extends StreamEvent>(events: readonly E[]): E[][] {
  const blocks = Math.ceil(events.length / BLOCK_EVENTS);
  return cut(events, Math.ceil(events.length / blocks));
}

function sortedByReceive<E extends StreamEvent>(events: readonly E[]): E[] {
  // Stable: events of one receive time keep their order of arrival.
  return events.toSorted((a, b) => a.receivedUs - b.receivedUs);
}

/**
 * The events of `fresh` (in receive order) that are neither in `stored` nor earlier in `fresh`. Two
 * events can be one only at one receive time, so messages are compared only where times collide.
 */
function distinct<E extends StreamEvent>(fresh: readonly E[], stored: readonly E[]): E[] {
  const times = new Map<number, number>();
  for (const e of fresh) times.set(e.receivedUs, (times.get(e.receivedUs) ?? 0) + 1);
  const seen = new Set<string>();
  for (const e of stored) if (times.has(e.receivedUs)) seen.add(eventIdentity(e));
  const storedTimes = new Set(stored.map((e) => e.receivedUs));
  return fresh.filter((e) => {
    if (times.get(e.receivedUs) === 1 && !storedTimes.has(e.receivedUs)) return true;
    const id = eventIdentity(e);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** Merges new events into stored ones (both in receive order); stored first within a receive time. */
function merge<E extends StreamEvent>(stored: readonly E[], fresh: readonly E[]): E[] {
  const out: E[] = [];
  let i = 0;
  let j = 0;
  while (i < stored.length || j < fresh.length) {
    if (j >= fresh.length || (i < stored.length && stored[i].receivedUs <= fresh[j].receivedUs))
      out.push(stored[i++]);
    else out.push(fresh[j++]);
  }
  return out;
}

function decodeAll<E extends StreamEvent>(codec: EventCodec<E>, blocks: readonly StoredBlock[]): E[] {
  return blocks.flatMap((b) => codec.decode(b.data));
}

/**
 * Events written as blocks: those before the tail (or all, without one) sealed in even runs, those
 * from the tail's start on as tail blocks.
 */
function blocksOf<E extends StreamEvent>(
  codec: EventCodec<E>,
  events: readonly E[],
  tailFrom: number | null,
): StoredBlock[] {
  const split = tailFrom === null ? events.length : events.findIndex((e) => e.receivedUs >= tailFrom);
  const sealed = split < 0 ? events : events.slice(0, split);
  const pending = split < 0 ? [] : events.slice(split);
  return [
    ...(sealed.length > 0 ? evenRuns(sealed) : []).map((run) => blockOf(codec, run, "sealed")),
    ...(pending.length > 0 ? cut(pending, BLOCK_EVENTS) : []).map((run) => blockOf(codec, run, "tail")),
  ];
}

/** Appends one stream's events (locked already; in receive order, each once); returns how many were new. */
function* appendFresh<K, E extends StreamEvent>(
  io: EventBlockIo<K>,
  codec: EventCodec<E>,
  key: K,
  fresh: readonly E[],
): Work<number> {
  const fromUs = fresh[0].receivedUs;
  const toUs = fresh.at(-1)!.receivedUs;
  let tail = yield* call(io.tail(key));
  // The live case: past the tail's last event, which is the stream's last, nothing is touched.
  const pastTail = tail !== null && fromUs > tail.lastUs;
  const touched = pastTail ? [] : yield* call(io.blocksWithin(key, fromUs, toUs));
  let added: readonly E[];
  if (touched.length === 0) {
    added = fresh;
    if (tail === null) {
      const end = yield* call(io.lastUs(key));
      // Past the stream's end, the live case's few events start a tail; a bulk write (an import, the
      // demo's seeding: a whole market at once) is sealed as it is written, nothing coming after it.
      if ((end === null || fromUs > end) && fresh.length < BULK_EVENTS)
        tail = { firstUs: fromUs, lastUs: toUs, n: 0 };
    }
    yield* call(io.insert(key, blocksOf(codec, fresh, tail?.firstUs ?? null)));
  } else {
    const stored = decodeAll(codec, touched);
    added = distinct(fresh, stored);
    if (added.length === 0) return 0;
    yield* call(
      io.remove(
        key,
        touched.map((b) => b.firstUs),
      ),
    );
    yield* call(io.insert(key, blocksOf(codec, merge(stored, added), tail?.firstUs ?? null)));
  }
  if (tail !== null) {
    const firstUs = tail.firstUs;
    tail = {
      firstUs,
      lastUs: Math.max(tail.lastUs, toUs),
      n: tail.n + added.filter((e) => e.receivedUs >= firstUs).length,
    };
    if (tail.n >= BLOCK_EVENTS) tail = yield* sealTail(io, codec, key, tail, false);
    yield* call(io.setTail(key, tail));
  }
  return added.length;
}

/**
 * Re-encodes a stream's tail as sealed blocks: all of it when `whole`, else the runs of BLOCK_EVENTS
 * it holds (the rest stays the tail, as one block). Returns the tail left.
 */
function* sealTail<K, E extends StreamEvent>(
  io: EventBlockIo<K>,
  codec: EventCodec<E>,
  key: K,
  tail: Tail,
  whole: boolean,
): Work<Tail | null> {
  const blocks = yield* call(io.blocksWithin(key, tail.firstUs, Number.MAX_SAFE_INTEGER));
  const events = decodeAll(codec, blocks);
  yield* call(
    io.remove(
      key,
      blocks.map((b) => b.firstUs),
    ),
  );
  if (events.length === 0) return null;
  const runs = whole ? evenRuns(events) : cut(events, BLOCK_EVENTS);
  const rest = whole || runs.at(-1)!.length >= BLOCK_EVENTS ? [] : runs.pop()!;
  const written = runs.map((run) => blockOf(codec, run, "sealed"));
  if (rest.length > 0) written.push(blockOf(codec, rest, "tail"));
  yield* call(io.insert(key, written));
  return rest.length === 0
    ? null
    : { firstUs: rest[0].receivedUs, lastUs: rest.at(-1)!.receivedUs, n: rest.length };
}

/**
 * Appends several streams' events in one transaction (streams in the caller's order, which is the
 * order their locks are taken in), then seals a few tails left idle since before the batch.
 */
export function* appendStreams<K, E extends StreamEvent>(
  io: EventBlockIo<K>,
  codec: EventCodec<E>,
  batches: readonly { key: K; events: readonly E[] }[],
): Work<number> {
  const streams = batches.filter((b) => b.events.length > 0);
  if (streams.length === 0) return 0;
  yield* call(io.lock(streams.map((b) => b.key)));
  const tails = yield* call(io.tails(streams.map((b) => b.key)));
  let added = 0;
  let latestUs = -Infinity;
  // The live case, each stream's few events past its tail's last one, is written for all at once.
  const extended: { key: K; block: StoredBlock; tail: Tail }[] = [];
  for (const [i, b] of streams.entries()) {
    const tail = tails[i];
    const fresh = distinct(sortedByReceive(b.events), []);
    latestUs = Math.max(latestUs, fresh.at(-1)!.receivedUs);
    if (tail !== null && fresh[0].receivedUs > tail.lastUs && tail.n + fresh.length < BLOCK_EVENTS) {
      const lastUs = fresh.at(-1)!.receivedUs;
      extended.push({
        key: b.key,
        block: blockOf(codec, fresh, "tail"),
        tail: { firstUs: tail.firstUs, lastUs, n: tail.n + fresh.length },
      });
      added += fresh.length;
    } else {
      added += yield* appendFresh(io, codec, b.key, fresh);
    }
  }
  if (extended.length > 0) yield* call(io.extendTails(extended));
  for (const key of yield* call(io.idleTails(latestUs - SEAL_IDLE_US, IDLE_SEALS_PER_APPEND))) {
    // Skipped when another writer holds it: it seals it, or a later append will.
    if (!(yield* call(io.tryLock(key)))) continue;
    const tail = yield* call(io.tail(key));
    if (tail === null || tail.lastUs >= latestUs - SEAL_IDLE_US) continue;
    yield* call(io.setTail(key, yield* sealTail(io, codec, key, tail, true)));
  }
  return added;
}

/** Which events a read wants: a range of upstream timestamps and a mask of types. */
export interface EventFilter {
  fromMs: number;
  toMs: number;
  types: number;
}

export const ALL_TYPES = 0x7fff_ffff;

export function eventFilter(range: { fromMs?: number; toMs?: number }, types: number): EventFilter {
  return { fromMs: range.fromMs ?? -Infinity, toMs: range.toMs ?? Infinity, types };
}

function mayMatch(h: BlockHeader, f: EventFilter): boolean {
  return h.maxTs >= f.fromMs && h.minTs <= f.toMs && (h.types & f.types) !== 0;
}

function allMatch(h: BlockHeader, f: EventFilter): boolean {
  return h.minTs >= f.fromMs && h.maxTs <= f.toMs && (h.types & ~f.types) === 0;
}

function matching<E extends StreamEvent>(codec: EventCodec<E>, events: E[], f: EventFilter): E[] {
  return events.filter(
    (e) => e.timestampMs >= f.fromMs && e.timestampMs <= f.toMs && (codec.typeBit(e) & f.types) !== 0,
  );
}

function* blockData<K>(io: EventBlockIo<K>, key: K, h: BlockHeader): Work<Uint8Array> {
  const data = yield* call(io.data(key, h.firstUs));
  if (data === null) throw new Error(`event block ${h.firstUs} vanished while read`);
  return data;
}

export function* countEvents<K, E extends StreamEvent>(
  io: EventBlockIo<K>,
  codec: EventCodec<E>,
  key: K,
  f: EventFilter,
): Work<number> {
  let n = 0;
  for (const h of yield* call(io.headers(key, "asc"))) {
    if (!mayMatch(h, f)) continue;
    n += allMatch(h, f) ? h.n : codec.count(yield* blockData(io, key, h), f);
  }
  return n;
}

export function* eventPage<K, E extends StreamEvent>(
  io: EventBlockIo<K>,
  codec: EventCodec<E>,
  key: K,
  f: EventFilter,
  page: { order: SortOrder; limit: number; offset: number },
): Work<E[]> {
  const out: E[] = [];
  let skip = page.offset;
  if (page.limit <= 0) return out;
  for (const h of yield* call(io.headers(key, page.order))) {
    if (!mayMatch(h, f)) continue;
    const whole = allMatch(h, f);
    if (whole && skip >= h.n) {
      skip -= h.n;
      continue;
    }
    const data = yield* blockData(io, key, h);
    const count = whole ? h.n : codec.count(data, f);
    if (skip >= count) {
      skip -= count;
      continue;
    }
    const events = whole ? codec.decode(data) : matching(codec, codec.decode(data), f);
    if (page.order === "desc") events.reverse();
    out.push(...events.slice(skip, skip + page.limit - out.length));
    skip = 0;
    if (out.length >= page.limit) break;
  }
  return out;
}

/** One step of a stream: the first block ending after `afterUs`; null past the end. */
export interface NextBlock {
  (afterUs: number): Promise<StoredBlock | null>;
}

/**
 * A stream's events in receive order, a block at a time, read block by block from where the last
 * ended (so that blocks rewritten meanwhile are read as they are now, never twice or skipped).
 */
export async function* streamEvents<E extends StreamEvent>(
  next: NextBlock,
  codec: EventCodec<E>,
  f: EventFilter,
): AsyncGenerator<E[]> {
  let afterUs = -Infinity;
  for (;;) {
    const block = await next(afterUs);
    if (block === null) return;
    const from = afterUs;
    afterUs = block.lastUs;
    if (!mayMatch(block, f)) continue;
    const events = codec.decode(block.data).filter((e) => e.receivedUs > from);
    const wanted = allMatch(block, f) ? events : matching(codec, events, f);
    if (wanted.length > 0) yield wanted;
  }
}
