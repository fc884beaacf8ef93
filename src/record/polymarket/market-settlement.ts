import type { Market, Winner } from "../../domain/market.ts";
import {
  knownFrom,
  type PricePoint,
  pricePoints,
  pricesAgree,
  settlementName,
  settleWinner,
} from "../../domain/settlement.ts";
import type { Clock } from "../../domain/time.ts";
import { errorMessage, type Logger } from "../../log.ts";
import type { MarketStore, StoredMarket } from "../../store/ports/market-store.ts";
import type { GammaMarket } from "../../upstream/gamma-market.ts";
import type { BackgroundWork } from "./background-work.ts";
import type { ClobFeed, MarketResolved } from "./clob-feed.ts";
import type { GammaClient } from "./gamma-client.ts";
import { GIVE_UP_RESOLUTION_S } from "./market-discovery.ts";
import { priceAt, type PriceSources } from "./settlement-price.ts";

export interface MarketSettlementOptions {
  store: MarketStore;
  gamma: GammaClient;
  /** The market channel's `market_resolved` announcements. */
  clob: ClobFeed;
  prices: PriceSources;
  clock: Clock;
  log: Logger;
  background: BackgroundWork;
  /** Seconds between resolution polls of an ended market. */
  resolutionEveryS: number;
  /** Liquidity is read from Gamma this many seconds before the close (it reads 0 after). */
  liquidityBeforeCloseS: number;
  /** Called once a market is resolved, or given up: it is followed no longer. */
  done: (market: StoredMarket) => void;
}

interface Settling {
  market: StoredMarket;
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
  nextResolutionPollS: number;
}

type Side = "start" | "end";

/** Seconds after a price point is known before it is read (late ticks of that second still come in). */
const SETTLE_DELAY_S = 2;

/**
 * How each followed market settles and resolves, each step when its time comes: the start and end
 * prices from the feed the record settles on (DESIGN 3.4), the liquidity and Gamma's price to beat
 * before the close, and the winner from the market channel's `market_resolved` or, failing it, by
 * polling Gamma. Gamma's own prices are kept over ours; a disagreement is logged and counted. The
 * record changes only by upsert of the whole record, after the store accepted it.
 */
export class MarketSettlement {
  private readonly opts: MarketSettlementOptions;
  private readonly settling = new Map<string, Settling>();
  /** Start or end prices of ours that Gamma's own disagreed with (Gamma's kept); logged each. */
  disagreements = 0;

  constructor(options: MarketSettlementOptions) {
    this.opts = options;
  }

  follow(market: StoredMarket): void {
    this.settling.set(market.slug, {
      market,
      liquidity: null,
      liquidityTaken: false,
      feedStart: null,
      endPrice: null,
      reading: { start: false, end: false },
      checked: { start: false, end: false },
      resolving: false,
      nextResolutionPollS: 0,
    });
  }

  unfollow(slug: string): void {
    this.settling.delete(slug);
  }

  /** Starts, in the background, whatever step of each market has come due at this second. */
  afterTick(second: number): void {
    for (const s of this.settling.values()) this.stepsDue(s, second);
  }

  private stepsDue(s: Settling, second: number): void {
    const m = s.market;
    const points = pricePoints(m.marketType, m.settlement, m.startTime, m.endTime);
    const startDue = second >= knownFrom(points.start) + SETTLE_DELAY_S && second < m.endTime;
    if (m.coinPriceStart === null && s.feedStart === null && !s.reading.start && startDue) {
      this.opts.background.start(() => this.takePrice(s, "start", points.start, second));
    }
    if (s.endPrice === null && !s.reading.end && second >= knownFrom(points.end) + SETTLE_DELAY_S) {
      this.opts.background.start(() => this.takePrice(s, "end", points.end, second));
    }
    if (!s.liquidityTaken && second >= m.endTime - this.opts.liquidityBeforeCloseS && second < m.endTime) {
      s.liquidityTaken = true;
      this.opts.background.start(() => this.takeLiquidity(s));
    }
    if (second > m.endTime + GIVE_UP_RESOLUTION_S) {
      this.giveUp(s);
      return;
    }
    // The end price first (a daily market's candle closes a minute after its end), unless it never comes.
    const endSettled =
      s.endPrice !== null || second > knownFrom(points.end) + this.opts.prices.candleWaitS + 10;
    if (second >= m.endTime + SETTLE_DELAY_S && endSettled && !s.resolving) this.resolutionDue(s, second);
  }

  /** Voided or disputed for days: the record stays unresolved, as the upstream has it. */
  private giveUp(s: Settling): void {
    this.done(s);
    this.opts.log.warn(
      { market: s.market.slug },
      `${s.market.slug}: not resolved upstream two days after its end; no longer polled`,
    );
  }

  /** Resolves from the market channel's announcement when there is one, else polls Gamma when due. */
  private resolutionDue(s: Settling, second: number): void {
    const announced = this.opts.clob.resolutionOf(s.market.clobTokenUp);
    if (announced) {
      s.resolving = true;
      this.opts.background.start(() => this.resolveAnnounced(s, announced));
    } else if (second >= s.nextResolutionPollS) {
      s.nextResolutionPollS = second + this.opts.resolutionEveryS;
      this.opts.background.start(() => this.pollResolution(s));
    }
  }

  private async takePrice(s: Settling, which: Side, point: PricePoint, second: number): Promise<void> {
    s.reading[which] = true;
    try {
      const price = await priceAt(this.opts.prices, s.market, point, second);
      if (price === null) return;
      if (which === "end") {
        s.endPrice = price;
        return;
      }
      s.feedStart = price;
      if (s.market.coinPriceStart === null) await this.update(s, { coinPriceStart: price });
    } finally {
      s.reading[which] = false;
    }
  }

