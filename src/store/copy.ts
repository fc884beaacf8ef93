import { COIN_EVENT_TOPICS } from "../domain/event.ts";
import type { ExchangeBatch } from "../domain/exchange.ts";
import type { Market } from "../domain/market.ts";
import type { SnapshotRow } from "../domain/snapshot.ts";
import type { Micros } from "../domain/time.ts";
import {
  BATCH_KEY,
  type ExchangeSeries,
  type ExchangeStore,
  type SeriesCursor,
  type SeriesExtent,
} from "./ports/exchange-store.ts";
import type { EventStore } from "./ports/event-store.ts";
import type { KeyStore } from "./ports/key-store.ts";
import type { MarketStore, StoredMarket } from "./ports/market-store.ts";
import type { QuotaChargeRecord, QuotaLedger } from "./ports/quota-ledger.ts";
import type { Store } from "./ports/store.ts";
import type { TradeStore } from "./ports/trade-store.ts";

/** A copy that cannot start or cannot finish; the message says which and why, on one line. */
export class CopyError extends Error {}

export interface CopyProgress {
  marketsDone: number;
  marketsTotal: number;
  /** Snapshots of the markets done, and of the one under way those copied, of `snapshotsTotal`. */
  snapshotsDone: number;
  snapshotsTotal: number;
  /** Snapshots this run has read and written (those found at the destination already not counted). */
  snapshotsCopied: number;
  /** Exchange series (a kind of one coin and venue, candles of one interval) gone through. */
  seriesDone: number;
  seriesTotal: number;
  /** Exchange rows of the series done, and of the one under way those copied, of `exchangeRowsTotal`. */
  exchangeRowsDone: number;
  exchangeRowsTotal: number;
  /** Exchange rows this run has read and written. */
  exchangeRowsCopied: number;
}

export interface CopyOptions {
  from: Store;
  to: Store;
  /** Snapshots or exchange rows read and written at a time; each batch is one transaction at the destination. */
  batch: number;
  onProgress?: (progress: CopyProgress) => void;
  /** Something the copy leaves as it is but the operator should know (one line). */
  onWarning?: (message: string) => void;
}

export interface CopyResult {
  markets: number;
  /** Markets whose snapshots were all at the destination already (from an earlier, interrupted run). */
  marketsComplete: number;
  snapshots: number;
  snapshotsCopied: number;
  /** Of those copied, how many the destination did not hold yet. */
  snapshotsAdded: number;
  /** Polymarket trades gone through (all of every market's, every run: few, and written idempotently). */
  trades: number;
  tradesAdded: number;
  /** Market events gone through (all of every market's, every run: appends skip those already there). */
  events: number;
  eventsAdded: number;
  /** Coin-price updates gone through (of the markets' coins, every topic), and of them new. */
  coinEvents: number;
  coinEventsAdded: number;
  /** Exchange series the source holds, and of them those complete at the destination already. */
  exchangeSeries: number;
  exchangeSeriesComplete: number;
  exchangeRows: number;
  exchangeRowsCopied: number;
  exchangeRowsAdded: number;
  apiKeys: number;
  quotaCharges: number;
}

/** Markets and quota charges are read a page at a time; their records are small. */
const LIST_PAGE = 1000;

