import { openAsBlob } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import * as arrow from "apache-arrow";
import { initSync, ParquetFile, type RecordBatch } from "parquet-wasm/esm";

/**
 * The thread that reads PMXT files (src/archive/pmxt-file.ts is its other side). Decoding Parquet
 * is most of an import's CPU; here it runs beside the main thread, which turns the rows of one read
 * into events and writes them while this thread decodes the next. It is given parquet-wasm's
 * compiled module (compiled once by the main thread), so it starts in milliseconds.
 *
 * A row group is read in two passes: the `market` column alone, to find the runs of rows of the
 * markets kept (the rows are sorted by market, so each kept market is one run, found by a galloping
 * search); then the other columns of those runs only. The reader decompresses every page up to the
 * last row asked, so runs close together are read as one span (their gap's rows decoded and dropped)
 * rather than each from the row group's start again. Each decoded batch leaves as Arrow IPC bytes,
 * transferred (not copied); at most IN_FLIGHT of them wait on the main thread at once, which bounds
 * memory.
 */

export interface ReadWorkerData {
  module: WebAssembly.Module;
  /** Rows decoded at a time. */
  batchRows: number;
  /** Runs closer than this are read as one span (decoding the gap costs less than a second pass). */
  spanGapRows: number;
}

export type ReadRequest =
  /** Opens a file and reads its footer; `columns` are those it must have. */
  | { type: "open"; path: string; columns: readonly string[] }
  | { type: "read"; file: number; rowGroup: number; keep: readonly string[]; columns: readonly string[] }
  | { type: "close"; file: number }
  | { type: "ack" };

/** A kept market's rows in a row group: [start, end). */
export interface KeptRun {
  conditionId: string;
  start: number;
  end: number;
}

export type ReadReply =
  | { type: "opened"; file: number; rowGroupRows: number[]; missing: string[] }
  | { type: "runs"; runs: KeptRun[] }
  /** Rows of one run from `offset` (in the row group) on, as Arrow IPC. */
  | { type: "rows"; offset: number; ipc: Uint8Array }
  | { type: "done" }
  | { type: "closed" }
  | { type: "failed"; message: string };

/** Batches sent and not yet acknowledged, at most. */
const IN_FLIGHT = 4;

const port = parentPort;
if (port === null) throw new Error("pmxt-read-worker runs as a worker thread");
const { module, batchRows: BATCH_ROWS, spanGapRows: SPAN_GAP_ROWS } = workerData as ReadWorkerData;
initSync({ module });

const files = new Map<number, ParquetFile>();
let nextFile = 1;
let inFlight = 0;
let acked: (() => void) | null = null;
let queue: Promise<void> = Promise.resolve();

function send(reply: ReadReply, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(reply, transfer);
}

async function sendRows(offset: number, batch: RecordBatch): Promise<void> {
  const ipc = batch.intoIPCStream();
  inFlight++;
  send({ type: "rows", offset, ipc }, [ipc.buffer as ArrayBuffer]);
  while (inFlight >= IN_FLIGHT) await new Promise<void>((resolve) => (acked = resolve));
}

port.on("message", (request: ReadRequest) => {
  if (request.type === "ack") {
    inFlight--;
    const wake = acked;
    acked = null;
    wake?.();
    return;
  }
  // Requests run one after another, as the main thread sends them.
  queue = queue.then(() =>
    handle(request).catch((err: unknown) =>
      send({ type: "failed", message: err instanceof Error ? err.message : String(err) }),
    ),
  );
});

