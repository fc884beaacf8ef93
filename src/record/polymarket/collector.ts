import { displayedPrice } from "../../domain/book.ts";
import { encodeBooks } from "../../wire/book-codec.ts";
import {
  type Coin,
  coinFacts,
  type Market,
  type MarketType,
  type Outcome,
  type Winner,
} from "../../domain/market.ts";
import { type SeriesMarket, upcomingMarkets } from "../../domain/series.ts";
import {
  knownFrom,
  type PricePoint,
  pricePoints,
  pricesAgree,
  settlementName,
  settlementOf,
  settleWinner,
} from "../../domain/settlement.ts";
import type { TradeRow } from "../../domain/trade.ts";
import type { SnapshotRow } from "../../domain/snapshot.ts";
import { type Clock, isoSeconds, type Micros } from "../../domain/time.ts";
import type { MarketStore, RecordingGap, SnapshotBatch, StoredMarket } from "../../store/market-store.ts";
import type { TradeBatch, TradeStore } from "../../store/trade-store.ts";
import type { PriceFeed } from "../../upstream/price-feed.ts";
import { errorMessage, type Logger } from "../../log.ts";
import type { ClobFeed, MarketResolved } from "./clob-feed.ts";
import type { GammaClient } from "./gamma-client.ts";
import type { GammaMarket } from "../../upstream/gamma-market.ts";
import type { RtdsFeed } from "./rtds-feed.ts";

/**
 * The live recorder of Polymarket's Up or Down markets. Once a second (`tick`) it writes one snapshot
 * of every live market it follows, all in one transaction, and the trades the market channel reported
 * since the last tick; a market that cannot be recorded that second (socket down, book not received,
 * no coin price) gets a gap with the cause instead. In the background it discovers the next markets of
 * every series on Gamma, captures the start and end coin prices from the feed each market's own record
 * settles on (a TWAP stream, Chainlink's instantaneous stream, or Binance's 1m candles: DESIGN 3.4),
 * takes the final liquidity before the close, and learns the resolution from the market channel's
 * `market_resolved`, polling Gamma as the fallback. Gamma's own price to beat and final price, when it
 * has them, are kept over ours; a disagreement is logged and counted (`settlementDisagreements`).
 *
 * Invariants:
 * - at most one snapshot per market per tick, written idempotently on (market, time), so a restart
 *   or a replayed batch never duplicates;
 * - every second of a followed live market either has a snapshot or lies in a recorded gap, including
 *   the time the collector itself was not running (found on start from the last stored snapshot);
 * - a market record changes only by upsert of the whole record, after the store accepted it.
 */

/** A Binance spot 1m candle's open and close, by the candle's open time (Unix second); null until stored. */
export type CandleSource = (coin: Coin, openTime: number) => Promise<{ open: number; close: number } | null>;

export interface CollectorOptions {
  store: MarketStore;
  /** Where the trades go. */
  trades: TradeStore;
  /**
   * Binance's 1m candles, which settle 1h and 24h markets (the Binance recorder stores them). Without
   * it, or while a candle is missing for longer than `candleWaitS`, the Binance price in effect at the
   * start or end second stands in.
   */
  candles?: CandleSource | null;
  /** Seconds after a candle closes to wait for it before the stand-in. Default 120. */
  candleWaitS?: number;
  clock: Clock;
  gamma: GammaClient;
  clob: ClobFeed;
  rtds: RtdsFeed;
  log: Logger;
  coins: readonly Coin[];
  marketTypes: readonly MarketType[];
  /** Markets after the live one to discover ahead, per series. Default 1. */
  lookahead?: number;
  /** Seconds between Gamma discovery rounds. Default 30. */
  discoveryEveryS?: number;
  /** Seconds between resolution polls of an ended market. Default 15. */
  resolutionEveryS?: number;
  /** Liquidity is read from Gamma this many seconds before the close (it reads 0 after). Default 20. */
  liquidityBeforeCloseS?: number;
  /** A settlement tick older than this cannot give a start or end price. Default 10. */
  maxFeedStalenessS?: number;
  /** The cadence: at most one snapshot per market in each slot of this length. Default 1000. */
  intervalMs?: number;
}