/**
 * Copies everything a store keeps into another: API key records, the quota ledger, markets one at a
 * time with their recorded gaps, snapshots and trades, oldest market first, then the exchange data
 * (`store.exchange`) one series at a time: each kind of each coin and venue, candles of each stored
 * interval (ExchangeStore.listSeries).
 *
 * Resuming: snapshots go in ascending time in batches, each one transaction at the destination, so an
 * interrupted market holds the source's seconds up to some time. A market whose count and last second
 * already match the source is skipped; any other continues after its last second at the destination.
 * If the counts still differ after that (the destination held seconds of its own, or an earlier run
 * wrote from another source), the whole market is gone through again; inserts skip seconds already
 * there. An exchange series goes the same way: rows in ascending time (trades: time, then id) in
 * batches through the idempotent ExchangeStore.insertBatch, skipped when its count and latest time
 * match, else continued after the destination's latest time (trades from that time, as a batch may
 * have ended among trades of one time). Keys and charges are put again on every run, which changes
 * nothing the second time. Events (a market's, and the coin-price updates of the markets' coins in
 * every topic) are streamed a block at a time into the idempotent appends, every run: a market whose
 * event count already matches is skipped. A market's book-integrity counts are added once, when the
 * destination has none (counts that differ are reported through onWarning, not added again).
 *
 * The source wins for records: a market, key or charge with the same slug or id is overwritten (but a
 * revoked key stays revoked and a refunded charge refunded, see KeyStore.putApiKey and
 * QuotaLedger.putQuotaCharges).
 * Snapshots and exchange rows at the destination are never overwritten or deleted: a key both hold
 * keeps the destination's values, and seconds or rows only the destination has are kept and reported
 * through onWarning.
 */
export async function copyStore(options: CopyOptions): Promise<CopyResult> {
  const { from, to } = options;
  const apiKeys = await copyApiKeys(from.keys, to.keys);
  const quotaCharges = await copyQuotaLedger(from.quota, to.quota);

  const markets = (await allMarkets(from.markets)).reverse();
  const series = await from.exchange.listSeries();
  const progress: CopyProgress = {
    marketsDone: 0,
    marketsTotal: markets.length,
    snapshotsDone: 0,
    snapshotsTotal: markets.reduce((n, m) => n + m.snapshotCount, 0),
    snapshotsCopied: 0,
    seriesDone: 0,
    seriesTotal: series.length,
    exchangeRowsDone: 0,
    exchangeRowsTotal: series.reduce((n, s) => n + s.rows, 0),
    exchangeRowsCopied: 0,
  };
  const result: Omit<CopyResult, "coinEvents" | "coinEventsAdded"> = {
    markets: markets.length,
    marketsComplete: 0,
    snapshots: progress.snapshotsTotal,
    snapshotsCopied: 0,
    snapshotsAdded: 0,
    trades: 0,
    tradesAdded: 0,
    events: 0,
    eventsAdded: 0,
    exchangeSeries: series.length,
    exchangeSeriesComplete: 0,
    exchangeRows: progress.exchangeRowsTotal,
    exchangeRowsCopied: 0,
    exchangeRowsAdded: 0,
    apiKeys,
    quotaCharges,
  };
  options.onProgress?.({ ...progress });
  for (const market of markets) {
    const before = progress.snapshotsDone;
    const copied = await copyMarket(market, options, (rows) => {
      // A market gone through a second time reads its rows again: done never passes its count.
      progress.snapshotsDone = Math.min(before + market.snapshotCount, progress.snapshotsDone + rows);
      progress.snapshotsCopied += rows;
      options.onProgress?.({ ...progress });
    });
    if (copied.complete) result.marketsComplete++;
    result.snapshotsCopied += copied.rows;
    result.snapshotsAdded += copied.added;
    result.trades += copied.trades;
    result.tradesAdded += copied.tradesAdded;
    result.events += copied.events;
    result.eventsAdded += copied.eventsAdded;
    progress.snapshotsDone = before + market.snapshotCount;
    progress.marketsDone++;
    options.onProgress?.({ ...progress });
  }

  // The destination's series as they stand when their turn comes: where each resumes.
  const targets = new Map((await to.exchange.listSeries()).map((t) => [seriesName(t), t]));
  for (const source of series) {
    const before = progress.exchangeRowsDone;
    const copied = await copySeries(source, targets.get(seriesName(source)) ?? null, options, (rows) => {
      progress.exchangeRowsDone = Math.min(before + source.rows, progress.exchangeRowsDone + rows);
      progress.exchangeRowsCopied += rows;
      options.onProgress?.({ ...progress });
    });
    if (copied.complete) result.exchangeSeriesComplete++;
    result.exchangeRowsCopied += copied.rows;
    result.exchangeRowsAdded += copied.added;
    progress.exchangeRowsDone = before + source.rows;
    progress.seriesDone++;
    options.onProgress?.({ ...progress });
  }
  return { ...result, ...(await copyCoinEvents(from.events, to.events, markets)) };
}

