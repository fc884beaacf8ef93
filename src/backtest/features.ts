import type { Level, OrderBook } from "../domain/book.ts";
import { bestPrice, decodeBooks } from "../wire/book-codec.ts";
import type { Coin, FeeSchedule, MarketType, Winner } from "../domain/market.ts";
import type { SnapshotRow } from "../domain/snapshot.ts";
import { MICROS_PER_SECOND, type Micros } from "../domain/time.ts";
import { DEFAULT_DEPTH_TICKS } from "./definition.ts";
import {
  type LookbackFeature,
  type MomentFeature,
  parseFeature,
  type PlainFeature,
} from "./feature-registry.ts";
import type { Print } from "./fills.ts";
import {
  EMPTY_EXCHANGE,
  type ExchangeHistory,
  FRESHNESS_S,
  midAt,
  priceAt,
  TradedVolume,
  type VenueHistory,
} from "./lookback.ts";

/**
 * The features of DESIGN 3.7 and 3.12, computed from one snapshot, the snapshots before it (lookbacks),
 * the market's trades and Binance's series up to the decision (lookback.ts), and what the market's
 * record says before it opens (start and end times, the start price). Nothing here can see a later
 * snapshot, trade or exchange row, or the outcome: a lookback reads the market's snapshots up to the
 * decision's index only, and every other series by the decision's time.
 */

/**
 * A market as a replay sees it, for lookbacks: its snapshots (the snapshot at or before a time, and the
 * sums of squared coin returns that realized volatility takes differences of, computed once a market),
 * its recorded trades as running sums, and Binance's series of its coin (empty: none read).
 */
export class MarketHistory {
  private readonly snapshots: readonly SnapshotRow[];
  private squares: Float64Array | null = null;
  private readonly prints: readonly Print[];
  private sums: TradedVolume | null = null;
  readonly exchange: ExchangeHistory;

  constructor(
    snapshots: readonly SnapshotRow[],
    prints: readonly Print[] = [],
    exchange: ExchangeHistory = EMPTY_EXCHANGE,
  ) {
    this.snapshots = snapshots;
    this.prints = prints;
    this.exchange = exchange;
  }

  /** The market's trades as running sums, summed once a market when a feature first asks. */
  get volume(): TradedVolume {
    this.sums ??= new TradedVolume(this.prints);
    return this.sums;
  }

  at(index: number): SnapshotRow {
    return this.snapshots[index];
  }

  /** The index of the latest snapshot at or before `time` among the first `upTo + 1`; -1 when none. */
  indexAtOrBefore(time: Micros, upTo: number): number {
    let lo = 0;
    let hi = upTo;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.snapshots[mid].time <= time) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** Sum over k in 1..index of (coin return from snapshot k - 1 to k, in bps) squared. */
  squaredReturns(index: number): number {
    if (this.squares === null) {
      const sq = new Float64Array(this.snapshots.length);
      for (let k = 1; k < this.snapshots.length; k++) {
        const before = this.snapshots[k - 1].coinPrice;
        const r = before === 0 ? 0 : ((this.snapshots[k].coinPrice - before) / before) * 10_000;
        sq[k] = sq[k - 1] + r * r;
      }
      this.squares = sq;
    }
    return this.squares[index];
  }
}

/** What the engine knows of a market: the record's facts, and its outcome, used only to settle. */
export interface ReplayMarket {
  slug: string;
  coin: Coin;
  marketType: MarketType;
  /** Unix seconds. */
  startTime: number;
  endTime: number;
  coinPriceStart: number | null;
  winner: Winner | null;
  feeSchedule: FeeSchedule | null;
}

export type Token = "up" | "down";

/** Prices are in probability units; one tick is a cent. */
export const TICK = 0.01;

/** A snapshot with its books decoded at most once, when something first asks for them. */
export class SnapshotView {
  readonly market: ReplayMarket;
  /** One recorded second as stored: books still in their stored encoding. */
  readonly snapshot: SnapshotRow;
  /** The market's snapshots and this one's index among them, for lookbacks; null: none known. */
  readonly history: MarketHistory | null;
  readonly index: number;
  private decoded: { up: OrderBook; down: OrderBook } | null | undefined;

  constructor(market: ReplayMarket, snapshot: SnapshotRow, history: MarketHistory | null = null, index = -1) {
    this.market = market;
    this.snapshot = snapshot;
    this.history = history;
    this.index = index;
  }

  get time(): Micros {
    return this.snapshot.time;
  }

  /** The token's book, or null when this second's books were not recorded. */
  book(token: Token): OrderBook | null {
    if (this.decoded === undefined) {
      this.decoded = this.snapshot.books === null ? null : decodeBooks(this.snapshot.books);
    }
    return this.decoded === null ? null : this.decoded[token];
  }

  bestBid(token: Token): number | null {
    return this.best(token, "bids");
  }

