import { MICROS_PER_SECOND, type Micros } from "../domain/time.ts";
import { type ConditionNode, isCondition, type StrategyDefinition } from "./definition.ts";
import { type MomentFeature, parseFeature } from "./feature-registry.ts";
import type { Print } from "./fills.ts";

/**
 * What a replay knows beside a market's snapshots for its lookbacks (DESIGN 3.12), decoded once per
 * market and read by time: the market's own trades as running sums, and Binance's spot and futures
 * series as steps (the latest value at or before a time). Every read takes a time and sees nothing
 * after it, so no feature can peek ahead however much was loaded.
 */

/** A value recorded at times, oldest first: what it was at a time is the latest recorded at or before it. */
export class StepSeries {
  readonly times: readonly Micros[];
  readonly values: readonly number[];

  constructor(times: readonly Micros[], values: readonly number[]) {
    this.times = times;
    this.values = values;
  }

  /** The index of the latest point at or before `time`; -1 when none. */
  indexAtOrBefore(time: Micros): number {
    let lo = 0;
    let hi = this.times.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.times[mid] <= time) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** The value at `time`: the latest at or before it, if no older than `maxAge`; null otherwise. */
  at(time: Micros, maxAge: Micros): number | null {
    const i = this.indexAtOrBefore(time);
    return i < 0 || time - this.times[i] > maxAge ? null : this.values[i];
  }
}

export const EMPTY_SERIES = new StepSeries([], []);

/** The whole second a time is at or just before: the first decision on a whole second that sees it. */
export function secondEnding(time: Micros): number {
  return Math.ceil(time / MICROS_PER_SECOND);
}

/**
 * Builds a StepSeries from points given oldest first, keeping of the points after one whole second and
 * at or before the next only the last (at its own time): the others are never the latest at or before
 * a decision on a whole second (snapshots are), and a decision within the second sees an older point,
 * never a later one.
 */
export class StepSeriesBuilder {
  private readonly times: Micros[] = [];
  private readonly values: number[] = [];

  push(time: Micros, value: number): void {
    const n = this.times.length;
    if (n > 0 && secondEnding(this.times[n - 1]) === secondEnding(time)) {
      this.times[n - 1] = time;
      this.values[n - 1] = value;
      return;
    }
    this.times.push(time);
    this.values.push(value);
  }

  build(): StepSeries {
    return new StepSeries(this.times, this.values);
  }
}

/**
 * How old a recorded value may be and still be the value at a time (docs/backtests.md, "Features"):
 * older, the series is taken as not recorded then, and the feature is null.
 */
export const FRESHNESS_S = {
  /** Depth is recorded every 0.5 s (futures) or 1 s (spot). */
  mid: 10,
  /** A trade, or a 1m candle's close (known at the candle's end, so at most a minute old). */
  price: 60,
  /** Funding settles every 8 hours (4 for some symbols). */
  funding: 9 * 3600,
  /** Open interest is recorded in 5-minute periods. */
  openInterest: 15 * 60,
} as const;

const S = MICROS_PER_SECOND;

/** One Binance venue of the market's coin: its book's mid, its trades' prices and its 1m candles' closes. */
export interface VenueHistory {
  /** Mid of the best bid and ask of each depth snapshot. */
  mid: StepSeries;
  /** The last trade's price (one a second). */
  trades: StepSeries;
  /** Each 1m candle's close, at the candle's end (openTime + 60 s), when it became known. */
  closes: StepSeries;
}

const EMPTY_VENUE: VenueHistory = { mid: EMPTY_SERIES, trades: EMPTY_SERIES, closes: EMPTY_SERIES };

/** Binance's series of the market's coin around the market, as read for the features a definition names. */
export interface ExchangeHistory {
  spot: VenueHistory;
  futures: VenueHistory;
  /** Settled funding rates, at their funding times. */
  funding: StepSeries;
  /** Open interest in contracts (the base asset), at its period's time. */
  openInterest: StepSeries;
}

export const EMPTY_EXCHANGE: ExchangeHistory = {
  spot: EMPTY_VENUE,
  futures: EMPTY_VENUE,
  funding: EMPTY_SERIES,
  openInterest: EMPTY_SERIES,
};

