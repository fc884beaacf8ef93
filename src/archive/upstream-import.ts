import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { createGunzip } from "node:zlib";
import {
  type Coin,
  DEFAULT_COINS,
  type FeeSchedule,
  type Market,
  type MarketType,
  marketTypeFromSeconds,
  parseCoin,
  parseMarketType,
  type Settlement,
  type Winner,
} from "../domain/market.ts";
import { pricePoints, settlementName, settlementOf, settleWinner } from "../domain/settlement.ts";
import { formatSlug, parseSlug, polymarketSlug, polymarketSlugSeries } from "../domain/slug.ts";
import { isoSeconds, type Micros } from "../domain/time.ts";
import { errorMessage } from "../log.ts";
import type { MarketStore } from "../store/ports/market-store.ts";
import {
  amountOf,
  eventIdOf,
  eventPricesOf,
  FieldError,
  feeScheduleOf,
  parseGammaMarket,
  recordTimesOf,
  requireId,
  requireIso,
  requireObject,
  requireString,
  resolvedAtOf,
  twapConfigOf,
  winnerFromPrices,
} from "../upstream/gamma-market.ts";
import { PriceFeed, scaledDecimalToNumber, type TickInEffect } from "../upstream/price-feed.ts";

/**
 * Import of the recorded upstream formats (see test/fixtures/real-btc-5m-2026-07-24 and the shared
 * fixtures README): a JSON-lines file of Gamma markets plus settlement feeds as CSV, the instantaneous
 * Chainlink stream and the TWAP streams alike. Every market becomes a market record, settled on the
 * feed its own Gamma record names (DESIGN 3.4); every resolved one is also re-settled from that feed
 * alone, so that a winner we cannot reproduce is reported instead of silently trusted.
 */

/** A settlement feed file: which stream it holds (the instantaneous Chainlink one, or a TWAP stream). */
export interface FeedFile {
  settlement: Settlement;
  path: string;
}

/**
 * `FILE` (the instantaneous Chainlink stream), or `twap30=FILE` / `twap60=FILE` (a TWAP stream of that
 * lookback, in the same columns), as `--feed` takes them; null when a prefix names no stream.
 */
export function parseFeedArgument(text: string): FeedFile | null {
  const m = /^(chainlink|twap(\d+))=(.+)$/.exec(text);
  if (!m) return { settlement: { source: "chainlink", lookbackS: null }, path: text };
  if (m[1] === "chainlink") return { settlement: { source: "chainlink", lookbackS: null }, path: m[3] };
  const lookback = Number(m[2]);
  return lookback > 0 ? { settlement: { source: "chainlink_twap", lookbackS: lookback }, path: m[3] } : null;
}

