import { createHash } from "node:crypto";
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import {
  type CandleRow,
  type ExchangeBatch,
  type FundingRow,
  type OpenInterestRow,
  type TradeRow,
  type Venue,
} from "../domain/exchange.ts";
import type { Coin } from "../domain/market.ts";
import type { Micros } from "../domain/time.ts";
import type { ExchangeStore } from "../store/ports/exchange-store.ts";
import { ImportError } from "./upstream-import.ts";
import { zipEntryStream } from "./zip.ts";

/**
 * `updown import binance-vision` (issue 23): Binance's public data files (data.binance.vision) into the
 * exchange tables. A file is one zip holding one CSV, named `SYMBOL-KIND-DATE.zip`:
 * - klines `BTCUSDT-1s-2025-01-01.zip`, `BTCUSDT-1m-2024-01.zip` (open_time, open, high, low, close,
 *   volume, close_time, quote_volume, count, taker_buy_volume, taker_buy_quote_volume, ignore): candles of
 *   that interval;
 * - aggTrades, futures (agg_trade_id, price, quantity, first_trade_id, last_trade_id, transact_time,
 *   is_buyer_maker): trades, whose futures ids are aggregate ids as the recorder's are. Spot trades are
 *   kept by trade id, so spot aggTrades are refused and spot `trades` files (id, price, qty, quote_qty,
 *   time, is_buyer_maker, is_best_match) read instead;
 * - fundingRate, futures (calc_time, funding_interval_hours, last_funding_rate): funding rates;
 * - metrics, futures (create_time as `YYYY-MM-DD HH:MM:SS` UTC, symbol, sum_open_interest,
 *   sum_open_interest_value, ...): open interest.
 * Futures CSVs have a header line, spot ones none; the venue is the path's (`/spot/` or `/futures/`, as
 * the site lays its files out), else futures when the file has a header. Times are milliseconds, but
 * spot files from 2025-01-01 on are in microseconds: a value of 10^14 or more is read as µs.
 * A `.CHECKSUM` beside the zip (`sha256  NAME`) is verified before anything is written.
 */

export type VisionKind = "klines" | "aggTrades" | "trades" | "fundingRate" | "metrics";

export interface VisionFile {
  path: string;
  coin: Coin;
  venue: Venue;
  kind: VisionKind;
  /** Klines only: `1s` or `1m`. */
  interval: string | null;
}

export interface VisionFileReport {
  file: string;
  kind: VisionKind;
  interval: string | null;
  coin: Coin;
  venue: Venue;
  rows: number;
  added: number;
  checksum: "verified" | "absent";
}

const BATCH_ROWS = 5000;
const FUTURES_ONLY: readonly VisionKind[] = ["fundingRate", "metrics"];

/** What a file name says: its coin (of `coins`), kind and interval; the venue is decided on reading. */
export function visionFileOf(path: string, coins: readonly Coin[]): Omit<VisionFile, "venue"> {
  const name = basename(path);
  const m = /^([A-Z0-9]+)-(\w+)-(\d{4}-\d{2}(?:-\d{2})?)\.zip$/.exec(name);
  if (!m) throw new ImportError(path, null, "not a data.binance.vision file name (SYMBOL-KIND-DATE.zip)");
  const coin = m[1].endsWith("USDT") ? m[1].slice(0, -4).toLowerCase() : null;
  if (coin === null || !coins.includes(coin))
    throw new ImportError(path, null, `${m[1]} is not a configured coin's USDT pair (--coins)`);
  if (m[2] === "1s" || m[2] === "1m") return { path, coin, kind: "klines", interval: m[2] };
  if (["aggTrades", "trades", "fundingRate", "metrics"].includes(m[2]))
    return { path, coin, kind: m[2] as VisionKind, interval: null };
  throw new ImportError(
    path,
    null,
    `${m[2]} files are not imported (klines of 1s and 1m, aggTrades, trades, fundingRate, metrics are)`,
  );
}