/** The venue's mid at `time` (the latest depth snapshot at or before it), or null where not recorded. */
export function midAt(venue: VenueHistory, time: Micros): number | null {
  return venue.mid.at(time, FRESHNESS_S.mid * S);
}

/** The venue's price at `time`: the later of its last trade and its last closed 1m candle; null where neither is recorded. */
export function priceAt(venue: VenueHistory, time: Micros): number | null {
  const maxAge = FRESHNESS_S.price * S;
  const t = venue.trades.indexAtOrBefore(time);
  const c = venue.closes.indexAtOrBefore(time);
  const tradeTime = t < 0 ? -Infinity : venue.trades.times[t];
  const closeTime = c < 0 ? -Infinity : venue.closes.times[c];
  if (tradeTime === -Infinity && closeTime === -Infinity) return null;
  if (tradeTime >= closeTime) return time - tradeTime > maxAge ? null : venue.trades.values[t];
  return time - closeTime > maxAge ? null : venue.closes.values[c];
}

/**
 * The market's recorded trades (both outcome tokens) as running sums, for the volume traded over a
 * window: `shares[k]` and `usdc[k]` sum the first k prints.
 */
export class TradedVolume {
  private readonly times: Micros[];
  private readonly shares: Float64Array;
  private readonly usdc: Float64Array;

  constructor(prints: readonly Print[]) {
    this.times = prints.map((p) => p.time);
    this.shares = new Float64Array(prints.length + 1);
    this.usdc = new Float64Array(prints.length + 1);
    for (let k = 0; k < prints.length; k++) {
      this.shares[k + 1] = this.shares[k] + prints[k].size;
      this.usdc[k + 1] = this.usdc[k] + prints[k].size * prints[k].price;
    }
  }

  /** How many prints are at or before `time`. */
  private countAtOrBefore(time: Micros): number {
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.times[mid] <= time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Shares, or USDC (shares × price), traded after `from` and at or before `to`. */
  between(from: Micros, to: Micros, unit: "shares" | "usdc"): number {
    const sums = unit === "shares" ? this.shares : this.usdc;
    return sums[this.countAtOrBefore(to)] - sums[this.countAtOrBefore(from)];
  }
}

/** Which of Binance's series a definition's features read, and its longest lookback over them (s). */
export interface ExchangeNeeds {
  spot: { mid: boolean; price: boolean };
  futures: { mid: boolean; price: boolean };
  funding: boolean;
  openInterest: boolean;
  lookbackS: number;
}

function featureNames(node: ConditionNode): string[] {
  if (isCondition(node)) return typeof node.value === "string" ? [node.feature, node.value] : [node.feature];
  if ("all" in node) return node.all.flatMap(featureNames);
  if ("any" in node) return node.any.flatMap(featureNames);
  return featureNames(node.not);
}

/** What each feature of the moment reads of Binance's series (null: nothing, the time of day). */
const MOMENT_READS: Record<MomentFeature, ((needs: ExchangeNeeds) => void) | null> = {
  hour_utc: null,
  minute_of_day_utc: null,
  spot_mid: (n) => (n.spot.mid = true),
  futures_mid: (n) => (n.futures.mid = true),
  futures_funding_rate: (n) => (n.funding = true),
  futures_open_interest: (n) => (n.openInterest = true),
};

/** The exchange series the definition's features read; null when it names none (nothing is read). */
export function exchangeNeeds(d: StrategyDefinition): ExchangeNeeds | null {
  const needs: ExchangeNeeds = {
    spot: { mid: false, price: false },
    futures: { mid: false, price: false },
    funding: false,
    openInterest: false,
    lookbackS: 0,
  };
  let any = false;
  for (const name of [...d.entry, ...d.exit.conditions].flatMap(featureNames)) {
    const f = parseFeature(name);
    const reads = f?.kind === "moment" ? MOMENT_READS[f.name] : null;
    if (reads !== null) {
      reads(needs);
      any = true;
    } else if (
      f?.kind === "lookback" &&
      (f.family === "spot_return_bps" || f.family === "futures_return_bps")
    ) {
      needs[f.family === "spot_return_bps" ? "spot" : "futures"].price = true;
      needs.lookbackS = Math.max(needs.lookbackS, f.seconds);
      any = true;
    }
  }
  return any ? needs : null;
}