export interface ImportOptions {
  store: MarketStore;
  marketsPath: string;
  /** The instantaneous Chainlink stream (as `feeds` with that settlement). */
  feedPath?: string;
  /** Settlement feeds by the stream they hold; a market is settled on the one its record names. */
  feeds?: FeedFile[];
  /** A feed tick older than this at a market's start or end cannot settle it. Default 10. */
  maxStalenessSeconds?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface Disagreement {
  slug: string;
  /** The feed that settled it again (settlementName). */
  feedName: string;
  upstream: Winner;
  feed: Winner;
  startPrice: number;
  endPrice: number;
  startTickAgeS: number;
  endTickAgeS: number;
}

export interface Undecidable {
  slug: string;
  feedName: string;
  reason: string;
}

export interface ImportReport {
  markets: number;
  resolved: number;
  agreements: number;
  disagreements: Disagreement[];
  undecidable: Undecidable[];
  /** Which feed each market settles on (its record's settlement), in file order. */
  settledBy: { slug: string; feedName: string }[];
}

/** A bad input file: names the file and, when the problem is one line, its 1-based line number. */
export class ImportError extends Error {
  readonly file: string;
  readonly line: number | null;
  constructor(file: string, line: number | null, reason: string) {
    super(line === null ? `${file}: ${reason}` : `${file}:${line}: ${reason}`);
    this.name = "ImportError";
    this.file = file;
    this.line = line;
  }
}

const DEFAULT_MAX_STALENESS_S = 10;

/** The feed files read, by the name of the stream they hold. */
export async function readFeeds(files: readonly FeedFile[]): Promise<Map<string, PriceFeed>> {
  const feeds = new Map<string, PriceFeed>();
  for (const f of files) {
    const name = settlementName(f.settlement);
    if (feeds.has(name)) throw new ImportError(f.path, null, `a second file for the ${name} stream`);
    feeds.set(name, await readFeed(f.path));
  }
  return feeds;
}

function feedFilesOf(opts: ImportOptions): FeedFile[] {
  const files = [...(opts.feeds ?? [])];
  if (opts.feedPath !== undefined)
    files.unshift({ settlement: { source: "chainlink", lookbackS: null }, path: opts.feedPath });
  return files;
}

export async function importUpstream(opts: ImportOptions): Promise<ImportReport> {
  return importRecordFiles({ ...opts, paths: [opts.marketsPath], feeds: await readFeeds(feedFilesOf(opts)) });
}

export interface RecordFileOptions {
  store: MarketStore;
  paths: readonly string[];
  feeds: ReadonlyMap<string, PriceFeed>;
  maxStalenessSeconds?: number;
  onProgress?: (done: number, total: number) => void;
}

/**
 * The market records of every file (`import upstream`, `import gamma FILE...`), stored through
 * MarketRecordImport. Every line of every file is parsed before the first write, so a bad file leaves
 * the store untouched.
 */
export async function importRecordFiles(opts: RecordFileOptions): Promise<ImportReport> {
  const upstream: UpstreamMarket[] = [];
  for (const path of opts.paths) upstream.push(...(await readMarkets(path)));
  const records = new MarketRecordImport(opts.store, opts.feeds, opts.maxStalenessSeconds);
  for (const u of upstream) {
    await records.add(u);
    opts.onProgress?.(records.report.markets, upstream.length);
  }
  return records.report;
}

/**
 * The one path by which an upstream market record is stored (`import upstream` and `import gamma`,
 * from files or fetched): settled on the feed its record names, its fees and tokens, the upstream's
 * outcome, price to beat and final price, then cross-checked. Its source is marked `gamma` (the record
 * alone), which a market with book data keeps as it was (MarketSource).
 */
export class MarketRecordImport {
  readonly report: ImportReport = {
    markets: 0,
    resolved: 0,
    agreements: 0,
    disagreements: [],
    undecidable: [],
    settledBy: [],
  };
  private readonly store: MarketStore;
  private readonly feeds: ReadonlyMap<string, PriceFeed>;
  private readonly maxStale: number;

  constructor(store: MarketStore, feeds: ReadonlyMap<string, PriceFeed>, maxStalenessSeconds?: number) {
    this.store = store;
    this.feeds = feeds;
    this.maxStale = maxStalenessSeconds ?? DEFAULT_MAX_STALENESS_S;
  }

