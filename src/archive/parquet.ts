import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import { appendBookColumns, SideColumns } from "../domain/book-codec.ts";
import type { SnapshotRow } from "../domain/snapshot.ts";

/**
 * Snapshots as Parquet (DESIGN 3.8): one row a snapshot with typed columns, readable by pandas, polars
 * and DuckDB as they are.
 *
 *   slug            string
 *   time            timestamp[µs, UTC]
 *   coin_price, price_up, price_down   double
 *   orderbook_up, orderbook_down       struct<bids: list<struct<price: double, size: double>>,
 *                                             asks: list<struct<price: double, size: double>>>
 *                                      (with books only; best first; empty lists where a second has
 *                                      no recorded books, as the JSON has)
 *
 * Rows are gathered into Arrow record batches (apache-arrow, built straight from typed arrays) and
 * written by parquet-wasm (the Rust parquet crate compiled to WebAssembly) as a stream: each batch
 * becomes a row group whose bytes leave before the next is read, so memory stays flat. parquet-wasm
 * was chosen over hyparquet-writer (about 8 times the CPU for the same file) and @dsnp/parquetjs
 * (about 35 times), measured on 10,000 snapshots with books (docs/decisions.md). Columns are
 * zstd-compressed; only `slug` is dictionary-encoded and only `time` keeps statistics (what readers
 * filter on), which halves the writer's CPU.
 */

const f64 = () => new arrow.Float64();
const LEVEL = new arrow.Struct([
  new arrow.Field("price", f64(), false),
  new arrow.Field("size", f64(), false),
]);
const LEVELS = new arrow.List(new arrow.Field("element", LEVEL, false));
const BOOK = new arrow.Struct([
  new arrow.Field("bids", LEVELS, false),
  new arrow.Field("asks", LEVELS, false),
]);
const TIME = new arrow.TimestampMicrosecond("UTC");

/** Rows per row group: bounded so that a batch with books stays a few tens of MB. */
export const PARQUET_BATCH_ROWS = { books: 5_000, noBooks: 20_000 };

function writerProperties(): parquet.WriterProperties {
  return new parquet.WriterPropertiesBuilder()
    .setCompression(parquet.Compression.ZSTD)
    .setDictionaryEnabled(false)
    .setColumnDictionaryEnabled("slug", true)
    .setStatisticsEnabled(parquet.EnabledStatistics.None)
    .setColumnStatisticsEnabled("time", parquet.EnabledStatistics.Chunk)
    .setCreatedBy("updown-history")
    .build();
}

const encoder = new TextEncoder();

/** The rows of one record batch (of at most `capacity` rows), column by column in typed arrays. */
export class ParquetBatch {
  readonly books: boolean;
  length = 0;
  /** Rows of a market are consecutive: each slug once, with the row its run starts at. */
  private readonly runs: { slug: string; from: number }[] = [];
  /** Times as int64 (two int32 words a row, little-endian), written without a BigInt a row. */
  private readonly times: Int32Array;
  private readonly coin: Float64Array;
  private readonly up: Float64Array;
  private readonly down: Float64Array;
  /** up bids, up asks, down bids, down asks. */
  readonly sides = [new SideColumns(), new SideColumns(), new SideColumns(), new SideColumns()];

  constructor(books: boolean, capacity: number) {
    this.books = books;
    this.times = new Int32Array(2 * capacity);
    this.coin = new Float64Array(capacity);
    this.up = new Float64Array(capacity);
    this.down = new Float64Array(capacity);
  }

  add(slug: string, r: SnapshotRow): void {
    const i = this.length++;
    if (this.runs.at(-1)?.slug !== slug) this.runs.push({ slug, from: i });
    // Times are below 2^53: the low word is the remainder by 2^32, the high word the quotient.
    this.times[2 * i] = r.time % 4294967296;
    this.times[2 * i + 1] = Math.floor(r.time / 4294967296);
    this.coin[i] = r.coinPrice;
    this.up[i] = r.priceUp;
    this.down[i] = r.priceDown;
    if (this.books) appendBookColumns(r.books, this.sides);
  }

