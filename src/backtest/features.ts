import type { Level, OrderBook } from "../domain/book.ts";
import { decodeBooks } from "../wire/book-codec.ts";
import type { Coin, FeeSchedule, MarketType, Winner } from "../domain/market.ts";
import type { SnapshotRow } from "../domain/snapshot.ts";
import { MICROS_PER_SECOND, type Micros } from "../domain/time.ts";
import { DEFAULT_DEPTH_TICKS } from "./definition.ts";
import { parseFeature, type PlainFeature } from "./feature-registry.ts";

/**
 * The features of DESIGN 3.7, computed from one snapshot and what the market's record says before it
 * opens (start and end times, the start price). Nothing here can see a later snapshot or the outcome.
 */

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
  private decoded: { up: OrderBook; down: OrderBook } | null | undefined;

  constructor(market: ReplayMarket, snapshot: SnapshotRow) {
    this.market = market;
    this.snapshot = snapshot;
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
    return this.book(token)?.bids[0]?.price ?? null;
  }

  bestAsk(token: Token): number | null {
    return this.book(token)?.asks[0]?.price ?? null;
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

/** The function computing a feature (a name the definition schema accepts); throws on any other. */
export function featureFn(name: string): FeatureFn {
  const feature = parseFeature(name);
  if (feature === null) throw new Error(`unknown feature ${name}`);
  if (feature.kind === "plain") return PLAIN[feature.name];
  const { token } = feature;
  const ticks = feature.ticks ?? DEFAULT_DEPTH_TICKS;
  if (feature.family === "book_imbalance") return (v) => imbalance(v, token, ticks);
  const which = feature.family === "depth_bid" ? "bids" : "asks";
  return (v) => side(v, token, which, ticks);
}
