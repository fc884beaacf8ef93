import { constants, zstdCompressSync } from "node:zlib";
import type { SideColumns } from "../../wire/book-columns.ts";
import { PRICE_COLUMNS, type SnapshotColumnsView } from "../../wire/snapshot-columns.ts";
import { pushVarint, type ThriftFields, type ThriftOut, ThriftWriter } from "./thrift.ts";

/**
 * The snapshot export's Parquet file, written here from the columns as they are held (typed arrays)
 * rather than through Arrow and parquet-wasm: the schema is fixed, so its pages are a few loops and
 * Node's own zstd. For 3,600 snapshots with books that path took about 17 ms (Arrow's IPC copy, its
 * import into WebAssembly memory, the nested columns' levels and zstd in WebAssembly), this one about
 * 6.5, 4.2 of it Node's zstd (docs/decisions.md). The file is the one parquet-wasm wrote, column for column: the same Parquet
 * schema, logical types and `ARROW:schema`, data pages v1 with PLAIN values, RLE levels, the slug
 * dictionary-encoded, ZSTD at level 1, one row group a batch, statistics on `time` alone.
 *
 * Format: https://github.com/apache/parquet-format (parquet.thrift, Encodings.md).
 */

const MAGIC = new TextEncoder().encode("PAR1");

// parquet.thrift's numbers.
const Type = { INT64: 2, DOUBLE: 5, BYTE_ARRAY: 6 } as const;
const Repetition = { REQUIRED: 0, OPTIONAL: 1, REPEATED: 2 } as const;
const Converted = { UTF8: 0, LIST: 3, TIMESTAMP_MICROS: 10 } as const;
const Encoding = { PLAIN: 0, RLE: 3, RLE_DICTIONARY: 8 } as const;
const PageType = { DATA_PAGE: 0, DICTIONARY_PAGE: 2 } as const;
const ZSTD = 6;
const ZSTD_LEVEL = 1;

const i32 = (n: number): ThriftOut => ({ i32: n });
const i64 = (n: number): ThriftOut => ({ i64: n });
const binary = (b: string | Uint8Array): ThriftOut => ({ binary: b });
const struct = (fields: ThriftFields): ThriftOut => ({ struct: fields });
const list = (items: readonly ThriftOut[]): ThriftOut => ({ list: items });
const EMPTY = struct([]);

/** A SchemaElement: a leaf has a type, a group its number of children. */
function element(
  name: string,
  repetition: number,
  o: { type?: number; children?: number; converted?: number; logical?: ThriftOut } = {},
): ThriftOut {
  const fields: [number, ThriftOut][] = [];
  if (o.type !== undefined) fields.push([1, i32(o.type)]);
  fields.push([3, i32(repetition)], [4, binary(name)]);
  if (o.children !== undefined) fields.push([5, i32(o.children)]);
  if (o.converted !== undefined) fields.push([6, i32(o.converted)]);
  if (o.logical !== undefined) fields.push([10, o.logical]);
  return struct(fields);
}

/** A book column's schema: struct<bids: list<struct<price, size>>, asks: ...>, the book itself optional. */
function bookSchema(name: string): ThriftOut[] {
  const levels = (side: string) => [
    element(side, Repetition.REQUIRED, {
      children: 1,
      converted: Converted.LIST,
      logical: struct([[3, EMPTY]]),
    }),
    element("list", Repetition.REPEATED, { children: 1 }),
    element("element", Repetition.REQUIRED, { children: 2 }),
    element("price", Repetition.REQUIRED, { type: Type.DOUBLE }),
    element("size", Repetition.REQUIRED, { type: Type.DOUBLE }),
  ];
  return [element(name, Repetition.OPTIONAL, { children: 2 }), ...levels("bids"), ...levels("asks")];
}