async function handle(request: Exclude<ReadRequest, { type: "ack" }>): Promise<void> {
  switch (request.type) {
    case "open": {
      const file = await ParquetFile.fromFile(await openAsBlob(request.path));
      const id = nextFile++;
      files.set(id, file);
      const rowGroupRows = file
        .metadata()
        .rowGroups()
        .map((g) => g.numRows());
      const schema = file.schema();
      const missing = request.columns.filter((c) => schema.indexOf(c) < 0);
      send({ type: "opened", file: id, rowGroupRows, missing });
      return;
    }
    case "close":
      files.get(request.file)?.free();
      files.delete(request.file);
      send({ type: "closed" });
      return;
    case "read": {
      const file = files.get(request.file);
      if (!file) throw new Error("the file is not open");
      const runs = await keptRuns(file, request.rowGroup, new Set(request.keep));
      send({ type: "runs", runs });
      for (const span of spansOf(runs)) {
        const stream = (await file.stream({
          rowGroups: [request.rowGroup],
          offset: span.start,
          limit: span.end - span.start,
          batchSize: BATCH_ROWS,
          columns: [...request.columns],
        })) as ReadableStream<RecordBatch>;
        let offset = span.start;
        for await (const batch of stream) {
          const end = offset + batch.numRows;
          // Only the runs' rows leave (a slice is a view: the gap's rows are not copied).
          for (const run of span.runs) {
            const from = Math.max(run.start, offset);
            const to = Math.min(run.end, end);
            if (from < to) await sendRows(from, batch.slice(from - offset, to - from));
          }
          batch.free();
          offset = end;
        }
        if (offset !== span.end) throw new Error("rows missing from a run");
      }
      send({ type: "done" });
      return;
    }
  }
}

interface Span {
  start: number;
  end: number;
  runs: KeptRun[];
}

/** Runs merged where their gap is small: each span is read by one pass of the reader. */
function spansOf(runs: readonly KeptRun[]): Span[] {
  const spans: Span[] = [];
  for (const run of runs) {
    const last = spans.at(-1);
    if (last && run.start - last.end < SPAN_GAP_ROWS) {
      last.end = run.end;
      last.runs.push(run);
    } else spans.push({ start: run.start, end: run.end, runs: [run] });
  }
  return spans;
}

/** The runs of rows of kept markets in a row group, from its `market` column alone. */
async function keptRuns(file: ParquetFile, index: number, keep: ReadonlySet<string>): Promise<KeptRun[]> {
  const runs: KeptRun[] = [];
  const stream = (await file.stream({
    rowGroups: [index],
    batchSize: BATCH_ROWS,
    columns: ["market"],
  })) as ReadableStream<RecordBatch>;
  let offset = 0;
  let previous = "";
  let kept = false;
  for await (const batch of stream) {
    const column = arrow.tableFromIPC(batch.intoIPCStream()).getChild("market");
    if (!column) throw new Error("no market column");
    for (const data of column.data) {
      const bytes = data.values as Uint8Array;
      const width = (data.type as arrow.FixedSizeBinary).byteWidth;
      const values = Buffer.from(bytes.buffer, bytes.byteOffset, data.length * width);
      for (let i = 0; i < data.length;) {
        const conditionId = LATIN1.decode(bytes.subarray(i * width, (i + 1) * width));
        const end = runEnd(values, width, i, data.length);
        if (conditionId !== previous) {
          previous = conditionId;
          kept = keep.has(conditionId);
          if (kept) runs.push({ conditionId, start: offset + i, end: offset + end });
        } else if (kept) runs[runs.length - 1].end = offset + end;
        i = end;
      }
      offset += data.length;
    }
  }
  return runs;
}

const LATIN1 = new TextDecoder("latin1");

/** The first row after `start` whose value differs from row `start`'s, in rows sorted by value. */
function runEnd(values: Buffer, width: number, start: number, length: number): number {
  const same = (i: number) =>
    values.compare(values, start * width, (start + 1) * width, i * width, (i + 1) * width) === 0;
  let step = 1;
  let low = start; // known equal
  let high = start + 1;
  while (high < length && same(high)) {
    low = high;
    step *= 2;
    high = Math.min(length, start + step);
  }
  // low is equal; high is the first differing row or the end: bisect between them.
  while (high - low > 1) {
    const mid = (low + high) >>> 1;
    if (same(mid)) low = mid;
    else high = mid;
  }
  return high;
}