/** A gap still open: the market has missed ticks since `from`. */
interface OpenGap {
  from: Micros;
  lastMissed: Micros;
  cause: string;
  detail: string;
}

interface Followed {
  market: StoredMarket;
  gap: OpenGap | null;
  liquidity: number | null;
  liquidityTaken: boolean;
  /** Our own start price (from the feed), kept to hold against Gamma's price to beat once it comes. */
  feedStart: number | null;
  /** Captured after the end; written with the resolution, as the record shows it only then. */
  endPrice: number | null;
  /** A start or end price being read (a candle read may take a while): not asked again meanwhile. */
  reading: { start: boolean; end: boolean };
  /** Whether our start and end prices were held against Gamma's yet (each counted once). */
  checked: { start: boolean; end: boolean };
  /** A resolution is being written: no second one. */
  resolving: boolean;
  /** The cadence slot of the last snapshot, stored or written: never two in one slot. */
  lastSlot: number;
  nextResolutionPollS: number;
}

/**
 * The settlement rule's price at a market's start or end second: the latest tick at or before it,
 * unless that tick is older than `maxStale` seconds (the feed had a gap), when there is none.
 */
export function settlementPrice(feed: PriceFeed, second: number, maxStale: number): number | null {
  const tick = feed.inEffectAt(second);
  return tick && second - tick.tickSecond <= maxStale ? tick.value : null;
}

/** Why a live market has no snapshot this tick: a gap's cause and detail. */
type Miss = { cause: string; detail: string };

const SETTLE_DELAY_S = 2;
const DEFAULT_CANDLE_WAIT_S = 120;
/** Matches the two days of unresolved markets a start takes over (resumeUnresolved). */
const GIVE_UP_RESOLUTION_S = 2 * 86_400;

export class Collector {
  private readonly opts: Required<CollectorOptions>;
  private readonly followed = new Map<string, Followed>();
  private readonly background = new Set<Promise<void>>();
  private discovering = false;
  private nextDiscoveryS = 0;
  /** Trades of a store write that failed, tried again with the next tick's (the latest 1000 batches). */
  private unwritten: TradeBatch[] = [];
  /** Snapshots written so far; for logs, progress and the benchmark. */
  written = 0;
  /** Trades written so far (new ones; a trade received twice is stored once). */
  tradesWritten = 0;
  /** Start or end prices of ours that Gamma's own disagreed with (Gamma's kept); logged each. */
  settlementDisagreements = 0;

  constructor(options: CollectorOptions) {
    this.opts = {
      candles: null,
      candleWaitS: DEFAULT_CANDLE_WAIT_S,
      lookahead: 1,
      discoveryEveryS: 30,
      resolutionEveryS: 15,
      liquidityBeforeCloseS: 20,
      maxFeedStalenessS: 10,
      intervalMs: 1000,
      ...options,
    };
  }

  /** Markets followed now, by slug; for tests and status lines. */
  get followedSlugs(): string[] {
    return [...this.followed.keys()];
  }

  /** Connects, discovers the markets of the moment, and takes over unresolved ones left by a previous run. */
  async start(): Promise<void> {
    this.opts.clob.start();
    this.opts.rtds.start();
    await this.resumeUnresolved();
    await this.discover();
  }

  /** Waits for the background work started so far (discovery, polls); tests use it between ticks. */
  async settled(): Promise<void> {
    while (this.background.size > 0) await Promise.all([...this.background]);
  }

  async stop(): Promise<void> {
    await this.settled();
    await this.closeGaps();
    await Promise.all([this.opts.clob.stop(), this.opts.rtds.stop()]);
  }

