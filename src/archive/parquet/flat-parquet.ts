import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { promisify } from "node:util";
import {
  brotliDecompress,
  brotliDecompressSync,
  gunzip,
  gunzipSync,
  zstdDecompress,
  zstdDecompressSync,
} from "node:zlib";
import { list, num, struct, text, ThriftReader, type ThriftStruct } from "./thrift.ts";

/**
 * A reader of flat Parquet files (every column a leaf of the root, none repeated), made to read a few
 * rows of a large row group fast: a column chunk's pages are found by their headers, and a page none
 * of whose rows is asked is skipped without being decompressed or decoded; a page that is asked is
 * decompressed by Node's own zstd, gzip or brotli, and its values are decoded in place, never copied
 * into objects but the ones asked for (a dictionary value once, however many rows use it).
 *
 * It reads what the common writers write (pyarrow, arrow-rs, parquet-mr, DuckDB, polars with default
 * settings): data pages v1 and v2, PLAIN and dictionary encodings (PLAIN_DICTIONARY, RLE_DICTIONARY),
 * definition levels in RLE or BIT_PACKED, codecs UNCOMPRESSED, GZIP, BROTLI and ZSTD, physical types
 * INT32, INT64, BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY. A file with anything else (a nested column, a
 * DELTA or BYTE_STREAM_SPLIT encoding, Snappy or LZ4) opens as UnsupportedParquetError, so that the
 * caller can read it with a general reader (src/archive/pmxt-file.ts falls back to parquet-wasm).
 *
 * Format: https://github.com/apache/parquet-format (parquet.thrift, Encodings.md).
 */

/** A valid Parquet file this reader does not read (the reason says which feature). */
export class UnsupportedParquetError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "UnsupportedParquetError";
  }
}

/** Bytes that are not a Parquet file, or a file cut short. */
export class ParquetFormatError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "ParquetFormatError";
  }
}

export const PhysicalType = { INT32: 1, INT64: 2, BYTE_ARRAY: 6, FIXED_LEN_BYTE_ARRAY: 7 } as const;
const TYPE_NAMES = [
  "BOOLEAN",
  "INT32",
  "INT64",
  "INT96",
  "FLOAT",
  "DOUBLE",
  "BYTE_ARRAY",
  "FIXED_LEN_BYTE_ARRAY",
];

const ENCODING = { PLAIN: 0, PLAIN_DICTIONARY: 2, RLE: 3, BIT_PACKED: 4, RLE_DICTIONARY: 8 } as const;
const READ_ENCODINGS = new Set<number>(Object.values(ENCODING));
const CODEC = { UNCOMPRESSED: 0, GZIP: 2, BROTLI: 4, ZSTD: 6 } as const;
const READ_CODECS = new Set<number>(Object.values(CODEC));
const PAGE = { DATA: 0, DICTIONARY: 2, DATA_V2: 3 } as const;
const zstdDecompressAsync = promisify(zstdDecompress);
/**
 * Pages smaller than this are decompressed in line: zlib's asynchronous call costs the JavaScript
 * thread about 70 µs (a stream is set up for it), what decompressing some 64 KiB costs.
 */
const ASYNC_PAGE_BYTES = 65_536;
const gunzipAsync = promisify(gunzip);
const brotliDecompressAsync = promisify(brotliDecompress);

export interface FlatColumn {
  name: string;
  /** PhysicalType's value. */
  type: number;
  /** Bytes of a FIXED_LEN_BYTE_ARRAY value. */
  typeLength: number;
  optional: boolean;
  /** A DECIMAL's scale (from its logical or converted type); null when not a decimal. */
  decimalScale: number | null;
  /** A TIMESTAMP's unit ("MILLIS", "MICROS", "NANOS"); null when not a timestamp. */
  timestampUnit: string | null;
}

interface ColumnChunk {
  column: FlatColumn;
  codec: number;
  start: number;
  length: number;
}

export interface FlatRowGroup {
  rows: number;
  chunks: ReadonlyMap<string, ColumnChunk>;
}

