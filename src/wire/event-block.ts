import { deserialize, serialize } from "node:v8";
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

const FORMAT_COLUMNS = 4;

/**
 * How a block is written: `sealed`, the columnar form under zstd level 3, for blocks kept; `tail`,
 * for the few events a live append adds (re-encoded sealed soon after): V8's serialization of the
 * events as they are (node:v8, lossless for what JSON.parse makes, -0 and NaN included), uncompressed,
 * as setting up columns and a zstd context costs far more than a few events are worth. V8 reads
 * every earlier version of its format, so a tail written by an older Node stays readable.
 */
export type BlockForm = "tail" | "sealed";

const FORMAT_TAIL = 3;
/**
 * Level 3, not 9: on the storage bench's events level 9 saves 0.6 % of the bytes on disk (50.21 against
 * 50.48 B/event) at about eight times the CPU, which an archive import pays on every event.
 */
const ZSTD_OPTIONS = { params: { [constants.ZSTD_c_compressionLevel]: 3 } };
/** Columns shorter than this are stored as they are. */
const MIN_PACKED = 64;
const COLUMN_FORM = { raw: 0, zstd: 1 } as const;

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
  /** The event's own timestamp as a decimal string ("1786604072222"): the index has it already. */
  eventTimestamp: 9,
  /** The event's own timestamp as a number. */
  eventTimestampNumber: 10,
} as const;

/** Integers written as deltas stay below this, so that a delta's zigzag form stays exact. */
const INT_LIMIT = 2 ** 50;
const MAX_DECIMAL_DIGITS = 15;

/** decimalScale's digits of the last string it read as a decimal ("0.510": 510). */
let scannedDigits = 0;

/**
 * The count of decimals of a decimal string written as digits are ("0", "0.510", "150.0", "12": no
 * sign, no exponent, no leading zero but a lone one before the point, at most 15 digits, so that the
 * digits are an exact integer), its digits as one integer left in `scannedDigits`; -1 for any other
 * string. One pass: this runs on every string of every event an import or a recording writes.
 */
function decimalScale(s: string): number {
  const n = s.length;
  if (n === 0 || n > MAX_DECIMAL_DIGITS + 1) return -1;
  let point = -1;
  let v = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (point >= 0 || i === 0 || i === n - 1) return -1;
      point = i;
    } else if (c < 48 || c > 57) return -1;
    else v = v * 10 + (c - 48);
  }
  // A leading zero only alone before the point ("0", "0.5"; not "007" or "01.5").
  if (s.charCodeAt(0) === 48 && n > 1 && point !== 1) return -1;
  const digits = point < 0 ? n : n - 1;
  if (digits > MAX_DECIMAL_DIGITS) return -1;
  scannedDigits = v;
  return point < 0 ? 0 : n - point - 1;
}

const HEX = /^(0x)?((?:[0-9a-f]{2})+)$/;
const STRING_FORM = { text: 0, hex: 1, prefixedHex: 2 } as const;

class ByteWriter {
  bytes = new Uint8Array(32);
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
    if (v < 0x80) {
      this.bytes[this.length++] = v;
      return;
    }
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
    // Most varints are one byte (lengths, references, small deltas).
    const first = this.at < this.bytes.length ? this.bytes[this.at] : 0x80;
    if (first < 0x80) {
      this.at++;
      return first;
    }
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
  private lastKeys: string[] | null = null;
  private lastShape = "";
  private lastFields: PathWriter[] = [];

  constructor(columns: ColumnsWriter, name: string) {
    this.columns = columns;
    this.name = name;
    this.kinds = columns.column(`${name}:k`);
  }

  /** Whether an object's own keys are, in order, those of the last object written at this path. */
  private sameShape(record: Record<string, unknown>): boolean {
    const last = this.lastKeys;
    if (last === null) return false;
    let i = 0;
    for (const k in record) {
      if (!Object.hasOwn(record, k)) return false;
      if (i >= last.length || last[i] !== k) return false;
      i++;
    }
    return i === last.length;
  }

