import { openAsBlob } from "node:fs";
import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import {
  type DecimalColumn,
  type KeptEvent,
  KeptEventBatches,
  type KeptRun,
  checkPmxtColumns,
  PMXT_COLUMNS,
  type PmxtRows,
  type RowGroupReader,
  rowEvent,
  runEnd,
  scaled,
  shortest,
  type TextColumn,
} from "./pmxt-rows.ts";

/**
 * PMXT row groups read by parquet-wasm (the Rust parquet crate compiled to WebAssembly): the reader of
 * files in a Parquet dialect the flat reader does not read (src/archive/pmxt-file.ts chooses).
 *
 * A row group is read through parquet-wasm's async reader over a file-backed Blob (only the byte
 * ranges a read needs are loaded; the file is never held whole). It decompresses every page up to the
 * last row asked (it uses no page headers to skip), so runs close together are read as one span,
 * their gap's rows decoded and dropped, rather than each from the row group's start again. Only the
 * runs' rows leave WebAssembly memory (a slice per run and batch).
 *
 * Memory is bounded by one row group's column chunks in WebAssembly memory (the reader materialises
 * a column chunk whole: about 300 MB for 1,048,576 rows of every column), one decoded batch, and the
 * events of the kept rows the caller holds (docs/archives.md states the bound).
 */

/** The columns a row's message is rebuilt from (its market is known from its run). */
const ROW_COLUMNS = PMXT_COLUMNS.filter((c) => c !== "market");

/** Runs read in one pass of the reader. */
interface Span {
  start: number;
  end: number;
  runs: KeptRun[];
}

export class WasmRowGroups implements RowGroupReader {
  private readonly file: parquet.ParquetFile;
  readonly rowGroupRows: number[];
  private readonly spanGapRows: number;
  private readonly batchRows: number;
  private constructor(
    file: parquet.ParquetFile,
    rowGroupRows: number[],
    spanGapRows: number,
    batchRows: number,
  ) {
    this.file = file;
    this.rowGroupRows = rowGroupRows;
    this.spanGapRows = spanGapRows;
    this.batchRows = batchRows;
  }

  /** Opens a file; a missing PMXT column is an error saying which. */
  static async open(path: string, spanGapRows: number, batchRows: number): Promise<WasmRowGroups> {
    const file = await parquet.ParquetFile.fromFile(await openAsBlob(path));
    const schema = file.schema();
    try {
      checkPmxtColumns((c) => schema.indexOf(c) >= 0);
    } catch (err) {
      file.free();
      throw err;
    }
    const rows = file
      .metadata()
      .rowGroups()
      .map((g) => g.numRows());
    return new WasmRowGroups(file, rows, spanGapRows, batchRows);
  }

  async readRowGroup(
    index: number,
    keep: ReadonlySet<string>,
    onEvents: (events: KeptEvent[]) => Promise<void>,
    flushEvery: number,
  ): Promise<number> {
    const runs = await this.keptRuns(index, keep);
    let kept = 0;
    const batches = new KeptEventBatches(onEvents, flushEvery);
    for (const span of this.spansOf(runs)) {
      const stream = (await this.file.stream({
        rowGroups: [index],
        offset: span.start,
        limit: span.end - span.start,
        batchSize: this.batchRows,
        columns: ROW_COLUMNS,
      })) as ReadableStream<parquet.RecordBatch>;
      let offset = span.start;
      for await (const batch of stream) {
        const end = offset + batch.numRows;
        for (const run of span.runs) {
          const from = Math.max(run.start, offset);
          const to = Math.min(run.end, end);
          if (from >= to) continue;
          // A slice is a view: only the run's rows are copied out of WebAssembly memory.
          const columns = new BatchColumns(
            arrow.tableFromIPC(batch.slice(from - offset, to - from).intoIPCStream()),
          );
          for (let row = 0; row < to - from; row++)
            batches.push({ conditionId: run.conditionId, event: rowEvent(columns, row, run.conditionId) });
          kept += to - from;
          if (to === run.end) await batches.marketEnded();
        }
        batch.free();
        offset = end;
      }
      if (offset !== span.end) throw new Error("rows missing from a run");
    }
    if (kept !== runs.reduce((n, r) => n + r.end - r.start, 0)) throw new Error("rows missing from a run");
    await batches.finish();
    return kept;
  }

  /** Runs merged where their gap is small: each span is read by one pass of the reader. */
  private spansOf(runs: readonly KeptRun[]): Span[] {
    const spans: Span[] = [];
    for (const run of runs) {
      const last = spans.at(-1);
      if (last && run.start - last.end < this.spanGapRows) {
        last.end = run.end;
        last.runs.push(run);
      } else spans.push({ start: run.start, end: run.end, runs: [run] });
    }
    return spans;
  }