/** A page's values in place: fixed-width values at `width` bytes each, or byte arrays at their bounds. */
export class PlainValues {
  readonly bytes: Buffer;
  /** Byte offset of each value (byte arrays: of its first byte, after the length); null for fixed widths. */
  private readonly starts: Int32Array | null;
  private readonly ends: Int32Array | null;
  readonly width: number;
  private readonly base: number;
  /** The count of values. */
  readonly count: number;

  constructor(
    bytes: Buffer,
    starts: Int32Array | null,
    ends: Int32Array | null,
    width: number,
    base: number,
    count: number,
  ) {
    this.count = count;
    this.bytes = bytes;
    this.starts = starts;
    this.ends = ends;
    this.width = width;
    this.base = base;
  }

  start(i: number): number {
    return this.starts ? this.starts[i] : this.base + i * this.width;
  }

  end(i: number): number {
    return this.ends ? this.ends[i] : this.base + (i + 1) * this.width;
  }

  int32(i: number): number {
    return this.bytes.readInt32LE(this.base + i * 4);
  }

  /** An INT64 as a number (exact within 2^53, as timestamps in ms and decimals of 15 digits are). */
  int64(i: number): number {
    const at = this.base + i * 8;
    return this.bytes.readInt32LE(at + 4) * 4294967296 + this.bytes.readUInt32LE(at);
  }
}

/** One decoded data page of a column. */
export class DataPage {
  readonly firstRow: number;
  readonly rows: number;
  /** The value index of each row of the page, -1 where null; null when every row has a value. */
  readonly valueOfRow: Int32Array | null;
  /** Dictionary-encoded: each value's index into the dictionary; null when the page is PLAIN. */
  readonly indices: Int32Array | null;
  readonly values: PlainValues;

  constructor(
    firstRow: number,
    rows: number,
    valueOfRow: Int32Array | null,
    indices: Int32Array | null,
    values: PlainValues,
  ) {
    this.firstRow = firstRow;
    this.rows = rows;
    this.valueOfRow = valueOfRow;
    this.indices = indices;
    this.values = values;
  }

  /** Row `row` (of the row group)'s value index in `values` (or the dictionary), -1 when null. */
  valueIndex(row: number): number {
    const i = row - this.firstRow;
    const v = this.valueOfRow ? this.valueOfRow[i] : i;
    return v < 0 || !this.indices ? v : this.indices[v];
  }

  /** Every row of the page has a value. */
  get complete(): boolean {
    return this.valueOfRow === null;
  }

  get dictionaryEncoded(): boolean {
    return this.indices !== null;
  }
}

/** A page of a column chunk, decoded on demand. */
export interface PageRef {
  firstRow: number;
  rows: number;
  decode(): DataPage;
  /**
   * decode(), its decompression run on libuv's thread pool (beside the JavaScript thread) unless the
   * page is smaller than `inLineBelow` bytes (64 KiB).
   */
  decodeAsync(inLineBelow?: number): Promise<DataPage>;
}

/**
 * Pages decoded in their order, up to `ahead` of them decompressing at once on the thread pool: what
 * lets a reader use the machine's other cores while it converts the pages already decoded.
 */
export async function* decodedInOrder(
  refs: readonly PageRef[],
  ahead = 8,
  inLineBelow?: number,
): AsyncGenerator<DataPage> {
  const inFlight: Promise<DataPage>[] = [];
  let next = 0;
  const start = () => {
    const page = refs[next++].decodeAsync(inLineBelow);
    // Awaited in turn below; a failure before its turn must not count as unhandled meanwhile.
    page.catch(() => undefined);
    inFlight.push(page);
  };
  while (next < refs.length && inFlight.length < ahead) start();
  while (inFlight.length > 0) {
    const page = await (inFlight.shift() as Promise<DataPage>);
    if (next < refs.length) start();
    yield page;
  }
}