  value(v: unknown): void {
    const kinds = this.kinds;
    if (v === null) kinds.byte(KIND.null);
    else if (v === false) kinds.byte(KIND.false);
    else if (v === true) kinds.byte(KIND.true);
    else if (typeof v === "number") {
      if (v === this.columns.eventTimestamp && !Object.is(v, -0)) kinds.byte(KIND.eventTimestampNumber);
      else if (Number.isInteger(v) && Math.abs(v) < INT_LIMIT && !Object.is(v, -0)) {
        kinds.byte(KIND.int);
        (this.ints ??= this.columns.column(`${this.name}:i`)).delta(v);
      } else {
        kinds.byte(KIND.float);
        (this.floats ??= this.columns.column(`${this.name}:f`)).float(v);
      }
    } else if (typeof v === "string") {
      const scale = decimalScale(v);
      if (scale === 0 && scannedDigits === this.columns.eventTimestamp) kinds.byte(KIND.eventTimestamp);
      else if (scale >= 0) {
        kinds.byte(KIND.decimal);
        (this.scales ??= this.columns.column(`${this.name}:d`)).byte(scale);
        (this.digits ??= this.columns.column(`${this.name}:m`)).delta(scannedDigits);
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
      // Objects at a path mostly have one shape: its key list is compared in place (no Object.keys
      // array made), not written out again.
      if (!this.sameShape(record)) {
        const keys = Object.keys(record);
        this.lastKeys = keys;
        this.lastShape = JSON.stringify(keys);
        this.lastFields = keys.map((k) => {
          let field = this.fields.get(k);
          if (!field) this.fields.set(k, (field = new PathWriter(this.columns, `${this.name}.${k}`)));
          return field;
        });
      }
      (this.shapes ??= new DictionaryWriter(this.columns, `${this.name}:o`)).write(this.lastShape);
      const fields = this.lastFields;
      const keys = this.lastKeys as string[];
      for (let i = 0; i < keys.length; i++) fields[i].value(record[keys[i]]);
    } else {
      throw new TypeError(`an event message holds ${typeof v}, which JSON does not`);
    }
  }
}

/** The columns of one block being written, by name, in the order they were made. */
class ColumnsWriter {
  private readonly columns = new Map<string, Column>();
  /** The timestamp of the event whose message is being written. */
  eventTimestamp = Number.NaN;

  /** A column by name; two paths spelled alike (a key holding ".") share one, read back the same. */
  column(name: string): Column {
    let c = this.columns.get(name);
    if (!c) this.columns.set(name, (c = new Column()));
    return c;
  }