  bestAsk(token: Token): number | null {
    return this.best(token, "asks");
  }

  /** A side's best price: from the decoded books when something has decoded them, else from the blob. */
  private best(token: Token, side: "bids" | "asks"): number | null {
    if (this.decoded !== undefined) return this.decoded?.[token][side][0]?.price ?? null;
    return this.snapshot.books === null ? null : bestPrice(this.snapshot.books, token, side);
  }

  /** The midpoint of the best bid and ask; the displayed price when a side is empty or not recorded. */
  mid(token: Token): number {
    const bid = this.bestBid(token);
    const ask = this.bestAsk(token);
    if (bid !== null && ask !== null) return (bid + ask) / 2;
    return token === "up" ? this.snapshot.priceUp : this.snapshot.priceDown;
  }
}

/** Shares on one side within `ticks` ticks of its best price (the best level included). */
export function depthWithin(levels: Level[], ticks: number): number {
  if (levels.length === 0) return 0;
  const best = Math.round(levels[0].price / TICK);
  let total = 0;
  for (const l of levels) {
    if (Math.abs(Math.round(l.price / TICK) - best) > ticks) break;
    total += l.size;
  }
  return total;
}

export type FeatureFn = (view: SnapshotView) => number | null;

function side(view: SnapshotView, token: Token, which: "bids" | "asks", ticks: number): number | null {
  const book = view.book(token);
  return book === null ? null : depthWithin(book[which], ticks);
}

function spread(view: SnapshotView, token: Token): number | null {
  const bid = view.bestBid(token);
  const ask = view.bestAsk(token);
  return bid === null || ask === null ? null : ask - bid;
}

function imbalance(view: SnapshotView, token: Token, ticks: number): number | null {
  const bids = side(view, token, "bids", ticks);
  const asks = side(view, token, "asks", ticks);
  if (bids === null || asks === null || bids + asks === 0) return null;
  return (bids - asks) / (bids + asks);
}

const SECONDS = (view: SnapshotView) => view.time / MICROS_PER_SECOND;

const PLAIN: Record<PlainFeature, FeatureFn> = {
  price_up: (v) => v.snapshot.priceUp,
  price_down: (v) => v.snapshot.priceDown,
  best_bid_up: (v) => v.bestBid("up"),
  best_bid_down: (v) => v.bestBid("down"),
  best_ask_up: (v) => v.bestAsk("up"),
  best_ask_down: (v) => v.bestAsk("down"),
  spread_up: (v) => spread(v, "up"),
  spread_down: (v) => spread(v, "down"),
  coin_price: (v) => v.snapshot.coinPrice,
  coin_return_bps: (v) => {
    const start = v.market.coinPriceStart;
    return start === null || start === 0 ? null : ((v.snapshot.coinPrice - start) / start) * 10_000;
  },
  elapsed_s: (v) => SECONDS(v) - v.market.startTime,
  remaining_s: (v) => v.market.endTime - SECONDS(v),
  remaining_pct: (v) =>
    ((v.market.endTime - SECONDS(v)) / Math.max(1, v.market.endTime - v.market.startTime)) * 100,
};

const SECONDS_PER_DAY = 86_400;

/** Seconds into the decision's UTC day. */
const secondOfDay = (v: SnapshotView) =>
  ((Math.floor(v.time / MICROS_PER_SECOND) % SECONDS_PER_DAY) + SECONDS_PER_DAY) % SECONDS_PER_DAY;

/** Binance's values at the decision: null without the market's history or where not recorded. */
const exchange = (v: SnapshotView) => v.history?.exchange ?? EMPTY_EXCHANGE;

const MOMENT: Record<MomentFeature, FeatureFn> = {
  hour_utc: (v) => Math.floor(secondOfDay(v) / 3600),
  minute_of_day_utc: (v) => Math.floor(secondOfDay(v) / 60),
  spot_mid: (v) => midAt(exchange(v).spot, v.time),
  futures_mid: (v) => midAt(exchange(v).futures, v.time),
  futures_funding_rate: (v) => exchange(v).funding.at(v.time, FRESHNESS_S.funding * MICROS_PER_SECOND),
  futures_open_interest: (v) =>
    exchange(v).openInterest.at(v.time, FRESHNESS_S.openInterest * MICROS_PER_SECOND),
};

/** Lookback values are rounded to this many decimals, so that 0.45 - 0.55 is -10 cents, not -10.000000000000004. */
const LOOKBACK_DECIMALS = 6;
const rounded = (x: number) => Math.round(x * 10 ** LOOKBACK_DECIMALS) / 10 ** LOOKBACK_DECIMALS;

/** The volatility's sum of squared returns from the reference snapshot to the decision's (bps²). */
function squaredSince(v: SnapshotView, refIndex: number): number {
  const h = v.history as MarketHistory;
  return Math.max(0, h.squaredReturns(v.index) - h.squaredReturns(refIndex));
}