  async add(u: UpstreamMarket): Promise<void> {
    const feedName = settlementName(u.settlement);
    const feed = this.feeds.get(feedName) ?? null;
    const market = toMarket(u, feed);
    const stored = await this.store.upsertMarket(market);
    await this.store.markSource(stored.key, "gamma");
    this.report.markets++;
    this.report.settledBy.push({ slug: market.slug, feedName });
    if (market.winner !== null) {
      this.report.resolved++;
      recordCrossCheck(this.report, crossCheck(market.slug, market.winner, u, feed, this.maxStale));
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Reading files

/** The lines of a plain or gzipped (`.gz`) text file with 1-based numbers, streamed. */
async function* readLines(path: string): AsyncGenerator<{ text: string; no: number }> {
  const source = createReadStream(path);
  const input = path.endsWith(".gz") ? source.pipe(createGunzip()) : source;
  // pipe() does not forward errors; without this a missing .gz file would leave the reader waiting.
  if (input !== source) source.on("error", (err) => input.destroy(err));
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let no = 0;
  try {
    for await (const text of lines) {
      no++;
      yield { text, no };
    }
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError(path, null, `cannot read: ${errorMessage(err)}`);
  } finally {
    lines.close();
    input.destroy();
  }
}

/** Runs `parse` on one line, turning any failure into an ImportError naming the file and line. */
function atLine<T>(path: string, no: number, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new ImportError(path, no, errorMessage(err));
  }
}

type FeedColumn = "feed_ts_ms" | "full_accuracy_value" | "recv_ms";

/** Reads the Chainlink CSV (`feed_ts_ms,value,full_accuracy_value,server_ts_ms,recv_ms`) into a feed. */
export async function readFeed(path: string): Promise<PriceFeed> {
  const feed = new PriceFeed();
  let columns: Record<FeedColumn, number> | null = null;
  let width = 0;
  for await (const { text, no } of readLines(path)) {
    if (text.trim() === "") continue;
    const cells = text.split(",");
    if (columns === null) {
      columns = atLine(path, no, () => feedHeader(cells));
      width = cells.length;
      continue;
    }
    const header = columns;
    atLine(path, no, () => {
      if (cells.length !== width) throw new FieldError(`expected ${width} columns, found ${cells.length}`);
      const ms = integerCell(cells[header.feed_ts_ms], "feed_ts_ms");
      const value = scaledCell(cells[header.full_accuracy_value], "full_accuracy_value");
      const recv = integerCell(cells[header.recv_ms], "recv_ms");
      feed.addTick(Math.floor(ms / 1000), value, recv);
    });
  }
  if (columns === null) throw new ImportError(path, null, "empty file: no header line");
  return feed;
}

function feedHeader(cells: string[]): Record<FeedColumn, number> {
  const names = cells.map((c) => c.trim());
  const index = (name: FeedColumn): number => {
    const i = names.indexOf(name);
    if (i < 0) throw new FieldError(`header lacks column ${name} (found: ${names.join(",")})`);
    return i;
  };
  return {
    feed_ts_ms: index("feed_ts_ms"),
    full_accuracy_value: index("full_accuracy_value"),
    recv_ms: index("recv_ms"),
  };
}

function integerCell(cell: string, name: string): number {
  const text = cell.trim();
  if (!/^-?\d+$/.test(text)) throw new FieldError(`${name} is not an integer: ${JSON.stringify(cell)}`);
  return Number(text);
}

function scaledCell(cell: string, name: string): number {
  const text = cell.trim();
  if (!/^-?\d+$/.test(text)) throw new FieldError(`${name} is not a scaled integer: ${JSON.stringify(cell)}`);
  return scaledDecimalToNumber(text);
}

/** One market line, checked and narrowed; `raw` keeps only the Gamma fields the record needs. */
export interface UpstreamMarket {
  slug: string;
  coin: Coin;
  marketType: MarketType;
  conditionId: string;
  tokenUp: string;
  tokenDown: string;
  startSec: number;
  endSec: number;
  /** From `resolved` and `outcome_prices`; null while unresolved or when the prices are not 1/0 or a split. */
  winner: Winner | null;
  /** The upstream's price to beat: the line's `strike_value`, else Gamma's `eventMetadata.priceToBeat`. */
  strike: number | null;
  /** Gamma's `eventMetadata.finalPrice`, once known. */
  finalPrice: number | null;
  settlement: Settlement;
  feeSchedule: FeeSchedule | null;
  marketId: string;
  eventId: string;
  volume: number | null;
  liquidity: number | null;
  resolvedAt: number | null;
  createdAt: Micros;
  updatedAt: Micros;
}

/** Every market of a JSON-lines file (.gz accepted), each line one of the shapes upstreamMarketsOf reads. */
export async function readMarkets(path: string): Promise<UpstreamMarket[]> {
  const out: UpstreamMarket[] = [];
  for await (const { text, no } of readLines(path)) {
    if (text.trim() === "") continue;
    out.push(...atLine(path, no, () => parseMarketLine(text)));
  }
  return out;
}

function parseMarketLine(text: string): UpstreamMarket[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new FieldError(`not valid JSON: ${errorMessage(err)}`);
  }
  return upstreamMarketsOf(value);
}

/**
 * The markets of one upstream object: a row of the recorded fixtures (our recorder's fields with the
 * Gamma market in `raw`), a Gamma market (`/markets?slug=`), or a Gamma event (`/events?slug=`) with
 * its markets nested, each read as a market of that event. Throws FieldError naming what is wrong.
 */
export function upstreamMarketsOf(value: unknown): UpstreamMarket[] {
  const line = requireObject(value, "line");
  if (line.raw !== undefined) return [parseRecordedLine(line)];
  if (Array.isArray(line.markets) && line.conditionId === undefined) {
    const { markets, ...event } = line;
    return (markets as unknown[]).map((m, i) => {
      const market = requireObject(m, `markets[${i}]`);
      // Gamma nests the market in its event and reports the event's id and metadata there.
      return parseGammaLine(market.events === undefined ? { ...market, events: [event] } : market);
    });
  }
  return [parseGammaLine(line)];
}

/** A line of the recorded fixtures' shape: our recorder's fields with the Gamma object in `raw`. */
function parseRecordedLine(line: Record<string, unknown>): UpstreamMarket {
  const raw = requireObject(line.raw, "raw");
  const asset = requireString(line.asset, "asset");
  const coin = parseCoin(asset);
  if (!coin) throw new FieldError(`asset ${JSON.stringify(asset)} is not a coin code`);
  const interval = requireInteger(line.interval_sec, "interval_sec");
  const marketType = marketTypeFromSeconds(interval);
  if (!marketType) throw new FieldError(`interval_sec ${interval} is not a known market length`);
  const startSec = requireInteger(line.start_sec, "start_sec");
  const endSec = requireInteger(line.end_sec, "end_sec");
  if (endSec <= startSec) throw new FieldError(`end_sec ${endSec} is not after start_sec ${startSec}`);
  const tokens = line.token_ids;
  if (!Array.isArray(tokens) || tokens.length !== 2) throw new FieldError("token_ids must be [Up, Down]");
  const marketId = requireId(raw.id, "raw.id");
  const { priceToBeat, finalPrice } = eventPricesOf(raw);
  return {
    slug: requireString(line.slug, "slug"),
    coin,
    marketType,
    conditionId: requireString(line.condition_id, "condition_id"),
    tokenUp: requireString(tokens[0], "token_ids[0]"),
    tokenDown: requireString(tokens[1], "token_ids[1]"),
    startSec,
    endSec,
    winner: line.resolved === true ? winnerFromPrices(line.outcome_prices) : null,
    strike: strikeOf(line.strike_value) ?? priceToBeat,
    finalPrice,
    settlement: settlementOf(marketType, twapConfigOf(raw)),
    feeSchedule: feeScheduleOf(raw),
    marketId,
    eventId: eventIdOf(raw, marketId),
    volume: amountOf(raw.volumeNum, raw.volume),
    liquidity: amountOf(raw.liquidityNum, raw.liquidity),
    resolvedAt: resolvedAtOf(raw),
    createdAt: requireIso(raw.createdAt, "raw.createdAt"),
    updatedAt: requireIso(raw.updatedAt, "raw.updatedAt"),
  };
}

/**
 * A line that is a Gamma market object itself, as `/markets?slug=` answers it: the coin, type and
 * times come from `cryptoMarketConfig` and the slug, the outcome from a closed market's prices.
 */
function parseGammaLine(raw: Record<string, unknown>): UpstreamMarket {
  const g = parseGammaMarket(raw);
  // Hourly and daily markets go by Polymarket's own slug upstream: its coin name says the series.
  const parts = parseSlug(g.slug) ?? polymarketSlugSeries(g.slug, DEFAULT_COINS);
  const config = (raw.cryptoMarketConfig ?? {}) as Record<string, unknown>;
  const coin = typeof config.asset === "string" ? parseCoin(config.asset) : (parts?.coin ?? null);
  const marketType =
    typeof config.duration === "string" ? parseMarketType(config.duration) : (parts?.marketType ?? null);
  if (!coin || !marketType) throw new FieldError(`cannot tell the coin and type of ${g.slug}`);
  const startSec = Math.floor(requireIso(raw.eventStartTime, "eventStartTime") / 1e6);
  const endSec = Math.floor(requireIso(raw.endDate, "endDate") / 1e6);
  if (endSec <= startSec) throw new FieldError(`endDate is not after eventStartTime`);
  const { priceToBeat, finalPrice } = eventPricesOf(raw);
  return {
    slug: g.slug,
    coin,
    marketType,
    conditionId: g.conditionId,
    tokenUp: g.tokenUp,
    tokenDown: g.tokenDown,
    startSec,
    endSec,
    winner: g.winner,
    strike: priceToBeat,
    finalPrice,
    settlement: settlementOf(marketType, g.twap),
    feeSchedule: g.feeSchedule,
    marketId: g.marketId,
    eventId: g.eventId,
    volume: g.volume,
    liquidity: g.liquidity,
    resolvedAt: g.resolvedAt,
    ...recordTimesOf(raw),
  };
}

function requireInteger(v: unknown, field: string): number {
  if (typeof v !== "number" || !Number.isInteger(v)) throw new FieldError(`${field} must be an integer`);
  return v;
}

function strikeOf(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== "string" || !/^-?\d+$/.test(v)) {
    throw new FieldError(`strike_value must be a scaled integer string or null, got ${JSON.stringify(v)}`);
  }
  return scaledDecimalToNumber(v);
}

// ---------------------------------------------------------------------------------------------------
// Records and the cross-check

function toMarket(u: UpstreamMarket, feed: PriceFeed | null): Market {
  const ours = formatSlug(u.coin, u.marketType, u.startSec);
  const resolved = u.winner !== null;
  return {
    slug: ours,
    // An upstream slug not in our shape is kept as the alias, so lookups by it keep working.
    polymarketSlug: u.slug === ours ? polymarketSlug(u.coin, u.marketType, u.startSec) : u.slug,
    coin: u.coin,
    marketType: u.marketType,
    marketId: u.marketId,
    eventId: u.eventId,
    startTime: u.startSec,
    endTime: u.endSec,
    // The strike is upstream's own start price; only without it does the feed fill in.
    coinPriceStart: u.strike ?? feed?.inEffectAt(u.startSec)?.value ?? null,
    // The end price, volume, liquidity and resolution time are final only once the market resolved.
    coinPriceEnd: resolved ? (u.finalPrice ?? feed?.inEffectAt(u.endSec)?.value ?? null) : null,
    conditionId: u.conditionId,
    clobTokenUp: u.tokenUp,
    clobTokenDown: u.tokenDown,
    winner: u.winner,
    finalVolume: resolved ? u.volume : null,
    finalLiquidity: resolved ? u.liquidity : null,
    resolvedAt: resolved ? u.resolvedAt : null,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
    settlement: u.settlement,
    feeSchedule: u.feeSchedule,
  };
}

type CrossCheck =
  | { kind: "agree" }
  | { kind: "disagree"; disagreement: Disagreement }
  | { kind: "undecidable"; undecidable: Undecidable };

/**
 * Settles the market again from its feed alone (Up iff the tick in effect at the end is >= the one in
 * effect at the start). The strike is deliberately not used: the point is an independent check.
 */
function crossCheck(
  slug: string,
  upstream: Winner,
  u: UpstreamMarket,
  feed: PriceFeed | null,
  maxStale: number,
): CrossCheck {
  const feedName = settlementName(u.settlement);
  const points = pricePoints(u.marketType, u.settlement, u.startSec, u.endSec);
  if (feed === null || points.start.kind !== "tick") {
    const reason =
      u.settlement.source === "binance"
        ? "settles on Binance candles, which the importer does not read"
        : `no ${feedName} feed was given (--feed${u.settlement.lookbackS === null ? "" : ` twap${u.settlement.lookbackS}=FILE`})`;
    return { kind: "undecidable", undecidable: { slug, feedName, reason } };
  }
  const start = feed.inEffectAt(u.startSec);
  const end = feed.inEffectAt(u.endSec);
  const problems = [
    tickProblem("start", u.startSec, start, maxStale),
    tickProblem("end", u.endSec, end, maxStale),
  ].filter((p) => p !== null);
  if (problems.length > 0 || start === null || end === null) {
    return { kind: "undecidable", undecidable: { slug, feedName, reason: problems.join("; ") } };
  }
  const feedWinner = settleWinner(u.marketType, start.value, end.value);
  if (feedWinner === upstream) return { kind: "agree" };
  return {
    kind: "disagree",
    disagreement: {
      slug,
      feedName,
      upstream,
      feed: feedWinner,
      startPrice: start.value,
      endPrice: end.value,
      startTickAgeS: u.startSec - start.tickSecond,
      endTickAgeS: u.endSec - end.tickSecond,
    },
  };
}

/** Why the tick in effect at one side cannot settle the market, or null when it can. */
function tickProblem(
  side: string,
  second: number,
  tick: TickInEffect | null,
  maxStale: number,
): string | null {
  if (tick === null) return `no feed tick at or before ${side} ${isoSeconds(second)}`;
  const age = second - tick.tickSecond;
  if (age > maxStale) return `feed gap: the tick in effect at ${side} is ${age} s old (max ${maxStale} s)`;
  return null;
}

function recordCrossCheck(report: ImportReport, check: CrossCheck): void {
  if (check.kind === "agree") report.agreements++;
  else if (check.kind === "disagree") report.disagreements.push(check.disagreement);
  else report.undecidable.push(check.undecidable);
}

// ---------------------------------------------------------------------------------------------------
// Report

/** How many markets settle on each feed, in first-seen order: `chainlink: 145`. */
function feedCounts(report: ImportReport): string[] {
  const counts = new Map<string, number>();
  for (const { feedName } of report.settledBy) counts.set(feedName, (counts.get(feedName) ?? 0) + 1);
  return [...counts].map(([name, n]) => `  ${name}: ${n} market${n === 1 ? "" : "s"}`);
}

/**
 * The report for people: counts first, the feed each market settles on, then one line per
 * disagreement and per undecidable market naming the feed that settled it again.
 */
export function formatImportReport(report: ImportReport): string {
  const lines = [
    `markets imported: ${report.markets}`,
    `resolved: ${report.resolved} (unresolved, not cross-checked: ${report.markets - report.resolved})`,
    `feed agrees with upstream winner: ${report.agreements}`,
    `feed disagrees: ${report.disagreements.length}`,
    `undecidable from the feed: ${report.undecidable.length}`,
    "settlement feeds (from each market's own record):",
    ...feedCounts(report),
  ];
  if (report.disagreements.length > 0) lines.push("", "disagreements:");
  for (const d of report.disagreements) {
    lines.push(
      `  ${d.slug} [${d.feedName}]: upstream ${d.upstream}, feed ${d.feed} (start ${d.startPrice} from a tick ${d.startTickAgeS} s old, ` +
        `end ${d.endPrice} from a tick ${d.endTickAgeS} s old)`,
    );
  }
  if (report.undecidable.length > 0) lines.push("", "undecidable:");
  for (const u of report.undecidable) lines.push(`  ${u.slug} [${u.feedName}]: ${u.reason}`);
  return lines.join("\n");
}