  /** The runs of rows of kept markets in a row group, from its `market` column alone. */
  private async keptRuns(index: number, keep: ReadonlySet<string>): Promise<KeptRun[]> {
    const runs: KeptRun[] = [];
    const stream = (await this.file.stream({
      rowGroups: [index],
      batchSize: this.batchRows,
      columns: ["market"],
    })) as ReadableStream<parquet.RecordBatch>;
    let offset = 0;
    let previous = "";
    let kept = false;
    for await (const batch of stream) {
      const column = arrow.tableFromIPC(batch.intoIPCStream()).getChild("market");
      if (!column) throw new Error("no market column");
      for (const data of column.data) {
        // The condition id as a fixed-size binary (the archive's) or a binary (another writer's, DuckDB's).
        const bytes = data.values as Uint8Array;
        const offsets = data.valueOffsets as Int32Array | undefined;
        const width = (data.type as arrow.FixedSizeBinary).byteWidth;
        const start = (i: number) => (offsets ? offsets[i] : i * width);
        const end = (i: number) => (offsets ? offsets[i + 1] : (i + 1) * width);
        const values = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        const same = (a: number, b: number) =>
          values.compare(values, start(a), end(a), start(b), end(b)) === 0;
        for (let i = 0; i < data.length;) {
          const conditionId = values.toString("latin1", start(i), end(i));
          const runStop = runEnd(same, i, data.length);
          if (conditionId !== previous) {
            previous = conditionId;
            kept = keep.has(conditionId);
            if (kept) runs.push({ conditionId, start: offset + i, end: offset + runStop });
          } else if (kept) runs[runs.length - 1].end = offset + runStop;
          i = runStop;
        }
        offset += data.length;
      }
    }
    return runs;
  }

  close(): void {
    this.file.free();
  }
}

type RowColumn = Exclude<(typeof PMXT_COLUMNS)[number], "market">;

/** The columns of one decoded batch, read row by row straight from Arrow's buffers. */
class BatchColumns implements PmxtRows {
  private readonly c: Record<RowColumn, arrow.Data>;
  /** Each text column's bytes as one Buffer, made once a batch (decoding through it is the fast path). */
  private readonly bytes = new Map<arrow.Data, Buffer>();

  constructor(table: arrow.Table) {
    const c = {} as Record<RowColumn, arrow.Data>;
    for (const name of ROW_COLUMNS) {
      const column = table.getChild(name);
      if (!column) throw new Error(`no ${name} column`);
      // A batch from parquet-wasm is one chunk, read from its start.
      if (column.data.length !== 1 || column.data[0].offset !== 0) throw new Error(`${name}: not one chunk`);
      c[name] = column.data[0];
    }
    this.c = c;
  }

  receivedUs(i: number): number {
    return timeIn(this.c.timestamp_received, i, 1_000_000n);
  }

  timestampMs(i: number): number {
    return timeIn(this.c.timestamp, i, 1_000n);
  }

  feeRateBps(i: number): string | null {
    const d = this.c.fee_rate_bps;
    return isNull(d, i) ? null : String((d.values as Uint16Array)[i]);
  }

  text(column: TextColumn, i: number): string | null {
    const d = this.c[column];
    if (isNull(d, i)) return null;
    const offsets = d.valueOffsets as Int32Array;
    let bytes = this.bytes.get(d);
    if (!bytes) {
      const values = d.values as Uint8Array;
      this.bytes.set(d, (bytes = Buffer.from(values.buffer, values.byteOffset, values.byteLength)));
    }
    // Buffer's UTF-8 decoding: about four times TextDecoder's speed on short strings such as ids.
    return bytes.toString("utf8", offsets[i], offsets[i + 1]);
  }

  /** A decimal column's value in its shortest text ("0.5100" -> "0.51", "150.000000" -> "150"). */
  decimal(column: DecimalColumn, i: number): string | null {
    const d = this.c[column];
    if (isNull(d, i)) return null;
    const words = d.values as Uint32Array;
    const stride = (d.type as arrow.Decimal).bitWidth / 32;
    const scale = (d.type as arrow.Decimal).scale;
    const at = i * stride;
    const lo = words[at];
    const hi = words[at + 1];
    const signWords = stride > 2 ? words[at + 2] | words[at + 3] : 0;
    if (signWords === 0 && hi < 0x200000) return shortest(hi * 4294967296 + lo, scale);
    let v = 0n;
    for (let w = stride - 1; w >= 0; w--) v = (v << 32n) | BigInt(words[at + w]);
    if (v >> BigInt(stride * 32 - 1)) v -= 1n << BigInt(stride * 32);
    return scaled(v.toString(), scale);
  }
}

/** A timestamp in units of 1/`perSecond` s from the unit its column has, rounded down. */
function timeIn(d: arrow.Data, i: number, perSecond: bigint): number {
  const t = (d.values as BigInt64Array)[i];
  const unit = (d.type as arrow.Timestamp).unit;
  const per = [1n, 1_000n, 1_000_000n, 1_000_000_000n][unit];
  if (per <= perSecond) return Number(t * (perSecond / per));
  const divisor = per / perSecond;
  const q = t / divisor;
  return Number(t < 0n && q * divisor !== t ? q - 1n : q);
}

function isNull(d: arrow.Data, i: number): boolean {
  if (d.nullCount === 0 || !d.nullBitmap || d.nullBitmap.length === 0) return false;
  const j = d.offset + i;
  return (d.nullBitmap[j >> 3] & (1 << (j & 7))) === 0;
}
