import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { finished } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import { BookEncodingError } from "../wire/book-codec.ts";
import { type Coin, MARKET_TYPE_SECONDS, type MarketType } from "../domain/market.ts";
import type { SnapshotRow } from "../domain/snapshot.ts";
import type { Micros } from "../domain/time.ts";
import type { TradeRow } from "../domain/trade.ts";
import {
  marketFromWire,
  marketToWire,
  snapshotFromWire,
  snapshotJson,
  tradeFromWire,
  tradeToWire,
  WireFormatError,
} from "../wire/wire.ts";
import { csvHeader, csvRow } from "../wire/snapshot-csv.ts";
import type { SnapshotColumns } from "../wire/snapshot-columns.ts";
import type { MarketStore, StoredMarket } from "../store/ports/market-store.ts";
import type { TradeStore } from "../store/ports/trade-store.ts";

/**
 * Our own export format ("archive"): NDJSON, one object a line. A market line
 * `{"type":"market","market":{...}}` (the API's market record) is followed by its snapshot lines
 * `{"type":"snapshot","slug":"...","snapshot":{...}}` (the API's snapshot, oldest first, books included
 * when exported with books), then, when exported with trades, its trade lines
 * `{"type":"trade","slug":"...","trade":{...}}` (the API's trade, oldest first). Importing an archive
 * gives back the same API responses.
 *
 * CSV is offered for analysis tools: one snapshot a row, books as JSON text columns; it has no market
 * records, so it cannot be imported back. Parquet (parquet.ts) has the same rows with typed columns.
 *
 * Markets go oldest first, each market's snapshots oldest first.
 */
export type ExportFormat = "ndjson" | "csv" | "parquet";

/** Which markets and snapshots to export, and how. */
export interface ExportSelection {
  format: ExportFormat;
  books: boolean;
  coin?: Coin;
  marketType?: MarketType;
  slugs?: string[];
  /** The markets, already chosen (the bulk export route's, counted and charged); wins over the rest. */
  markets?: StoredMarket[];
  /** Inclusive bounds on snapshot time; with a coin and a type, only the markets they overlap. */
  from?: Micros;
  to?: Micros;
}

export interface ExportOptions extends ExportSelection {
  store: MarketStore;
  /** With it, each market's trades follow its snapshots (NDJSON only). */
  trades?: TradeStore;
  out: Writable;
  onProgress?: (markets: number, snapshots: number) => void;
}

export interface ExportCounts {
  markets: number;
  snapshots: number;
  trades?: number;
}

const PAGE = 5000;
/**
 * Exports read a market's snapshots this many rows at a time and hand them on in text chunks of about
 * this many characters: what a stalled reader of an export holds stays small (rows of one page, one
 * chunk), whatever the page the store could give.
 */
const EXPORT_PAGE_ROWS = 256;
export const EXPORT_CHUNK_CHARS = 16 * 1024;

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, "drain");
}

async function* marketsToExport(store: MarketStore, sel: ExportSelection): AsyncGenerator<StoredMarket> {
  if (sel.markets) {
    yield* sel.markets;
    return;
  }
  if (sel.slugs?.length) {
    for (const slug of sel.slugs) {
      const m = await store.getMarket(slug);
      if (!m) throw new WireFormatError(`no market with slug ${slug}`);
      yield m;
    }
    return;
  }
  yield* await seriesMarkets(store, sel);
}

/**
 * The markets of a coin and type (or of all, when not given), oldest first; with a time range and a
 * type, those whose span overlaps it (a market of a type lasts a fixed time, so its start says).
 */
export async function seriesMarkets(
  store: MarketStore,
  sel: { coin?: Coin; marketType?: MarketType; from?: Micros; to?: Micros },
): Promise<StoredMarket[]> {
  const length = sel.marketType ? MARKET_TYPE_SECONDS[sel.marketType] : null;
  const startFrom =
    sel.from !== undefined && length !== null ? Math.floor(sel.from / 1e6) - length + 1 : undefined;
  const startTo = sel.to !== undefined ? Math.floor(sel.to / 1e6) : undefined;
  const all: StoredMarket[] = [];
  for (let offset = 0; ; offset += 100) {
    const { markets } = await store.listMarkets({
      coin: sel.coin,
      marketType: sel.marketType,
      startFrom,
      startTo,
      limit: 100,
      offset,
    });
    all.push(...markets);
    if (markets.length < 100) return all.reverse();
  }
}