/** The file's columns, each as its schema elements (a leaf, or a group and what is under it). */
function columnSchemas(books: boolean): ThriftOut[][] {
  return [
    [
      element("slug", Repetition.OPTIONAL, {
        type: Type.BYTE_ARRAY,
        converted: Converted.UTF8,
        logical: struct([[1, EMPTY]]),
      }),
    ],
    [
      element("time", Repetition.OPTIONAL, {
        type: Type.INT64,
        converted: Converted.TIMESTAMP_MICROS,
        // TimestampType: adjusted to UTC, in MICROS.
        logical: struct([
          [
            8,
            struct([
              [1, { bool: true }],
              [2, struct([[2, EMPTY]])],
            ]),
          ],
        ]),
      }),
    ],
    ...PRICE_COLUMNS.map((name) => [element(name, Repetition.REQUIRED, { type: Type.DOUBLE })]),
    ...(books ? [bookSchema("orderbook_up"), bookSchema("orderbook_down")] : []),
  ];
}

/** The footer's schema: the root, a group of the columns with no repetition of its own, then theirs. */
function schema(books: boolean): ThriftOut[] {
  const columns = columnSchemas(books);
  const root = struct([
    [4, binary("arrow_schema")],
    [5, i32(columns.length)],
  ]);
  return [root, ...columns.flat()];
}

/** How many leaves (elements with a type: the column chunks of a row group) a schema has. */
function leafCount(elements: readonly ThriftOut[]): number {
  return elements.filter((e) => "struct" in e && e.struct.some(([id]) => id === 1)).length;
}

/** `n` as 4 bytes, little-endian: the lengths of Parquet's levels, byte arrays and footer. */
function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

/** Levels (or dictionary indices) in the RLE/bit-packed hybrid, as runs only: each a count and a value. */
class RleRuns {
  private readonly out: number[] = [];
  private value = -1;
  private count = 0;
  private readonly bitWidth: number;

  constructor(bitWidth: number) {
    this.bitWidth = bitWidth;
  }

  /** `count` (1 or more) more of `value`. */
  add(value: number, count: number): void {
    if (value === this.value) {
      this.count += count;
      return;
    }
    this.flush();
    this.value = value;
    this.count = count;
  }

  private flush(): void {
    if (this.count === 0) return;
    // A run's header is its count shifted left by one (the low bit 0 says "repeated"), then the value
    // in as many bytes as its bit width takes, little-endian (a dictionary of over 256 slugs takes two).
    pushVarint(this.out, this.count * 2);
    for (let b = 0; b < this.bitWidth; b += 8) this.out.push((this.value >> b) & 0xff);
    this.count = 0;
  }

  /** The runs as levels in a data page v1: after their length in 4 bytes. */
  levels(): Buffer {
    this.flush();
    return Buffer.concat([u32(this.out.length), Buffer.from(this.out)]);
  }

  /** The runs as a page's dictionary indices: after their bit width in a byte. */
  indices(): Buffer {
    this.flush();
    return Buffer.concat([Buffer.of(this.bitWidth), Buffer.from(this.out)]);
  }
}

/** A column chunk as written: its bytes and what the footer says of it. */
interface Chunk {
  bytes: Buffer[];
  path: readonly string[];
  type: number;
  encodings: readonly number[];
  values: number;
  uncompressed: number;
  compressed: number;
  /** Offsets within the chunk; made file offsets when the row group is placed. */
  dataPage: number;
  dictionaryPage: number | null;
  statistics: ThriftFields | null;
}

function page(
  type: number,
  raw: Buffer,
  header: ThriftFields,
): { bytes: Buffer[]; raw: number; stored: number } {
  const compressed = zstdCompressSync(raw, { params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL } });
  const head = ThriftWriter.struct([
    [1, i32(type)],
    [2, i32(raw.length)],
    [3, i32(compressed.length)],
    ...header,
  ]);
  return {
    bytes: [Buffer.from(head.buffer, head.byteOffset, head.length), compressed],
    raw: head.length + raw.length,
    stored: head.length + compressed.length,
  };
}

/** A data page v1 of `values` entries (levels included), its values in `encoding`, levels in RLE. */
function dataPage(values: number, encoding: number, parts: Buffer[]) {
  return page(PageType.DATA_PAGE, Buffer.concat(parts), [
    [
      5,
      struct([
        [1, i32(values)],
        [2, i32(encoding)],
        [3, i32(Encoding.RLE)],
        [4, i32(Encoding.RLE)],
      ]),
    ],
  ]);
}