/** Verifies the `.CHECKSUM` beside a file, when there is one. */
async function verifyChecksum(path: string): Promise<"verified" | "absent"> {
  const sidecar = `${path}.CHECKSUM`;
  if (!existsSync(sidecar)) return "absent";
  const [expected, name] = readFileSync(sidecar, "utf8").trim().split(/\s+/);
  if (!/^[0-9a-f]{64}$/i.test(expected ?? ""))
    throw new ImportError(sidecar, null, "not a sha256 checksum line");
  if (name !== undefined && name !== basename(path))
    throw new ImportError(sidecar, null, `names ${name}, not ${basename(path)}`);
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  const actual = hash.digest("hex");
  if (actual !== expected.toLowerCase())
    throw new ImportError(
      path,
      null,
      `checksum mismatch: the file's sha256 is ${actual}, its .CHECKSUM says ${expected}`,
    );
  return "verified";
}

/** A Binance time in µs: milliseconds, or microseconds (spot since 2025) when 10^14 or more. */
export function visionMicros(cell: string): Micros {
  if (!/^\d+$/.test(cell)) throw new Error(`not a time: ${JSON.stringify(cell)}`);
  const n = Number(cell);
  return n >= 1e14 ? n : n * 1000;
}

function num(cell: string | undefined, name: string): number {
  const n = Number(cell);
  if (cell === undefined || cell.trim() === "" || !Number.isFinite(n))
    throw new Error(`${name} is not a number: ${JSON.stringify(cell)}`);
  return n;
}

function bool(cell: string | undefined, name: string): boolean {
  const lower = cell?.toLowerCase();
  if (lower === "true") return true;
  if (lower === "false") return false;
  throw new Error(`${name} is not true or false: ${JSON.stringify(cell)}`);
}

/** `2024-01-01 00:05:00` (UTC) in µs. */
function utcMicros(cell: string): Micros {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(cell);
  if (!m) throw new Error(`create_time is not YYYY-MM-DD HH:MM:SS: ${JSON.stringify(cell)}`);
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) * 1000;
}

type RowReader = (cells: string[], file: VisionFile) => ExchangeBatch;

const READERS: Record<VisionKind, { width: number; read: RowReader }> = {
  klines: {
    width: 12,
    read: (c, f): { candles: CandleRow[] } => ({
      candles: [
        {
          coin: f.coin,
          venue: f.venue,
          interval: f.interval ?? "1m",
          openTime: visionMicros(c[0]),
          open: num(c[1], "open"),
          high: num(c[2], "high"),
          low: num(c[3], "low"),
          close: num(c[4], "close"),
          volume: num(c[5], "volume"),
          quoteVolume: num(c[7], "quote_volume"),
          trades: num(c[8], "count"),
          takerBuyVolume: num(c[9], "taker_buy_volume"),
          takerBuyQuoteVolume: num(c[10], "taker_buy_quote_volume"),
        },
      ],
    }),
  },
  aggTrades: {
    width: 7,
    read: (c, f): { trades: TradeRow[] } => ({
      trades: [
        {
          coin: f.coin,
          venue: f.venue,
          id: num(c[0], "agg_trade_id"),
          price: num(c[1], "price"),
          qty: num(c[2], "quantity"),
          time: visionMicros(c[5]),
          buyerMaker: bool(c[6], "is_buyer_maker"),
        },
      ],
    }),
  },
  trades: {
    width: 7,
    read: (c, f): { trades: TradeRow[] } => ({
      trades: [
        {
          coin: f.coin,
          venue: f.venue,
          id: num(c[0], "id"),
          price: num(c[1], "price"),
          qty: num(c[2], "qty"),
          time: visionMicros(c[4]),
          buyerMaker: bool(c[5], "is_buyer_maker"),
        },
      ],
    }),
  },
  fundingRate: {
    width: 3,
    read: (c, f): { funding: FundingRow[] } => ({
      funding: [
        { coin: f.coin, time: visionMicros(c[0]), rate: num(c[2], "last_funding_rate"), markPrice: null },
      ],
    }),
  },
  metrics: {
    width: 4,
    read: (c, f): { openInterest: OpenInterestRow[] } => ({
      openInterest: [
        {
          coin: f.coin,
          time: utcMicros(c[0]),
          openInterest: num(c[2], "sum_open_interest"),
          openInterestValue: c[3] === undefined || c[3] === "" ? null : num(c[3], "sum_open_interest_value"),
        },
      ],
    }),
  },
};