/**
 * The coin's distance to the price to beat in standard deviations of its move over the time left:
 * (coin_price - start price) / (sigma * sqrt(remaining_s)), sigma per √s in price units being the
 * realized volatility over the lookback, coin_price * √(Σ r²) / 10⁴ / √(its span in s). Unknown at or
 * after the end, without a start price, or when the coin did not move over the lookback (sigma 0).
 */
function beatDistance(v: SnapshotView, ref: SnapshotRow, refIndex: number): number | null {
  const beat = v.market.coinPriceStart;
  const coin = v.snapshot.coinPrice;
  const remaining = v.market.endTime - SECONDS(v);
  const span = (v.time - ref.time) / MICROS_PER_SECOND;
  const squares = squaredSince(v, refIndex);
  if (beat === null || remaining <= 0 || span <= 0 || squares === 0) return null;
  const sigma = (coin * Math.sqrt(squares)) / 10_000 / Math.sqrt(span);
  return rounded((coin - beat) / (sigma * Math.sqrt(remaining)));
}

/**
 * A lookback over the market's snapshots at `view` over `seconds`: from the latest snapshot at or
 * before the decision less the lookback (the reference) to the decision's. Unknown (null) when the
 * market's record has no snapshot that early yet: in a market's first seconds a lookback is never
 * filled in from later data. The traded volume takes the same rule: its window counts only once the
 * market's record reaches back over all of it.
 */
const LOOKBACK: Record<
  Exclude<LookbackFeature, "spot_return_bps" | "futures_return_bps">,
  (view: SnapshotView, ref: SnapshotRow, refIndex: number, seconds: number) => number | null
> = {
  coin_return_bps: (v, ref) =>
    ref.coinPrice === 0 ? null : rounded(((v.snapshot.coinPrice - ref.coinPrice) / ref.coinPrice) * 10_000),
  price_up_change_cents: (v, ref) => rounded((v.snapshot.priceUp - ref.priceUp) * 100),
  price_down_change_cents: (v, ref) => rounded((v.snapshot.priceDown - ref.priceDown) * 100),
  coin_volatility_bps: (v, _ref, refIndex) => rounded(Math.sqrt(squaredSince(v, refIndex))),
  beat_distance_sd: beatDistance,
  traded_volume: (v, _ref, _i, seconds) => traded(v, seconds, "shares"),
  traded_usdc: (v, _ref, _i, seconds) => traded(v, seconds, "usdc"),
};

/** Shares or USDC of the market's outcome tokens traded after decision - N s and at or before the decision. */
function traded(v: SnapshotView, seconds: number, unit: "shares" | "usdc"): number {
  const h = v.history as MarketHistory;
  return rounded(h.volume.between(v.time - seconds * MICROS_PER_SECOND, v.time, unit));
}

function lookbackFn(family: LookbackFeature, seconds: number): FeatureFn {
  if (family === "spot_return_bps" || family === "futures_return_bps") {
    const venue = family === "spot_return_bps" ? "spot" : "futures";
    return (v) => venueReturn(exchange(v)[venue], v.time, seconds);
  }
  const compute = LOOKBACK[family];
  return (v) => {
    const h = v.history;
    if (h === null || v.index < 0) return null;
    const refIndex = h.indexAtOrBefore(v.time - seconds * MICROS_PER_SECOND, v.index);
    return refIndex < 0 ? null : compute(v, h.at(refIndex), refIndex, seconds);
  };
}

/**
 * A Binance venue's return in bps from its price N s before the decision to its price at it. Binance's
 * record runs before and after the market's, so this is known from a market's first second where it
 * was recorded; unknown where either price is not.
 */
function venueReturn(venue: VenueHistory, time: number, seconds: number): number | null {
  const now = priceAt(venue, time);
  const before = priceAt(venue, time - seconds * MICROS_PER_SECOND);
  return now === null || before === null || before === 0 ? null : rounded(((now - before) / before) * 10_000);
}

/** The function computing a feature (a name the definition schema accepts); throws on any other. */
export function featureFn(name: string): FeatureFn {
  const feature = parseFeature(name);
  if (feature === null) throw new Error(`unknown feature ${name}`);
  if (feature.kind === "plain") return PLAIN[feature.name];
  if (feature.kind === "moment") return MOMENT[feature.name];
  if (feature.kind === "lookback") return lookbackFn(feature.family, feature.seconds);
  const { token } = feature;
  const ticks = feature.ticks ?? DEFAULT_DEPTH_TICKS;
  if (feature.family === "book_imbalance") return (v) => imbalance(v, token, ticks);
  const which = feature.family === "depth_bid" ? "bids" : "asks";
  return (v) => side(v, token, which, ticks);
}
