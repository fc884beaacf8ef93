import { statSync } from "node:fs";
import { basename } from "node:path";
import { addIntegrity, type BookIntegrity, type MarketEvent, NO_INTEGRITY } from "../domain/event.ts";
import type { Coin, Winner } from "../domain/market.ts";
import { pricePoints, settlementName, settleWinner } from "../domain/settlement.ts";
import type { SnapshotRow } from "../domain/snapshot.ts";
import { MICROS_PER_SECOND } from "../domain/time.ts";
import type { TradeRow } from "../domain/trade.ts";
import { SnapshotDeriver } from "../events/derive.ts";
import type { MarketEventBatch } from "../store/ports/event-store.ts";
import type { StoredMarket } from "../store/ports/market-store.ts";
import type { Store } from "../store/ports/store.ts";
import type { CoinPrices, CoinPriceSeries } from "./coin-prices.ts";
import { type KeptEvent, PmxtFile } from "./pmxt-file.ts";
import { download, hourOfFileName, type PmxtInput } from "./pmxt-sources.ts";

/**
 * `updown import pmxt` (DESIGN 3.11, docs/archives.md): PMXT's hourly order-book files into events,
 * and from the events, by the one rule (src/events/derive.ts), per-second snapshots with full books,
 * trades (from `last_trade_price`) and book-integrity counts.
 *
 * 1. Each file, a row group at a time (src/archive/pmxt-file.ts): the rows of the markets of the
 *    configured coins' series already in the store (found by condition id) become events, appended
 *    per market in receive order (a market's two tokens come in two runs; the event store merges them
 *    by receive time, and events received earlier than stored ones, an earlier hour imported later
 *    included, fall in place). Appending an event again is a no-op, so a second import or an
 *    overlapping file adds nothing. A row group's mark, and the markets it touched, are written when
 *    its events are: a killed import resumes at the first row group without a mark.
 * 2. Then each market whose events an import wrote (durably listed until done) is derived again from
 *    all its stored events: a snapshot at each whole second of its interval up to the end of the hour
 *    of its last event (the files are hourly: what follows is not imported yet), its trades, and its
 *    integrity counts brought to those of the whole rebuild. Snapshots and trades already stored are
 *    kept (their stores' identity), so this too can run twice. Hours are imported in time order
 *    across runs (in any order within one): a snapshot once written is not rewritten by events of an
 *    earlier hour imported later.
 */

export const PMXT_ARCHIVE = "pmxt";

/** Events appended per transaction, at most (also what a row group holds in memory at once). */
const APPEND_EVENTS = 16_384;
const HOUR_US = 3_600 * MICROS_PER_SECOND;
/** Snapshots and trades written per transaction. */
const WRITE_ROWS = 4_096;

export interface PmxtImportOptions {
  store: Pick<Store, "markets" | "trades" | "events" | "imports">;
  coins: readonly Coin[];
  inputs: readonly PmxtInput[];
  /** Hours of the range asked that have no file (their names). */
  missingHours?: readonly string[];
  prices: CoinPrices;
  fetch?: typeof fetch;
  onProgress?: (progress: PmxtProgress) => void;
}

export interface PmxtProgress {
  file: string;
  rowGroup: number;
  rowGroups: number;
  rowsRead: number;
  rowsKept: number;
}

export interface PmxtReport {
  files: number;
  rowGroups: number;
  /** Row groups marked imported by an earlier run, not read again. */
  rowGroupsResumed: number;
  rowsRead: number;
  rowsKept: number;
  /** Markets whose events were derived. */
  markets: number;
  /** Events written new (0 on a second import). */
  events: number;
  snapshots: number;
  trades: number;
  integrity: BookIntegrity;
  hoursMissing: string[];
  /** Markets derived without snapshots: no coin price file covers them (still listed to derive). */
  marketsWithoutCoinPrice: string[];
  /** Which source filled the markets' snapshot coin prices: source -> markets. */
  coinPriceSources: Record<string, number>;
  /** Start and end prices from the markets' own settlement feed files (DESIGN 3.4). */
  settlement: SettlementCheck;
}

/**
 * Settlement from the feed files: a market's start and end prices filled where its record has none,
 * from its own settlement stream (a tick at its start and end); its winner by the rule, compared with
 * the upstream's, which stays authoritative: a disagreement is counted and listed, never written.
 */