async function copyApiKeys(from: KeyStore, to: KeyStore): Promise<number> {
  const keys = await from.listApiKeys();
  for (const key of keys) await to.putApiKey(key);
  return keys.length;
}

async function copyQuotaLedger(from: QuotaLedger, to: QuotaLedger): Promise<number> {
  let copied = 0;
  let page: QuotaChargeRecord[];
  let after: string | null = null;
  do {
    page = await from.listQuotaCharges(after, LIST_PAGE);
    await to.putQuotaCharges(page);
    copied += page.length;
    after = page.at(-1)?.id ?? after;
  } while (page.length === LIST_PAGE);
  return copied;
}

async function allMarkets(store: MarketStore): Promise<StoredMarket[]> {
  const all: StoredMarket[] = [];
  for (let offset = 0; ; offset += LIST_PAGE) {
    const { markets } = await store.listMarkets({ limit: LIST_PAGE, offset });
    all.push(...markets);
    if (markets.length < LIST_PAGE) return all;
  }
}

/** The market's record as upserted: without the store's own key and count. */
function recordOf(market: StoredMarket): Market {
  const { key: _key, snapshotCount: _count, sources: _sources, ...record } = market;
  return record;
}

async function lastSecond(store: MarketStore, marketKey: number): Promise<Micros | null> {
  const [last] = await store.snapshotPage(marketKey, { order: "desc", limit: 1, offset: 0, books: false });
  return last?.time ?? null;
}

interface SeriesCopy {
  /** Nothing was left to copy. */
  complete: boolean;
  rows: number;
  added: number;
}

interface MarketCopy extends SeriesCopy {
  trades: number;
  tradesAdded: number;
  events: number;
  eventsAdded: number;
}

/** The coin-price updates of the markets' coins, every topic, a stored block at a time. */
async function copyCoinEvents(
  from: EventStore,
  to: EventStore,
  markets: readonly StoredMarket[],
): Promise<Pick<CopyResult, "coinEvents" | "coinEventsAdded">> {
  const copied = { coinEvents: 0, coinEventsAdded: 0 };
  for (const coin of [...new Set(markets.map((m) => m.coin))].sort()) {
    for (const topic of COIN_EVENT_TOPICS) {
      for await (const block of from.streamCoinEvents(coin, topic)) {
        copied.coinEvents += block.length;
        copied.coinEventsAdded += await to.appendCoinEvents(block);
      }
    }
  }
  return copied;
}

/** A market's events, a stored block at a time, and its book-integrity counts. */
async function copyEvents(
  from: EventStore,
  sourceKey: number,
  to: EventStore,
  targetKey: number,
  onWarning: ((message: string) => void) | undefined,
): Promise<{ events: number; added: number }> {
  const copied = { events: 0, added: 0 };
  const integrity = await from.bookIntegrity(sourceKey);
  if (integrity !== null) {
    const there = await to.bookIntegrity(targetKey);
    if (there === null) await to.addBookIntegrity(targetKey, integrity);
    else if (JSON.stringify(there) !== JSON.stringify(integrity))
      onWarning?.(`market ${targetKey}: book-integrity counts differ from the source's; kept as they are`);
  }
  const span = await from.marketEventSpan(sourceKey);
  if (span === null) return copied;
  const there = await to.marketEventSpan(targetKey);
  if (there !== null && there.count === span.count && there.lastReceivedUs === span.lastReceivedUs) {
    return { events: span.count, added: 0 };
  }
  for await (const block of from.streamMarketEvents(sourceKey)) {
    copied.events += block.length;
    copied.added += await to.appendMarketEvents([{ marketKey: targetKey, events: block }]);
  }
  return copied;
}