/** A market's snapshots of the range oldest first, a page at a time (keyset: each row read once). */
async function* snapshotPages(
  store: MarketStore,
  m: StoredMarket,
  sel: ExportSelection,
  pageRows: number,
): AsyncGenerator<SnapshotRow[]> {
  let from = sel.from;
  for (;;) {
    const rows = await store.snapshotPage(m.key, {
      order: "asc",
      limit: pageRows,
      offset: 0,
      books: sel.books,
      from,
      to: sel.to,
    });
    if (rows.length > 0) yield rows;
    if (rows.length < pageRows) return;
    from = rows[rows.length - 1].time + 1;
  }
}

/**
 * The export as chunks (text for NDJSON and CSV, bytes for Parquet), oldest first, read page by page
 * so that memory stays flat however large the export. `counts` is kept up to date as chunks are taken.
 */
export function exportChunks(
  store: MarketStore,
  sel: ExportSelection,
  counts: ExportCounts = { markets: 0, snapshots: 0 },
  trades: TradeStore | null = null,
): AsyncGenerator<string | Uint8Array> {
  return sel.format === "parquet"
    ? parquetChunks(store, sel, counts)
    : textChunks(store, sel, counts, trades);
}

/**
 * The Parquet export's bytes. Arrow and parquet-wasm are imported by the first Parquet export: at
 * start they cost every process a quarter of a second of CPU that most never use.
 */
async function* parquetChunks(
  store: MarketStore,
  sel: ExportSelection,
  counts: ExportCounts,
): AsyncGenerator<Uint8Array> {
  const parquet = await import("./parquet.ts");
  yield* parquet.parquetStream(parquetBatches(parquet, store, sel, counts), sel.books);
}

async function* textChunks(
  store: MarketStore,
  sel: ExportSelection,
  counts: ExportCounts,
  trades: TradeStore | null,
): AsyncGenerator<string> {
  if (sel.format === "csv") yield csvHeader(sel.books);
  for await (const m of marketsToExport(store, sel)) {
    counts.markets++;
    if (sel.format === "ndjson") yield `{"type":"market","market":${JSON.stringify(marketToWire(m))}}\n`;
    const slugJson = JSON.stringify(m.slug);
    for await (const rows of snapshotPages(store, m, sel, EXPORT_PAGE_ROWS)) {
      let chunk = "";
      for (const r of rows) {
        chunk +=
          sel.format === "csv"
            ? csvRow(m.slug, r, sel.books)
            : `{"type":"snapshot","slug":${slugJson},"snapshot":${snapshotJson(r, sel.books)}}\n`;
        counts.snapshots++;
        if (chunk.length >= EXPORT_CHUNK_CHARS) {
          yield chunk;
          chunk = "";
        }
      }
      if (chunk !== "") yield chunk;
    }
    if (trades !== null && sel.format === "ndjson") yield* tradeLines(trades, m, sel, counts);
  }
}

/** A market's trade lines, oldest first, a page at a time (OFFSET: trades of one time have no cursor). */
async function* tradeLines(
  trades: TradeStore,
  m: StoredMarket,
  sel: ExportSelection,
  counts: ExportCounts,
): AsyncGenerator<string> {
  const slugJson = JSON.stringify(m.slug);
  for (let offset = 0; ; offset += PAGE) {
    const rows = await trades.tradePage(m.key, {
      order: "asc",
      limit: PAGE,
      offset,
      from: sel.from,
      to: sel.to,
    });
    if (rows.length === 0) return;
    let chunk = "";
    for (const t of rows) {
      chunk += `{"type":"trade","slug":${slugJson},"trade":${JSON.stringify(tradeToWire(t, m))}}\n`;
      counts.trades = (counts.trades ?? 0) + 1;
      if (chunk.length >= EXPORT_CHUNK_CHARS) {
        yield chunk;
        chunk = "";
      }
    }
    if (chunk !== "") yield chunk;
    if (rows.length < PAGE) return;
  }
}

/**
 * The rows of the export in Parquet record batches of a bounded size, across markets. It fills one
 * batch again and again (parquetStream has taken a batch's rows before it asks for the next), and
 * gives it back for the next export once this one has ended, read through or cut short.
 */
async function* parquetBatches(
  { takeBatch, giveBack }: typeof import("./parquet.ts"),
  store: MarketStore,
  sel: ExportSelection,
  counts: ExportCounts,
): AsyncGenerator<SnapshotColumns> {
  const batch = takeBatch(sel.books);
  try {
    for await (const m of marketsToExport(store, sel)) {
      counts.markets++;
      for await (const rows of snapshotPages(store, m, sel, batch.capacity)) {
        for (const r of rows) {
          batch.add(m.slug, r);
          if (batch.length === batch.capacity) {
            counts.snapshots += batch.length;
            yield batch;
            batch.clear();
          }
        }
      }
    }
    if (batch.length > 0) {
      counts.snapshots += batch.length;
      yield batch;
    }
  } finally {
    giveBack(batch);
  }
}