  /** The work of one second. */
  async tick(): Promise<void> {
    const now = this.opts.clock.nowMicros();
    const second = Math.floor(now / 1e6);
    this.opts.clob.maintain();
    this.opts.rtds.maintain();

    const slot = this.slotOf(now);
    const batch: SnapshotBatch[] = [];
    const recorded: Followed[] = [];
    for (const f of this.followed.values()) {
      const m = f.market;
      // A timer firing early, or a restart within a slot, must not record a slot twice.
      if (second < m.startTime || second >= m.endTime || slot <= f.lastSlot) continue;
      const row = this.safeSnapshotOf(f, now, second);
      if ("cause" in row) {
        this.miss(f, now, row.cause, row.detail);
        continue;
      }
      batch.push({ marketKey: m.key, rows: [row] });
      recorded.push(f);
    }
    if (batch.length > 0) {
      try {
        this.written += await this.opts.store.insertSnapshotBatch(batch);
      } catch (err) {
        const detail = `store write failed: ${err instanceof Error ? err.message : String(err)}`;
        for (const f of recorded) this.miss(f, now, "store_error", detail);
        recorded.length = 0;
      }
    }
    for (const f of recorded) {
      f.lastSlot = slot;
      await this.closeGap(f);
    }
    await this.writeTrades();

    for (const f of this.followed.values()) this.afterTick(f, second);
    if (second >= this.nextDiscoveryS) this.inBackground(() => this.discover());
    // Prices older than an hour settle nothing any more (start and end prices are taken seconds after).
    if (second % 60 === 0) this.opts.rtds.forgetBefore(second - 3600);
  }

  /** The trades the market channel reported since the last tick, each under its market and outcome. */
  private async writeTrades(): Promise<void> {
    const received = this.opts.clob.takeTrades();
    if (received.length === 0 && this.unwritten.length === 0) return;
    const owners = new Map<string, { key: number; outcome: Outcome }>();
    for (const f of this.followed.values()) {
      owners.set(f.market.clobTokenUp, { key: f.market.key, outcome: "Up" });
      owners.set(f.market.clobTokenDown, { key: f.market.key, outcome: "Down" });
    }
    const byMarket = new Map<number, TradeRow[]>();
    for (const t of received) {
      const owner = owners.get(t.assetId);
      if (!owner) continue;
      const { assetId: _token, timeMs, ...values } = t;
      const rows = byMarket.get(owner.key) ?? [];
      rows.push({ ...values, time: Math.round(timeMs * 1000), outcome: owner.outcome });
      byMarket.set(owner.key, rows);
    }
    const batch = [...this.unwritten, ...[...byMarket].map(([marketKey, rows]) => ({ marketKey, rows }))];
    try {
      this.tradesWritten += await this.opts.trades.insertTrades(batch);
      this.unwritten = [];
    } catch (err) {
      // Kept for the next tick: trades come once, unlike books; a bounded backlog, oldest dropped first.
      this.unwritten = batch.slice(-1000);
      this.opts.log.warn({ err: errorMessage(err) }, `trades not written yet: ${errorMessage(err)}`);
    }
  }

  /** A market whose books cannot be encoded must not stop the others being recorded. */
  private safeSnapshotOf(f: Followed, now: Micros, second: number): SnapshotRow | Miss {
    try {
      return this.snapshotOf(f, now, second);
    } catch (err) {
      return { cause: "bad_book", detail: err instanceof Error ? err.message : String(err) };
    }
  }

