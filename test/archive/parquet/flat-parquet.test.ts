import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import {
  type DataPage,
  decodedInOrder,
  FlatParquet,
  ParquetFormatError,
  PhysicalType,
  type PlainValues,
  UnsupportedParquetError,
} from "../../../src/archive/parquet/flat-parquet.ts";

/**
 * The flat Parquet reader (src/archive/parquet/flat-parquet.ts) against files written by a real writer
 * (parquet-wasm: the Rust parquet crate) in the dialects it reads: data pages v1 and v2, PLAIN and
 * dictionary encodings, every codec it reads, nulls, many small pages and several row groups. Every
 * value comes back as written, by the synchronous and the thread-pool decoding alike; dialects it does
 * not read are refused as such, and bytes that are not Parquet as a format error.
 */

const ROWS = 5_000;

/** The columns written: what PMXT's are made of (timestamps, ids, decimals of three widths, text, uint16). */
interface Source {
  ts: number[];
  id: string[];
  small: (number | null)[]; // decimal(9,4) as its unscaled integer
  big: (bigint | null)[]; // decimal(18,6)
  wide: (bigint | null)[]; // decimal(38,10)
  text: (string | null)[];
  fee: (number | null)[];
}

function source(): Source {
  const s: Source = { ts: [], id: [], small: [], big: [], wide: [], text: [], fee: [] };
  for (let i = 0; i < ROWS; i++) {
    s.ts.push(1_784_851_200_000 + i * 37);
    s.id.push(`0x${String(Math.floor(i / 700)).padStart(64, "0")}`);
    s.small.push(i % 5 === 0 ? null : (i * 7919) % 10_000);
    s.big.push(i % 3 === 0 ? null : BigInt(i) * 1_000_003n - 2_000_000_000n);
    s.wide.push(i % 4 === 0 ? null : (BigInt(i) * 10n ** 20n + 12345n) * (i % 2 === 0 ? 1n : -1n));
    s.text.push(i % 7 === 0 ? null : i % 2 === 0 ? ["BUY", "SELL", "é€"][i % 3] : `row ${i}`);
    s.fee.push(i % 11 === 0 ? null : i % 65_536);
  }
  return s;
}

function valid(values: readonly unknown[]) {
  const nullBitmap = new Uint8Array(Math.ceil(values.length / 8));
  let nullCount = 0;
  values.forEach((v, i) => {
    if (v === null) nullCount++;
    else nullBitmap[i >> 3] |= 1 << (i & 7);
  });
  return { nullBitmap, nullCount };
}

function decimals(values: readonly (number | bigint | null)[], precision: number, scale: number): arrow.Data {
  const words = new Uint32Array(values.length * 4);
  values.forEach((v, i) => {
    let big = BigInt(v ?? 0);
    if (big < 0n) big += 1n << 128n;
    for (let w = 0; w < 4; w++) words[i * 4 + w] = Number((big >> BigInt(32 * w)) & 0xffffffffn);
  });
  return arrow.makeData({
    type: new arrow.Decimal(scale, precision, 128),
    length: values.length,
    data: words,
    ...valid(values),
  });
}

function table(s: Source): Uint8Array {
  const idBytes = Buffer.from(s.id.join(""), "latin1");
  const text = new arrow.Utf8Builder({ type: new arrow.Utf8(), nullValues: [null] });
  for (const t of s.text) text.append(t);
  const t = new arrow.Table({
    ts: arrow.makeVector(
      arrow.makeData({
        type: new arrow.TimestampMillisecond("UTC"),
        length: ROWS,
        data: BigInt64Array.from(s.ts, BigInt),
      }),
    ),
    id: arrow.makeVector(
      arrow.makeData({ type: new arrow.FixedSizeBinary(66), length: ROWS, data: idBytes }),
    ),
    small: arrow.makeVector(decimals(s.small, 9, 4)),
    big: arrow.makeVector(decimals(s.big, 18, 6)),
    wide: arrow.makeVector(decimals(s.wide, 38, 10)),
    text: text.finish().toVector(),
    fee: arrow.makeVector(
      arrow.makeData({
        type: new arrow.Uint16(),
        length: ROWS,
        data: Uint16Array.from(s.fee, (v) => v ?? 0),
        ...valid(s.fee),
      }),
    ),
  });
  return arrow.tableToIPC(t, "stream");
}

interface Dialect {
  name: string;
  compression: parquet.Compression;
  dictionary: boolean;
  v2?: boolean;
}

function write(path: string, ipc: Uint8Array, d: Dialect): void {
  const props = new parquet.WriterPropertiesBuilder()
    .setCompression(d.compression)
    .setDictionaryEnabled(d.dictionary)
    .setWriterVersion(d.v2 ? parquet.WriterVersion.V2 : parquet.WriterVersion.V1)
    .setMaxRowGroupSize(2_000)
    .setDataPageSizeLimit(512)
    .setWriteBatchSize(128)
    .build();
  writeFileSync(path, parquet.writeParquet(parquet.Table.fromIPCStream(ipc), props));
}