export async function exportArchive(o: ExportOptions): Promise<ExportCounts> {
  const counts: ExportCounts = { markets: 0, snapshots: 0 };
  for await (const chunk of exportChunks(o.store, o, counts, o.trades ?? null)) {
    if (typeof chunk !== "string") {
      if (!o.out.write(chunk)) await once(o.out, "drain");
      o.onProgress?.(counts.markets, counts.snapshots);
      continue;
    }
    await write(o.out, chunk);
    o.onProgress?.(counts.markets, counts.snapshots);
  }
  return counts;
}

/** Writes to a file, gzipped when the name ends in .gz, or to stdout for "-". */
export function openOutput(path: string): { out: Writable; done: () => Promise<void> } {
  if (path === "-") return { out: process.stdout, done: async () => {} };
  const file = createWriteStream(path);
  if (!path.endsWith(".gz")) {
    return {
      out: file,
      done: async () => {
        file.end();
        await finished(file);
      },
    };
  }
  const gzip = createGzip();
  gzip.pipe(file);
  return {
    out: gzip,
    done: async () => {
      gzip.end();
      await finished(file);
    },
  };
}

export function openInput(path: string): Readable {
  const file = createReadStream(path);
  return path.endsWith(".gz") ? file.pipe(createGunzip()) : file;
}

export class ArchiveError extends Error {}

/**
 * Imports an archive: markets upserted, snapshots inserted in batches; rows already stored are left
 * as they are, so importing twice changes nothing.
 */
export async function importArchive(
  store: MarketStore,
  input: Readable,
  onProgress?: (markets: number, snapshots: number) => void,
  tradeStore?: TradeStore,
): Promise<{ markets: number; snapshots: number; added: number; trades: number }> {
  let market: StoredMarket | null = null;
  let batch: SnapshotRow[] = [];
  let tradeBatch: TradeRow[] = [];
  let markets = 0;
  let snapshots = 0;
  let added = 0;
  let trades = 0;
  const flush = async () => {
    if (market && batch.length) added += await store.insertSnapshots(market.key, batch);
    if (market && tradeBatch.length && tradeStore)
      await tradeStore.insertTrades([{ marketKey: market.key, rows: tradeBatch }]);
    batch = [];
    tradeBatch = [];
    onProgress?.(markets, snapshots);
  };
  let lineNo = 0;
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    lineNo++;
    if (line.trim() === "") continue;
    try {
      const obj = JSON.parse(line) as {
        type?: unknown;
        market?: unknown;
        slug?: unknown;
        snapshot?: unknown;
      };
      if (obj.type === "market") {
        if (typeof obj.market !== "object" || obj.market === null)
          throw new WireFormatError("market line needs a market");
        await flush();
        market = await store.upsertMarket(marketFromWire(obj.market as Record<string, unknown>));
        markets++;
      } else if (obj.type === "snapshot") {
        if (!market || obj.slug !== market.slug)
          throw new WireFormatError("snapshot line does not follow its market");
        if (typeof obj.snapshot !== "object" || obj.snapshot === null) {
          throw new WireFormatError("snapshot line needs a snapshot");
        }
        batch.push(snapshotFromWire(obj.snapshot as Record<string, unknown>));
        snapshots++;
        if (batch.length >= PAGE) await flush();
      } else if (obj.type === "trade") {
        const t = obj as { slug?: unknown; trade?: unknown };
        if (!market || t.slug !== market.slug)
          throw new WireFormatError("trade line does not follow its market");
        if (typeof t.trade !== "object" || t.trade === null)
          throw new WireFormatError("trade line needs a trade");
        if (!tradeStore) throw new WireFormatError("this import does not take trades");
        tradeBatch.push(tradeFromWire(t.trade as Record<string, unknown>));
        trades++;
        if (tradeBatch.length >= PAGE) await flush();
      } else {
        throw new WireFormatError('each line needs "type": "market", "snapshot" or "trade"');
      }
    } catch (err) {
      if (err instanceof SyntaxError || err instanceof WireFormatError || err instanceof BookEncodingError) {
        // Keep every good line before the bad one; a corrected re-run skips what is already stored.
        await flush();
        throw new ArchiveError(`line ${lineNo}: ${err.message} (the lines before it were imported)`);
      }
      throw err;
    }
  }
  await flush();
  return { markets, snapshots, added, trades };
}