export interface SettlementCheck {
  pricesFilled: number;
  agreements: number;
  disagreements: { slug: string; upstream: Winner; feed: Winner; start: number; end: number }[];
}

function emptyReport(missing: readonly string[]): PmxtReport {
  return {
    files: 0,
    rowGroups: 0,
    rowGroupsResumed: 0,
    rowsRead: 0,
    rowsKept: 0,
    markets: 0,
    events: 0,
    snapshots: 0,
    trades: 0,
    integrity: { ...NO_INTEGRITY },
    hoursMissing: [...missing],
    marketsWithoutCoinPrice: [],
    coinPriceSources: {},
    settlement: { pricesFilled: 0, agreements: 0, disagreements: [] },
  };
}

export async function importPmxt(opts: PmxtImportOptions): Promise<PmxtReport> {
  const report = emptyReport(opts.missingHours ?? []);
  const finder = new MarketFinder(opts.store.markets, opts.coins);
  for (const input of opts.inputs) {
    if (input.kind === "path") {
      await importFile(opts, input.path, finder, report);
      continue;
    }
    const file = await download(input, opts.fetch);
    if (file === null) {
      report.hoursMissing.push(basename(new URL(input.url).pathname));
      continue;
    }
    try {
      await importFile(opts, file.path, finder, report);
    } finally {
      file.dispose();
    }
  }
  for (const slug of await opts.store.imports.pendingMarkets(PMXT_ARCHIVE)) {
    const market = await opts.store.markets.getMarket(slug);
    if (market === null) continue;
    await deriveMarket(opts, market, report);
  }
  report.hoursMissing.sort();
  return report;
}

/** A file's identity in the marks: its name and size (the archive's hour files are never rewritten). */
function fileIdentity(path: string): string {
  return `${basename(path)}:${statSync(path).size}`;
}

async function importFile(
  opts: PmxtImportOptions,
  path: string,
  finder: MarketFinder,
  report: PmxtReport,
): Promise<void> {
  const file = await PmxtFile.open(path);
  try {
    const identity = fileIdentity(path);
    const done = await opts.store.imports.importedRowGroups(PMXT_ARCHIVE, identity);
    const markets = await finder.around(hourOfFileName(basename(path)));
    const keep = new Set(markets.keys());
    report.files++;
    const total = file.rowGroupRows.length;
    for (let index = 0; index < total; index++) {
      report.rowGroups++;
      if (done.has(index)) {
        report.rowGroupsResumed++;
        continue;
      }
      const touched = new Set<string>();
      const kept = await file.readRowGroup(
        index,
        keep,
        async (events) => {
          report.events += await appendEvents(opts, events, markets, touched);
        },
        APPEND_EVENTS,
      );
      const rows = file.rowGroupRows[index];
      await opts.store.imports.markRowGroup(PMXT_ARCHIVE, identity, { rowGroup: index, rows, kept }, [
        ...touched,
      ]);
      report.rowsRead += rows;
      report.rowsKept += kept;
      opts.onProgress?.({
        file: basename(path),
        rowGroup: index + 1,
        rowGroups: total,
        rowsRead: report.rowsRead,
        rowsKept: report.rowsKept,
      });
    }
  } finally {
    file.close();
  }
}

/** Kept rows' events by market, each market's in receive order (the file's order among equal times). */
async function appendEvents(
  opts: PmxtImportOptions,
  kept: readonly KeptEvent[],
  markets: ReadonlyMap<string, StoredMarket>,
  touched: Set<string>,
): Promise<number> {
  const byMarket = new Map<number, MarketEventBatch>();
  for (const { conditionId, event } of kept) {
    const market = markets.get(conditionId) as StoredMarket;
    let batch = byMarket.get(market.key);
    if (!batch) {
      byMarket.set(market.key, (batch = { marketKey: market.key, events: [] }));
      touched.add(market.slug);
    }
    batch.events.push(event);
  }
  for (const batch of byMarket.values()) batch.events.sort((a, b) => a.receivedUs - b.receivedUs);
  return opts.store.events.appendMarketEvents([...byMarket.values()]);
}

/**
 * The markets of the configured coins by condition id, for the hours around a file's hour (a market's
 * events come while it trades: from a day or so before its interval to its end; a daily market's
 * interval starts a day before it ends); every market of the coins for a file whose name has no hour.
 */