/** Every trade of a market, `batch` at a time in the stores' one order; each batch one transaction. */
async function copyTrades(
  from: TradeStore,
  sourceKey: number,
  to: TradeStore,
  targetKey: number,
  batch: number,
): Promise<{ rows: number; added: number }> {
  const copied = { rows: 0, added: 0 };
  for (let offset = 0; ; offset += batch) {
    const rows = await from.tradePage(sourceKey, { order: "asc", limit: batch, offset });
    if (rows.length === 0) return copied;
    copied.rows += rows.length;
    copied.added += await to.insertTrades([{ marketKey: targetKey, rows }]);
    if (rows.length < batch) return copied;
  }
}

async function copyMarket(
  source: StoredMarket,
  options: CopyOptions,
  onBatch: (rows: number) => void,
): Promise<MarketCopy> {
  const target = await options.to.markets.upsertMarket(recordOf(source));
  for (const s of source.sources) await options.to.markets.markSource(target.key, s);
  const coinPriceSource = await options.from.imports.coinPriceSource(source.key);
  if (coinPriceSource !== null) await options.to.imports.setCoinPriceSource(target.key, coinPriceSource);
  // Few and idempotent (a gap recorded again keeps one record, with the later end): put every run.
  for (const gap of await options.from.markets.listGaps(source.key)) {
    await options.to.markets.recordGap(target.key, gap);
  }
  const snapshots = await copyMarketSnapshots(source, target, options, onBatch);
  const trades = await copyTrades(
    options.from.trades,
    source.key,
    options.to.trades,
    target.key,
    options.batch,
  );
  const events = await copyEvents(
    options.from.events,
    source.key,
    options.to.events,
    target.key,
    options.onWarning,
  );
  return {
    ...snapshots,
    trades: trades.rows,
    tradesAdded: trades.added,
    events: events.events,
    eventsAdded: events.added,
  };
}

async function copyMarketSnapshots(
  source: StoredMarket,
  target: StoredMarket,
  { from: fromStore, to: toStore, batch, onWarning }: CopyOptions,
  onBatch: (rows: number) => void,
): Promise<SeriesCopy> {
  const from = fromStore.markets;
  const to = toStore.markets;
  const sourceLast = await lastSecond(from, source.key);
  const targetLast = await lastSecond(to, target.key);
  const sourceCount = source.snapshotCount;
  if (target.snapshotCount === sourceCount && targetLast === sourceLast) {
    return { complete: true, rows: 0, added: 0 };
  }
  const copy: SeriesCopy = { complete: false, rows: 0, added: 0 };
  const copyAfter = async (after: Micros | null) => {
    await copySnapshots(from, source.key, to, target.key, after, batch, (rows, added) => {
      copy.rows += rows;
      copy.added += added;
      onBatch(rows);
    });
  };
  await copyAfter(targetLast);
  let counts = await countsOf(from, source.key, to, target.key);
  if (counts.target !== counts.source) {
    await copyAfter(null);
    counts = await countsOf(from, source.key, to, target.key);
  }
  if (counts.target < counts.source) {
    throw new CopyError(
      `${source.slug}: the destination holds ${counts.target} of the source's ${counts.source} snapshots after copying`,
    );
  }
  if (counts.target > counts.source) {
    onWarning?.(
      `${source.slug}: the destination keeps ${counts.target - counts.source} snapshots the source does not have`,
    );
  }
  return copy;
}

async function countsOf(
  from: MarketStore,
  sourceKey: number,
  to: MarketStore,
  targetKey: number,
): Promise<{ source: number; target: number }> {
  return { source: await from.countSnapshots(sourceKey), target: await to.countSnapshots(targetKey) };
}

/**
 * The source's snapshots after `after` (null: all), in ascending time, `batch` at a time with their
 * books in the stored encoding; the next batch is read while one is written.
 */
async function copySnapshots(
  from: MarketStore,
  sourceKey: number,
  to: MarketStore,
  targetKey: number,
  after: Micros | null,
  batch: number,
  onBatch: (rows: number, added: number) => void,
): Promise<void> {
  const read = (fromTime: Micros | undefined): Promise<SnapshotRow[]> =>
    from.snapshotPage(sourceKey, { order: "asc", limit: batch, offset: 0, books: true, from: fromTime });
  let next = read(after === null ? undefined : after + 1);
  for (;;) {
    const rows = await next;
    if (rows.length === 0) return;
    next = rows.length < batch ? Promise.resolve([]) : read(rows[rows.length - 1].time + 1);
    // Awaited on the next turn; until then a failed read must not count as unhandled if the write fails first.
    next.catch(() => {});
    onBatch(rows.length, await to.insertSnapshots(targetKey, rows));
  }
}