  /** One snapshot of a live market, or why there is none this second. */
  private snapshotOf(f: Followed, now: Micros, second: number): SnapshotRow | Miss {
    const m = f.market;
    const { clob } = this.opts;
    const notReady = clob.notReady(m.clobTokenUp) ?? clob.notReady(m.clobTokenDown);
    if (notReady) return notReady;
    const tick = this.opts.rtds.feed(m.settlement, m.coin).inEffectAt(second);
    const feedName = settlementName(m.settlement);
    if (!tick) return { cause: "no_coin_price", detail: `no ${feedName} price yet` };
    if (second - tick.tickSecond > this.opts.maxFeedStalenessS) {
      return { cause: "no_coin_price", detail: `${feedName} price ${second - tick.tickSecond} s old` };
    }
    const upBook = clob.book(m.clobTokenUp);
    const downBook = clob.book(m.clobTokenDown);
    if (!upBook || !downBook) return { cause: "no_book", detail: "token not followed" };
    const up = upBook.toOrderBook();
    const down = downBook.toOrderBook();
    const priceUp = displayedPrice(up, upBook.lastTradePrice);
    const priceDown = displayedPrice(down, downBook.lastTradePrice);
    if (priceUp === null || priceDown === null) {
      return { cause: "no_price", detail: "an empty book and no trade yet" };
    }
    return { time: now, coinPrice: tick.value, priceUp, priceDown, books: encodeBooks(up, down) };
  }

  private miss(f: Followed, now: Micros, cause: string, detail: string): void {
    if (f.gap && f.gap.cause !== cause) {
      // A new cause starts a new gap, so that each recorded span has one reason.
      const closed = f.gap;
      f.gap = null;
      this.inBackground(() => this.writeGap(f.market, closed));
    }
    if (f.gap) f.gap.lastMissed = now;
    else f.gap = { from: now, lastMissed: now, cause, detail };
  }

  private async closeGap(f: Followed): Promise<void> {
    const gap = f.gap;
    if (!gap) return;
    f.gap = null;
    await this.writeGap(f.market, gap);
  }

  private async closeGaps(): Promise<void> {
    for (const f of this.followed.values()) await this.closeGap(f);
  }

  private async writeGap(market: StoredMarket, gap: OpenGap): Promise<void> {
    const record: RecordingGap = { from: gap.from, to: gap.lastMissed, cause: gap.cause, detail: gap.detail };
    try {
      await this.opts.store.recordGap(market.key, record);
    } catch (err) {
      this.opts.log.warn(
        { market: market.slug, err: errorMessage(err) },
        `gap of ${market.slug} not recorded: ${errorMessage(err)}`,
      );
    }
  }

  /** Start and end prices, the liquidity before the close, and the resolution, each when its time comes. */
  private afterTick(f: Followed, second: number): void {
    const m = f.market;
    const points = pricePoints(m.marketType, m.settlement, m.startTime, m.endTime);
    const startDue = second >= knownFrom(points.start) + SETTLE_DELAY_S && second < m.endTime;
    if (m.coinPriceStart === null && f.feedStart === null && !f.reading.start && startDue) {
      this.inBackground(() => this.takePrice(f, "start", points.start, second));
    }
    if (f.endPrice === null && !f.reading.end && second >= knownFrom(points.end) + SETTLE_DELAY_S) {
      this.inBackground(() => this.takePrice(f, "end", points.end, second));
    }
    if (!f.liquidityTaken && second >= m.endTime - this.opts.liquidityBeforeCloseS && second < m.endTime) {
      f.liquidityTaken = true;
      this.inBackground(() => this.takeLiquidity(f));
    }
    if (second > m.endTime + GIVE_UP_RESOLUTION_S) {
      // Voided or disputed for days: the record stays unresolved, as the upstream has it.
      this.unfollow(f);
      this.opts.log.warn(
        { market: m.slug },
        `${m.slug}: not resolved upstream two days after its end; no longer polled`,
      );
      return;
    }
    // The end price first (a daily market's candle closes a minute after its end), unless it never comes.
    const endSettled = f.endPrice !== null || second > knownFrom(points.end) + this.opts.candleWaitS + 10;
    if (second < m.endTime + SETTLE_DELAY_S || !endSettled || f.resolving) return;
    const announced = this.opts.clob.resolutionOf(m.clobTokenUp);
    if (announced) {
      f.resolving = true;
      this.inBackground(() => this.resolveAnnounced(f, announced));
    } else if (second >= f.nextResolutionPollS) {
      f.nextResolutionPollS = second + this.opts.resolutionEveryS;
      this.inBackground(() => this.pollResolution(f));
    }
  }

