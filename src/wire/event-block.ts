import { constants, zstdCompressSync, zstdDecompressSync } from "node:zlib";
import type { CoinEvent, MarketEvent, MarketEventType } from "../domain/event.ts";

/**
 * The compressed block of a stream's events (a market's, or one coin's updates of one topic): what
 * an event store keeps in one row. Lossless: decoding gives back every event as it was encoded, each
 * message with its keys in their order and every value as it was (decimal strings byte for byte).
 *
 * Layout: a format byte, then zstd over a columnar form of the events. The events' receive times
 * (deltas), upstream timestamps (as the difference from the receive time in ms) and types are
 * columns of their own; each message is shredded by path (`price_changes[].size`, ...): at every
 * path a column of value kinds, and a column per kind: numbers (integers as deltas from the path's
 * previous one, others as float64), decimal strings such as "0.510" (digits as an integer delta
 * from the path's previous one, plus the count of decimals, so "0.510" stays "0.510" and "150.0"
 * stays "150.0"), other strings in a dictionary of the block (a reference to an earlier entry, or 0
 * and the entry written once: lowercase hex such as hashes as bytes), arrays' lengths, and objects'
 * key lists (in a dictionary too). A market's id and tokens' ids are thus written once a block, and
 * each column holds values alike, which is what zstd compresses well. Any JSON value, -0, NaN and
 * the infinities are kept; other JavaScript values are refused (a message is what JSON.parse gave).
 */

const FORMAT_COLUMNS = 2;

/** The level of blocks written to last (small, rewritten soon) and of those kept for good. */
export const EVENT_BLOCK_LEVEL = { pending: 1, sealed: 9 } as const;

/** One event as a block holds it: its times, its type (a market event's; "" for coin updates) and its message. */
interface BlockEvent {
  receivedUs: number;
  timestampMs: number;
  type: string;
  message: Readonly<Record<string, unknown>>;
}

const KIND = {
  null: 0,
  false: 1,
  true: 2,
  int: 3,
  float: 4,
  decimal: 5,
  string: 6,
  array: 7,
  object: 8,
} as const;

/** Integers written as deltas stay below this, so that a delta's zigzag form stays exact. */
const INT_LIMIT = 2 ** 50;
const DECIMAL = /^(0|[1-9]\d*)(?:\.(\d+))?$/;
const MAX_DECIMAL_DIGITS = 15;
const HEX = /^(0x)?((?:[0-9a-f]{2})+)$/;
const STRING_FORM = { text: 0, hex: 1, prefixedHex: 2 } as const;

