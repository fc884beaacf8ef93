import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import * as arrow from "apache-arrow";
import type { MarketEvent } from "../domain/event.ts";
import type { KeptRun, ReadReply, ReadRequest, ReadWorkerData } from "./pmxt-read-worker.ts";

/**
 * Reading one PMXT archive v2 file (DESIGN 3.11): one Parquet file per UTC hour of every Polymarket
 * market's market-channel stream, rows sorted by (market, asset_id, timestamp_received), one row per
 * `book`, per `price_change` entry, per `last_trade_price` and per `tick_size_change`.
 *
 * The Parquet decoding runs on a thread of its own (src/archive/pmxt-read-worker.ts: a row group at a
 * time, by byte ranges of the file, never the file whole; only the kept markets' runs of rows); this
 * side turns the decoded rows into events while the thread decodes the next. Memory is bounded by one
 * row group's column chunks in the reader's WebAssembly memory (it materialises a column chunk whole:
 * about 300 MB for 1,048,576 rows of every column), the few decoded batches in flight, and the events
 * of the kept rows the caller holds (docs/archives.md states the bound).
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

/** Kept events handed to the caller at once, by default (at the end of a market). */
const FLUSH_EVENTS = 65_536;

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

let compiled: Promise<WebAssembly.Module> | null = null;

/** parquet-wasm's module, compiled once a process and handed to each reading thread. */
function parquetModule(): Promise<WebAssembly.Module> {
  // The project's lib (esnext, no DOM) declares WebAssembly's types but not the global's value.
  const wasm = (
    globalThis as unknown as { WebAssembly: { compile(b: Uint8Array): Promise<WebAssembly.Module> } }
  ).WebAssembly;
  compiled ??= wasm.compile(
    readFileSync(fileURLToPath(import.meta.resolve("parquet-wasm/esm/parquet_wasm_bg.wasm"))),
  );
  return compiled;
}

type Reply<T extends ReadReply["type"]> = Extract<ReadReply, { type: T }>;

/**
 * The reading thread of an import: files are opened and read through it one request at a time.
 * `close` ends the thread.
 */
export class PmxtReader {
  private readonly worker: Promise<Worker>;
  private onReply: ((reply: ReadReply) => void) | null = null;
  private lost: Error | null = null;

  private constructor(worker: Promise<Worker>) {
    this.worker = worker;
  }

  /**
   * `batchRows`: rows decoded at a time (65,536); `spanGapRows`: kept runs closer than this are read
   * in one pass, their gap decoded and dropped (131,072: about what a second pass from the row
   * group's start costs, as the reader decompresses every page up to the last row asked).
   */
  static start(options: Partial<Pick<ReadWorkerData, "batchRows" | "spanGapRows">> = {}): PmxtReader {
    const reader: PmxtReader = new PmxtReader(
      parquetModule().then((module) => {
        const data: ReadWorkerData = { module, batchRows: 65_536, spanGapRows: 131_072, ...options };
        const worker = new Worker(new URL("./pmxt-read-worker.ts", import.meta.url), { workerData: data });
        worker.on("message", (reply: ReadReply) => reader.onReply?.(reply));
        const lose = (err: Error) => {
          reader.lost ??= err;
          reader.onReply?.({ type: "failed", message: err.message });
        };
        worker.on("error", lose);
        worker.on("exit", (code) => lose(new Error(`the reading thread exited (${code})`)));
        return worker;
      }),
    );
    return reader;
  }

  /** Opens a file and reads its footer; a truncated or foreign file is a PmxtFileError naming it. */
  async open(path: string): Promise<PmxtFile> {
    let opened: Reply<"opened">;
    try {
      opened = await this.request({ type: "open", path, columns: PMXT_COLUMNS }, "opened");
    } catch (err) {
      throw new PmxtFileError(path, `not a readable Parquet file (truncated?): ${messageOf(err)}`);
    }
    const file = new PmxtFile(this, path, opened.file, opened.rowGroupRows);
    if (opened.missing.length > 0) {
      await file.close();
      throw new PmxtFileError(path, `not a PMXT v2 file: no column ${opened.missing.join(", ")}`);
    }
    return file;
  }

  async close(): Promise<void> {
    this.lost ??= new Error("the reader is closed");
    await (await this.worker).terminate();
  }

  /** Sends one request and gives each reply to `each` until it returns the one that ends it. */
  async exchange<T>(request: ReadRequest, each: (reply: ReadReply) => T | undefined): Promise<T> {
    const worker = await this.worker;
    if (this.lost) throw this.lost;
    if (this.onReply) throw new Error("one request at a time");
    return new Promise<T>((resolve, reject) => {
      this.onReply = (reply) => {
        let out: T | undefined;
        try {
          if (reply.type === "failed") throw new Error(reply.message);
          out = each(reply);
        } catch (err) {
          this.onReply = null;
          reject(err as Error);
          return;
        }
        if (out !== undefined) {
          this.onReply = null;
          resolve(out);
        }
      };
      worker.postMessage(request);
    });
  }

  private request<T extends ReadReply["type"]>(request: ReadRequest, type: T): Promise<Reply<T>> {
    return this.exchange(request, (reply) => (reply.type === type ? (reply as Reply<T>) : undefined));
  }

