import { statSync } from "node:fs";
import { basename } from "node:path";
import { addIntegrity, type BookIntegrity, type MarketEvent, NO_INTEGRITY } from "../domain/event.ts";
import type { Coin, Winner } from "../domain/market.ts";
import { type PricePoint, pricePoints, settlementName, settleWinner } from "../domain/settlement.ts";
import type { SnapshotRow } from "../domain/snapshot.ts";
import { type Clock, MICROS_PER_SECOND, systemClock } from "../domain/time.ts";
import type { TradeRow } from "../domain/trade.ts";
import { SnapshotDeriver } from "../events/derive.ts";
import type { MarketEventBatch } from "../store/ports/event-store.ts";
import type { StoredMarket } from "../store/ports/market-store.ts";
import type { Store } from "../store/ports/store.ts";
import type { CoinPrices, CoinPriceSeries } from "./coin-prices.ts";
import { PmxtFile } from "./pmxt-file.ts";
import type { KeptEvent } from "./pmxt-rows.ts";
import { StoredSnapshots } from "./stored-snapshots.ts";
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
 *    kept (their stores' identity), so this too can run twice; but where a market's stored snapshots
 *    differ from those derived again (an earlier hour imported in a later run puts events before
 *    them), they are replaced from the first second that differs (src/archive/stored-snapshots.ts):
 *    the end state does not depend on the order the hours were imported in, within a run or across.
 */

export const PMXT_ARCHIVE = "pmxt";

/** Events appended per transaction, at most (also what a row group holds in memory at once). */
const APPEND_EVENTS = 16_384;
const HOUR_US = 3_600 * MICROS_PER_SECOND;
/** Snapshots and trades written per transaction. */
const WRITE_ROWS = 4_096;
/** Events a run holds in memory for the derivation, at most (about 400 B each). */
const HELD_EVENTS = 250_000;

export interface PmxtImportOptions {
  store: Pick<Store, "markets" | "trades" | "events" | "imports">;
  coins: readonly Coin[];
  inputs: readonly PmxtInput[];
  /** Hours of the range asked that have no file (their names). */
  missingHours?: readonly string[];
  prices: CoinPrices;
  /**
   * Events held in memory for the derivation, at most (250,000, about 100 MB): a market whose events
   * a run appended, and which had none before, is derived from them rather than read back (HeldEvents).
   * 0 reads every market back.
   */
  heldEvents?: number;
  /** When records are changed (a market whose snapshots are replaced); the system's by default. */
  clock?: Clock;
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
  /** Stored snapshots removed to be derived again (earlier events imported after them). */
  snapshotsReplaced: number;
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
 * Settlement from the price files: a market's start and end prices filled where its record has none,
 * from its own settlement feed (DESIGN 3.4: its Chainlink stream's ticks at its start and end, or for
 * 1h and 24h markets the Binance 1m candles' open and close, from the coin's 1 s klines); its winner by
 * the rule, compared with the upstream's, which stays authoritative: a disagreement is counted and
 * listed, never written.
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
    snapshotsReplaced: 0,
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
  const held = new HeldEvents(opts.store.events, opts.heldEvents ?? HELD_EVENTS);
  for (const input of opts.inputs) {
    if (input.kind === "path") {
      await importFile(opts, input.path, finder, held, report);
      continue;
    }
    const file = await download(input, opts.fetch);
    if (file === null) {
      report.hoursMissing.push(basename(new URL(input.url).pathname));
      continue;
    }
    try {
      await importFile(opts, file.path, finder, held, report);
    } finally {
      file.dispose();
    }
  }
  for (const slug of await opts.store.imports.pendingMarkets(PMXT_ARCHIVE)) {
    const market = await opts.store.markets.getMarket(slug);
    if (market === null) continue;
    await deriveMarket(opts, market, held, report);
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
  held: HeldEvents,
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
          report.events += await appendEvents(opts, events, markets, held, touched);
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
  held: HeldEvents,
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
  for (const batch of byMarket.values()) {
    batch.events.sort((a, b) => a.receivedUs - b.receivedUs);
    await held.add(batch.marketKey, batch.events);
  }
  return opts.store.events.appendMarketEvents([...byMarket.values()]);
}

/**
 * The events a run appends to markets that had none before it, held in memory (up to a budget) so
 * that deriving such a market need not read its events back from the store and decode them. Held
 * events stand for the stored ones only when they are the same: the market had no events when the
 * run first appended to it, and the store holds as many as were appended (none was a duplicate the
 * store dropped). The store keeps events in receive order, those of one receive time in the order
 * they were appended, which is the order a stable sort of the held events by receive time gives.
 * Anything else (a resumed run, an overlapping file, a market recorded live, the budget spent) reads
 * the market's events back, as every derivation did before.
 */
class HeldEvents {
  private readonly store: PmxtImportOptions["store"]["events"];
  private readonly budget: number;
  private readonly held = new Map<number, MarketEvent[]>();
  private readonly notHeld = new Set<number>();
  private count = 0;

  constructor(store: PmxtImportOptions["store"]["events"], budget: number) {
    this.store = store;
    this.budget = budget;
  }

  /** Called before the events are appended. */
  async add(marketKey: number, events: readonly MarketEvent[]): Promise<void> {
    if (this.notHeld.has(marketKey) || this.budget === 0) return;
    let list = this.held.get(marketKey);
    if (!list) {
      if ((await this.store.marketEventSpan(marketKey)) !== null) {
        this.notHeld.add(marketKey);
        return;
      }
      this.held.set(marketKey, (list = []));
    }
    if (this.count + events.length > this.budget) {
      this.count -= list.length;
      this.held.delete(marketKey);
      this.notHeld.add(marketKey);
      return;
    }
    for (const e of events) list.push(e);
    this.count += events.length;
  }

  /** A market's stored events in the store's order, when the held ones are they; else null. Releases them. */
  take(marketKey: number, stored: number): MarketEvent[] | null {
    const list = this.held.get(marketKey);
    if (!list) return null;
    this.held.delete(marketKey);
    this.count -= list.length;
    if (list.length !== stored) return null;
    // Stable: events of one receive time stay in the order they were appended.
    return list.sort((a, b) => a.receivedUs - b.receivedUs);
  }
}

/** A market's events as the store streams them (blocks of events), from memory or from the store. */
async function* eventsOf(
  store: PmxtImportOptions["store"]["events"],
  marketKey: number,
  held: MarketEvent[] | null,
): AsyncIterable<MarketEvent[]> {
  if (held === null) {
    yield* store.streamMarketEvents(marketKey);
    return;
  }
  for (let i = 0; i < held.length; i += APPEND_EVENTS) yield held.slice(i, i + APPEND_EVENTS);
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
 * A market only imports derived (not recorded live) ends as if its events had all come at once: its
 * stored snapshots are compared with the derived ones, replaced from the first second they differ
 * (events an earlier hour, imported later, put before them), and its integrity counts set to the
 * rebuild's. A market recorded live keeps what it recorded; the derivation fills the seconds it lacks.
 */
async function deriveMarket(
  opts: PmxtImportOptions,
  derived: StoredMarket,
  held: HeldEvents,
  report: PmxtReport,
): Promise<void> {
  let market = derived;
  const { store } = opts;
  const prices = opts.prices.forMarket(market);
  const span = await store.events.marketEventSpan(market.key);
  const first = market.startTime * MICROS_PER_SECOND;
  // The hour file holding the market's last event was read whole: its state is known to that hour's end.
  const known = span === null ? 0 : (Math.floor(span.lastReceivedUs / HOUR_US) + 1) * HOUR_US;
  const last = Math.min(market.endTime * MICROS_PER_SECOND, known);
  const imported = !market.sources.includes("recorded");
  const stored = prices && imported ? await StoredSnapshots.of(store.markets, market.key, first, last) : null;
  const times = function* () {
    for (let t = first; t < last; t += MICROS_PER_SECOND) yield t;
  };
  const deriver = new SnapshotDeriver(
    { up: market.clobTokenUp, down: market.clobTokenDown },
    prices ? times() : [],
    (time) => prices?.at(time / MICROS_PER_SECOND) ?? stored?.coinPriceAt(time) ?? null,
  );
  // Touched before its snapshots are removed, so that a kill between the two leaves it touched.
  const writer = new DerivedWriter(store, market.key, stored, report, async () => {
    market = await touch(store.markets, market, opts.clock ?? systemClock);
  });
  for await (const block of eventsOf(store.events, market.key, held.take(market.key, span?.count ?? 0))) {
    for (const event of block) {
      await writer.snapshots(deriver.push(event));
      const trade = tradeOf(event, market);
      if (trade) writer.trade(trade);
    }
    await writer.flush(false);
  }
  await writer.snapshots(deriver.finish());
  await writer.end();
  await settleIntegrity(store.events, market.key, deriver.book.integrity, imported, report);
  // Where data came from (docs/archives.md): a market whose events an import derived has PMXT data.
  await store.markets.markSource(market.key, "pmxt");
  report.markets++;
  if (prices) {
    report.coinPriceSources[prices.source] = (report.coinPriceSources[prices.source] ?? 0) + 1;
    await store.imports.setCoinPriceSource(market.key, prices.source);
    await settle(store.markets, market, opts.prices, prices, report.settlement);
    await store.imports.clearPendingMarket(PMXT_ARCHIVE, market.slug);
  } else report.marketsWithoutCoinPrice.push(market.slug);
}

/**
 * A market's derived snapshots and trades written a batch at a time; where the stored snapshots differ
 * from the derived ones (StoredSnapshots), the stored ones from that second on are removed first.
 */
class DerivedWriter {
  private readonly store: PmxtImportOptions["store"];
  private readonly marketKey: number;
  private readonly stored: StoredSnapshots | null;
  private readonly report: PmxtReport;
  private readonly rows: SnapshotRow[] = [];
  private readonly trades: TradeRow[] = [];
  /** Called once, before stored snapshots are removed. */
  private readonly onReplace: () => Promise<void>;

  constructor(
    store: PmxtImportOptions["store"],
    marketKey: number,
    stored: StoredSnapshots | null,
    report: PmxtReport,
    onReplace: () => Promise<void>,
  ) {
    this.store = store;
    this.marketKey = marketKey;
    this.stored = stored;
    this.report = report;
    this.onReplace = onReplace;
  }

  async snapshots(rows: readonly SnapshotRow[]): Promise<void> {
    for (const row of rows) {
      const from = this.stored === null ? null : await this.stored.differsAt(row);
      if (from !== null) await this.replaceFrom(from);
      this.rows.push(row);
    }
  }

  trade(trade: TradeRow): void {
    this.trades.push(trade);
  }

  async flush(all: boolean): Promise<void> {
    const { markets, trades } = this.store;
    if (this.rows.length >= WRITE_ROWS || (all && this.rows.length > 0))
      this.report.snapshots += await markets.insertSnapshots(this.marketKey, this.rows.splice(0));
    if (this.trades.length >= WRITE_ROWS || (all && this.trades.length > 0))
      this.report.trades += await trades.insertTrades([
        { marketKey: this.marketKey, rows: this.trades.splice(0) },
      ]);
  }

  async end(): Promise<void> {
    const from = this.stored === null ? null : await this.stored.differsAtEnd();
    if (from !== null) await this.replaceFrom(from);
    await this.flush(true);
  }

  /** The rows held are all earlier than `from`: they are written after the removal, as new or as they were. */
  private async replaceFrom(from: number): Promise<void> {
    await this.onReplace();
    this.report.snapshotsReplaced += await this.store.markets.deleteSnapshotsFrom(this.marketKey, from);
  }
}

/**
 * A market whose snapshots were replaced has changed: its `updatedAt` moves on (to now, or a µs later),
 * as the collector's changes move it, so that its cached snapshot pages and their ETags, which name
 * it, are not served for the new ones.
 */
async function touch(markets: Store["markets"], market: StoredMarket, clock: Clock): Promise<StoredMarket> {
  const { key: _key, snapshotCount: _count, ...record } = market;
  return markets.upsertMarket({ ...record, updatedAt: Math.max(clock.nowMicros(), market.updatedAt + 1) });
}

/**
 * See SettlementCheck: only from the market's own settlement feed: its stream's ticks, when its snapshots'
 * coin prices are that stream's; for a market settled on Binance's 1m candles (1h, 24h), the candles
 * its coin's 1 s klines make up (`--binance-klines`).
 */
async function settle(
  markets: Store["markets"],
  market: StoredMarket,
  prices: CoinPrices,
  series: CoinPriceSeries,
  check: SettlementCheck,
): Promise<void> {
  const points = pricePoints(market.marketType, market.settlement, market.startTime, market.endTime);
  const own = series.source === settlementName(market.settlement);
  const read = (p: PricePoint): number | null =>
    p.kind === "candle" ? prices.candlePrice(market.coin, p) : own ? series.at(p.second) : null;
  const start = read(points.start);
  const end = read(points.end);
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
    transactionHash: typeof m.transaction_hash === "string" ? m.transaction_hash : null,
  };
}

/**
 * Brings the market's stored integrity counts to those of the rebuild of all its events, so that a
 * second derivation (same events, same counts) adds nothing. A market only imports derived takes the
 * rebuild's counts exactly (lower ones too: an earlier hour imported later turns comparisons made
 * against a book missing its changes into matches); a market recorded live only has its counts raised
 * (the collector's counts are of the messages it received, which the rebuild may not all hold).
 */
async function settleIntegrity(
  events: Store["events"],
  key: number,
  rebuilt: BookIntegrity,
  imported: boolean,
  report: PmxtReport,
): Promise<void> {
  const stored = (await events.bookIntegrity(key)) ?? NO_INTEGRITY;
  const change = (field: keyof BookIntegrity) =>
    imported ? rebuilt[field] - stored[field] : Math.max(0, rebuilt[field] - stored[field]);
  const delta: BookIntegrity = {
    bookMatches: change("bookMatches"),
    bookMismatches: change("bookMismatches"),
    bestMatches: change("bestMatches"),
    bestMismatches: change("bestMismatches"),
  };
  if (Object.values(delta).some((n) => n !== 0)) await events.addBookIntegrity(key, delta);
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
    `snapshots: ${r.snapshots} new, ${r.snapshotsReplaced} stored ones removed to be derived again`,
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