/** A data page v1 of `values` entries (levels included) with PLAIN values, as one column chunk. */
function plainChunk(
  path: readonly string[],
  type: number,
  values: number,
  parts: Buffer[],
  statistics: ThriftFields | null = null,
): Chunk {
  const p = dataPage(values, Encoding.PLAIN, parts);
  return {
    bytes: p.bytes,
    path,
    type,
    encodings: [Encoding.PLAIN, Encoding.RLE],
    values,
    uncompressed: p.raw,
    compressed: p.stored,
    dataPage: 0,
    dictionaryPage: null,
    statistics,
  };
}

const bytesOf = (a: Float64Array | Int32Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** Definition levels of an optional column none of whose `n` values is null. */
function allPresent(n: number): Buffer {
  const def = new RleRuns(1);
  def.add(1, n);
  return def.levels();
}

/** The slug column: a dictionary of the batch's markets, and each row's index in runs. */
function slugChunk(v: SnapshotColumnsView): Chunk {
  const slugs = [...new Set(v.runs.map((r) => r.slug))];
  const dictionary = Buffer.concat(
    slugs.flatMap((slug) => {
      const bytes = Buffer.from(slug, "utf8");
      return [u32(bytes.length), bytes];
    }),
  );
  const dict = page(PageType.DICTIONARY_PAGE, dictionary, [
    [
      7,
      struct([
        [1, i32(slugs.length)],
        [2, i32(Encoding.PLAIN)],
      ]),
    ],
  ]);
  const indices = new RleRuns(Math.max(1, Math.ceil(Math.log2(slugs.length))));
  v.runs.forEach((run, k) =>
    indices.add(slugs.indexOf(run.slug), (v.runs[k + 1]?.from ?? v.length) - run.from),
  );
  const data = dataPage(v.length, Encoding.RLE_DICTIONARY, [allPresent(v.length), indices.indices()]);
  return {
    bytes: [...dict.bytes, ...data.bytes],
    path: ["slug"],
    type: Type.BYTE_ARRAY,
    encodings: [Encoding.PLAIN, Encoding.RLE, Encoding.RLE_DICTIONARY],
    values: v.length,
    uncompressed: dict.raw + data.raw,
    compressed: dict.stored + data.stored,
    dataPage: dict.stored,
    dictionaryPage: 0,
    statistics: null,
  };
}

/** The time column, with its smallest and largest value (readers skip row groups by them). */
function timeChunk(v: SnapshotColumnsView): Chunk {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < v.length; i++) {
    const t = v.times[2 * i + 1] * 4294967296 + (v.times[2 * i] >>> 0);
    if (t < min) min = t;
    if (t > max) max = t;
  }
  const int64 = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64LE(BigInt(n));
    return b;
  };
  const statistics: ThriftFields =
    v.length > 0
      ? [
          [3, i64(0)],
          [5, binary(int64(max))],
          [6, binary(int64(min))],
        ]
      : [[3, i64(0)]];
  return plainChunk(["time"], Type.INT64, v.length, [allPresent(v.length), bytesOf(v.times)], statistics);
}

/**
 * A book side's levels as the two leaf columns of its list (price, size): repetition 0 starts a
 * snapshot's list and 1 continues it; definition 2 is a level, 1 an empty list (the book is present).
 */
function sideChunks(side: SideColumns, rows: number, path: readonly string[]): Chunk[] {
  const rep = new RleRuns(1);
  const def = new RleRuns(2);
  let values = 0;
  for (let i = 0; i < rows; i++) {
    const n = side.ends[i + 1] - side.ends[i];
    rep.add(0, 1);
    if (n > 1) rep.add(1, n - 1);
    def.add(n > 0 ? 2 : 1, Math.max(n, 1));
    values += Math.max(n, 1);
  }
  const levels = [rep.levels(), def.levels()];
  return [
    plainChunk([...path, "list", "element", "price"], Type.DOUBLE, values, [
      ...levels,
      bytesOf(side.prices.subarray(0, side.length)),
    ]),
    plainChunk([...path, "list", "element", "size"], Type.DOUBLE, values, [
      ...levels,
      bytesOf(side.sizes.subarray(0, side.length)),
    ]),
  ];
}

