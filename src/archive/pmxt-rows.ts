import type { MarketEvent } from "../domain/event.ts";

/**
 * A PMXT archive v2 row (DESIGN 3.11) as the market-channel message it was cut from, whichever Parquet
 * reader read it (src/archive/pmxt-file.ts): PMXT drops what the upstream sent beyond its 16 columns (a
 * book's `hash`, `tick_size` and `last_trade_price`, a `price_change` entry's `hash`) and splits a
 * `price_change` of several entries into one row each; the rebuilt message is a `price_change` of that
 * one entry. Decimals are written in their shortest form ("0.51", "150"), as the archive's fixed-scale
 * decimals no longer say how the upstream wrote them.
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

export const TEXT_COLUMNS = ["event_type", "asset_id", "bids", "asks", "side", "transaction_hash"] as const;
export const DECIMAL_COLUMNS = [
  "price",
  "size",
  "best_bid",
  "best_ask",
  "old_tick_size",
  "new_tick_size",
] as const;
export type TextColumn = (typeof TEXT_COLUMNS)[number];
export type DecimalColumn = (typeof DECIMAL_COLUMNS)[number];

/** A Parquet file without the columns of PMXT v2. */
export class NotPmxtError extends Error {}

/** Throws NotPmxtError naming the columns of PMXT v2 a file lacks. */
export function checkPmxtColumns(has: (column: string) => boolean): void {
  const missing = PMXT_COLUMNS.filter((c) => !has(c));
  if (missing.length > 0) throw new NotPmxtError(`not a PMXT v2 file: no column ${missing.join(", ")}`);
}

/** A kept row's event, and the market (its condition id) it belongs to. */
export interface KeptEvent {
  conditionId: string;
  event: MarketEvent;
}

/** What reads a file's row groups (one per Parquet reader); its errors are wrapped by PmxtFile. */
export interface RowGroupReader {
  readonly rowGroupRows: number[];
  /** The row group's kept events, handed over in parts at a market's end; returns the rows kept. */
  readRowGroup(
    index: number,
    keep: ReadonlySet<string>,
    onEvents: (events: KeptEvent[]) => Promise<void>,
    flushEvery: number,
  ): Promise<number>;
  close(): void;
}

/**
 * Kept events handed to the caller in parts: only at a market's end (so that its two tokens' runs are
 * appended together), once `flushEvery` are held; the rest at the row group's end.
 */
export class KeptEventBatches {
  private pending: KeptEvent[] = [];
  private readonly onEvents: (events: KeptEvent[]) => Promise<void>;
  private readonly flushEvery: number;

  constructor(onEvents: (events: KeptEvent[]) => Promise<void>, flushEvery: number) {
    this.onEvents = onEvents;
    this.flushEvery = flushEvery;
  }

  push(event: KeptEvent): void {
    this.pending.push(event);
  }

  async marketEnded(): Promise<void> {
    if (this.pending.length >= this.flushEvery) await this.handOver();
  }

  async finish(): Promise<void> {
    if (this.pending.length > 0) await this.handOver();
  }

  private async handOver(): Promise<void> {
    const events = this.pending;
    this.pending = [];
    await this.onEvents(events);
  }
}

/** A kept market's rows in a row group: [start, end). */
export interface KeptRun {
  conditionId: string;
  start: number;
  end: number;
}

/**
 * The first row after `start` whose value differs from row `start`'s, in rows sorted by value (`same`
 * compares two rows), found by galloping then bisecting.
 */
export function runEnd(same: (a: number, b: number) => boolean, start: number, length: number): number {
  let step = 1;
  let low = start; // known equal
  let high = start + 1;
  while (high < length && same(start, high)) {
    low = high;
    step *= 2;
    high = Math.min(length, start + step);
  }
  // low is equal; high is the first differing row or the end: bisect between them.
  while (high - low > 1) {
    const mid = (low + high) >>> 1;
    if (same(start, mid)) low = mid;
    else high = mid;
  }
  return high;
}

/** The columns a kept row's message is rebuilt from, at row `i` of a reader's rows. */
export interface PmxtRows {
  /** `timestamp_received` in µs (the archive's are whole ms; a file written in µs keeps its µs). */
  receivedUs(i: number): number;
  /** `timestamp` in ms. */
  timestampMs(i: number): number;
  text(column: TextColumn, i: number): string | null;
  /** A decimal column's value in its shortest text ("0.5100" -> "0.51"). */
  decimal(column: DecimalColumn, i: number): string | null;
  feeRateBps(i: number): string | null;
}

let lastTimestamp = Number.NaN;
let lastTimestampText = "";

/** A timestamp's text, made once for rows in a row that share it (the entries of one message do). */
function timestampText(ms: number): string {
  if (ms !== lastTimestamp) {
    lastTimestamp = ms;
    lastTimestampText = String(ms);
  }
  return lastTimestampText;
}

/** The market-channel message of row `i`, as an event received at the row's receive time. */
export function rowEvent(rows: PmxtRows, i: number, conditionId: string): MarketEvent {
  const receivedUs = rows.receivedUs(i);
  const timestampMs = rows.timestampMs(i);
  const type = rows.text("event_type", i);
  const assetId = rows.text("asset_id", i) ?? "";
  const timestamp = timestampText(timestampMs);
  let message: Record<string, unknown>;
  switch (type) {
    case "book":
      message = {
        market: conditionId,
        asset_id: assetId,
        timestamp,
        bids: levels(rows.text("bids", i)),
        asks: levels(rows.text("asks", i)),
        event_type: "book",
      };
      break;
    case "price_change": {
      const change: Record<string, unknown> = { asset_id: assetId };
      put(change, "price", rows.decimal("price", i));
      put(change, "size", rows.decimal("size", i));
      put(change, "side", rows.text("side", i));
      put(change, "best_bid", rows.decimal("best_bid", i));
      put(change, "best_ask", rows.decimal("best_ask", i));
      message = { market: conditionId, price_changes: [change], timestamp, event_type: "price_change" };
      break;
    }
    case "last_trade_price":
      message = { asset_id: assetId, event_type: "last_trade_price" };
      put(message, "fee_rate_bps", rows.feeRateBps(i));
      message.market = conditionId;
      put(message, "price", rows.decimal("price", i));
      put(message, "side", rows.text("side", i));
      put(message, "size", rows.decimal("size", i));
      message.timestamp = timestamp;
      put(message, "transaction_hash", rows.text("transaction_hash", i));
      break;
    case "tick_size_change":
      message = { event_type: "tick_size_change", asset_id: assetId, market: conditionId };
      put(message, "old_tick_size", rows.decimal("old_tick_size", i));
      put(message, "new_tick_size", rows.decimal("new_tick_size", i));
      put(message, "side", rows.text("side", i));
      message.timestamp = timestamp;
      break;
    default:
      throw new Error(`row ${i}: event_type ${String(type)}`);
  }
  return { receivedUs, timestampMs, type, message };
}

/**
 * A field set unless the row has no value for it: a message is built in its key order with the
 * absent fields left out (not deleted afterwards, which would make V8 keep it as a slow dictionary).
 */
function put(o: Record<string, unknown>, key: string, value: string | null): void {
  if (value !== null) o[key] = value;
}

const POWERS = Array.from({ length: 16 }, (_, i) => 10 ** i);

/** A non-negative safe integer divided by 10^scale, in the shortest form, by arithmetic alone. */
export function shortest(value: number, scale: number): string {
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
export function scaled(digits: string, scale: number): string {
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
