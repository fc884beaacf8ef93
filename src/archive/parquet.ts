import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import { SnapshotColumns } from "../wire/snapshot-columns.ts";
import { SnapshotParquetWriter } from "./parquet/snapshot-writer.ts";

/**
 * Snapshots as Parquet (DESIGN 3.8): one row a snapshot with typed columns, readable by pandas, polars
 * and DuckDB as they are; the columns are the wire layer's (src/wire/snapshot-columns.ts).
 *
 * Rows are gathered into batches of typed arrays, and each batch is written as a row group whose
 * bytes leave before the next is read, so memory stays flat. The export's file is written by
 * src/archive/parquet/snapshot-writer.ts straight from those arrays; smaller tables (a backtest's
 * trades and results) by parquet-wasm (the Rust parquet crate compiled to WebAssembly) from Arrow.
 * parquet-wasm was chosen over hyparquet-writer (about 8 times the CPU for the same file) and
 * @dsnp/parquetjs (about 35 times), measured on 10,000 snapshots with books; the export's own writer
 * takes about a third of parquet-wasm's time for the same file (docs/decisions.md). Columns are
 * zstd-compressed; only `slug` is dictionary-encoded and only `time` keeps statistics (what readers
 * filter on).
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

/** The export's Arrow schema as an IPC message (a continuation marker, its length, its flatbuffer). */
const arrowSchemas = new Map<boolean, Uint8Array>();

/** What the file keeps under `ARROW:schema`, from which Arrow's readers take the columns' types. */
function arrowSchemaMessage(books: boolean): Uint8Array {
  let message = arrowSchemas.get(books);
  if (message === undefined) {
    const ipc = arrow.tableToIPC(new SnapshotColumns(books, 0).toArrow(), "stream");
    // The stream's first message is the schema's.
    const length = new DataView(ipc.buffer, ipc.byteOffset, ipc.byteLength).getInt32(4, true);
    message = ipc.slice(0, 8 + length);
    arrowSchemas.set(books, message);
  }
  return message;
}

/**
 * One batch of each kind that an ended export gave back, for the next export to fill. A batch with
 * books grows about 13 MB of columns; made afresh for every export, those arrays (external memory to
 * V8) started a full garbage collection every third or fourth export, and the export with books ran
 * about a fifth slower (stop 36, docs/decisions.md).
 */
const spare: { books: SnapshotColumns | null; noBooks: SnapshotColumns | null } = {
  books: null,
  noBooks: null,
};

/** An empty batch for an export: the spare one of its kind, or a new one. Give it back when done. */
export function takeBatch(books: boolean): SnapshotColumns {
  const kind = books ? "books" : "noBooks";
  const batch = spare[kind] ?? new SnapshotColumns(books, PARQUET_BATCH_ROWS[kind]);
  spare[kind] = null;
  batch.clear();
  return batch;
}

/** Keeps an ended export's batch for the next export (one of each kind; others are left to the GC). */
export function giveBack(batch: SnapshotColumns): void {
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
 * A Parquet file, streamed: `batches` gives the batches (each one row group), and the file's bytes
 * come out as each is written; the footer follows the last. A batch's rows are written before the
 * next batch is asked for, so `batches` may give the same batch again, refilled.
 */
export async function* parquetStream(
  batches: AsyncIterable<SnapshotColumns>,
  books: boolean,
): AsyncGenerator<Uint8Array> {
  const writer = new SnapshotParquetWriter(books, arrowSchemaMessage(books));
  yield writer.start();
  // One write a row group: its pages are many small buffers (a header of a few bytes each).
  for await (const batch of batches) yield Buffer.concat(writer.rowGroup(batch.view()));
  yield writer.end();
}
