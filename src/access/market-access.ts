import type { PlanName } from "../domain/api-key.ts";
import type { Coin, Market, MarketType } from "../domain/market.ts";
import { isResolved, MARKET_TYPES } from "../domain/market.ts";
import type { Plans } from "../domain/plan.ts";
import { canonicalSlug } from "../domain/slug.ts";
import { type Clock, keptWithin, type Micros } from "../domain/time.ts";
import type { MarketStore, StoredMarket } from "../store/ports/market-store.ts";

/** A series whose markets starting before `startTime` the plan does not open. */
export interface HiddenSeries {
  coin: Coin;
  marketType: MarketType;
  startTime: number;
}

/** Start times are Unix seconds; nothing starts after this. */
const HIDE_ALL = Number.MAX_SAFE_INTEGER;

const cutoffId = (coin: Coin, type: MarketType, count: number) => `${coin}:${type}:${count}`;

/** Whether a market starts inside its series' window (a null cutoff: the window holds every market). */
function opens(market: Market, cutoff: number | null): boolean {
  return cutoff === null || market.startTime >= cutoff;
}

/**
 * Which markets a plan opens (DESIGN 3.3): the free plan sees the latest N markets of each type of the
 * coins its plan names (BTC by default), counted over the markets stored. Windows are recomputed at most once per `ttl`, so a replica sees a
 * newly recorded market move the window within that time.
 */
export class MarketAccess {
  private readonly markets: MarketStore;
  private readonly plans: Plans;
  private readonly clock: Clock;
  private readonly ttl: Micros;
  private readonly cutoffs = new Map<string, { at: Micros; startTime: number | null }>();
  private readonly resolved = new Map<string, { at: Micros; market: StoredMarket }>();

  constructor(markets: MarketStore, plans: Plans, clock: Clock, ttl: Micros = 1_000_000) {
    this.markets = markets;
    this.plans = plans;
    this.clock = clock;
    this.ttl = ttl;
  }

  /**
   * A market by our slug in any accepted spelling, or by Polymarket's alias. Resolved markets are kept
   * for `ttl`, under the text as asked (so that a cached page's request does not parse its slug
   * again): they change only when an import adds seconds to them, and every request for a cached page
   * would otherwise read the record again.
   */
  async find(asked: string): Promise<StoredMarket | null> {
    const kept = this.findKept(asked);
    if (kept) return kept;
    const now = this.clock.nowMicros();
    const market = await this.markets.getMarket(canonicalSlug(asked) ?? asked.toLowerCase());
    if (market && isResolved(market)) {
      if (this.resolved.size >= 10_000) this.resolved.clear();
      this.resolved.set(asked, { at: now, market });
    }
    return market;
  }

  /** find() where it needs no store read: a resolved market kept from a read less than `ttl` ago. */
  findKept(asked: string): StoredMarket | undefined {
    const now = this.clock.nowMicros();
    const cached = this.resolved.get(asked);
    return cached && keptWithin(cached.at, now, this.ttl) ? cached.market : undefined;
  }

  /** cutoff() where it needs no store read: kept from a read less than `ttl` ago; else undefined. */
  private keptCutoff(coin: Coin, type: MarketType, count: number): number | null | undefined {
    if (count === 0) return HIDE_ALL;
    const now = this.clock.nowMicros();
    const cached = this.cutoffs.get(cutoffId(coin, type, count));
    return cached && keptWithin(cached.at, now, this.ttl) ? cached.startTime : undefined;
  }

  /**
   * The earliest start time inside the window of the latest `count` markets of a coin and type; null
   * when no stored market falls outside it (one more is read to know).
   */
  private async cutoff(coin: Coin, type: MarketType, count: number): Promise<number | null> {
    const kept = this.keptCutoff(coin, type, count);
    if (kept !== undefined) return kept;
    const now = this.clock.nowMicros();
    const latest = await this.markets.latestStartTimes(coin, type, count + 1);
    const startTime = latest.length <= count ? null : latest[count - 1];
    this.cutoffs.set(cutoffId(coin, type, count), { at: now, startTime });
    return startTime;
  }

  async canOpen(plan: PlanName, market: Market): Promise<boolean> {
    const windows = this.plans[plan].history[market.coin];
    if (windows === undefined) return true;
    return opens(market, await this.cutoff(market.coin, market.marketType, windows[market.marketType]));
  }

  /** canOpen() where it needs no store read; undefined where it does. */
  canOpenKept(plan: PlanName, market: Market): boolean | undefined {
    const windows = this.plans[plan].history[market.coin];
    if (windows === undefined) return true;
    const cutoff = this.keptCutoff(market.coin, market.marketType, windows[market.marketType]);
    return cutoff === undefined ? undefined : opens(market, cutoff);
  }

  /**
   * The series in which the plan hides markets now (of `coin` only, when given); empty when it opens
   * everything stored.
   */
  async hiddenSeries(plan: PlanName, coin?: Coin): Promise<HiddenSeries[]> {
    const hidden: HiddenSeries[] = [];
    for (const [windowCoin, windows] of Object.entries(this.plans[plan].history)) {
      if (coin !== undefined && windowCoin !== coin) continue;
      for (const marketType of MARKET_TYPES) {
        const startTime = await this.cutoff(windowCoin, marketType, windows[marketType]);
        if (startTime !== null) hidden.push({ coin: windowCoin, marketType, startTime });
      }
    }
    return hidden;
  }
}