  /**
   * Gamma's value where it has one (it is the upstream's own), ours otherwise. The first time both
   * are known and they disagree, the disagreement is logged and counted.
   */
  private authoritative(s: Settling, which: Side, ours: number | null, gamma: number | null): number | null {
    if (gamma === null) return ours;
    if (ours !== null && !s.checked[which]) {
      s.checked[which] = true;
      if (!pricesAgree(ours, gamma)) this.disagreed(s.market, which, ours, gamma);
    }
    return gamma;
  }

  private disagreed(m: Market, which: Side, ours: number, gamma: number): void {
    this.disagreements++;
    const feed = settlementName(m.settlement);
    this.opts.log.warn(
      { market: m.slug, which, ours, upstream: gamma, feed },
      `${m.slug}: upstream ${which} price ${gamma}, ${feed} says ${ours}; keeping the upstream's`,
    );
  }

  private done(s: Settling): void {
    this.settling.delete(s.market.slug);
    this.opts.done(s.market);
  }

  private async update(s: Settling, changes: Partial<Market>): Promise<void> {
    const next: Market = { ...s.market, ...changes, updatedAt: this.opts.clock.nowMicros() };
    s.market = await this.opts.store.upsertMarket(next);
  }

  /** Before the close, Gamma still reports liquidity; by then it knows its price to beat, too. */
  private async takeLiquidity(s: Settling): Promise<void> {
    const upstream = await this.opts.gamma.marketBySlug(upstreamSlug(s.market));
    if (!upstream || upstream.closed) return;
    s.liquidity = upstream.liquidity;
    const start = this.authoritative(s, "start", s.feedStart, upstream.priceToBeat);
    if (start !== null && start !== s.market.coinPriceStart) await this.update(s, { coinPriceStart: start });
  }

  private async pollResolution(s: Settling): Promise<void> {
    const upstream = await this.opts.gamma.marketBySlug(upstreamSlug(s.market));
    if (!upstream?.closed || upstream.winner === null || s.resolving) return;
    s.resolving = true;
    const winner = upstream.winner;
    await this.resolveOrRetry(s, () => this.resolve(s, winner, upstream.resolvedAt, upstream));
  }

  /** A resolution that failed to be written is tried again (by the next poll or announcement). */
  private async resolveOrRetry(s: Settling, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      s.resolving = false;
      throw err;
    }
  }

  /** The market channel said who won: resolved at once, with what Gamma adds (volume, its prices) if it answers. */
  private async resolveAnnounced(s: Settling, announced: MarketResolved): Promise<void> {
    const winner = winnerOf(s.market, announced.winningAssetId);
    if (winner === null) {
      s.resolving = false;
      return;
    }
    await this.resolveOrRetry(s, async () => {
      const upstream = await this.gammaRecord(s.market);
      const at = announced.timeMs === null ? null : Math.floor(announced.timeMs / 1000);
      await this.resolve(s, winner, at ?? upstream?.resolvedAt ?? null, upstream);
    });
  }

  /** Gamma's record, or null (logged) when the look-up fails: the announcement suffices. */
  private gammaRecord(m: Market): Promise<GammaMarket | null> {
    return this.opts.gamma.marketBySlug(upstreamSlug(m)).catch((err: unknown) => {
      this.opts.log.warn(
        { market: m.slug, err: errorMessage(err) },
        `gamma: ${m.slug}: ${errorMessage(err)}`,
      );
      return null;
    });
  }

  private async resolve(
    s: Settling,
    winner: Winner,
    resolvedAt: number | null,
    upstream: GammaMarket | null,
  ): Promise<void> {
    const m = s.market;
    this.crossCheck(s, winner);
    await this.update(s, {
      winner,
      coinPriceStart:
        this.authoritative(s, "start", s.feedStart, upstream?.priceToBeat ?? null) ?? m.coinPriceStart,
      coinPriceEnd: this.authoritative(s, "end", s.endPrice, upstream?.finalPrice ?? null),
      finalVolume: upstream?.volume ?? null,
      finalLiquidity: s.liquidity,
      resolvedAt: resolvedAt ?? Math.floor(this.opts.clock.nowMicros() / 1e6),
    });
    this.done(s);
    this.opts.log.info({ market: m.slug, winner }, `${m.slug}: resolved ${winner}`);
  }

  /** The upstream's winner is kept; one the settlement feed contradicts is logged. */
  private crossCheck(s: Settling, winner: Winner): void {
    const m = s.market;
    const feedStart = s.feedStart ?? m.coinPriceStart;
    if (feedStart === null || s.endPrice === null) return;
    const ours = settleWinner(m.marketType, feedStart, s.endPrice);
    if (ours === winner) return;
    this.opts.log.warn(
      { market: m.slug, upstream: winner, feed: ours },
      `${m.slug}: upstream resolved ${winner}, the settlement feed says ${ours} ` +
        `(${feedStart} -> ${s.endPrice}); keeping the upstream winner`,
    );
  }
}

function upstreamSlug(m: Market): string {
  return m.polymarketSlug ?? m.slug;
}

/** The outcome whose token won, or null for a token not of this market. */
function winnerOf(m: Market, winningAssetId: string): Winner | null {
  if (winningAssetId === m.clobTokenUp) return "Up";
  if (winningAssetId === m.clobTokenDown) return "Down";
  return null;
}
