import { type Coin, coinFacts, type Market, type MarketType } from "../../domain/market.ts";
import { type SeriesMarket, upcomingMarkets } from "../../domain/series.ts";
import { settlementOf } from "../../domain/settlement.ts";
import type { Clock, Micros } from "../../domain/time.ts";
import { errorMessage, type Logger } from "../../log.ts";
import type { MarketStore, StoredMarket } from "../../store/ports/market-store.ts";
import type { GammaMarket } from "../../upstream/gamma-market.ts";
import type { GammaClient } from "./gamma-client.ts";

/** How long after its end an unresolved market is still followed for its resolution (and taken over on a start). */
export const GIVE_UP_RESOLUTION_S = 2 * 86_400;

export interface MarketDiscoveryOptions {
  store: MarketStore;
  gamma: GammaClient;
  clock: Clock;
  log: Logger;
  coins: readonly Coin[];
  marketTypes: readonly MarketType[];
  /** Markets after the live one to discover ahead, per series. */
  lookahead: number;
  /** Seconds between discovery rounds. */
  discoveryEveryS: number;
  /** Whether a market is followed already: it is not looked up again. */
  isFollowed: (slug: string) => boolean;
  /** Starts following a market found (stored first); awaited before the next look-up. */
  follow: (market: StoredMarket, now: Micros) => Promise<void>;
}

/**
 * Which markets the collector follows: the live and next markets of every series, looked up on Gamma
 * and stored before they are followed, and on a start the unresolved markets a previous run left.
 */
export class MarketDiscovery {
  private readonly opts: MarketDiscoveryOptions;
  private discovering = false;
  private nextRoundS = 0;

  constructor(options: MarketDiscoveryOptions) {
    this.opts = options;
  }

  /** Whether a discovery round is due at this second. */
  isDue(second: number): boolean {
    return second >= this.nextRoundS;
  }

  /** Finds the live and next markets of every series on Gamma and follows the new ones; one round at a time. */
  async discover(): Promise<void> {
    if (this.discovering) return;
    this.discovering = true;
    const now = this.opts.clock.nowMicros();
    const second = Math.floor(now / 1e6);
    this.nextRoundS = second + this.opts.discoveryEveryS;
    try {
      for (const s of this.seriesMarkets(second)) {
        if (this.opts.isFollowed(s.slug)) continue;
        const upstream = await this.lookUp(s.upstreamSlug);
        if (upstream) await this.store(s, upstream, now);
      }
    } finally {
      this.discovering = false;
    }
  }

  /** Unresolved markets of the last two days of the coins and types followed: a previous run's, to finish. */
  async resumeUnresolved(): Promise<void> {
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
      await this.follow(m, now);
    }
  }

  /** The live and next markets of every series followed, in coin then type order. */
  private *seriesMarkets(second: number): Generator<SeriesMarket> {
    for (const coin of this.opts.coins) {
      for (const type of this.opts.marketTypes) {
        // Polymarket runs only some series of the newer coins (5m and 15m).
        if (!coinFacts(coin).types.includes(type)) continue;
        yield* upcomingMarkets(coin, type, second, this.opts.lookahead);
      }
    }
  }

  /** Gamma's record of a market; a failed look-up is logged and the market tried next round. */
  private lookUp(upstreamSlug: string): Promise<GammaMarket | null> {
    return this.opts.gamma.marketBySlug(upstreamSlug).catch((err: unknown) => {
      this.opts.log.warn(
        { market: upstreamSlug, err: errorMessage(err) },
        `gamma: ${upstreamSlug}: ${errorMessage(err)}`,
      );
      return null;
    });
  }

  /** Stores the market's record (what a previous run learnt kept) and follows it, unless it is resolved. */
  private async store(s: SeriesMarket, upstream: GammaMarket, now: Micros): Promise<void> {
    const stored = await this.opts.store.getMarket(s.slug);
    const market = marketRecord(s, upstream, stored, now);
    if (market.winner !== null) return;
    await this.follow(await this.opts.store.upsertMarket(market), now);
  }

  /** A market the collector follows is recorded live (MarketSource), whatever else it holds. */
  private async follow(market: StoredMarket, now: Micros): Promise<void> {
    const sources = await this.opts.store.markSource(market.key, "recorded");
    await this.opts.follow({ ...market, sources }, now);
  }
}

/** A market's record from its series slot and Gamma's record, keeping what a stored record settled. */
function marketRecord(s: SeriesMarket, upstream: GammaMarket, stored: Market | null, now: Micros): Market {
  return {
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
}
