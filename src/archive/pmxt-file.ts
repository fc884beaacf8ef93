import { openAsBlob } from "node:fs";
import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import type { MarketEvent } from "../domain/event.ts";

/**
 * Reading one PMXT archive v2 file (DESIGN 3.11): one Parquet file per UTC hour of every Polymarket
 * market's market-channel stream, rows sorted by (market, asset_id, timestamp_received), one row per
 * `book`, per `price_change` entry, per `last_trade_price` and per `tick_size_change`.
 *
 * The file is read a row group at a time through parquet-wasm's async reader over a file-backed Blob
 * (only the byte ranges a read needs are loaded; the file is never held whole), in two passes: the
 * `market` column alone, to find the runs of rows of the markets kept (the rows are sorted by market,
 * so each kept market is one run, found by a galloping search); then the other columns of those runs.
 * The reader decompresses every page up to the last row asked (the archive's files have no page
 * index), so runs close together are read as one span, their gap's rows decoded and dropped, rather
 * than each from the row group's start again (kept markets' condition ids are random: their runs are
 * spread over the row group). Only the runs' rows leave WebAssembly memory (a slice per run and
 * batch), and they are turned into events straight from Arrow's buffers.
 *
 * Memory is bounded by one row group's column chunks in WebAssembly memory (the reader materialises
 * a column chunk whole: about 300 MB for 1,048,576 rows of every column), one decoded batch, and the
 * events of the kept rows the caller holds (docs/archives.md states the bound).
 *
 * Each kept row becomes the market-channel message it was cut from (BatchColumns.event): PMXT drops what the
 * upstream sent beyond its 16 columns (a book's `hash`, `tick_size` and `last_trade_price`, a
 * `price_change` entry's `hash`) and splits a `price_change` of several entries into one row each;
 * the rebuilt message is a `price_change` of that one entry. Decimals are written in their shortest
 * form ("0.51", "150"), as the archive's fixed-scale decimals no longer say how the upstream wrote them.
 */

/** The columns read (all 16 of v2). */
export const PMXT_COLUMNS = [
  "timestamp_received",
  "timestamp",
  "market",
  "event_type",
  "asset_id",
  "bids",
  "asks",
  "price",
  "size",
  "side",
  "best_bid",
  "best_ask",
  "fee_rate_bps",
  "transaction_hash",
  "old_tick_size",
  "new_tick_size",
] as const;

/** The columns a row's message is rebuilt from (its market is known from its run). */
const ROW_COLUMNS = PMXT_COLUMNS.filter((c) => c !== "market");

/**
 * How a file is read. `batchRows`: rows decoded at a time (65,536). `spanGapRows`: kept runs closer
 * than this are read in one pass, their gap decoded and dropped (131,072; on a generated hour of
 * twelve kept markets spread over a row group, one pass and a pass per run cost the same, and a
 * pass per run grows with the count of kept markets, which a real hour has more of).
 */
export interface PmxtReadOptions {
  batchRows?: number;
  spanGapRows?: number;
}

/** A file that is not a readable PMXT v2 file: names the file (and row group, when one is at fault). */
export class PmxtFileError extends Error {
  constructor(file: string, reason: string) {
    super(`${file}: ${reason}`);
    this.name = "PmxtFileError";
  }
}

/** A kept row's event, and the market (its condition id) it belongs to. */
export interface KeptEvent {
  conditionId: string;
  event: MarketEvent;
}

/** A kept market's rows in a row group: [start, end). */
interface KeptRun {
  conditionId: string;
  start: number;
  end: number;
}

/** Runs read in one pass of the reader. */
interface Span {
  start: number;
  end: number;
  runs: KeptRun[];
}

/** An opened PMXT file: its row groups' sizes, and each one's kept events on demand. */
export class PmxtFile {
  readonly path: string;
  private readonly file: parquet.ParquetFile;
  readonly rowGroupRows: number[];
  private readonly batchRows: number;
  private readonly spanGapRows: number;

  private constructor(
    path: string,
    file: parquet.ParquetFile,
    rowGroupRows: number[],
    options: PmxtReadOptions,
  ) {
    this.path = path;
    this.file = file;
    this.rowGroupRows = rowGroupRows;
    this.batchRows = options.batchRows ?? 65_536;
    this.spanGapRows = options.spanGapRows ?? 131_072;
  }

