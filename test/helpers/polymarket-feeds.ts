import type { OrderBook } from "../../src/domain/book.ts";
import type { Market } from "../../src/domain/market.ts";
import type { ManualClock } from "../../src/domain/time.ts";
import { silentLogger } from "../../src/log.ts";
import { ClobFeed } from "../../src/record/polymarket/clob-feed.ts";
import { RtdsFeed } from "../../src/record/polymarket/rtds-feed.ts";
import { schedulerOn } from "../../src/record/scheduler.ts";
import type { PolymarketUpstream } from "./polymarket-upstream.ts";

/**
 * What the collector's parts are tested over, one part at a time: the market channel and the price
 * socket connected to the local upstream servers, and the record of a BTC 5m market as discovery
 * would store it.
 */

/** A 5-minute boundary: the start of the market of `liveMarket`. */
export const T = 1784851200;
export const UP = "1111";
export const DOWN = "2222";

/** The record of btc-updown-5m-T (settled on Chainlink's instantaneous stream), unresolved. */
export function liveMarket(changes: Partial<Market> = {}): Market {
  return {
    slug: `btc-updown-5m-${T}`,
    polymarketSlug: null,
    coin: "btc",
    marketType: "5m",
    marketId: "5001",
    eventId: "ev-5001",
    startTime: T,
    endTime: T + 300,
    coinPriceStart: null,
    coinPriceEnd: null,
    conditionId: "0xcondition5001",
    clobTokenUp: UP,
    clobTokenDown: DOWN,
    winner: null,
    finalVolume: null,
    finalLiquidity: null,
    resolvedAt: null,
    createdAt: (T - 3600) * 1e6,
    updatedAt: (T - 3600) * 1e6,
    settlement: { source: "chainlink", lookbackS: null },
    feeSchedule: null,
    ...changes,
  };
}

export function bookAround(low: number): OrderBook {
  return {
    bids: [
      { price: low / 100, size: 100 },
      { price: (low - 1) / 100, size: 50 },
    ],
    asks: [
      { price: (low + 2) / 100, size: 80 },
      { price: (low + 3) / 100, size: 40 },
    ],
  };
}

/** Chainlink's full-accuracy value of a dollar amount with 2 decimals: scaled by 1e18. */
export function scaled(cents: number): string {
  return `${cents}${"0".repeat(16)}`;
}

/** Both feeds over the upstream, started, reconnecting at once; `stop` closes them. */
export function feedsOver(
  upstream: PolymarketUpstream,
  clock: ManualClock,
): { clob: ClobFeed; rtds: RtdsFeed; stop: () => Promise<void> } {
  const scheduler = schedulerOn(clock);
  const clob = new ClobFeed({
    url: upstream.clobUrl,
    scheduler,
    log: silentLogger,
    backoffInitialMs: 1,
    backoffMaxMs: 5,
  });
  const rtds = new RtdsFeed({ url: upstream.rtdsUrl, scheduler, log: silentLogger, backoffInitialMs: 1 });
  clob.start();
  rtds.start();
  return { clob, rtds, stop: async () => void (await Promise.all([clob.stop(), rtds.stop()])) };
}