  /** Acknowledges a batch of rows: the thread sends at most a few ahead. */
  ack(): void {
    void this.worker.then((w) => w.postMessage({ type: "ack" } satisfies ReadRequest));
  }
}

/** An opened PMXT file: its row groups' sizes, and each one's kept events on demand. */
export class PmxtFile {
  readonly path: string;
  readonly rowGroupRows: number[];
  private readonly reader: PmxtReader;
  private readonly id: number;

  constructor(reader: PmxtReader, path: string, id: number, rowGroupRows: number[]) {
    this.reader = reader;
    this.path = path;
    this.id = id;
    this.rowGroupRows = rowGroupRows;
  }

  /**
   * The events of the kept rows of one row group, in file order; `keep` holds the kept markets'
   * condition ids. `onEvents` gets them in parts, at the end of a market once `flushEvery` are held.
   */
  async readRowGroup(
    index: number,
    keep: ReadonlySet<string>,
    onEvents: (events: KeptEvent[]) => Promise<void>,
    flushEvery = FLUSH_EVENTS,
  ): Promise<number> {
    let runs: KeptRun[] = [];
    let run = 0;
    let kept = 0;
    let pending: KeptEvent[] = [];
    // Rows are turned into events as they come; the events are handed over (awaited) in order.
    let writing: Promise<void> = Promise.resolve();
    const handOver = () => {
      const events = pending;
      pending = [];
      writing = writing.then(() => onEvents(events));
    };
    try {
      await this.reader.exchange(
        { type: "read", file: this.id, rowGroup: index, keep: [...keep], columns: ROW_COLUMNS },
        (reply) => {
          if (reply.type === "runs") runs = reply.runs;
          else if (reply.type === "rows") {
            const columns = new BatchColumns(arrow.tableFromIPC(reply.ipc));
            const end = reply.offset + columns.rows;
            for (; run < runs.length && runs[run].start < end; run++) {
              const { conditionId, start: from, end: to } = runs[run];
              const last = Math.min(to, end);
              for (let row = Math.max(from, reply.offset); row < last; row++)
                pending.push({ conditionId, event: columns.event(row - reply.offset, conditionId) });
              kept += last - Math.max(from, reply.offset);
              if (to > end) break; // the run goes on in the next batch
              // Handed over at a market's end, so that its two tokens' runs are appended together.
              if (pending.length >= flushEvery) handOver();
            }
            // The thread sends the next batch once this one's events are written.
            void writing.then(
              () => this.reader.ack(),
              () => this.reader.ack(),
            );
          } else if (reply.type === "done") return true;
          return undefined;
        },
      );
      if (kept !== runs.reduce((n, r) => n + r.end - r.start, 0)) throw new Error("rows missing from a run");
      if (pending.length > 0) handOver();
      await writing;
      return kept;
    } catch (err) {
      await writing.catch(() => undefined);
      if (err instanceof PmxtFileError) throw err;
      throw new PmxtFileError(this.path, `row group ${index}: ${messageOf(err)}`);
    }
  }

  async close(): Promise<void> {
    await this.reader.exchange({ type: "close", file: this.id }, (r) =>
      r.type === "closed" ? true : undefined,
    );
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

type RowColumn = Exclude<(typeof PMXT_COLUMNS)[number], "market">;

/** The columns of one decoded batch, read row by row straight from Arrow's buffers. */
class BatchColumns {
  private readonly c: Record<RowColumn, arrow.Data>;
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
    const type = text(c.event_type, i);
    const assetId = text(c.asset_id, i) ?? "";
    const timestamp = String(timestampMs);
    let message: Record<string, unknown>;
    switch (type) {
      case "book":
        message = {
          market: conditionId,
          asset_id: assetId,
          timestamp,
          bids: levels(text(c.bids, i)),
          asks: levels(text(c.asks, i)),
          event_type: "book",
        };
        break;
      case "price_change": {
        const change: Record<string, unknown> = { asset_id: assetId };
        put(change, "price", decimal(c.price, i));
        put(change, "size", decimal(c.size, i));
        put(change, "side", text(c.side, i));
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
        put(message, "side", text(c.side, i));
        put(message, "size", decimal(c.size, i));
        message.timestamp = timestamp;
        put(message, "transaction_hash", text(c.transaction_hash, i));
        break;
      case "tick_size_change":
        message = { event_type: "tick_size_change", asset_id: assetId, market: conditionId };
        put(message, "old_tick_size", decimal(c.old_tick_size, i));
        put(message, "new_tick_size", decimal(c.new_tick_size, i));
        put(message, "side", text(c.side, i));
        message.timestamp = timestamp;
        break;
      default:
        throw new Error(`row ${i}: event_type ${String(type)}`);
    }
    return { receivedUs: receivedMs * 1000, timestampMs, type, message };
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

function text(d: arrow.Data, i: number): string | null {
  if (isNull(d, i)) return null;
  const offsets = d.valueOffsets as Int32Array;
  const bytes = d.values as Uint8Array;
  // Buffer's UTF-8 decoding: about four times TextDecoder's speed on short strings such as ids.
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(
    "utf8",
    offsets[i],
    offsets[i + 1],
  );
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
