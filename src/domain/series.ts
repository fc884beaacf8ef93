import { type Coin, MARKET_TYPE_SECONDS, type MarketType } from "./market.ts";
import { formatSlug, polymarketSlug } from "./slug.ts";

/**
 * When the markets of a live series open upstream. 5m, 15m, 1h and 4h markets open on UTC multiples
 * of their length; daily markets run from noon US Eastern to noon US Eastern, so their UTC start moves
 * by an hour with daylight saving time.
 */

const eastern = new Intl.DateTimeFormat("en-US", {
  timeZone: "America/New_York",
  year: "numeric",
  month: "numeric",
  day: "numeric",
  hour: "numeric",
  hourCycle: "h23",
});

/** The UTC second of noon US Eastern on the Eastern calendar day containing `second`. */
function easternNoonOfDay(second: number): number {
  const parts: Record<string, number> = {};
  for (const p of eastern.formatToParts(new Date(second * 1000))) parts[p.type] = Number(p.value);
  const noonUtcGuess = Date.UTC(parts.year, parts.month - 1, parts.day, 12) / 1000;
  // Eastern noon is 16:00 or 17:00 UTC; the offset at the guess decides which.
  const offsetHours = (noonUtcGuess - easternWallClock(noonUtcGuess)) / 3600;
  return noonUtcGuess + offsetHours * 3600;
}

/** The Eastern wall-clock time at `second`, read as if it were UTC (seconds). */
function easternWallClock(second: number): number {
  const parts: Record<string, number> = {};
  for (const p of eastern.formatToParts(new Date(second * 1000))) parts[p.type] = Number(p.value);
  return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour) / 1000 + (second % 3600);
}

/** Start of the upstream market of this type whose [start, end) contains `second`. */
export function liveMarketStart(type: MarketType, second: number): number {
  if (type !== "24h") {
    const len = MARKET_TYPE_SECONDS[type];
    return Math.floor(second / len) * len;
  }
  const noon = easternNoonOfDay(second);
  return second >= noon ? noon : easternNoonOfDay(noon - 86_400 + 3_600 * 3);
}

/** The start of the market after the one starting at `start`. */
export function nextMarketStart(type: MarketType, start: number): number {
  if (type !== "24h") return start + MARKET_TYPE_SECONDS[type];
  // A day later at noon Eastern: 23, 24 or 25 hours on, so look from well inside the next day.
  return easternNoonOfDay(start + 86_400 + 3_600 * 6);
}

export interface SeriesMarket {
  coin: Coin;
  marketType: MarketType;
  startTime: number;
  endTime: number;
  /** Our slug. */
  slug: string;
  /** The slug Gamma knows it by (ours for 5m, 15m and 4h). */
  upstreamSlug: string;
}

/** The market of a series live at `second` and the `ahead` after it, in start order. */
export function upcomingMarkets(coin: Coin, type: MarketType, second: number, ahead: number): SeriesMarket[] {
  const out: SeriesMarket[] = [];
  let start = liveMarketStart(type, second);
  for (let i = 0; i <= ahead; i++) {
    const end = nextMarketStart(type, start);
    const slug = formatSlug(coin, type, start);
    out.push({
      coin,
      marketType: type,
      startTime: start,
      endTime: end,
      slug,
      upstreamSlug: polymarketSlug(coin, type, start) ?? slug,
    });
    start = end;
  }
  return out;
}