  /** Opens a file and reads its footer; a truncated or foreign file is a PmxtFileError naming it. */
  static async open(path: string, options: PmxtReadOptions = {}): Promise<PmxtFile> {
    let file: parquet.ParquetFile;
    try {
      file = await parquet.ParquetFile.fromFile(await openAsBlob(path));
    } catch (err) {
      throw new PmxtFileError(path, `not a readable Parquet file (truncated?): ${messageOf(err)}`);
    }
    const schema = file.schema();
    const missing = PMXT_COLUMNS.filter((c) => schema.indexOf(c) < 0);
    if (missing.length > 0) {
      file.free();
      throw new PmxtFileError(path, `not a PMXT v2 file: no column ${missing.join(", ")}`);
    }
    const rows = file
      .metadata()
      .rowGroups()
      .map((g) => g.numRows());
    return new PmxtFile(path, file, rows, options);
  }

  /**
   * The events of the kept rows of one row group, in file order; `keep` holds the kept markets'
   * condition ids. `onEvents` gets them in parts, at the end of a market once `flushEvery` are held.
   */
  async readRowGroup(
    index: number,
    keep: ReadonlySet<string>,
    onEvents: (events: KeptEvent[]) => Promise<void>,
    flushEvery = this.batchRows,
  ): Promise<number> {
    try {
      const runs = await this.keptRuns(index, keep);
      let kept = 0;
      let pending: KeptEvent[] = [];
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
              pending.push({ conditionId: run.conditionId, event: columns.event(row, run.conditionId) });
            kept += to - from;
            // Handed over at a market's end, so that its two tokens' runs are appended together.
            if (to === run.end && pending.length >= flushEvery) {
              await onEvents(pending);
              pending = [];
            }
          }
          batch.free();
          offset = end;
        }
        if (offset !== span.end) throw new Error("rows missing from a run");
      }
      if (kept !== runs.reduce((n, r) => n + r.end - r.start, 0)) throw new Error("rows missing from a run");
      if (pending.length > 0) await onEvents(pending);
      return kept;
    } catch (err) {
      if (err instanceof PmxtFileError) throw err;
      throw new PmxtFileError(this.path, `row group ${index}: ${messageOf(err)}`);
    }
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
        const bytes = data.values as Uint8Array;
        const width = (data.type as arrow.FixedSizeBinary).byteWidth;
        const values = Buffer.from(bytes.buffer, bytes.byteOffset, data.length * width);
        for (let i = 0; i < data.length;) {
          const conditionId = values.toString("latin1", i * width, (i + 1) * width);
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

  close(): void {
    this.file.free();
  }
}

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

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

type RowColumn = Exclude<(typeof PMXT_COLUMNS)[number], "market">;

/** The columns of one decoded batch, read row by row straight from Arrow's buffers. */
class BatchColumns {
  private readonly c: Record<RowColumn, arrow.Data>;
  /** Each text column's bytes as one Buffer, made once a batch (decoding through it is the fast path). */
  private readonly bytes = new Map<arrow.Data, Buffer>();
  readonly rows: number;

