import {
  BACKFILL_KINDS,
  type BackfillKind,
  type ExchangeBatch,
  symbolOf,
  type TradeRow,
  type Venue,
} from "../../domain/exchange.ts";
import type { Coin } from "../../domain/market.ts";
import type { Micros } from "../../domain/time.ts";
import type { ExchangeStore } from "../../store/ports/exchange-store.ts";
import {
  aggTradeFrom,
  candleFromKline,
  fundingFrom,
  historicalTradeFrom,
  openInterestFrom,
} from "./parse.ts";
import { BinanceRest } from "./rest.ts";
import { type Logger, silentLogger } from "../../log.ts";
import { nowMillis, type Scheduler, systemScheduler } from "../scheduler.ts";
import { type BinanceUrls, DEFAULT_BINANCE_URLS, DEFAULT_WEIGHT_LIMITS } from "./urls.ts";

/**
 * Fills a time range from Binance's REST API: 1m candles, trades (spot trades by trade id, futures
 * aggregate trades), funding rates and open interest (futures, 5-minute history). Pages are written
 * as they come, idempotently, so a backfill can be stopped and run again, or overlap the recorder.
 */

export interface BackfillProgress {
  venue: Venue;
  coin: Coin;
  kind: BackfillKind;
  /** How far the range is done, 0..1. */
  fraction: number;
  /** Rows received and newly stored so far for this (venue, coin, kind). */
  fetched: number;
  added: number;
}

export interface BackfillOptions {
  store: ExchangeStore;
  coins: Coin[];
  venues: Venue[];
  kinds?: BackfillKind[];
  /** Inclusive range, µs. */
  from: Micros;
  to: Micros;
  urls?: Partial<BinanceUrls>;
  weightLimits?: Partial<Record<Venue, number>>;
  scheduler?: Scheduler;
  log?: Logger;
  onProgress?: (p: BackfillProgress) => void;
}

export interface BackfillReport {
  parts: BackfillProgress[];
  /** Milliseconds spent waiting on Binance's limits. */
  waitedMs: number;
}

type Json = Record<string, unknown>;

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
/** Binance keeps open interest history for 30 days. */
const OPEN_INTEREST_DAYS = 30;
const OPEN_INTEREST_PERIOD_MS = 5 * MINUTE_MS;

/** What each venue's endpoints are called and cost (Binance's documented request weights). */
const ENDPOINTS = {
  spot: {
    klines: { path: "/api/v3/klines", weight: 2 },
    aggTrades: { path: "/api/v3/aggTrades", weight: 4 },
    trades: { path: "/api/v3/historicalTrades", weight: 25 },
  },
  futures: {
    klines: { path: "/fapi/v1/klines", weight: 5 },
    aggTrades: { path: "/fapi/v1/aggTrades", weight: 20 },
    trades: { path: "/fapi/v1/aggTrades", weight: 20 },
  },
} as const;

const PAGE = 1000;

export async function backfillBinance(options: BackfillOptions): Promise<BackfillReport> {
  const urls = { ...DEFAULT_BINANCE_URLS, ...options.urls };
  const scheduler = options.scheduler ?? systemScheduler;
  const log = options.log ?? silentLogger;
  const kinds = options.kinds ?? [...BACKFILL_KINDS];
  const clients: Record<Venue, BinanceRest> = {
    spot: new BinanceRest({
      baseUrl: urls.spotRest,
      weightLimit: options.weightLimits?.spot ?? DEFAULT_WEIGHT_LIMITS.spot,
      scheduler,
      log,
    }),
    futures: new BinanceRest({
      baseUrl: urls.futuresRest,
      weightLimit: options.weightLimits?.futures ?? DEFAULT_WEIGHT_LIMITS.futures,
      scheduler,
      log,
    }),
  };
  const fromMs = Math.ceil(options.from / 1000);
  const toMs = Math.floor(options.to / 1000);
  const parts: BackfillProgress[] = [];
  for (const venue of options.venues) {
    for (const coin of options.coins) {
      for (const kind of kinds) {
        if (venue === "spot" && (kind === "funding" || kind === "open_interest")) continue;
        const part: BackfillProgress = { venue, coin, kind, fraction: 0, fetched: 0, added: 0 };
        parts.push(part);
        const job = new Job(
          options.store,
          clients[venue],
          scheduler,
          log,
          part,
          fromMs,
          toMs,
          options.onProgress,
        );
        await job.run();
      }
    }
  }
  return { parts, waitedMs: clients.spot.waitedMs + clients.futures.waitedMs };
}

/** One (venue, coin, kind) over the range. */
class Job {
  private readonly store: ExchangeStore;
  private readonly rest: BinanceRest;
  private readonly scheduler: Scheduler;
  private readonly log: Logger;
  private readonly part: BackfillProgress;
  private readonly fromMs: number;
  private readonly toMs: number;
  private readonly onProgress?: (p: BackfillProgress) => void;
  private readonly symbol: string;

  constructor(
    store: ExchangeStore,
    rest: BinanceRest,
    scheduler: Scheduler,
    log: Logger,
    part: BackfillProgress,
    fromMs: number,
    toMs: number,
    onProgress?: (p: BackfillProgress) => void,
  ) {
    this.store = store;
    this.rest = rest;
    this.scheduler = scheduler;
    this.log = log;
    this.part = part;
    this.fromMs = fromMs;
    this.toMs = toMs;
    this.onProgress = onProgress;
    this.symbol = symbolOf(part.coin);
  }

  async run(): Promise<void> {
    if (this.toMs >= this.fromMs) {
      if (this.part.kind === "candles") await this.candles();
      else if (this.part.kind === "trades") await this.trades();
      else if (this.part.kind === "funding") await this.funding();
      else await this.openInterest();
    }
    this.report(this.toMs + 1, true);
  }