export class FlatParquet {
  readonly columns: ReadonlyMap<string, FlatColumn>;
  readonly rowGroups: readonly FlatRowGroup[];

  private readonly fd: number;

  private constructor(fd: number, columns: Map<string, FlatColumn>, rowGroups: FlatRowGroup[]) {
    this.fd = fd;
    this.columns = columns;
    this.rowGroups = rowGroups;
  }

  /** Opens a file and reads its footer: ParquetFormatError when it is not Parquet or is cut short. */
  static open(path: string): FlatParquet {
    const fd = openSync(path, "r");
    try {
      const { columns, rowGroups } = readFooter(fd);
      return new FlatParquet(fd, columns, rowGroups);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** The dictionary of a column chunk (null when it has none) and its data pages, in order. */
  chunk(rowGroup: number, name: string): { dictionary: PlainValues | null; pages: Iterable<PageRef> } {
    const chunk = this.rowGroups[rowGroup].chunks.get(name);
    if (!chunk) throw new ParquetFormatError(`row group ${rowGroup} has no column ${name}`);
    const bytes = Buffer.allocUnsafe(chunk.length);
    if (readSync(this.fd, bytes, 0, chunk.length, chunk.start) !== chunk.length)
      throw new ParquetFormatError(`column ${name}: the file ends inside its row group ${rowGroup}`);
    return new ChunkPages(chunk, bytes).read();
  }

  close(): void {
    closeSync(this.fd);
  }
}

function readFooter(fd: number): { columns: Map<string, FlatColumn>; rowGroups: FlatRowGroup[] } {
  const size = fstatSync(fd).size;
  const tail = Buffer.alloc(8);
  if (size < 12 || readSync(fd, tail, 0, 8, size - 8) !== 8 || tail.toString("latin1", 4) !== "PAR1")
    throw new ParquetFormatError("no Parquet footer (not a Parquet file, or cut short)");
  const length = tail.readUInt32LE(0);
  if (length + 12 > size) throw new ParquetFormatError("the footer's length exceeds the file");
  const footer = Buffer.allocUnsafe(length);
  readSync(fd, footer, 0, length, size - 8 - length);
  let meta: ThriftStruct;
  try {
    meta = new ThriftReader(footer).readStruct();
  } catch (err) {
    throw new ParquetFormatError(`unreadable footer: ${(err as Error).message}`);
  }
  const schema = list(meta, 2) as ThriftStruct[];
  if (schema.length === 0) throw new ParquetFormatError("the footer has no schema");
  const columns = new Map<string, FlatColumn>();
  for (const element of schema.slice(1)) {
    const name = text(element, 4) ?? "";
    if ((num(element, 5) ?? 0) > 0) throw new UnsupportedParquetError(`column ${name} is nested`);
    const repetition = num(element, 3) ?? 0;
    if (repetition === 2) throw new UnsupportedParquetError(`column ${name} is repeated`);
    const type = num(element, 1) ?? -1;
    if (!Object.values(PhysicalType).includes(type as 1))
      throw new UnsupportedParquetError(`column ${name} has physical type ${TYPE_NAMES[type] ?? type}`);
    const logical = struct(element, 10);
    const decimal = logical && struct(logical, 5);
    const timestamp = logical && struct(logical, 8);
    const unit = timestamp && struct(timestamp, 2);
    const converted = num(element, 6);
    columns.set(name, {
      name,
      type,
      typeLength: num(element, 2) ?? 0,
      optional: repetition === 1,
      decimalScale: decimal ? (num(decimal, 1) ?? 0) : converted === 5 ? (num(element, 7) ?? 0) : null,
      timestampUnit: unit
        ? unit.has(1)
          ? "MILLIS"
          : unit.has(2)
            ? "MICROS"
            : "NANOS"
        : converted === 9
          ? "MILLIS"
          : converted === 10
            ? "MICROS"
            : null,
    });
  }
  const dataEnd = size - 8 - footer.length;
  const rowGroups: FlatRowGroup[] = [];
  for (const group of list(meta, 4) as ThriftStruct[]) {
    const chunks = new Map<string, ColumnChunk>();
    for (const chunk of list(group, 1) as ThriftStruct[]) {
      const md = struct(chunk, 3);
      if (!md) throw new UnsupportedParquetError("a column chunk's metadata is not inline");
      const path = (list(md, 3) as Buffer[]).map((b) => b.toString("utf8"));
      const column = columns.get(path.join("."));
      if (!column) throw new ParquetFormatError(`a column chunk names no column: ${path.join(".")}`);
      const codec = num(md, 4) ?? -1;
      if (!READ_CODECS.has(codec))
        throw new UnsupportedParquetError(`column ${column.name} has codec ${codec}`);
      for (const e of list(md, 2) as number[])
        if (!READ_ENCODINGS.has(e))
          throw new UnsupportedParquetError(`column ${column.name} has encoding ${e}`);
      const dataStart = num(md, 9) ?? 0;
      const dictionaryStart = num(md, 11) ?? 0;
      const start = dictionaryStart > 0 && dictionaryStart < dataStart ? dictionaryStart : dataStart;
      const chunkLength = num(md, 7) ?? 0;
      if (start < 4 || start + chunkLength > dataEnd)
        throw new ParquetFormatError(`column ${column.name}: its chunk lies beyond the file's data`);
      chunks.set(column.name, { column, codec, start, length: chunkLength });
    }
    rowGroups.push({ rows: num(group, 3) ?? 0, chunks });
  }
  return { columns, rowGroups };
}

/**
 * Decompression's output in one piece of the page's stated size: zlib's default is 16 KiB pieces,
 * each a callback into JavaScript and then a copy to join them, which cost more than the
 * decompression itself on pages of a megabyte.
 */
function outputOf(header: ThriftStruct): { chunkSize: number } {
  return { chunkSize: Math.max(64, (num(header, 2) ?? 0) + 1) };
}

/** The pages of one column chunk's bytes. */
class ChunkPages {
  private readonly chunk: ColumnChunk;
  private readonly bytes: Buffer;
  constructor(chunk: ColumnChunk, bytes: Buffer) {
    this.chunk = chunk;
    this.bytes = bytes;
  }

  read(): { dictionary: PlainValues | null; pages: Iterable<PageRef> } {
    const reader = new ThriftReader(this.bytes);
    let dictionary: PlainValues | null = null;
    const first = this.header(reader);
    let pending: { header: ThriftStruct; at: number } | null = first;
    if (num(first.header, 1) === PAGE.DICTIONARY) {
      const dict = struct(first.header, 7);
      if (!dict)
        throw new ParquetFormatError(
          `column ${this.chunk.column.name}: a dictionary page without its header`,
        );
      const body = this.body(first.header, first.at, 0);
      dictionary = plainValues(this.chunk.column, body, 0, num(dict, 1) ?? 0);
      reader.pos = first.at + (num(first.header, 3) ?? 0);
      pending = null;
    }
    return { dictionary, pages: this.dataPages(reader, pending) };
  }

  private *dataPages(
    reader: ThriftReader,
    first: { header: ThriftStruct; at: number } | null,
  ): Iterable<PageRef> {
    let row = 0;
    let next = first;
    while (next || reader.pos < this.bytes.length) {
      const { header, at } = next ?? this.header(reader);
      next = null;
      reader.pos = at + (num(header, 3) ?? 0);
      const type = num(header, 1);
      if (type !== PAGE.DATA && type !== PAGE.DATA_V2) continue; // an index page: nothing to read
      const v2 = type === PAGE.DATA_V2;
      const data = struct(header, v2 ? 8 : 5);
      if (!data)
        throw new ParquetFormatError(`column ${this.chunk.column.name}: a data page without its header`);
      const rows = num(data, 1) ?? 0;
      const firstRow = row;
      row += rows;
      // A v2 page's levels come before its values, uncompressed; its values may be left uncompressed.
      const skip = v2 ? (num(data, 6) ?? 0) + (num(data, 5) ?? 0) : 0;
      const compressed = !v2 || data.get(7) !== false;
      yield {
        firstRow,
        rows,
        decode: () => this.decode(data, at, firstRow, rows, v2, this.body(header, at, skip, compressed)),
        decodeAsync: async (inLineBelow = ASYNC_PAGE_BYTES) =>
          this.decode(
            data,
            at,
            firstRow,
            rows,
            v2,
            (num(header, 2) ?? 0) < inLineBelow
              ? this.body(header, at, skip, compressed)
              : await this.bodyAsync(header, at, skip, compressed),
          ),
      };
    }
  }

  private header(reader: ThriftReader): { header: ThriftStruct; at: number } {
    try {
      const header = reader.readStruct();
      const at = reader.pos;
      if (at + (num(header, 3) ?? 0) > this.bytes.length)
        throw new RangeError("a page ends beyond its chunk");
      return { header, at };
    } catch (err) {
      throw new ParquetFormatError(`column ${this.chunk.column.name}: ${(err as Error).message}`);
    }
  }

  /** A page's bytes, decompressed from `skip` on (a v2 page's levels before it are not compressed). */
  private body(header: ThriftStruct, at: number, skip: number, compressed = true): Buffer {
    const raw = this.bytes.subarray(at + skip, at + (num(header, 3) ?? 0));
    if (!compressed || this.chunk.codec === CODEC.UNCOMPRESSED) return raw;
    const options = outputOf(header);
    try {
      switch (this.chunk.codec) {
        case CODEC.ZSTD:
          return zstdDecompressSync(raw, options);
        case CODEC.GZIP:
          return gunzipSync(raw, options);
        default:
          return brotliDecompressSync(raw, options);
      }
    } catch (err) {
      throw new ParquetFormatError(
        `column ${this.chunk.column.name}: a page does not decompress: ${(err as Error).message}`,
      );
    }
  }

  private async bodyAsync(
    header: ThriftStruct,
    at: number,
    skip: number,
    compressed: boolean,
  ): Promise<Buffer> {
    const raw = this.bytes.subarray(at + skip, at + (num(header, 3) ?? 0));
    if (!compressed || this.chunk.codec === CODEC.UNCOMPRESSED) return raw;
    const options = outputOf(header);
    try {
      switch (this.chunk.codec) {
        case CODEC.ZSTD:
          return await zstdDecompressAsync(raw, options);
        case CODEC.GZIP:
          return await gunzipAsync(raw, options);
        default:
          return await brotliDecompressAsync(raw, options);
      }
    } catch (err) {
      throw new ParquetFormatError(
        `column ${this.chunk.column.name}: a page does not decompress: ${(err as Error).message}`,
      );
    }
  }

  /** A data page from its header and its values' bytes, decompressed (`body`). */
  private decode(
    data: ThriftStruct,
    at: number,
    firstRow: number,
    rows: number,
    v2: boolean,
    body: Buffer,
  ): DataPage {
    const column = this.chunk.column;
    let pos = 0;
    let levels: Int32Array | null = null;
    if (v2) {
      const repetitionBytes = num(data, 6) ?? 0;
      const definitionBytes = num(data, 5) ?? 0;
      if (repetitionBytes > 0)
        throw new UnsupportedParquetError(`column ${column.name} has repetition levels`);
      if (column.optional) levels = hybrid(this.bytes, at, at + definitionBytes, 1, rows);
    } else {
      if (column.optional) {
        const encoding = num(data, 3);
        if (encoding === ENCODING.BIT_PACKED) {
          levels = bitPackedLevels(body, 0, rows);
          pos = Math.ceil(rows / 8);
        } else {
          const length = body.readUInt32LE(0);
          levels = hybrid(body, 4, 4 + length, 1, rows);
          pos = 4 + length;
        }
      }
    }
    let valueOfRow: Int32Array | null = null;
    let count = rows;
    if (levels) {
      count = 0;
      for (let i = 0; i < rows; i++) levels[i] = levels[i] === 1 ? count++ : -1;
      if (count < rows) valueOfRow = levels;
    }
    const encoding = num(data, v2 ? 4 : 2);
    if (encoding === ENCODING.PLAIN)
      return new DataPage(firstRow, rows, valueOfRow, null, plainValues(column, body, pos, count));
    if (encoding === ENCODING.PLAIN_DICTIONARY || encoding === ENCODING.RLE_DICTIONARY) {
      const indices = count === 0 ? new Int32Array(0) : hybrid(body, pos + 1, body.length, body[pos], count);
      return new DataPage(firstRow, rows, valueOfRow, indices, plainValues(column, body, body.length, 0));
    }
    throw new UnsupportedParquetError(`column ${column.name} has a page in encoding ${encoding}`);
  }
}

/** `count` PLAIN values of a column's type from `pos`. */
function plainValues(column: FlatColumn, bytes: Buffer, pos: number, count: number): PlainValues {
  switch (column.type) {
    case PhysicalType.INT32:
    case PhysicalType.INT64:
    case PhysicalType.FIXED_LEN_BYTE_ARRAY: {
      const width =
        column.type === PhysicalType.INT32 ? 4 : column.type === PhysicalType.INT64 ? 8 : column.typeLength;
      if (pos + count * width > bytes.length)
        throw new ParquetFormatError(`column ${column.name}: a page holds fewer values than it says`);
      return new PlainValues(bytes, null, null, width, pos, count);
    }
    default: {
      const starts = new Int32Array(count);
      const ends = new Int32Array(count);
      for (let i = 0; i < count; i++) {
        if (pos + 4 > bytes.length)
          throw new ParquetFormatError(`column ${column.name}: a page holds fewer values than it says`);
        const length = bytes.readUInt32LE(pos);
        starts[i] = pos + 4;
        pos += 4 + length;
        ends[i] = pos;
      }
      if (pos > bytes.length)
        throw new ParquetFormatError(`column ${column.name}: a page holds fewer values than it says`);
      return new PlainValues(bytes, starts, ends, 0, 0, count);
    }
  }
}

/** The RLE / bit-packed hybrid encoding (levels and dictionary indices) of `count` values of `width` bits. */
function hybrid(bytes: Buffer, pos: number, end: number, width: number, count: number): Int32Array {
  if (width > 24) throw new UnsupportedParquetError(`a bit width of ${width}`);
  const out = new Int32Array(count);
  const mask = (1 << width) - 1;
  const byteWidth = (width + 7) >> 3;
  let i = 0;
  while (i < count) {
    if (pos >= end) throw new ParquetFormatError("levels or indices end early");
    let header = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[pos++];
      header += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) break;
      shift += 7;
    }
    if (header % 2 === 1) {
      // Bit-packed: groups of eight values, least significant bit first.
      const values = Math.floor(header / 2) * 8;
      const stop = Math.min(count, i + values);
      let acc = 0;
      let bits = 0;
      let p = pos;
      for (; i < stop; i++) {
        while (bits < width) {
          acc |= (p < end ? bytes[p] : 0) << bits;
          p++;
          bits += 8;
        }
        out[i] = acc & mask;
        acc >>>= width;
        bits -= width;
      }
      pos += (values / 8) * width;
    } else {
      const run = Math.floor(header / 2);
      let value = 0;
      for (let b = 0; b < byteWidth; b++) value |= bytes[pos + b] << (8 * b);
      pos += byteWidth;
      out.fill(value, i, Math.min(count, i + run));
      i += run;
    }
  }
  return out;
}

/** The deprecated BIT_PACKED levels of width 1: most significant bit first, no length before them. */
function bitPackedLevels(bytes: Buffer, pos: number, count: number): Int32Array {
  const out = new Int32Array(count);
  for (let i = 0; i < count; i++) out[i] = (bytes[pos + (i >> 3)] >> (7 - (i & 7))) & 1;
  return out;
}
