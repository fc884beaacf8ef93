import type { Coin, Market } from "../../domain/market.ts";
import { knownFrom, type PricePoint } from "../../domain/settlement.ts";
import type { PriceFeed } from "../../upstream/price-feed.ts";

/** A Binance spot 1m candle's open and close, by the candle's open time (Unix second); null until stored. */
export type CandleSource = (coin: Coin, openTime: number) => Promise<{ open: number; close: number } | null>;

/** Where a market's start and end prices come from, and how long each may be waited for. */
export interface PriceSources {
  /** The feed of a market's settlement stream (the RTDS feed's, by the record's settlement and coin). */
  feed: (market: Market) => PriceFeed;
  /** Binance's stored 1m candles, which settle 1h and 24h markets; null: the Binance tick stands in. */
  candles: CandleSource | null;
  /** Seconds after a candle closes to wait for it before the stand-in. */
  candleWaitS: number;
  /** A settlement tick older than this cannot give a start or end price. */
  maxFeedStalenessS: number;
}

/**
 * The settlement rule's price at a market's start or end second: the latest tick at or before it,
 * unless that tick is older than `maxStale` seconds (the feed had a gap), when there is none.
 */
export function settlementPrice(feed: PriceFeed, second: number, maxStale: number): number | null {
  const tick = feed.inEffectAt(second);
  return tick && second - tick.tickSecond <= maxStale ? tick.value : null;
}

/**
 * The price at a start or end point, asked at `second`: the tick in effect (null while stale or
 * missing: asked again), or a Binance 1m candle's price, with the Binance tick in effect standing in
 * once the candle is overdue.
 */
export async function priceAt(
  sources: PriceSources,
  m: Market,
  point: PricePoint,
  second: number,
): Promise<number | null> {
  const feed = sources.feed(m);
  const maxStale = sources.maxFeedStalenessS;
  if (point.kind === "tick") return settlementPrice(feed, point.second, maxStale);
  const candle = sources.candles ? await sources.candles(m.coin, point.openTime) : null;
  if (candle) return candle[point.field];
  if (sources.candles && second < knownFrom(point) + sources.candleWaitS) return null;
  return settlementPrice(feed, point.field === "open" ? point.openTime : knownFrom(point), maxStale);
}