  /** The slug column as Arrow's UTF-8 data: each run's bytes repeated, with their offsets. */
  private slugData() {
    const offsets = new Int32Array(this.length + 1);
    const encoded = this.runs.map((run) => encoder.encode(run.slug));
    let bytes = 0;
    this.runs.forEach((run, k) => {
      const end = this.runs[k + 1]?.from ?? this.length;
      bytes += (end - run.from) * encoded[k].length;
    });
    const data = new Uint8Array(bytes);
    let p = 0;
    this.runs.forEach((run, k) => {
      const end = this.runs[k + 1]?.from ?? this.length;
      for (let i = run.from; i < end; i++) {
        data.set(encoded[k], p);
        p += encoded[k].length;
        offsets[i + 1] = p;
      }
    });
    return arrow.makeData({
      type: new arrow.Utf8(),
      length: this.length,
      nullCount: 0,
      valueOffsets: offsets,
      data,
    });
  }

  /** The batch in parquet-wasm's memory, ready for the writer. */
  /** The batch as an Arrow table in parquet-wasm's memory. */
  toTable(): parquet.Table {
    const n = this.length;
    const times = new BigInt64Array(this.times.buffer, 0, n);
    const columns: Record<string, arrow.Vector> = {
      slug: arrow.makeVector(this.slugData()),
      time: arrow.makeVector(arrow.makeData({ type: TIME, length: n, data: times })),
      coin_price: arrow.makeVector(this.coin.subarray(0, n)),
      price_up: arrow.makeVector(this.up.subarray(0, n)),
      price_down: arrow.makeVector(this.down.subarray(0, n)),
    };
    if (this.books) {
      columns.orderbook_up = arrow.makeVector(bookData(this.sides[0], this.sides[1], this.length));
      columns.orderbook_down = arrow.makeVector(bookData(this.sides[2], this.sides[3], this.length));
    }
    return parquet.Table.fromIPCStream(arrow.tableToIPC(new arrow.Table(columns), "stream"));
  }

  toRecordBatch(): parquet.RecordBatch {
    const batch = this.toTable().recordBatch(0);
    if (!batch) throw new Error("an empty Parquet batch");
    return batch;
  }
}

function levelsData(side: SideColumns, length: number) {
  const child = arrow.makeData({
    type: LEVEL,
    length: side.length,
    nullCount: 0,
    children: [
      arrow.makeData({ type: f64(), data: side.prices.subarray(0, side.length) }),
      arrow.makeData({ type: f64(), data: side.sizes.subarray(0, side.length) }),
    ],
  });
  return arrow.makeData({ type: LEVELS, length, nullCount: 0, valueOffsets: side.offsets, child });
}

function bookData(bids: SideColumns, asks: SideColumns, length: number) {
  return arrow.makeData({
    type: BOOK,
    length,
    nullCount: 0,
    children: [levelsData(bids, length), levelsData(asks, length)],
  });
}

/**
 * A Parquet file, streamed: `batches` gives the record batches (each one row group), and the file's
 * bytes come out as each is written; the footer follows the last.
 */
export async function* parquetStream(
  batches: AsyncIterable<ParquetBatch>,
  books: boolean,
): AsyncGenerator<Uint8Array> {
  const iterator = batches[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) {
    // No rows: a file with the schema and no row group (the stream writer needs a first batch).
    yield parquet.writeParquet(new ParquetBatch(books, 0).toTable(), writerProperties());
    return;
  }
  let pending: ParquetBatch | null = first.value;
  const input = new ReadableStream<parquet.RecordBatch>({
    async pull(controller) {
      if (pending) {
        controller.enqueue(pending.toRecordBatch());
        pending = null;
        return;
      }
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value.toRecordBatch());
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  const output = await parquet.transformParquetStream(input, writerProperties());
  const reader = (output as ReadableStream<Uint8Array>).getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      yield value;
    }
  } finally {
    // Left early (a client gone): stop reading snapshots too.
    if (!finished) await reader.cancel();
    reader.releaseLock();
  }
}