class ByteWriter {
  bytes = new Uint8Array(256);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }

  byte(b: number): void {
    this.room(1);
    this.bytes[this.length++] = b;
  }

  /** An unsigned integer below 2^53, 7 bits a byte. */
  varint(v: number): void {
    this.room(8);
    while (v >= 0x80) {
      this.bytes[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.bytes[this.length++] = v;
  }

  /** A signed integer of magnitude below 2^52. */
  signed(v: number): void {
    this.varint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  raw(b: Uint8Array): void {
    this.room(b.length);
    this.bytes.set(b, this.length);
    this.length += b.length;
  }

  float(v: number): void {
    this.room(8);
    new DataView(this.bytes.buffer).setFloat64(this.length, v, true);
    this.length += 8;
  }
}

class ByteReader {
  private readonly bytes: Uint8Array;
  private at = 0;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  byte(): number {
    if (this.at >= this.bytes.length) throw new Error("event block truncated");
    return this.bytes[this.at++];
  }

  varint(): number {
    let v = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 0x80;
    }
  }

  signed(): number {
    const z = this.varint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  raw(n: number): Uint8Array {
    if (this.at + n > this.bytes.length) throw new Error("event block truncated");
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  float(): number {
    const v = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.at, 8).getFloat64(0, true);
    this.raw(8);
    return v;
  }
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A column being written: its bytes, and its previous integer for deltas. */
class Column extends ByteWriter {
  previous = 0;

  delta(v: number): void {
    this.signed(v - this.previous);
    this.previous = v;
  }
}

/** A dictionary of strings: references (0 and the entry when new, else 1 + its index), and its entries. */
class DictionaryWriter {
  private readonly seen = new Map<string, number>();
  private readonly refs: Column;
  private readonly head: Column;
  private readonly body: Column;

  constructor(columns: ColumnsWriter, name: string) {
    this.refs = columns.column(`${name}@`);
    this.head = columns.column(`${name}#`);
    this.body = columns.column(`${name}$`);
  }

  write(s: string): void {
    const index = this.seen.get(s);
    if (index !== undefined) {
      this.refs.varint(index + 1);
      return;
    }
    this.seen.set(s, this.seen.size);
    this.refs.varint(0);
    const hex = HEX.exec(s);
    const bytes = hex ? Buffer.from(hex[2], "hex") : utf8.encode(s);
    this.head.byte(hex ? (hex[1] ? STRING_FORM.prefixedHex : STRING_FORM.hex) : STRING_FORM.text);
    this.head.varint(bytes.length);
    this.body.raw(bytes);
  }
}

/** The columns of one path of the messages (`price_changes[].size`), made as values need them. */
class PathWriter {
  private readonly columns: ColumnsWriter;
  private readonly name: string;
  readonly kinds: Column;
  private ints?: Column;
  private floats?: Column;
  private scales?: Column;
  private digits?: Column;
  private strings?: DictionaryWriter;
  private shapes?: DictionaryWriter;
  private lengths?: Column;
  private items?: PathWriter;
  private readonly fields = new Map<string, PathWriter>();

  constructor(columns: ColumnsWriter, name: string) {
    this.columns = columns;
    this.name = name;
    this.kinds = columns.column(`${name}:k`);
  }

  value(v: unknown): void {
    const kinds = this.kinds;
    if (v === null) kinds.byte(KIND.null);
    else if (v === false) kinds.byte(KIND.false);
    else if (v === true) kinds.byte(KIND.true);
    else if (typeof v === "number") {
      if (Number.isInteger(v) && Math.abs(v) < INT_LIMIT && !Object.is(v, -0)) {
        kinds.byte(KIND.int);
        (this.ints ??= this.columns.column(`${this.name}:i`)).delta(v);
      } else {
        kinds.byte(KIND.float);
        (this.floats ??= this.columns.column(`${this.name}:f`)).float(v);
      }
    } else if (typeof v === "string") {
      const d = DECIMAL.exec(v);
      if (d && d[1].length + (d[2]?.length ?? 0) <= MAX_DECIMAL_DIGITS) {
        kinds.byte(KIND.decimal);
        (this.scales ??= this.columns.column(`${this.name}:d`)).byte(d[2]?.length ?? 0);
        (this.digits ??= this.columns.column(`${this.name}:m`)).delta(Number(d[1] + (d[2] ?? "")));
      } else {
        kinds.byte(KIND.string);
        (this.strings ??= new DictionaryWriter(this.columns, `${this.name}:s`)).write(v);
      }
    } else if (Array.isArray(v)) {
      kinds.byte(KIND.array);
      (this.lengths ??= this.columns.column(`${this.name}:n`)).varint(v.length);
      const items = (this.items ??= new PathWriter(this.columns, `${this.name}[]`));
      for (const item of v as unknown[]) items.value(item);
    } else if (typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
      kinds.byte(KIND.object);
      const record = v as Record<string, unknown>;
      const keys = Object.keys(record);
      (this.shapes ??= new DictionaryWriter(this.columns, `${this.name}:o`)).write(JSON.stringify(keys));
      for (const k of keys) {
        let field = this.fields.get(k);
        if (!field) this.fields.set(k, (field = new PathWriter(this.columns, `${this.name}.${k}`)));
        field.value(record[k]);
      }
    } else {
      throw new TypeError(`an event message holds ${typeof v}, which JSON does not`);
    }
  }
}

/** The columns of one block being written, by name, in the order they were made. */
class ColumnsWriter {
  private readonly columns = new Map<string, Column>();

  /** A column by name; two paths spelled alike (a key holding ".") share one, read back the same. */
  column(name: string): Column {
    let c = this.columns.get(name);
    if (!c) this.columns.set(name, (c = new Column()));
    return c;
  }

  /** The table of columns (name and length each), then their bytes end to end. */
  finish(): Buffer {
    const table = new ByteWriter();
    table.varint(this.columns.size);
    for (const [name, c] of this.columns) {
      const n = utf8.encode(name);
      table.varint(n.length);
      table.raw(n);
      table.varint(c.length);
    }
    return Buffer.concat([
      table.bytes.subarray(0, table.length),
      ...[...this.columns.values()].map((c) => c.bytes.subarray(0, c.length)),
    ]);
  }
}

const EMPTY = new Uint8Array(0);

/** A column being read, with its previous integer for deltas. */
class ColumnReader extends ByteReader {
  previous = 0;

  delta(): number {
    this.previous += this.signed();
    return this.previous;
  }
}

class DictionaryReader<T = string> {
  private readonly entries: T[] = [];
  private readonly parse: (s: string) => T;
  private readonly refs: ColumnReader;
  private readonly head: ColumnReader;
  private readonly body: ColumnReader;

  constructor(columns: ColumnsReader, name: string, parse: (s: string) => T) {
    this.refs = columns.column(`${name}@`);
    this.head = columns.column(`${name}#`);
    this.body = columns.column(`${name}$`);
    this.parse = parse;
  }

  read(): T {
    const ref = this.refs.varint();
    if (ref > 0) return this.entries[ref - 1];
    const form = this.head.byte();
    const bytes = this.body.raw(this.head.varint());
    const s =
      form === STRING_FORM.text
        ? fromUtf8.decode(bytes)
        : (form === STRING_FORM.prefixedHex ? "0x" : "") + Buffer.from(bytes).toString("hex");
    const entry = this.parse(s);
    this.entries.push(entry);
    return entry;
  }
}

const asString = (s: string) => s;
const asKeys = (s: string) => JSON.parse(s) as string[];

class PathReader {
  private readonly columns: ColumnsReader;
  private readonly name: string;
  private readonly kinds: ColumnReader;
  private ints?: ColumnReader;
  private floats?: ColumnReader;
  private scales?: ColumnReader;
  private digits?: ColumnReader;
  private strings?: DictionaryReader;
  private shapes?: DictionaryReader<string[]>;
  private lengths?: ColumnReader;
  private items?: PathReader;
  private readonly fields = new Map<string, PathReader>();

  constructor(columns: ColumnsReader, name: string) {
    this.columns = columns;
    this.name = name;
    this.kinds = columns.column(`${name}:k`);
  }

  value(): unknown {
    const kind = this.kinds.byte();
    switch (kind) {
      case KIND.null:
        return null;
      case KIND.false:
        return false;
      case KIND.true:
        return true;
      case KIND.int:
        return (this.ints ??= this.columns.column(`${this.name}:i`)).delta();
      case KIND.float:
        return (this.floats ??= this.columns.column(`${this.name}:f`)).float();
      case KIND.decimal: {
        const scale = (this.scales ??= this.columns.column(`${this.name}:d`)).byte();
        const digits = String((this.digits ??= this.columns.column(`${this.name}:m`)).delta());
        if (scale === 0) return digits;
        const padded = digits.length > scale ? digits : digits.padStart(scale + 1, "0");
        return `${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
      }
      case KIND.string:
        return (this.strings ??= new DictionaryReader(this.columns, `${this.name}:s`, asString)).read();
      case KIND.array: {
        const n = (this.lengths ??= this.columns.column(`${this.name}:n`)).varint();
        const items = (this.items ??= new PathReader(this.columns, `${this.name}[]`));
        const out: unknown[] = new Array<unknown>(n);
        for (let i = 0; i < n; i++) out[i] = items.value();
        return out;
      }
      case KIND.object: {
        const keys = (this.shapes ??= new DictionaryReader(this.columns, `${this.name}:o`, asKeys)).read();
        const out: Record<string, unknown> = {};
        for (const k of keys) {
          let field = this.fields.get(k);
          if (!field) this.fields.set(k, (field = new PathReader(this.columns, `${this.name}.${k}`)));
          const v = field.value();
          // An own "__proto__" (JSON.parse makes one) must stay a field, not become the prototype.
          if (k === "__proto__")
            Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
          else out[k] = v;
        }
        return out;
      }
      default:
        throw new Error(`event block holds an unknown value kind ${kind}`);
    }
  }
}

class ColumnsReader {
  private readonly columns = new Map<string, ColumnReader>();

  constructor(bytes: Uint8Array) {
    const table = new ByteReader(bytes);
    const sizes: [string, number][] = [];
    for (let i = table.varint(); i > 0; i--) {
      const name = fromUtf8.decode(table.raw(table.varint()));
      sizes.push([name, table.varint()]);
    }
    for (const [name, size] of sizes) this.columns.set(name, new ColumnReader(table.raw(size)));
  }

  /** A column by name (the same object for every path spelled alike); empty when the block has none. */
  column(name: string): ColumnReader {
    let c = this.columns.get(name);
    if (!c) this.columns.set(name, (c = new ColumnReader(EMPTY)));
    return c;
  }
}

function encodeBlock(events: readonly BlockEvent[], level: number): Buffer {
  const w = new ColumnsWriter();
  w.column("n").varint(events.length);
  const received = w.column("received");
  const timestamps = w.column("timestamp");
  const types = new DictionaryWriter(w, "type");
  for (const e of events) {
    received.delta(e.receivedUs);
    timestamps.signed(e.timestampMs - Math.floor(e.receivedUs / 1000));
    types.write(e.type);
  }
  const messages = new PathWriter(w, "");
  for (const e of events) messages.value(e.message);
  const body = zstdCompressSync(w.finish(), { params: { [constants.ZSTD_c_compressionLevel]: level } });
  return Buffer.concat([Buffer.of(FORMAT_COLUMNS), body]);
}

function readColumns(bytes: Uint8Array): ColumnsReader {
  if (bytes[0] !== FORMAT_COLUMNS) throw new Error(`event block of unknown format ${bytes[0]}`);
  return new ColumnsReader(zstdDecompressSync(bytes.subarray(1)));
}

/** The receive times, timestamps and types of a block's events, without their messages. */
export interface BlockIndex {
  receivedUs: number[];
  timestampMs: number[];
  types: string[];
}

function readIndex(r: ColumnsReader): BlockIndex {
  const n = r.column("n").varint();
  const index: BlockIndex = { receivedUs: [], timestampMs: [], types: [] };
  const received = r.column("received");
  const timestamps = r.column("timestamp");
  const types = new DictionaryReader(r, "type", asString);
  for (let i = 0; i < n; i++) {
    const us = received.delta();
    index.receivedUs.push(us);
    index.timestampMs.push(Math.floor(us / 1000) + timestamps.signed());
    index.types.push(types.read());
  }
  return index;
}

function decodeBlock(bytes: Uint8Array): BlockEvent[] {
  const r = readColumns(bytes);
  const index = readIndex(r);
  const messages = new PathReader(r, "");
  return index.receivedUs.map((receivedUs, i) => ({
    receivedUs,
    timestampMs: index.timestampMs[i],
    type: index.types[i],
    message: messages.value() as Record<string, unknown>,
  }));
}

export function decodeEventBlockIndex(bytes: Uint8Array): BlockIndex {
  return readIndex(readColumns(bytes));
}

export function encodeMarketEvents(events: readonly MarketEvent[], level: number): Buffer {
  return encodeBlock(events, level);
}

export function decodeMarketEvents(bytes: Uint8Array): MarketEvent[] {
  return decodeBlock(bytes).map((e) => ({
    receivedUs: e.receivedUs,
    timestampMs: e.timestampMs,
    type: e.type as MarketEventType,
    message: e.message,
  }));
}

/** A coin-price update as a block of one coin and topic holds it (the coin and topic are the block's). */
export type CoinUpdate = Omit<CoinEvent, "coin" | "topic">;

export function encodeCoinUpdates(events: readonly CoinUpdate[], level: number): Buffer {
  return encodeBlock(
    events.map((e) => ({
      receivedUs: e.receivedUs,
      timestampMs: e.timestampMs,
      type: "",
      message: e.message,
    })),
    level,
  );
}

export function decodeCoinUpdates(bytes: Uint8Array): CoinUpdate[] {
  return decodeBlock(bytes).map((e) => ({
    receivedUs: e.receivedUs,
    timestampMs: e.timestampMs,
    message: e.message,
  }));
}