  /**
   * The price at a start or end point: the tick in effect (null while stale or missing: asked again),
   * or a Binance 1m candle's price, with the Binance tick in effect standing in once the candle is
   * overdue.
   */
  private async priceAt(m: Market, point: PricePoint, second: number): Promise<number | null> {
    const feed = this.opts.rtds.feed(m.settlement, m.coin);
    const maxStale = this.opts.maxFeedStalenessS;
    if (point.kind === "tick") return settlementPrice(feed, point.second, maxStale);
    const candle = this.opts.candles ? await this.opts.candles(m.coin, point.openTime) : null;
    if (candle) return candle[point.field];
    if (this.opts.candles && second < knownFrom(point) + this.opts.candleWaitS) return null;
    return settlementPrice(feed, point.field === "open" ? point.openTime : knownFrom(point), maxStale);
  }

  private async takePrice(
    f: Followed,
    which: "start" | "end",
    point: PricePoint,
    second: number,
  ): Promise<void> {
    f.reading[which] = true;
    try {
      const price = await this.priceAt(f.market, point, second);
      if (price === null) return;
      if (which === "end") {
        f.endPrice = price;
        return;
      }
      f.feedStart = price;
      if (f.market.coinPriceStart === null) await this.update(f, { coinPriceStart: price });
    } finally {
      f.reading[which] = false;
    }
  }

  /**
   * Gamma's value where it has one (it is the upstream's own), ours otherwise. The first time both
   * are known and they disagree, the disagreement is logged and counted.
   */
  private authoritative(
    f: Followed,
    which: "start" | "end",
    ours: number | null,
    gamma: number | null,
  ): number | null {
    if (gamma === null) return ours;
    if (ours !== null && !f.checked[which]) {
      f.checked[which] = true;
      if (!pricesAgree(ours, gamma)) {
        this.settlementDisagreements++;
        this.opts.log.warn(
          { market: f.market.slug, which, ours, upstream: gamma, feed: settlementName(f.market.settlement) },
          `${f.market.slug}: upstream ${which} price ${gamma}, ${settlementName(f.market.settlement)} says ${ours}; keeping the upstream's`,
        );
      }
    }
    return gamma;
  }

  private unfollow(f: Followed): void {
    this.followed.delete(f.market.slug);
    this.opts.clob.unfollow([f.market.clobTokenUp, f.market.clobTokenDown]);
  }

  private inBackground(work: () => Promise<void>): void {
    const p = work()
      .catch((err: unknown) => this.opts.log.warn({ err: errorMessage(err) }, errorMessage(err)))
      .finally(() => this.background.delete(p));
    this.background.add(p);
  }

  private async update(f: Followed, changes: Partial<Market>): Promise<void> {
    const next: Market = { ...f.market, ...changes, updatedAt: this.opts.clock.nowMicros() };
    f.market = await this.opts.store.upsertMarket(next);
  }

  /** Before the close, Gamma still reports liquidity; by then it knows its price to beat, too. */
  private async takeLiquidity(f: Followed): Promise<void> {
    const upstream = await this.opts.gamma.marketBySlug(this.upstreamSlug(f.market));
    if (!upstream || upstream.closed) return;
    f.liquidity = upstream.liquidity;
    const start = this.authoritative(f, "start", f.feedStart, upstream.priceToBeat);
    if (start !== null && start !== f.market.coinPriceStart) await this.update(f, { coinPriceStart: start });
  }

  private async pollResolution(f: Followed): Promise<void> {
    const upstream = await this.opts.gamma.marketBySlug(this.upstreamSlug(f.market));
    if (!upstream?.closed || upstream.winner === null || f.resolving) return;
    f.resolving = true;
    await this.resolveOrRetry(f, () =>
      this.resolve(f, upstream.winner as Winner, upstream.resolvedAt, upstream),
    );
  }

