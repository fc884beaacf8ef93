import {
  type Coin,
  coinFacts,
  MARKET_TYPE_SECONDS,
  type MarketType,
  parseCoin,
  parseMarketType,
} from "./market.ts";

export interface SlugParts {
  coin: Coin;
  marketType: MarketType;
  startTime: number;
}

/** Our slug for every type: `{coin}-updown-{type}-{start unix seconds}`. */
export function formatSlug(coin: Coin, marketType: MarketType, startTime: number): string {
  return `${coin}-updown-${marketType}-${startTime}`;
}

const SLUG_RE = /^([a-z]+)-updown-([0-9]+hr?|[0-9]+m)-([0-9]{1,12})$/i;

/**
 * Reads a slug in our shape, case-insensitively and with the `1hr`/`4hr`/`24hr` spellings, and returns
 * its parts; null when it is not in that shape (it may still be a Polymarket alias).
 */
export function parseSlug(slug: string): SlugParts | null {
  const m = SLUG_RE.exec(slug);
  if (!m) return null;
  const coin = parseCoin(m[1]);
  const marketType = parseMarketType(m[2]);
  if (!coin || !marketType) return null;
  return { coin, marketType, startTime: Number(m[3]) };
}

/** The canonical spelling of a slug in our shape, or null. */
export function canonicalSlug(slug: string): string | null {
  const parts = parseSlug(slug);
  return parts ? formatSlug(parts.coin, parts.marketType, parts.startTime) : null;
}

/**
 * Made on first use: building it loads ICU's time zone data, about 30 ms of CPU, and most processes
 * that import this module (every test file, most commands) never name a market in Eastern time.
 */
let etParts: Intl.DateTimeFormat | null = null;

function easternParts(sec: number): {
  month: string;
  day: string;
  year: string;
  hour: string;
  dayPeriod: string;
} {
  const out: Record<string, string> = {};
  etParts ??= new Intl.DateTimeFormat("en-US", {
    timeZone: "America/New_York",
    year: "numeric",
    month: "long",
    day: "numeric",
    hour: "numeric",
    hour12: true,
  });
  for (const p of etParts.formatToParts(new Date(sec * 1000))) out[p.type] = p.value;
  return {
    month: out.month.toLowerCase(),
    day: out.day,
    year: out.year,
    hour: out.hour,
    dayPeriod: out.dayPeriod.toLowerCase(),
  };
}

/**
 * Polymarket's own slug for hourly and daily markets, named in US Eastern time:
 * `bitcoin-up-or-down-july-24-2026-3am-et` (hourly, by start) and `bitcoin-up-or-down-on-july-24-2026`
 * (daily, by the day it ends). 5m, 15m and 4h markets use our shape upstream too: null.
 */
export function polymarketSlug(coin: Coin, marketType: MarketType, startTime: number): string | null {
  const name = coinFacts(coin).name;
  if (marketType === "1h") {
    const p = easternParts(startTime);
    return `${name}-up-or-down-${p.month}-${p.day}-${p.year}-${p.hour}${p.dayPeriod}-et`;
  }
  if (marketType === "24h") {
    const p = easternParts(startTime + MARKET_TYPE_SECONDS["24h"]);
    return `${name}-up-or-down-on-${p.month}-${p.day}-${p.year}`;
  }
  return null;
}

/**
 * The coin and type a Polymarket hourly or daily slug names (polymarketSlug's shapes), for a coin of
 * `coins`; null for any other slug. The start is not read from it: the record's times say it.
 */
export function polymarketSlugSeries(
  slug: string,
  coins: readonly Coin[],
): { coin: Coin; marketType: MarketType } | null {
  for (const coin of coins) {
    const prefix = `${coinFacts(coin).name}-up-or-down-`;
    if (!slug.startsWith(prefix)) continue;
    if (slug.startsWith(`${prefix}on-`)) return { coin, marketType: "24h" };
    if (slug.endsWith("-et")) return { coin, marketType: "1h" };
  }
  return null;
}
