import { displayedPrice } from "../../domain/book.ts";
import { encodeBooks } from "../../domain/book-codec.ts";
import { type Coin, type Market, type MarketType, SETTLEMENT_FEED, winnerOf } from "../../domain/market.ts";
import { type SeriesMarket, upcomingMarkets } from "../../domain/series.ts";
import type { SnapshotRow } from "../../domain/snapshot.ts";
import { type Clock, isoSeconds, type Micros } from "../../domain/time.ts";
import type { MarketStore, RecordingGap, SnapshotBatch, StoredMarket } from "../../store/market-store.ts";
import type { PriceFeed } from "../../upstream/price-feed.ts";
import { errorMessage, type Logger } from "../../log.ts";
import type { ClobFeed } from "./clob-feed.ts";
import type { GammaClient } from "./gamma-client.ts";
import type { GammaMarket } from "../../upstream/gamma-market.ts";
import type { RtdsFeed } from "./rtds-feed.ts";

/**
 * The live recorder of Polymarket's Up or Down markets. Once a second (`tick`) it writes one snapshot
 * of every live market it follows, all in one transaction; a market that cannot be recorded that
 * second (socket down, book not received, no coin price) gets a gap with the cause instead. In the
 * background it discovers the next markets of every series on Gamma, captures the start and end coin
 * prices from the settlement feed, takes the final liquidity before the close, and polls for the
 * resolution.
 *
 * Invariants:
 * - at most one snapshot per market per tick, written idempotently on (market, time), so a restart
 *   or a replayed batch never duplicates;
 * - every second of a followed live market either has a snapshot or lies in a recorded gap, including
 *   the time the collector itself was not running (found on start from the last stored snapshot);
 * - a market record changes only by upsert of the whole record, after the store accepted it.
 */

export interface CollectorOptions {
  store: MarketStore;
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
  /** Captured at the end second; written with the resolution, as the record shows it only then. */
  endPrice: number | null;
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
/** Matches the two days of unresolved markets a start takes over (resumeUnresolved). */
const GIVE_UP_RESOLUTION_S = 2 * 86_400;

export class Collector {
  private readonly opts: Required<CollectorOptions>;
  private readonly followed = new Map<string, Followed>();
  private readonly background = new Set<Promise<void>>();
  private discovering = false;
  private nextDiscoveryS = 0;
  /** Snapshots written so far; for logs, progress and the benchmark. */
  written = 0;

  constructor(options: CollectorOptions) {
    this.opts = {
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

    for (const f of this.followed.values()) this.afterTick(f, second);
    if (second >= this.nextDiscoveryS) this.inBackground(() => this.discover());
    // Prices older than an hour settle nothing any more (start and end prices are taken seconds after).
    if (second % 60 === 0) this.opts.rtds.forgetBefore(second - 3600);
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
    const tick = this.opts.rtds.feed(SETTLEMENT_FEED[m.marketType], m.coin).inEffectAt(second);
    if (!tick) return { cause: "no_coin_price", detail: `no ${SETTLEMENT_FEED[m.marketType]} price yet` };
    if (second - tick.tickSecond > this.opts.maxFeedStalenessS) {
      return {
        cause: "no_coin_price",
        detail: `${SETTLEMENT_FEED[m.marketType]} price ${second - tick.tickSecond} s old`,
      };
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
    const feed = this.opts.rtds.feed(SETTLEMENT_FEED[m.marketType], m.coin);
    const maxStale = this.opts.maxFeedStalenessS;
    if (m.coinPriceStart === null && second >= m.startTime + SETTLE_DELAY_S && second < m.endTime) {
      const start = settlementPrice(feed, m.startTime, maxStale);
      if (start !== null) this.inBackground(() => this.update(f, { coinPriceStart: start }));
    }
    if (f.endPrice === null && second >= m.endTime + SETTLE_DELAY_S) {
      f.endPrice = settlementPrice(feed, m.endTime, maxStale);
    }
    if (!f.liquidityTaken && second >= m.endTime - this.opts.liquidityBeforeCloseS && second < m.endTime) {
      f.liquidityTaken = true;
      this.inBackground(() => this.takeLiquidity(f));
    }
    if (second > m.endTime + GIVE_UP_RESOLUTION_S) {
      // Voided or disputed for days: the record stays unresolved, as the upstream has it.
      this.followed.delete(m.slug);
      this.opts.clob.unfollow([m.clobTokenUp, m.clobTokenDown]);
      this.opts.log.warn(
        { market: m.slug },
        `${m.slug}: not resolved upstream two days after its end; no longer polled`,
      );
      return;
    }
    if (second >= m.endTime + SETTLE_DELAY_S && second >= f.nextResolutionPollS) {
      f.nextResolutionPollS = second + this.opts.resolutionEveryS;
      this.inBackground(() => this.pollResolution(f));
    }
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

  private async takeLiquidity(f: Followed): Promise<void> {
    const upstream = await this.opts.gamma.marketBySlug(this.upstreamSlug(f.market));
    if (upstream && !upstream.closed) f.liquidity = upstream.liquidity;
  }

  private async pollResolution(f: Followed): Promise<void> {
    const m = f.market;
    const upstream = await this.opts.gamma.marketBySlug(this.upstreamSlug(m));
    if (!upstream?.closed || upstream.winner === null) return;
    if (f.endPrice !== null && m.coinPriceStart !== null) {
      const ours = winnerOf(m.coinPriceStart, f.endPrice);
      if (ours !== upstream.winner) {
        this.opts.log.warn(
          { market: m.slug, upstream: upstream.winner, feed: ours },
          `${m.slug}: upstream resolved ${upstream.winner}, the settlement feed says ${ours} ` +
            `(${m.coinPriceStart} -> ${f.endPrice}); keeping the upstream winner`,
        );
      }
    }
    await this.update(f, {
      winner: upstream.winner,
      coinPriceEnd: f.endPrice,
      finalVolume: upstream.volume,
      finalLiquidity: f.liquidity,
      resolvedAt: upstream.resolvedAt ?? Math.floor(this.opts.clock.nowMicros() / 1e6),
    });
    this.followed.delete(m.slug);
    this.opts.clob.unfollow([m.clobTokenUp, m.clobTokenDown]);
    this.opts.log.info({ market: m.slug, winner: upstream.winner }, `${m.slug}: resolved ${upstream.winner}`);
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
      coinPriceStart: stored?.coinPriceStart ?? null,
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
      endPrice: null,
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