class MarketFinder {
  private readonly store: Store["markets"];
  private readonly coins: readonly Coin[];
  private readonly cache = new Map<string, Map<string, StoredMarket>>();

  constructor(store: Store["markets"], coins: readonly Coin[]) {
    this.store = store;
    this.coins = coins;
  }

  async around(hour: number | null): Promise<Map<string, StoredMarket>> {
    const key = String(hour);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const byCondition = new Map<string, StoredMarket>();
    const window = hour === null ? {} : { startFrom: hour - 3 * 86_400, startTo: hour + 3 * 86_400 };
    for (const coin of this.coins) {
      for (let offset = 0; ; offset += 100) {
        const { markets } = await this.store.listMarkets({ coin, ...window, limit: 100, offset });
        for (const m of markets) byCondition.set(m.conditionId, m);
        if (markets.length < 100) break;
      }
    }
    // One file at a time is read: keep only the last hour's markets.
    this.cache.clear();
    this.cache.set(key, byCondition);
    return byCondition;
  }
}

/**
 * A market's snapshots, trades and integrity counts from all its stored events, by the one rule
 * (src/events/derive.ts): a snapshot at each whole second of its interval, as the collector takes one.
 */
async function deriveMarket(
  opts: PmxtImportOptions,
  market: StoredMarket,
  report: PmxtReport,
): Promise<void> {
  const { store } = opts;
  const prices = opts.prices.forMarket(market);
  const span = await store.events.marketEventSpan(market.key);
  const first = market.startTime * MICROS_PER_SECOND;
  // The hour file holding the market's last event was read whole: its state is known to that hour's end.
  const known = span === null ? 0 : (Math.floor(span.lastReceivedUs / HOUR_US) + 1) * HOUR_US;
  const last = Math.min(market.endTime * MICROS_PER_SECOND, known);
  const times = function* () {
    for (let t = first; t < last; t += MICROS_PER_SECOND) yield t;
  };
  const deriver = new SnapshotDeriver(
    { up: market.clobTokenUp, down: market.clobTokenDown },
    prices ? times() : [],
    (time) => prices?.at(time / MICROS_PER_SECOND) ?? null,
  );
  const rows: SnapshotRow[] = [];
  const trades: TradeRow[] = [];
  const flush = async (all: boolean): Promise<void> => {
    if (rows.length >= WRITE_ROWS || (all && rows.length > 0))
      report.snapshots += await store.markets.insertSnapshots(market.key, rows.splice(0));
    if (trades.length >= WRITE_ROWS || (all && trades.length > 0))
      report.trades += await store.trades.insertTrades([{ marketKey: market.key, rows: trades.splice(0) }]);
  };
  for await (const block of store.events.streamMarketEvents(market.key)) {
    for (const event of block) {
      rows.push(...deriver.push(event));
      const trade = tradeOf(event, market);
      if (trade) trades.push(trade);
    }
    await flush(false);
  }
  rows.push(...deriver.finish());
  await flush(true);
  await settleIntegrity(store.events, market.key, deriver.book.integrity, report);
  // Where data came from (docs/archives.md): a market whose events an import derived has PMXT data.
  await store.markets.markSource(market.key, "pmxt");
  report.markets++;
  if (prices) {
    report.coinPriceSources[prices.source] = (report.coinPriceSources[prices.source] ?? 0) + 1;
    await store.imports.setCoinPriceSource(market.key, prices.source);
    await settle(store.markets, market, prices, report.settlement);
    await store.imports.clearPendingMarket(PMXT_ARCHIVE, market.slug);
  } else report.marketsWithoutCoinPrice.push(market.slug);
}

/** See SettlementCheck: only from the market's own settlement stream, read at ticks (not candles). */
async function settle(
  markets: Store["markets"],
  market: StoredMarket,
  prices: CoinPriceSeries,
  check: SettlementCheck,
): Promise<void> {
  const points = pricePoints(market.marketType, market.settlement, market.startTime, market.endTime);
  if (prices.source !== settlementName(market.settlement) || points.start.kind !== "tick") return;
  if (points.end.kind !== "tick") return;
  const start = prices.at(points.start.second);
  const end = prices.at(points.end.second);
  const filled = {
    coinPriceStart: market.coinPriceStart ?? start,
    coinPriceEnd: market.winner === null ? market.coinPriceEnd : (market.coinPriceEnd ?? end),
  };
  if (filled.coinPriceStart !== market.coinPriceStart || filled.coinPriceEnd !== market.coinPriceEnd) {
    const { key: _key, snapshotCount: _count, ...record } = market;
    await markets.upsertMarket({ ...record, ...filled });
    check.pricesFilled++;
  }
  if (market.winner === null || start === null || end === null) return;
  const feed = settleWinner(market.marketType, start, end);
  if (feed === market.winner) check.agreements++;
  else check.disagreements.push({ slug: market.slug, upstream: market.winner, feed, start, end });
}

