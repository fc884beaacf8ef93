import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import { SnapshotColumns } from "../wire/snapshot-columns.ts";

/**
 * Snapshots as Parquet (DESIGN 3.8): one row a snapshot with typed columns, readable by pandas, polars
 * and DuckDB as they are; the columns are the wire layer's (src/wire/snapshot-columns.ts).
 *
 * Rows are gathered into Arrow record batches (apache-arrow, built straight from typed arrays) and
 * written by parquet-wasm (the Rust parquet crate compiled to WebAssembly) as a stream: each batch
 * becomes a row group whose bytes leave before the next is read, so memory stays flat. parquet-wasm
 * was chosen over hyparquet-writer (about 8 times the CPU for the same file) and @dsnp/parquetjs
 * (about 35 times), measured on 10,000 snapshots with books (docs/decisions.md). Columns are
 * zstd-compressed; only `slug` is dictionary-encoded and only `time` keeps statistics (what readers
 * filter on), which halves the writer's CPU.
 */

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

/** The rows of one record batch: the wire layer's columns of snapshots, handed to parquet-wasm. */
export class ParquetBatch extends SnapshotColumns {
  /** The batch as an Arrow table in parquet-wasm's memory. */
  toTable(): parquet.Table {
    return parquet.Table.fromIPCStream(arrow.tableToIPC(this.toArrow(), "stream"));
  }

  toRecordBatch(): parquet.RecordBatch {
    const table = this.toTable();
    try {
      const batch = table.recordBatch(0);
      if (!batch) throw new Error("an empty Parquet batch");
      return batch;
    } finally {
      table.free();
    }
  }
}

/**
 * One batch of each kind that an ended export gave back, for the next export to fill. A batch with
 * books grows about 13 MB of columns; made afresh for every export, those arrays (external memory to
 * V8) started a full garbage collection every third or fourth export, and the export with books ran
 * about a fifth slower (stop 36, docs/decisions.md).
 */
const spare: { books: ParquetBatch | null; noBooks: ParquetBatch | null } = { books: null, noBooks: null };

/** An empty batch for an export: the spare one of its kind, or a new one. Give it back when done. */
export function takeBatch(books: boolean): ParquetBatch {
  const kind = books ? "books" : "noBooks";
  const batch = spare[kind] ?? new ParquetBatch(books, PARQUET_BATCH_ROWS[kind]);
  spare[kind] = null;
  batch.clear();
  return batch;
}

/** Keeps an ended export's batch for the next export (one of each kind; others are left to the GC). */
export function giveBack(batch: ParquetBatch): void {
  spare[batch.books ? "books" : "noBooks"] ??= batch;
}

/** A small table (a run's trades or results) as one Parquet file, written with the same properties. */
export function parquetOfTable(table: arrow.Table): Uint8Array {
  return parquet.writeParquet(
    parquet.Table.fromIPCStream(arrow.tableToIPC(table, "stream")),
    writerProperties(),
  );
}

/**
 * A Parquet file, streamed: `batches` gives the record batches (each one row group), and the file's
 * bytes come out as each is written; the footer follows the last. A batch's rows are copied into
 * WebAssembly memory before the next batch is asked for, so `batches` may give the same batch again,
 * refilled.
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