/**
 * The venue of a file: its path's, else futures when it has a header line (spot CSVs have none).
 * Trades are kept by trade id on spot and by aggregate id on futures (as recorded), so only the files
 * giving those ids are taken.
 */
function venueOf(path: string, kind: VisionKind, hasHeader: boolean): Venue {
  let venue: Venue = hasHeader ? "futures" : "spot";
  if (FUTURES_ONLY.includes(kind) || /[/\\]futures[/\\]/.test(path)) venue = "futures";
  else if (/[/\\]spot[/\\]/.test(path)) venue = "spot";
  if (kind === "aggTrades" && venue === "spot")
    throw new ImportError(
      path,
      null,
      "spot aggTrades cannot be imported: spot trades are kept by trade id; import the spot trades files (SYMBOL-trades-DATE.zip) instead",
    );
  if (kind === "trades" && venue === "futures")
    throw new ImportError(
      path,
      null,
      "futures trades files cannot be imported: futures trades are kept by aggregate id; import the aggTrades files instead",
    );
  return venue;
}

function appendBatch(into: ExchangeBatch, rows: ExchangeBatch): void {
  for (const [key, list] of Object.entries(rows) as [keyof ExchangeBatch, unknown[]][]) {
    ((into[key] ??= []) as unknown[]).push(...list);
  }
}

/**
 * Imports one file: checksum first (a mismatch writes nothing), then its rows in batches of 5000, each
 * batch one transaction and idempotent on the exchange tables' keys (a second import adds nothing).
 */
export async function importVisionFile(
  store: ExchangeStore,
  path: string,
  coins: readonly Coin[],
  onRows?: (rows: number) => void,
): Promise<VisionFileReport> {
  const named = visionFileOf(path, coins);
  const checksum = await verifyChecksum(path);
  let opened: Awaited<ReturnType<typeof zipEntryStream>>;
  try {
    opened = await zipEntryStream(path, statSync(path).size);
  } catch (err) {
    throw new ImportError(path, null, err instanceof Error ? err.message : String(err));
  }
  const reader = READERS[named.kind];
  const lines = createInterface({ input: opened.stream, crlfDelay: Number.POSITIVE_INFINITY });
  let file: VisionFile | null = null;
  let batch: ExchangeBatch = {};
  let pending = 0;
  const report: VisionFileReport = {
    file: path,
    kind: named.kind,
    interval: named.interval,
    coin: named.coin,
    venue: "spot",
    rows: 0,
    added: 0,
    checksum,
  };
  const flush = async () => {
    if (pending === 0) return;
    const counts = await store.insertBatch(batch);
    report.added += Object.values(counts).reduce((a, b) => a + b, 0);
    batch = {};
    pending = 0;
    onRows?.(report.rows);
  };
  let no = 0;
  try {
    for await (const text of lines) {
      no++;
      if (text.trim() === "") continue;
      const cells = text.split(",").map((c) => c.trim());
      if (file === null) {
        const header = !/^\d/.test(cells[0]);
        file = { ...named, venue: venueOf(path, named.kind, header) };
        report.venue = file.venue;
        if (header) continue;
      }
      if (cells.length < reader.width)
        throw new ImportError(path, no, `expected at least ${reader.width} columns, found ${cells.length}`);
      const current = file;
      try {
        appendBatch(batch, reader.read(cells, current));
      } catch (err) {
        throw new ImportError(path, no, err instanceof Error ? err.message : String(err));
      }
      report.rows++;
      if (++pending === BATCH_ROWS) await flush();
    }
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError(path, null, `cannot read: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    lines.close();
    opened.stream.destroy();
  }
  await flush();
  return report;
}

/** The zip files a command line names: files as given, folders searched (recursively) in name order. */
export function visionPaths(args: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".zip")) out.push(full);
    }
  };
  for (const arg of args) {
    if (existsSync(arg) && statSync(arg).isDirectory()) walk(arg);
    else out.push(arg);
  }
  return out;
}
