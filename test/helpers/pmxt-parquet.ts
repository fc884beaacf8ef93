import { closeSync, openSync, writeFileSync, writeSync } from "node:fs";
import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";

/**
 * A writer of PMXT archive v2 files (DESIGN 3.11) for tests and the bench: the documented 16 columns
 * with their real types (timestamps in ms UTC, the condition id as FixedSizeBinary(66), prices and
 * sizes as decimal(9,4) and decimal(18,6), fee as uint16), ZSTD, dictionary encoding, row groups of a
 * chosen size, rows in the order given (the archive's is (market, asset_id, timestamp_received)).
 */

/** One archive row; decimals as text ("0.51"), null where the row's type has no such column. */
export interface PmxtRow {
  timestampReceived: number;
  timestamp: number;
  market: string;
  eventType: "book" | "price_change" | "last_trade_price" | "tick_size_change";
  assetId: string;
  bids?: string | null;
  asks?: string | null;
  price?: string | null;
  size?: string | null;
  side?: "BUY" | "SELL" | null;
  bestBid?: string | null;
  bestAsk?: string | null;
  feeRateBps?: number | null;
  transactionHash?: string | null;
  oldTickSize?: string | null;
  newTickSize?: string | null;
}

function validity(present: boolean[]): { nullBitmap: Uint8Array; nullCount: number } {
  const nullBitmap = new Uint8Array(Math.ceil(present.length / 8));
  let nullCount = 0;
  present.forEach((p, i) => {
    if (p) nullBitmap[i >> 3] |= 1 << (i & 7);
    else nullCount++;
  });
  return { nullBitmap, nullCount };
}

function timestamps(values: number[]): arrow.Data {
  return arrow.makeData({
    type: new arrow.TimestampMillisecond("UTC"),
    length: values.length,
    data: BigInt64Array.from(values, (v) => BigInt(v)),
  });
}

const POW10 = Array.from({ length: 16 }, (_, i) => 10 ** i);

/** A decimal text as its 128-bit little-endian integer at `scale` digits, written at `at`. */
function decimalInto(words: Uint32Array, at: number, text: string, scale: number): void {
  // The common case by arithmetic (non-negative, at most 15 digits and `scale` decimals), else BigInt.
  let v = 0;
  let decimals = -1;
  let digits = 0;
  let plain = text.length > 0;
  for (let k = 0; k < text.length && plain; k++) {
    const c = text.charCodeAt(k);
    if (c === 46 && decimals < 0) decimals = 0;
    else if (c >= 48 && c <= 57) {
      v = v * 10 + (c - 48);
      digits++;
      if (decimals >= 0) decimals++;
    } else plain = false;
  }
  if (plain && digits <= 15 && decimals <= scale) {
    const scaled = v * POW10[scale - Math.max(decimals, 0)];
    if (scaled < 2 ** 53) {
      words[at] = scaled % 4294967296;
      words[at + 1] = Math.floor(scaled / 4294967296);
      return;
    }
  }
  const [whole, frac = ""] = text.split(".");
  let big = BigInt(whole + frac.padEnd(scale, "0").slice(0, scale));
  if (big < 0n) big = (1n << 128n) + big;
  for (let w = 0; w < 4; w++) words[at + w] = Number((big >> BigInt(32 * w)) & 0xffffffffn);
}

/** A decimal column of `scale` digits from texts, as 128-bit little-endian integers. */
function decimals(values: (string | null | undefined)[], precision: number, scale: number): arrow.Data {
  const words = new Uint32Array(values.length * 4);
  values.forEach((text, i) => {
    if (text !== null && text !== undefined) decimalInto(words, i * 4, text, scale);
  });
  return arrow.makeData({
    type: new arrow.Decimal(scale, precision, 128),
    length: values.length,
    data: words,
    ...validity(values.map((v) => v !== null && v !== undefined)),
  });
}

function conditionIds(values: string[]): arrow.Data {
  const bytes = Buffer.alloc(values.length * 66);
  values.forEach((id, i) => {
    if (id.length !== 66) throw new Error(`condition id of ${id.length} characters`);
    bytes.write(id, i * 66, 66, "latin1");
  });
  return arrow.makeData({ type: new arrow.FixedSizeBinary(66), length: values.length, data: bytes });
}

/** A Utf8 column built straight into its offsets and bytes (Arrow's builders are slow for a million rows). */
function texts(values: (string | null | undefined)[]): arrow.Vector {
  const seen = new Map<string, Buffer>();
  const encoded = values.map((v) => {
    if (v === null || v === undefined) return null;
    let b = seen.get(v);
    if (!b) seen.set(v, (b = Buffer.from(v, "utf8")));
    return b;
  });
  const valueOffsets = new Int32Array(values.length + 1);
  let total = 0;
  encoded.forEach((b, i) => {
    total += b?.length ?? 0;
    valueOffsets[i + 1] = total;
  });
  const data = new Uint8Array(total);
  encoded.forEach((b, i) => {
    if (b) data.set(b, valueOffsets[i]);
  });
  return arrow.makeVector(
    arrow.makeData({
      type: new arrow.Utf8(),
      length: values.length,
      valueOffsets,
      data,
      ...validity(encoded.map((b) => b !== null)),
    }),
  );
}