/** A series as named in messages, and as matched between the stores: `btc spot candles 1m`. */
export function seriesName(s: ExchangeSeries): string {
  return [s.coin, s.venue, s.kind, s.interval].filter((part) => part !== undefined).join(" ");
}

/**
 * One exchange series, as copyMarket does a market: skipped when the destination's count and latest
 * time equal the source's, else continued after the destination's latest time, and gone through from
 * the first row when the counts still differ.
 */
async function copySeries(
  source: SeriesExtent,
  target: SeriesExtent | null,
  { from: fromStore, to: toStore, batch, onWarning }: CopyOptions,
  onBatch: (rows: number) => void,
): Promise<SeriesCopy> {
  const from = fromStore.exchange;
  const to = toStore.exchange;
  if (target !== null && target.rows === source.rows && target.last === source.last) {
    return { complete: true, rows: 0, added: 0 };
  }
  const copy: SeriesCopy = { complete: false, rows: 0, added: 0 };
  const copyAfter = async (after: SeriesCursor | null) => {
    await copySeriesRows(from, to, source, after, batch, (rows, added) => {
      copy.rows += rows;
      copy.added += added;
      onBatch(rows);
    });
  };
  // A batch may have ended among trades of one time: trades go again from the latest time itself.
  const resume = (last: Micros): SeriesCursor => ({ time: source.kind === "trades" ? last - 1 : last });
  await copyAfter(target === null ? null : resume(target.last));
  let counts = await seriesCounts(from, to, source);
  if (counts.target !== counts.source) {
    await copyAfter(null);
    counts = await seriesCounts(from, to, source);
  }
  const name = seriesName(source);
  if (counts.target < counts.source) {
    throw new CopyError(
      `${name}: the destination holds ${counts.target} of the source's ${counts.source} rows after copying`,
    );
  }
  if (counts.target > counts.source) {
    onWarning?.(
      `${name}: the destination keeps ${counts.target - counts.source} rows the source does not have`,
    );
  }
  return copy;
}

async function seriesCounts(
  from: ExchangeStore,
  to: ExchangeStore,
  series: ExchangeSeries,
): Promise<{ source: number; target: number }> {
  const [source, target] = await Promise.all([from.seriesExtent(series), to.seriesExtent(series)]);
  return { source: source.rows, target: target.rows };
}

/**
 * The source's rows of a series after `after` (null: all), in ascending time, `batch` at a time as
 * stored; each batch one insertBatch (one transaction) at the destination, the next read while one is
 * written.
 */
async function copySeriesRows(
  from: ExchangeStore,
  to: ExchangeStore,
  series: ExchangeSeries,
  after: SeriesCursor | null,
  batch: number,
  onBatch: (rows: number, added: number) => void,
): Promise<void> {
  const key = BATCH_KEY[series.kind];
  const read = (cursor: SeriesCursor | null) => from.seriesPage(series, cursor, batch);
  let next = read(after);
  for (;;) {
    const page = await next;
    const rows = page[key] ?? [];
    if (rows.length === 0) return;
    next = rows.length < batch ? Promise.resolve({}) : read(cursorAfter(page));
    // Awaited on the next turn; until then a failed read must not count as unhandled if the write fails first.
    next.catch(() => {});
    const added = await to.insertBatch(page);
    onBatch(rows.length, added[key]);
  }
}

/** Where the page after a batch of one series continues: after its last row. */
function cursorAfter(page: ExchangeBatch): SeriesCursor {
  const last = Object.values(page)[0].at(-1) as { time?: Micros; openTime?: Micros; id?: number };
  return last.id === undefined
    ? { time: last.time ?? (last.openTime as Micros) }
    : { time: last.time as Micros, id: last.id };
}