  /**
   * The table of columns (name, form and stored length each), then their bytes end to end, each
   * compressed on its own when that makes it smaller: zstd then models each column's values alone
   * (measured: about 2 % smaller than one frame over all of them, the hashes' random bytes apart).
   */
  finish(): Buffer {
    const table = new ByteWriter();
    const bodies: Uint8Array[] = [];
    table.varint(this.columns.size);
    for (const [name, c] of this.columns) {
      const raw = c.bytes.subarray(0, c.length);
      const packed = raw.length >= MIN_PACKED ? zstdCompressSync(raw, ZSTD_OPTIONS) : null;
      const body = packed !== null && packed.length < raw.length ? packed : raw;
      const n = utf8.encode(name);
      table.varint(n.length);
      table.raw(n);
      table.byte(body === raw ? COLUMN_FORM.raw : COLUMN_FORM.zstd);
      table.varint(body.length);
      bodies.push(body);
    }
    return Buffer.concat([Buffer.of(FORMAT_COLUMNS), table.bytes.subarray(0, table.length), ...bodies]);
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

/** Decimal texts a path's reader keeps at most. */
const DECIMAL_TEXTS = 4_096;
/** Digits below this make an exact key with their scale (below 16): digits * 16 + scale < 2^53. */
const DECIMAL_KEY_LIMIT = 2 ** 49;

/** The text of a decimal of `digits` with `scale` decimals (510, 3: "0.510"). */
function decimalText(value: number, scale: number): string {
  const digits = String(value);
  if (scale === 0) return digits;
  const padded = digits.length > scale ? digits : digits.padStart(scale + 1, "0");
  return `${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
}
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
  /** Decimal texts by digits and scale (digits * 16 + scale, for digits below DECIMAL_KEY_LIMIT). */
  private decimals?: Map<number, string>;
  private readonly fields = new Map<string, PathReader>();
  /** Each key list's readers (by the dictionary's entry, read once a block per shape). */
  private readonly shapeFields = new Map<readonly string[], PathReader[]>();

  constructor(columns: ColumnsReader, name: string) {
    this.columns = columns;
    this.name = name;
    this.kinds = columns.column(`${name}:k`);
  }

  private fieldsOf(keys: readonly string[]): PathReader[] {
    let readers = this.shapeFields.get(keys);
    if (!readers) {
      readers = keys.map((k) => {
        let field = this.fields.get(k);
        if (!field) this.fields.set(k, (field = new PathReader(this.columns, `${this.name}.${k}`)));
        return field;
      });
      this.shapeFields.set(keys, readers);
    }
    return readers;
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
      case KIND.eventTimestamp:
        return this.columns.eventTimestampText();
      case KIND.eventTimestampNumber:
        return this.columns.eventTimestamp;
      case KIND.int:
        return (this.ints ??= this.columns.column(`${this.name}:i`)).delta();
      case KIND.float:
        return (this.floats ??= this.columns.column(`${this.name}:f`)).float();
      case KIND.decimal: {
        const scale = (this.scales ??= this.columns.column(`${this.name}:d`)).byte();
        const digits = (this.digits ??= this.columns.column(`${this.name}:m`)).delta();
        // A path's decimals repeat (prices on a tick grid): each text is made once.
        if (digits >= DECIMAL_KEY_LIMIT) return decimalText(digits, scale);
        const key = digits * 16 + scale;
        const decimals = (this.decimals ??= new Map());
        let text = decimals.get(key);
        if (text === undefined) {
          if (decimals.size >= DECIMAL_TEXTS) decimals.clear();
          decimals.set(key, (text = decimalText(digits, scale)));
        }
        return text;
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
        const fields = this.fieldsOf(keys);
        if (!keys.includes("__proto__")) {
          for (let i = 0; i < keys.length; i++) out[keys[i]] = fields[i].value();
          return out;
        }
        for (let i = 0; i < keys.length; i++) {
          const k = keys[i];
          const v = fields[i].value();
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
  /** The timestamp of the event whose message is being read. */
  eventTimestamp = Number.NaN;
  private timestampText = "";
  private timestampOfText = Number.NaN;

  /** The event's timestamp as text, made once for events in a row that share it. */
  eventTimestampText(): string {
    if (this.timestampOfText !== this.eventTimestamp) {
      this.timestampOfText = this.eventTimestamp;
      this.timestampText = String(this.eventTimestamp);
    }
    return this.timestampText;
  }

  constructor(bytes: Uint8Array) {
    const table = new ByteReader(bytes);
    const sizes: [string, number, number][] = [];
    for (let i = table.varint(); i > 0; i--) {
      const name = fromUtf8.decode(table.raw(table.varint()));
      sizes.push([name, table.byte(), table.varint()]);
    }
    for (const [name, form, size] of sizes) {
      const body = table.raw(size);
      this.columns.set(name, new ColumnReader(form === COLUMN_FORM.zstd ? zstdDecompressSync(body) : body));
    }
  }

  /** A column by name (the same object for every path spelled alike); empty when the block has none. */
  column(name: string): ColumnReader {
    let c = this.columns.get(name);
    if (!c) this.columns.set(name, (c = new ColumnReader(EMPTY)));
    return c;
  }
}

function encodeBlock(events: readonly BlockEvent[], form: BlockForm): Buffer {
  if (form === "tail") {
    for (const e of events) checkJson(e.message);
    const rows = events.map((e) => [e.receivedUs, e.timestampMs, e.type, e.message]);
    return Buffer.concat([Buffer.of(FORMAT_TAIL), serialize(rows)]);
  }
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
  for (const e of events) {
    w.eventTimestamp = e.timestampMs;
    messages.value(e.message);
  }
  return w.finish();
}

/** Refuses what JSON does not have, as the columnar form does (V8 would keep a Date or a bigint). */
function checkJson(v: unknown): void {
  if (v === null || typeof v === "boolean" || typeof v === "number" || typeof v === "string") return;
  if (Array.isArray(v)) for (const item of v as unknown[]) checkJson(item);
  else if (typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype)
    for (const item of Object.values(v)) checkJson(item);
  else throw new TypeError(`an event message holds ${typeof v}, which JSON does not`);
}

function readTail(bytes: Uint8Array): BlockEvent[] {
  const rows = deserialize(bytes.subarray(1)) as [number, number, string, Record<string, unknown>][];
  return rows.map(([receivedUs, timestampMs, type, message]) => ({ receivedUs, timestampMs, type, message }));
}

function readColumns(bytes: Uint8Array): ColumnsReader {
  if (bytes[0] !== FORMAT_COLUMNS) throw new Error(`event block of unknown format ${bytes[0]}`);
  return new ColumnsReader(bytes.subarray(1));
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
  if (bytes[0] === FORMAT_TAIL) return readTail(bytes);
  const r = readColumns(bytes);
  const index = readIndex(r);
  const messages = new PathReader(r, "");
  return index.receivedUs.map((receivedUs, i) => {
    r.eventTimestamp = index.timestampMs[i];
    return {
      receivedUs,
      timestampMs: index.timestampMs[i],
      type: index.types[i],
      message: messages.value() as Record<string, unknown>,
    };
  });
}

export function decodeEventBlockIndex(bytes: Uint8Array): BlockIndex {
  if (bytes[0] !== FORMAT_TAIL) return readIndex(readColumns(bytes));
  const events = readTail(bytes);
  return {
    receivedUs: events.map((e) => e.receivedUs),
    timestampMs: events.map((e) => e.timestampMs),
    types: events.map((e) => e.type),
  };
}

export function encodeMarketEvents(events: readonly MarketEvent[], form: BlockForm): Buffer {
  return encodeBlock(events, form);
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

export function encodeCoinUpdates(events: readonly CoinUpdate[], form: BlockForm): Buffer {
  return encodeBlock(
    events.map((e) => ({
      receivedUs: e.receivedUs,
      timestampMs: e.timestampMs,
      type: "",
      message: e.message,
    })),
    form,
  );
}

export function decodeCoinUpdates(bytes: Uint8Array): CoinUpdate[] {
  return decodeBlock(bytes).map((e) => ({
    receivedUs: e.receivedUs,
    timestampMs: e.timestampMs,
    message: e.message,
  }));
}