  /** A resolution that failed to be written is tried again (by the next poll or announcement). */
  private async resolveOrRetry(f: Followed, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      f.resolving = false;
      throw err;
    }
  }

  /** The market channel said who won: resolved at once, with what Gamma adds (volume, its prices) if it answers. */
  private async resolveAnnounced(f: Followed, announced: MarketResolved): Promise<void> {
    const m = f.market;
    const winner =
      announced.winningAssetId === m.clobTokenUp
        ? "Up"
        : announced.winningAssetId === m.clobTokenDown
          ? "Down"
          : null;
    if (winner === null) {
      f.resolving = false;
      return;
    }
    await this.resolveOrRetry(f, async () => {
      const upstream = await this.opts.gamma.marketBySlug(this.upstreamSlug(m)).catch((err: unknown) => {
        this.opts.log.warn(
          { market: m.slug, err: errorMessage(err) },
          `gamma: ${m.slug}: ${errorMessage(err)}`,
        );
        return null;
      });
      const at = announced.timeMs === null ? null : Math.floor(announced.timeMs / 1000);
      await this.resolve(f, winner, at ?? upstream?.resolvedAt ?? null, upstream);
    });
  }

  private async resolve(
    f: Followed,
    winner: Winner,
    resolvedAt: number | null,
    upstream: GammaMarket | null,
  ): Promise<void> {
    const m = f.market;
    const feedStart = f.feedStart ?? m.coinPriceStart;
    if (feedStart !== null && f.endPrice !== null) {
      const ours = settleWinner(m.marketType, feedStart, f.endPrice);
      if (ours !== winner) {
        this.opts.log.warn(
          { market: m.slug, upstream: winner, feed: ours },
          `${m.slug}: upstream resolved ${winner}, the settlement feed says ${ours} ` +
            `(${feedStart} -> ${f.endPrice}); keeping the upstream winner`,
        );
      }
    }
    await this.update(f, {
      winner,
      coinPriceStart:
        this.authoritative(f, "start", f.feedStart, upstream?.priceToBeat ?? null) ?? m.coinPriceStart,
      coinPriceEnd: this.authoritative(f, "end", f.endPrice, upstream?.finalPrice ?? null),
      finalVolume: upstream?.volume ?? null,
      finalLiquidity: f.liquidity,
      resolvedAt: resolvedAt ?? Math.floor(this.opts.clock.nowMicros() / 1e6),
    });
    this.unfollow(f);
    this.opts.log.info({ market: m.slug, winner }, `${m.slug}: resolved ${winner}`);
  }

  private slotOf(time: Micros): number {
    return Math.floor(time / (this.opts.intervalMs * 1000));
  }

  private upstreamSlug(m: Market): string {
    return m.polymarketSlug ?? m.slug;
  }

  /** Finds the live and next markets of every series on Gamma and starts following the new ones. */
  async discover(): Promise<void> {
    if (this.discovering) return;
    this.discovering = true;
    const now = this.opts.clock.nowMicros();
    const second = Math.floor(now / 1e6);
    this.nextDiscoveryS = second + this.opts.discoveryEveryS;
    try {
      for (const coin of this.opts.coins) {
        for (const type of this.opts.marketTypes) {
          // Polymarket runs only some series of the newer coins (5m and 15m).
          if (!coinFacts(coin).types.includes(type)) continue;
          for (const s of upcomingMarkets(coin, type, second, this.opts.lookahead)) {
            if (this.followed.has(s.slug)) continue;
            const upstream = await this.opts.gamma.marketBySlug(s.upstreamSlug).catch((err: unknown) => {
              this.opts.log.warn(
                { market: s.upstreamSlug, err: errorMessage(err) },
                `gamma: ${s.upstreamSlug}: ${errorMessage(err)}`,
              );
              return null;
            });
            if (upstream) await this.follow(s, upstream, now);
          }
        }
      }
    } finally {
      this.discovering = false;
    }
  }

  private async follow(s: SeriesMarket, upstream: GammaMarket, now: Micros): Promise<void> {
    const stored = await this.opts.store.getMarket(s.slug);
    const market: Market = {
      slug: s.slug,
      polymarketSlug: s.upstreamSlug === s.slug ? null : s.upstreamSlug,
      coin: s.coin,
      marketType: s.marketType,
      marketId: upstream.marketId,
      eventId: upstream.eventId,
      startTime: s.startTime,
      endTime: s.endTime,
      coinPriceStart: stored?.coinPriceStart ?? upstream.priceToBeat,
      coinPriceEnd: stored?.coinPriceEnd ?? null,
      conditionId: upstream.conditionId,
      clobTokenUp: upstream.tokenUp,
      clobTokenDown: upstream.tokenDown,
      winner: stored?.winner ?? null,
      finalVolume: stored?.finalVolume ?? null,
      finalLiquidity: stored?.finalLiquidity ?? null,
      resolvedAt: stored?.resolvedAt ?? null,
      createdAt: stored?.createdAt ?? upstream.createdAt,
      updatedAt: now,
      settlement: settlementOf(s.marketType, upstream.twap),
      feeSchedule: upstream.feeSchedule,
    };
    if (market.winner !== null) return;
    const saved = await this.opts.store.upsertMarket(market);
    await this.track(saved, now);
  }

  /** Follows a market, opening the gap a previous run (or a late start) left in it. */
  private async track(market: StoredMarket, now: Micros): Promise<void> {
    const f: Followed = {
      market,
      gap: null,
      liquidity: null,
      liquidityTaken: false,
      feedStart: null,
      endPrice: null,
      reading: { start: false, end: false },
      checked: { start: false, end: false },
      resolving: false,
      nextResolutionPollS: 0,
      lastSlot: -1,
    };
    const startUs = market.startTime * 1e6;
    const liveUntil = Math.min(now, market.endTime * 1e6);
    if (liveUntil > startUs + 1e6) {
      const last = await this.opts.store.snapshotAtOrBefore(market.key, now, false);
      if (last) f.lastSlot = this.slotOf(last.time);
      f.gap = last
        ? {
            from: last.time + 1e6,
            lastMissed: liveUntil,
            cause: "collector_down",
            detail: "the collector was not running",
          }
        : {
            from: startUs,
            lastMissed: liveUntil,
            cause: "not_recording",
            detail: "recording started after the market opened",
          };
      if (f.gap.from > f.gap.lastMissed) f.gap = null;
      // A market that already ended has nothing more to record: its gap is final now.
      if (f.gap && now >= market.endTime * 1e6) await this.closeGap(f);
    }
    this.followed.set(market.slug, f);
    this.opts.clob.follow([market.clobTokenUp, market.clobTokenDown]);
    this.opts.log.info(
      { market: market.slug },
      `following ${market.slug} (${isoSeconds(market.startTime)} to ${isoSeconds(market.endTime)})`,
    );
  }

  /** Unresolved markets of the last two days that a previous run followed: finish them. */
  private async resumeUnresolved(): Promise<void> {
    const now = this.opts.clock.nowMicros();
    const second = Math.floor(now / 1e6);
    const { markets } = await this.opts.store.listMarkets({
      resolved: false,
      // The longest market ended a day after it started.
      startFrom: second - GIVE_UP_RESOLUTION_S - 86_400,
      limit: 1000,
      offset: 0,
    });
    for (const m of markets) {
      if (!this.opts.coins.includes(m.coin) || !this.opts.marketTypes.includes(m.marketType)) continue;
      if (m.startTime > second + 86_400 || second > m.endTime + GIVE_UP_RESOLUTION_S) continue;
      await this.track(m, now);
    }
  }
}