  constructor(table: arrow.Table) {
    this.rows = table.numRows;
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

  /** The market-channel message of row `i`, as an event received at the row's receive time. */
  event(i: number, conditionId: string): MarketEvent {
    const c = this.c;
    const receivedMs = int64(c.timestamp_received, i);
    const timestampMs = int64(c.timestamp, i);
    const type = this.text(c.event_type, i);
    const assetId = this.text(c.asset_id, i) ?? "";
    const timestamp = String(timestampMs);
    let message: Record<string, unknown>;
    switch (type) {
      case "book":
        message = {
          market: conditionId,
          asset_id: assetId,
          timestamp,
          bids: levels(this.text(c.bids, i)),
          asks: levels(this.text(c.asks, i)),
          event_type: "book",
        };
        break;
      case "price_change": {
        const change: Record<string, unknown> = { asset_id: assetId };
        put(change, "price", decimal(c.price, i));
        put(change, "size", decimal(c.size, i));
        put(change, "side", this.text(c.side, i));
        put(change, "best_bid", decimal(c.best_bid, i));
        put(change, "best_ask", decimal(c.best_ask, i));
        message = { market: conditionId, price_changes: [change], timestamp, event_type: "price_change" };
        break;
      }
      case "last_trade_price":
        message = { asset_id: assetId, event_type: "last_trade_price" };
        put(message, "fee_rate_bps", uint16(c.fee_rate_bps, i));
        message.market = conditionId;
        put(message, "price", decimal(c.price, i));
        put(message, "side", this.text(c.side, i));
        put(message, "size", decimal(c.size, i));
        message.timestamp = timestamp;
        put(message, "transaction_hash", this.text(c.transaction_hash, i));
        break;
      case "tick_size_change":
        message = { event_type: "tick_size_change", asset_id: assetId, market: conditionId };
        put(message, "old_tick_size", decimal(c.old_tick_size, i));
        put(message, "new_tick_size", decimal(c.new_tick_size, i));
        put(message, "side", this.text(c.side, i));
        message.timestamp = timestamp;
        break;
      default:
        throw new Error(`row ${i}: event_type ${String(type)}`);
    }
    return { receivedUs: receivedMs * 1000, timestampMs, type, message };
  }

  private text(d: arrow.Data, i: number): string | null {
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
}

/**
 * A field set unless the row has no value for it: a message is built in its key order with the
 * absent fields left out (not deleted afterwards, which would make V8 keep it as a slow dictionary).
 */
function put(o: Record<string, unknown>, key: string, value: string | null): void {
  if (value !== null) o[key] = value;
}

function isNull(d: arrow.Data, i: number): boolean {
  if (d.nullCount === 0 || !d.nullBitmap || d.nullBitmap.length === 0) return false;
  const j = d.offset + i;
  return (d.nullBitmap[j >> 3] & (1 << (j & 7))) === 0;
}

function int64(d: arrow.Data, i: number): number {
  return Number((d.values as BigInt64Array)[i]);
}

function uint16(d: arrow.Data, i: number): string | null {
  return isNull(d, i) ? null : String((d.values as Uint16Array)[i]);
}

/** A decimal column's value in its shortest text ("0.5100" -> "0.51", "150.000000" -> "150"). */
function decimal(d: arrow.Data, i: number): string | null {
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

const POWERS = Array.from({ length: 16 }, (_, i) => 10 ** i);

/** A non-negative safe integer divided by 10^scale, in the shortest form, by arithmetic alone. */
function shortest(value: number, scale: number): string {
  if (scale === 0) return String(value);
  if (scale >= POWERS.length) return scaled(String(value), scale);
  const power = POWERS[scale];
  let whole = Math.floor(value / power);
  let frac = value - whole * power;
  // The division is rounded near 2^53: put the remainder back in range.
  if (frac < 0) {
    whole--;
    frac += power;
  } else if (frac >= power) {
    whole++;
    frac -= power;
  }
  if (frac === 0) return String(whole);
  let places = scale;
  while (frac % 10 === 0) {
    frac /= 10;
    places--;
  }
  return `${whole}.${String(frac).padStart(places, "0")}`;
}

/** An integer's digits divided by 10^scale, in the shortest form. */
function scaled(digits: string, scale: number): string {
  const negative = digits.startsWith("-");
  const abs = negative ? digits.slice(1) : digits;
  const padded = abs.padStart(scale + 1, "0");
  const whole = padded.slice(0, padded.length - scale);
  const frac = padded.slice(padded.length - scale).replace(/0+$/, "");
  const out = frac === "" ? whole : `${whole}.${frac}`;
  return negative && out !== "0" ? `-${out}` : out;
}

/** A book side as PMXT writes it (`[["price","size"],...]`), as the upstream sent it (`[{price, size}]`). */
function levels(json: string | null): { price: string; size: string }[] {
  if (json === null) return [];
  const parsed = JSON.parse(json) as unknown;
  if (!Array.isArray(parsed)) throw new Error("book side is not a list");
  return parsed.map((l: unknown) => {
    if (Array.isArray(l)) return { price: String(l[0]), size: String(l[1]) };
    const o = l as { price: unknown; size: unknown };
    return { price: String(o.price), size: String(o.size) };
  });
}