/** A value of a column as the test writes it: numbers, bigints (decimals), strings. */
function valueOf(type: number, name: string, v: PlainValues, i: number): unknown {
  if (type === PhysicalType.INT32) return v.int32(i);
  if (type === PhysicalType.INT64) return name === "ts" ? v.int64(i) : v.bytes.readBigInt64LE(v.start(i));
  const bytes = v.bytes.subarray(v.start(i), v.end(i));
  if (name === "wide") {
    let n = BigInt(`0x${bytes.toString("hex")}`);
    if (bytes[0] & 0x80) n -= 1n << BigInt(8 * bytes.length);
    return n;
  }
  return bytes.toString(name === "id" ? "latin1" : "utf8");
}

/** A whole column, row group after row group, decoded synchronously or on the thread pool. */
async function column(file: FlatParquet, name: string, async: boolean): Promise<unknown[]> {
  const out: unknown[] = [];
  const type = file.columns.get(name)?.type as number;
  for (let g = 0; g < file.rowGroups.length; g++) {
    const { dictionary, pages } = file.chunk(g, name);
    const decoded: DataPage[] = [];
    // Every page on the thread pool, however small (in use, pages under 64 KiB are decoded in line).
    if (async) for await (const page of decodedInOrder([...pages], 3, 0)) decoded.push(page);
    else for (const ref of pages) decoded.push(ref.decode());
    for (const page of decoded)
      for (let row = page.firstRow; row < page.firstRow + page.rows; row++) {
        const v = page.valueIndex(row);
        out.push(
          v < 0
            ? null
            : valueOf(type, name, page.dictionaryEncoded ? (dictionary as PlainValues) : page.values, v),
        );
      }
  }
  return out;
}

describe("flat Parquet reader", () => {
  let dir: string;
  const s = source();
  const ipc = table(s);
  const expected: Record<string, unknown[]> = {
    ts: s.ts,
    id: s.id,
    small: s.small,
    big: s.big,
    wide: s.wide,
    text: s.text,
    fee: s.fee,
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "flat-parquet-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const read: Dialect[] = [
    { name: "zstd, dictionary", compression: parquet.Compression.ZSTD, dictionary: true },
    { name: "zstd, plain", compression: parquet.Compression.ZSTD, dictionary: false },
    { name: "gzip, dictionary", compression: parquet.Compression.GZIP, dictionary: true },
    { name: "brotli, plain", compression: parquet.Compression.BROTLI, dictionary: false },
    { name: "uncompressed, dictionary", compression: parquet.Compression.UNCOMPRESSED, dictionary: true },
    {
      name: "zstd, dictionary, data pages v2",
      compression: parquet.Compression.ZSTD,
      dictionary: true,
      v2: true,
    },
  ];
  for (const d of read)
    test(`${d.name}: every value comes back as written, with its nulls`, async () => {
      const path = join(dir, `${d.name.replaceAll(/[^a-z0-9]/g, "-")}.parquet`);
      write(path, ipc, d);
      const file = FlatParquet.open(path);
      try {
        assert.deepEqual(
          file.rowGroups.map((g) => g.rows),
          [2_000, 2_000, 1_000],
        );
        assert.equal(file.columns.get("small")?.decimalScale, 4);
        assert.equal(file.columns.get("wide")?.decimalScale, 10);
        assert.equal(file.columns.get("ts")?.timestampUnit, "MILLIS");
        const pageCounts = Object.keys(expected).map((name) => [...file.chunk(0, name).pages].length);
        assert.ok(Math.max(...pageCounts) > 3, `many pages a column chunk: ${pageCounts.join(", ")}`);
        for (const [name, values] of Object.entries(expected)) {
          assert.deepEqual(await column(file, name, false), values, `${name}, decoded in line`);
          assert.deepEqual(await column(file, name, true), values, `${name}, decoded on the thread pool`);
        }
      } finally {
        file.close();
      }
    });

  test("dialects it does not read (Snappy, LZ4, DELTA encodings) are refused as such, not misread", () => {
    for (const d of [
      { name: "snappy", compression: parquet.Compression.SNAPPY, dictionary: true },
      { name: "lz4", compression: parquet.Compression.LZ4_RAW, dictionary: true },
      { name: "v2 plain", compression: parquet.Compression.ZSTD, dictionary: false, v2: true },
    ]) {
      const path = join(dir, `${d.name.replace(" ", "-")}.parquet`);
      write(path, ipc, d);
      assert.throws(() => FlatParquet.open(path), UnsupportedParquetError, d.name);
    }
  });

  test("bytes that are not Parquet, or a file cut short, are a format error", () => {
    const good = join(dir, "good.parquet");
    write(good, ipc, read[0]);
    const bytes = readFileSync(good);
    const cases: [string, Buffer][] = [
      ["junk", Buffer.from("PAR1 this is not a parquet file")],
      ["cut", bytes.subarray(0, bytes.length - 100)],
      ["footer only", Buffer.concat([Buffer.from("PAR1"), bytes.subarray(bytes.length - 8)])],
    ];
    for (const [name, content] of cases) {
      const path = join(dir, `${name.replace(" ", "-")}.parquet`);
      writeFileSync(path, content);
      assert.throws(() => FlatParquet.open(path), ParquetFormatError, name);
    }
  });
});
