/**
 * Thrift's compact protocol, read into plain values and written from them: what Parquet's footer and
 * page headers are written in (https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md).
 * A struct is read whole into a map of field id to value; the caller picks the fields it knows.
 * Integers beyond 2^53 lose precision (no Parquet field read or written here can hold one: offsets,
 * sizes, counts, microseconds).
 */

export type ThriftValue = number | boolean | Buffer | ThriftValue[] | ThriftStruct;
export type ThriftStruct = Map<number, ThriftValue>;

const STOP = 0;
const TRUE = 1;
const FALSE = 2;
const BYTE = 3;
const I16 = 4;
const I32 = 5;
const I64 = 6;
const DOUBLE = 7;
const BINARY = 8;
const LIST = 9;
const SET = 10;
const MAP = 11;
const STRUCT = 12;

/** A cursor over bytes in the compact protocol; throws a RangeError when the bytes end early. */
export class ThriftReader {
  pos: number;

  private readonly bytes: Buffer;

  constructor(bytes: Buffer, start = 0) {
    this.bytes = bytes;
    this.pos = start;
  }

  private byte(): number {
    if (this.pos >= this.bytes.length) throw new RangeError("thrift: bytes end inside a value");
    return this.bytes[this.pos++];
  }

  private varint(): number {
    let result = 0;
    let multiplier = 1;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * multiplier;
      if (b < 0x80) return result;
      multiplier *= 128;
      if (multiplier > 2 ** 70) throw new RangeError("thrift: varint too long");
    }
  }

  private zigzag(): number {
    const n = this.varint();
    // n is exact below 2^53; an odd n is a negative value.
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }

  readStruct(): ThriftStruct {
    const fields: ThriftStruct = new Map();
    let id = 0;
    for (;;) {
      const header = this.byte();
      const type = header & 0x0f;
      if (type === STOP) return fields;
      const delta = header >> 4;
      id = delta === 0 ? this.zigzag() : id + delta;
      fields.set(id, this.value(type));
    }
  }

  private value(type: number): ThriftValue {
    switch (type) {
      case TRUE:
        return true;
      case FALSE:
        return false;
      case BYTE: {
        const b = this.byte();
        return b > 127 ? b - 256 : b;
      }
      case I16:
      case I32:
      case I64:
        return this.zigzag();
      case DOUBLE: {
        if (this.pos + 8 > this.bytes.length) throw new RangeError("thrift: bytes end inside a double");
        const v = this.bytes.readDoubleLE(this.pos);
        this.pos += 8;
        return v;
      }
      case BINARY: {
        const length = this.varint();
        if (this.pos + length > this.bytes.length) throw new RangeError("thrift: bytes end inside a binary");
        const v = this.bytes.subarray(this.pos, this.pos + length);
        this.pos += length;
        return v;
      }
      case LIST:
      case SET: {
        const header = this.byte();
        const size = header >> 4 === 15 ? this.varint() : header >> 4;
        const elementType = header & 0x0f;
        const list: ThriftValue[] = [];
        // In a list a boolean is a byte of its own (1 true, otherwise false).
        for (let i = 0; i < size; i++)
          list.push(
            elementType === TRUE || elementType === FALSE ? this.byte() === TRUE : this.value(elementType),
          );
        return list;
      }
      case MAP: {
        const size = this.varint();
        if (size === 0) return [];
        const types = this.byte();
        const entries: ThriftValue[] = [];
        for (let i = 0; i < size; i++) entries.push([this.value(types >> 4), this.value(types & 0x0f)]);
        return entries;
      }
      case STRUCT:
        return this.readStruct();
      default:
        throw new RangeError(`thrift: unknown type ${type}`);
    }
  }
}

export function num(s: ThriftStruct, id: number): number | undefined {
  const v = s.get(id);
  return typeof v === "number" ? v : undefined;
}

export function struct(s: ThriftStruct, id: number): ThriftStruct | undefined {
  const v = s.get(id);
  return v instanceof Map ? v : undefined;
}

export function list(s: ThriftStruct, id: number): ThriftValue[] {
  const v = s.get(id);
  return Array.isArray(v) ? v : [];
}

export function text(s: ThriftStruct, id: number): string | undefined {
  const v = s.get(id);
  return Buffer.isBuffer(v) ? v.toString("utf8") : undefined;
}

/** A struct's fields, in increasing id order, for ThriftWriter: each a type and its value. */
export type ThriftFields = readonly (readonly [id: number, value: ThriftOut])[];

/** A value to write, tagged with its Thrift type (numbers alone do not say whether i32 or i64). */
export type ThriftOut =
  | { readonly i16: number }
  | { readonly i32: number }
  | { readonly i64: number }
  | { readonly bool: boolean }
  | { readonly binary: string | Uint8Array }
  | { readonly struct: ThriftFields }
  | { readonly list: readonly ThriftOut[] };

const encoder = new TextEncoder();

function typeOf(v: ThriftOut): number {
  if ("i16" in v) return I16;
  if ("i32" in v) return I32;
  if ("i64" in v) return I64;
  if ("bool" in v) return v.bool ? TRUE : FALSE;
  if ("binary" in v) return BINARY;
  if ("struct" in v) return STRUCT;
  return LIST;
}

/**
 * Appends `n` (0 to 2^54) as an unsigned varint (ULEB128): Thrift's integers, and the run headers of
 * Parquet's RLE/bit-packed hybrid, are written so.
 */
export function pushVarint(out: number[], n: number): void {
  // Arithmetic, not bitwise: values reach 2^53 (zigzagged, 2^54).
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
}

/** Writes structs in the compact protocol, as ThriftReader reads them. */
export class ThriftWriter {
  private readonly out: number[] = [];

  /** The bytes of `fields` as one struct. */
  static struct(fields: ThriftFields): Uint8Array {
    const w = new ThriftWriter();
    w.writeStruct(fields);
    return Uint8Array.from(w.out);
  }

  private varint(n: number): void {
    pushVarint(this.out, n);
  }

  private zigzag(n: number): void {
    this.varint(n >= 0 ? 2 * n : -2 * n - 1);
  }

  private writeStruct(fields: ThriftFields): void {
    let last = 0;
    for (const [id, value] of fields) {
      const type = typeOf(value);
      if (id > last && id - last <= 15) this.out.push(((id - last) << 4) | type);
      else {
        this.out.push(type);
        this.zigzag(id);
      }
      last = id;
      // A boolean field is all in its header's type.
      if (type !== TRUE && type !== FALSE) this.value(value);
    }
    this.out.push(STOP);
  }

  private value(v: ThriftOut): void {
    if ("i16" in v) this.zigzag(v.i16);
    else if ("i32" in v) this.zigzag(v.i32);
    else if ("i64" in v) this.zigzag(v.i64);
    else if ("bool" in v) this.out.push(v.bool ? TRUE : FALSE);
    else if ("binary" in v) {
      const bytes = typeof v.binary === "string" ? encoder.encode(v.binary) : v.binary;
      this.varint(bytes.length);
      for (const b of bytes) this.out.push(b);
    } else if ("struct" in v) this.writeStruct(v.struct);
    else {
      const type = v.list.length > 0 ? typeOf(v.list[0]) : STRUCT;
      // In a list a boolean is a byte of its own, whose type is TRUE.
      const elementType = type === FALSE ? TRUE : type;
      if (v.list.length < 15) this.out.push((v.list.length << 4) | elementType);
      else {
        this.out.push(0xf0 | elementType);
        this.varint(v.list.length);
      }
      for (const item of v.list) this.value(item);
    }
  }
}