function columnChunk(c: Chunk, at: number): ThriftOut {
  const meta: [number, ThriftOut][] = [
    [1, i32(c.type)],
    [2, list(c.encodings.map(i32))],
    [3, list(c.path.map((p) => binary(p)))],
    [4, i32(ZSTD)],
    [5, i64(c.values)],
    [6, i64(c.uncompressed)],
    [7, i64(c.compressed)],
    [9, i64(at + c.dataPage)],
  ];
  if (c.dictionaryPage !== null) meta.push([11, i64(at + c.dictionaryPage)]);
  if (c.statistics !== null) meta.push([12, struct(c.statistics)]);
  return struct([
    [2, i64(0)],
    [3, struct(meta)],
  ]);
}

/**
 * Writes the file: `start()` its first bytes, `rowGroup(batch)` a batch's rows as a row group (its
 * bytes leave before the next batch is filled), `end()` the footer. `arrowSchema` is the schema's
 * Arrow IPC message (the key `ARROW:schema` that Arrow's readers take their types from).
 */
export class SnapshotParquetWriter {
  private offset = 0;
  private rows = 0;
  private readonly rowGroups: ThriftOut[] = [];
  private readonly books: boolean;
  private readonly arrowSchema: Uint8Array;

  constructor(books: boolean, arrowSchema: Uint8Array) {
    this.books = books;
    this.arrowSchema = arrowSchema;
  }

  start(): Buffer {
    this.offset = MAGIC.length;
    return Buffer.from(MAGIC);
  }

  rowGroup(v: SnapshotColumnsView): Buffer[] {
    const chunks = [
      slugChunk(v),
      timeChunk(v),
      ...PRICE_COLUMNS.map((name, k) => plainChunk([name], Type.DOUBLE, v.length, [bytesOf(v.prices[k])])),
    ];
    if (this.books) {
      const [upBids, upAsks, downBids, downAsks] = v.sides;
      chunks.push(
        ...sideChunks(upBids, v.length, ["orderbook_up", "bids"]),
        ...sideChunks(upAsks, v.length, ["orderbook_up", "asks"]),
        ...sideChunks(downBids, v.length, ["orderbook_down", "bids"]),
        ...sideChunks(downAsks, v.length, ["orderbook_down", "asks"]),
      );
    }
    const start = this.offset;
    const columns: ThriftOut[] = [];
    for (const c of chunks) {
      columns.push(columnChunk(c, this.offset));
      this.offset += c.compressed;
    }
    this.rowGroups.push(
      struct([
        [1, list(columns)],
        [2, i64(chunks.reduce((sum, c) => sum + c.uncompressed, 0))],
        [3, i64(v.length)],
        [5, i64(start)],
        [6, i64(this.offset - start)],
        [7, { i16: this.rowGroups.length }],
      ]),
    );
    this.rows += v.length;
    return chunks.flatMap((c) => c.bytes);
  }

  end(): Buffer {
    const elements = schema(this.books);
    const footer = ThriftWriter.struct([
      [1, i32(1)],
      [2, list(elements)],
      [3, i64(this.rows)],
      [4, list(this.rowGroups)],
      [
        5,
        list([
          struct([
            [1, binary("ARROW:schema")],
            [2, binary(Buffer.from(this.arrowSchema).toString("base64"))],
          ]),
        ]),
      ],
      [6, binary("updown-history")],
      // TypeDefinedOrder for every column: min and max compare as the type does.
      [7, list(Array.from({ length: leafCount(elements) }, () => struct([[1, EMPTY]])))],
    ]);
    return Buffer.concat([footer, u32(footer.length), MAGIC]);
  }
}