function columnsOf(rows: readonly PmxtRow[]): Record<string, arrow.Vector> {
  // One pass with each field named (a keyed read per column and row is several times slower).
  const n = rows.length;
  const received: number[] = new Array<number>(n);
  const sent: number[] = new Array<number>(n);
  const market: string[] = new Array<string>(n);
  const eventType: string[] = new Array<string>(n);
  const assetId: string[] = new Array<string>(n);
  const bids: (string | null)[] = new Array<string | null>(n);
  const asks: (string | null)[] = new Array<string | null>(n);
  const price: (string | null)[] = new Array<string | null>(n);
  const size: (string | null)[] = new Array<string | null>(n);
  const side: (string | null)[] = new Array<string | null>(n);
  const bestBid: (string | null)[] = new Array<string | null>(n);
  const bestAsk: (string | null)[] = new Array<string | null>(n);
  const fee: (number | null)[] = new Array<number | null>(n);
  const hash: (string | null)[] = new Array<string | null>(n);
  const oldTick: (string | null)[] = new Array<string | null>(n);
  const newTick: (string | null)[] = new Array<string | null>(n);
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    received[i] = r.timestampReceived;
    sent[i] = r.timestamp;
    market[i] = r.market;
    eventType[i] = r.eventType;
    assetId[i] = r.assetId;
    bids[i] = r.bids ?? null;
    asks[i] = r.asks ?? null;
    price[i] = r.price ?? null;
    size[i] = r.size ?? null;
    side[i] = r.side ?? null;
    bestBid[i] = r.bestBid ?? null;
    bestAsk[i] = r.bestAsk ?? null;
    fee[i] = r.feeRateBps ?? null;
    hash[i] = r.transactionHash ?? null;
    oldTick[i] = r.oldTickSize ?? null;
    newTick[i] = r.newTickSize ?? null;
  }
  return {
    timestamp_received: arrow.makeVector(timestamps(received)),
    timestamp: arrow.makeVector(timestamps(sent)),
    market: arrow.makeVector(conditionIds(market)),
    event_type: texts(eventType),
    asset_id: texts(assetId),
    bids: texts(bids),
    asks: texts(asks),
    price: arrow.makeVector(decimals(price, 9, 4)),
    size: arrow.makeVector(decimals(size, 18, 6)),
    side: texts(side),
    best_bid: arrow.makeVector(decimals(bestBid, 9, 4)),
    best_ask: arrow.makeVector(decimals(bestAsk, 9, 4)),
    fee_rate_bps: arrow.makeVector(
      arrow.makeData({
        type: new arrow.Uint16(),
        length: fee.length,
        data: Uint16Array.from(fee, (v) => v ?? 0),
        ...validity(fee.map((v) => v !== null)),
      }),
    ),
    transaction_hash: texts(hash),
    old_tick_size: arrow.makeVector(decimals(oldTick, 9, 4)),
    new_tick_size: arrow.makeVector(decimals(newTick, 9, 4)),
  };
}

/** The bytes of a PMXT v2 file of these rows, in row groups of `rowGroupRows` (the archive's: 1,048,576). */
export function pmxtParquet(
  rows: readonly PmxtRow[],
  rowGroupRows = 1_048_576,
  compression = parquet.Compression.ZSTD,
): Uint8Array {
  const props = new parquet.WriterPropertiesBuilder()
    .setCompression(compression)
    .setDictionaryEnabled(true)
    .setMaxRowGroupSize(rowGroupRows)
    .build();
  // Arrow JS builds a table of one batch; a large file is made of several to keep each IPC copy small.
  const parts: Uint8Array[] = [];
  const chunk = 262_144;
  const batches: arrow.RecordBatch[] = [];
  for (let i = 0; i < Math.max(rows.length, 1); i += chunk) {
    batches.push(...new arrow.Table(columnsOf(rows.slice(i, i + chunk))).batches);
  }
  parts.push(arrow.tableToIPC(new arrow.Table(batches), "stream"));
  return parquet.writeParquet(parquet.Table.fromIPCStream(parts[0]), props);
}

/**
 * A PMXT v2 file of many row groups written as a stream (each row group's rows built, written and
 * dropped in turn): a file of a real hour's size (tens of millions of rows) in bounded memory.
 */
export async function writePmxtFileInRowGroups(path: string, rowGroups: Iterable<PmxtRow[]>): Promise<void> {
  const props = new parquet.WriterPropertiesBuilder()
    .setCompression(parquet.Compression.ZSTD)
    .setDictionaryEnabled(true)
    .setMaxRowGroupSize(1_048_576)
    .build();
  const groups = rowGroups[Symbol.iterator]();
  const input = new ReadableStream<parquet.RecordBatch>({
    pull(controller) {
      const next = groups.next();
      if (next.done) controller.close();
      else {
        // Arrow JS may cut a large table's columns into several batches: each is enqueued.
        const table = parquet.Table.fromIPCStream(
          arrow.tableToIPC(new arrow.Table(columnsOf(next.value)), "stream"),
        );
        for (let i = 0; i < table.numBatches; i++)
          controller.enqueue(table.recordBatch(i) as parquet.RecordBatch);
        // WebAssembly memory is not the garbage collector's to reclaim: without this, about 15 row
        // groups of 1,048,576 rows exhaust its 4 GiB and the writer's stream ends short, silently.
        table.free();
      }
    },
  });
  const output = (await parquet.transformParquetStream(input, props)) as ReadableStream<Uint8Array>;
  const out = openSync(path, "w");
  try {
    for await (const bytes of output) writeSync(out, bytes);
  } finally {
    closeSync(out);
  }
}

/** A PMXT v2 file (compressed with ZSTD as the archive's, unless another codec is asked). */
export function writePmxtFile(
  path: string,
  rows: readonly PmxtRow[],
  rowGroupRows?: number,
  compression?: parquet.Compression,
): void {
  writeFileSync(path, pmxtParquet(rows, rowGroupRows, compression));
}