/** A `last_trade_price` with a size as the market's trade (as the collector's trade recorder makes it). */
function tradeOf(event: MarketEvent, market: StoredMarket): TradeRow | null {
  const m = event.message;
  if (event.type !== "last_trade_price" || m.size === undefined) return null;
  const outcome =
    m.asset_id === market.clobTokenUp ? "Up" : m.asset_id === market.clobTokenDown ? "Down" : null;
  const side = m.side === "BUY" || m.side === "SELL" ? m.side : null;
  if (outcome === null || side === null) return null;
  return {
    time: Math.round(event.timestampMs * 1000),
    outcome,
    side,
    price: Number(m.price),
    size: Number(m.size),
    feeRateBps: m.fee_rate_bps === undefined ? 0 : Number(m.fee_rate_bps),
  };
}

/**
 * Brings the market's stored integrity counts up to those of the rebuild of all its events: counts
 * are only ever added to, so a second derivation (same events, same counts) adds nothing.
 */
async function settleIntegrity(
  events: Store["events"],
  key: number,
  rebuilt: BookIntegrity,
  report: PmxtReport,
): Promise<void> {
  const stored = (await events.bookIntegrity(key)) ?? NO_INTEGRITY;
  const delta: BookIntegrity = {
    bookMatches: Math.max(0, rebuilt.bookMatches - stored.bookMatches),
    bookMismatches: Math.max(0, rebuilt.bookMismatches - stored.bookMismatches),
    bestMatches: Math.max(0, rebuilt.bestMatches - stored.bestMatches),
    bestMismatches: Math.max(0, rebuilt.bestMismatches - stored.bestMismatches),
  };
  if (Object.values(delta).some((n) => n > 0)) await events.addBookIntegrity(key, delta);
  report.integrity = addIntegrity(report.integrity, rebuilt);
}

/** The report for people (stdout); `--json` prints the report itself. */
export function formatPmxtReport(r: PmxtReport): string {
  const sources = Object.entries(r.coinPriceSources).map(
    ([s, n]) => `  ${s}: ${n} market${n === 1 ? "" : "s"}`,
  );
  const lines = [
    `files: ${r.files} (row groups: ${r.rowGroups}, of which resumed from an earlier run: ${r.rowGroupsResumed})`,
    `rows read: ${r.rowsRead}`,
    `rows kept: ${r.rowsKept}`,
    `markets: ${r.markets}`,
    `events: ${r.events} new`,
    `snapshots: ${r.snapshots} new`,
    `trades: ${r.trades} new`,
    `book integrity: books ${r.integrity.bookMatches} match, ${r.integrity.bookMismatches} mismatch; ` +
      `best bid/ask ${r.integrity.bestMatches} match, ${r.integrity.bestMismatches} mismatch`,
    `hours missing: ${r.hoursMissing.length}${r.hoursMissing.length > 0 ? ` (${r.hoursMissing.join(", ")})` : ""}`,
    `settlement from the feed files: ${r.settlement.pricesFilled} markets' prices filled, ` +
      `${r.settlement.agreements} winners agree with the upstream's, ${r.settlement.disagreements.length} disagree`,
    ...r.settlement.disagreements.map(
      (d) => `  ${d.slug}: upstream ${d.upstream}, feed ${d.feed} (start ${d.start}, end ${d.end})`,
    ),
    "coin prices of the snapshots from:",
    ...(sources.length > 0 ? sources : ["  (none)"]),
  ];
  if (r.marketsWithoutCoinPrice.length > 0)
    lines.push(
      `markets without a coin price file (events kept, no snapshots yet): ${r.marketsWithoutCoinPrice.join(", ")}`,
    );
  return lines.join("\n");
}