  /** Stores a page and reports how far the range is done (`reachedMs`: everything before it is). */
  private async save(batch: ExchangeBatch, fetched: number, reachedMs: number): Promise<void> {
    const counts = await this.store.insertBatch(batch);
    this.part.fetched += fetched;
    this.part.added += Object.values(counts).reduce((a, b) => a + b, 0);
    this.report(reachedMs, false);
  }

  private report(reachedMs: number, done: boolean): void {
    const span = this.toMs - this.fromMs + 1;
    this.part.fraction = done ? 1 : Math.min(1, Math.max(0, (reachedMs - this.fromMs) / span));
    this.onProgress?.({ ...this.part });
  }

  /** 1m klines from the start, a page at a time; a candle still open (close time not passed) is left out. */
  private async candles(): Promise<void> {
    const { coin, venue } = this.part;
    const ep = ENDPOINTS[venue].klines;
    for (let cursor = this.fromMs; cursor <= this.toMs;) {
      const rows = await this.rest.get<unknown[]>(
        ep.path,
        { symbol: this.symbol, interval: "1m", startTime: cursor, endTime: this.toMs, limit: PAGE },
        ep.weight,
      );
      if (rows.length === 0) break;
      const now = nowMillis(this.scheduler);
      const candles = rows
        .map((r) => candleFromKline(coin, venue, "1m", r))
        .filter((c) => c.openTime / 1000 + MINUTE_MS <= now && c.openTime / 1000 <= this.toMs);
      const last = rows[rows.length - 1] as number[];
      const next = Number(last[0]) + MINUTE_MS;
      if (!(next > cursor)) throw new Error(`klines of ${this.symbol} did not advance past ${cursor}`);
      cursor = next;
      await this.save({ candles }, rows.length, cursor);
      if (rows.length < PAGE) break;
    }
  }

  /**
   * Trades by id: the first id at or after the start comes from aggTrades over a window of at most an
   * hour (Binance's limit for a time-bounded query); from there pages by id until past the end. Spot
   * pages historicalTrades from the aggregate's first trade id; futures pages aggTrades.
   */
  private async trades(): Promise<void> {
    const { coin, venue } = this.part;
    const agg = ENDPOINTS[venue].aggTrades;
    let id: number | null = null;
    for (let w = this.fromMs; w <= this.toMs && id === null; w += HOUR_MS) {
      const first = await this.rest.get<Json[]>(
        agg.path,
        { symbol: this.symbol, startTime: w, endTime: Math.min(w + HOUR_MS - 1, this.toMs), limit: 1 },
        agg.weight,
      );
      if (first.length > 0) id = Number(venue === "spot" ? first[0].f : first[0].a);
      else this.report(Math.min(w + HOUR_MS, this.toMs + 1), false);
    }
    if (id === null) return;
    const ep = ENDPOINTS[venue].trades;
    for (let fromId: number = id; ;) {
      const rows: Json[] = await this.rest.get<Json[]>(
        ep.path,
        { symbol: this.symbol, fromId, limit: PAGE },
        ep.weight,
      );
      if (rows.length === 0) break;
      const trades: TradeRow[] = rows.map((r) =>
        venue === "spot" ? historicalTradeFrom(coin, r) : aggTradeFrom(coin, venue, r),
      );
      const inRange = trades.filter((t) => t.time / 1000 <= this.toMs);
      const last = trades[trades.length - 1];
      await this.save({ trades: inRange }, rows.length, last.time / 1000 + 1);
      if (inRange.length < trades.length || rows.length < PAGE) break;
      fromId = last.id + 1;
    }
  }

  private async funding(): Promise<void> {
    const { coin } = this.part;
    for (let cursor = this.fromMs; cursor <= this.toMs;) {
      const rows = await this.rest.get<Json[]>(
        "/fapi/v1/fundingRate",
        { symbol: this.symbol, startTime: cursor, endTime: this.toMs, limit: PAGE },
        1,
      );
      if (rows.length === 0) break;
      const funding = rows.map((r) => fundingFrom(coin, r));
      cursor = funding[funding.length - 1].time / 1000 + 1;
      await this.save({ funding }, rows.length, cursor);
      if (rows.length < PAGE) break;
    }
  }

  /**
   * 5-minute open interest, in windows of one page (500 periods) so that the answer is the whole
   * window whichever end Binance pages from. Binance keeps 30 days; earlier is skipped with a note.
   */
  private async openInterest(): Promise<void> {
    const { coin } = this.part;
    const limit = 500;
    const oldest = nowMillis(this.scheduler) - OPEN_INTEREST_DAYS * 24 * HOUR_MS + OPEN_INTEREST_PERIOD_MS;
    let cursor = this.fromMs;
    if (cursor < oldest) {
      this.log.warn(
        { symbol: this.symbol, days: OPEN_INTEREST_DAYS },
        `Binance keeps open interest history for ${OPEN_INTEREST_DAYS} days; ${this.symbol} starts at ${new Date(Math.min(oldest, this.toMs)).toISOString()}`,
      );
      cursor = oldest;
    }
    while (cursor <= this.toMs) {
      const end = Math.min(cursor + limit * OPEN_INTEREST_PERIOD_MS - 1, this.toMs);
      const rows = await this.rest.get<Json[]>(
        "/futures/data/openInterestHist",
        { symbol: this.symbol, period: "5m", startTime: cursor, endTime: end, limit },
        1,
      );
      const openInterest = rows
        .map((r) => openInterestFrom(coin, r))
        .filter((o) => o.time / 1000 <= this.toMs);
      cursor = end + 1;
      await this.save({ openInterest }, rows.length, cursor);
    }
  }
}
