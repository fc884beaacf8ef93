import { writeFileSync } from "node:fs";
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

/** A decimal column of `scale` digits from texts, as 128-bit little-endian integers. */
function decimals(values: (string | null | undefined)[], precision: number, scale: number): arrow.Data {
  const words = new Uint32Array(values.length * 4);
  values.forEach((text, i) => {
    if (text === null || text === undefined) return;
    const [whole, frac = ""] = text.split(".");
    let v = BigInt(whole + frac.padEnd(scale, "0").slice(0, scale));
    if (v < 0n) v = (1n << 128n) + v;
    for (let w = 0; w < 4; w++) words[i * 4 + w] = Number((v >> BigInt(32 * w)) & 0xffffffffn);
  });
  return arrow.makeData({
    type: new arrow.Decimal(scale, precision, 128),
    length: values.length,
    data: words,
    ...validity(values.map((v) => v !== null && v !== undefined)),
  });
}

function conditionIds(values: string[]): arrow.Data {
  const bytes = new Uint8Array(values.length * 66);
  values.forEach((id, i) => {
    if (id.length !== 66) throw new Error(`condition id of ${id.length} characters`);
    bytes.set(Buffer.from(id, "latin1"), i * 66);
  });
  return arrow.makeData({ type: new arrow.FixedSizeBinary(66), length: values.length, data: bytes });
}

/** A Utf8 column built straight into its offsets and bytes (Arrow's builders are slow for a million rows). */
function texts(values: (string | null | undefined)[]): arrow.Vector {
  const encoded = values.map((v) => (v === null || v === undefined ? null : Buffer.from(v, "utf8")));
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
  const col = <K extends keyof PmxtRow>(k: K) => rows.map((r) => r[k]);
  const fee = rows.map((r) => r.feeRateBps ?? null);
  return {
    timestamp_received: arrow.makeVector(timestamps(rows.map((r) => r.timestampReceived))),
    timestamp: arrow.makeVector(timestamps(rows.map((r) => r.timestamp))),
    market: arrow.makeVector(conditionIds(rows.map((r) => r.market))),
    event_type: texts(col("eventType")),
    asset_id: texts(col("assetId")),
    bids: texts(col("bids")),
    asks: texts(col("asks")),
    price: arrow.makeVector(decimals(col("price"), 9, 4)),
    size: arrow.makeVector(decimals(col("size"), 18, 6)),
    side: texts(col("side")),
    best_bid: arrow.makeVector(decimals(col("bestBid"), 9, 4)),
    best_ask: arrow.makeVector(decimals(col("bestAsk"), 9, 4)),
    fee_rate_bps: arrow.makeVector(
      arrow.makeData({
        type: new arrow.Uint16(),
        length: fee.length,
        data: Uint16Array.from(fee, (v) => v ?? 0),
        ...validity(fee.map((v) => v !== null)),
      }),
    ),
    transaction_hash: texts(col("transactionHash")),
    old_tick_size: arrow.makeVector(decimals(col("oldTickSize"), 9, 4)),
    new_tick_size: arrow.makeVector(decimals(col("newTickSize"), 9, 4)),
  };
}

/** The bytes of a PMXT v2 file of these rows, in row groups of `rowGroupRows` (the archive's: 1,048,576). */
export function pmxtParquet(rows: readonly PmxtRow[], rowGroupRows = 1_048_576): Uint8Array {
  const props = new parquet.WriterPropertiesBuilder()
    .setCompression(parquet.Compression.ZSTD)
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

export function writePmxtFile(path: string, rows: readonly PmxtRow[], rowGroupRows?: number): void {
  writeFileSync(path, pmxtParquet(rows, rowGroupRows));
}
