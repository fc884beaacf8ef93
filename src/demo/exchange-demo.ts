import { EMPTY_BOOK, type Level } from "../domain/book.ts";
import { encodeBooks } from "../wire/book-codec.ts";
import {
  type CandleRow,
  DEPTH_LEVELS,
  type ExchangeBatch,
  type FundingRow,
  type MarkPriceRow,
  type OpenInterestRow,
  type TradeRow,
  VENUES,
  type Venue,
} from "../domain/exchange.ts";
import type { Coin } from "../domain/market.ts";
import { MICROS_PER_SECOND } from "../domain/time.ts";
import type { ExchangeStore } from "../store/ports/exchange-store.ts";
import { buildCoinPath, type CoinPath, Rng } from "./demo.ts";

/**
 * Deterministic demo data of the exchange endpoints, so that they answer on a fresh start: the same
 * (seed, anchor, coins) give the same rows. Prices follow the demo's Binance price path (demo.ts), so
 * spot agrees with the markets' settlement feed; futures trade a few basis points above spot.
 *
 * Per coin and venue, up to the anchor: depth snapshots and trades of the last 5 minutes (one a
 * second), closed 1m candles of the last 2 hours; futures also open interest every 5 minutes over 2
 * hours, mark prices of the last 5 minutes and the funding rates settled in the last day.
 */

export interface ExchangeDemoOptions {
  seed: number;
  /** Unix second "now". */
  anchor: number;
  coins: Coin[];
}

export const DEMO_DEPTH_SECONDS = 300;
export const DEMO_CANDLE_MINUTES = 120;
const FUNDING_DAYS = 1;
const FUNDING_EVERY = 8 * 3600;

/** Price tick and quantity step of each book, as Binance lists them (decimals). */
const DECIMALS_BY_VENUE: Record<Venue, Record<Coin, { price: number; qty: number }>> = {
  spot: {
    btc: { price: 2, qty: 5 },
    eth: { price: 2, qty: 4 },
    sol: { price: 2, qty: 3 },
    xrp: { price: 4, qty: 0 },
    doge: { price: 5, qty: 0 },
    bnb: { price: 2, qty: 3 },
    hype: { price: 3, qty: 2 },
  },
  futures: {
    btc: { price: 1, qty: 3 },
    eth: { price: 2, qty: 3 },
    sol: { price: 2, qty: 0 },
    xrp: { price: 4, qty: 1 },
    doge: { price: 5, qty: 0 },
    bnb: { price: 2, qty: 2 },
    hype: { price: 3, qty: 2 },
  },
};

/** Typical order sizes (base asset) by coin. */
const SIZE_SCALES: Record<Coin, number> = {
  btc: 0.5,
  eth: 6,
  sol: 120,
  xrp: 8_000,
  doge: 100_000,
  bnb: 30,
  hype: 500,
};

/** A configured coin without figures here trades like a mid-priced coin. */
const DECIMALS = {
  spot: (coin: Coin) => DECIMALS_BY_VENUE.spot[coin] ?? { price: 3, qty: 2 },
  futures: (coin: Coin) => DECIMALS_BY_VENUE.futures[coin] ?? { price: 3, qty: 2 },
};
const SIZE_SCALE = (coin: Coin): number => SIZE_SCALES[coin] ?? 100;

const round = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals;

/** Futures premium over spot: a few basis points, slowly moving. */
function futuresPrice(path: CoinPath, second: number, decimals: number): number {
  const spot = path.binance[second - path.from];
  return round(spot * (1 + 3e-4 + 2e-4 * Math.sin(second / 977)), decimals);
}

function priceAt(path: CoinPath, venue: Venue, coin: Coin, second: number): number {
  const d = DECIMALS[venue](coin).price;
  return venue === "spot" ? round(path.binance[second - path.from], d) : futuresPrice(path, second, d);
}

function size(rng: Rng, coin: Coin, decimals: number): number {
  const step = 10 ** -decimals;
  return Math.max(step, round(SIZE_SCALE(coin) * Math.exp(rng.normal()), decimals));
}

function depthBook(rng: Rng, price: number, coin: Coin, venue: Venue): { bids: Level[]; asks: Level[] } {
  const { price: pd, qty: qd } = DECIMALS[venue](coin);
  const scale = 10 ** pd;
  const bestBid = Math.floor(price * scale + 1e-6) - 1;
  const bids: Level[] = [];
  const asks: Level[] = [];
  for (let i = 0, bid = bestBid, ask = bestBid + 1; i < DEPTH_LEVELS; i++) {
    bids.push({ price: bid / scale, size: size(rng, coin, qd) });
    asks.push({ price: ask / scale, size: size(rng, coin, qd) });
    bid -= rng.int(1, 3);
    ask += rng.int(1, 3);
  }
  return { bids, asks };
}

/** One coin on one venue: what every row of it is drawn from, in one stream of draws. */
interface VenueDemo {
  rng: Rng;
  path: CoinPath;
  coin: Coin;
  venue: Venue;
  anchor: number;
}

/** Depth snapshots and trades of the last DEMO_DEPTH_SECONDS, one a second. */
function depthAndTrades({ rng, path, coin, venue, anchor }: VenueDemo): ExchangeBatch {
  const { qty: qd } = DECIMALS[venue](coin);
  const depth = [];
  const trades: TradeRow[] = [];
  const firstTradeId = 1_000_000 + (anchor - DEMO_DEPTH_SECONDS) * 3;
  for (let s = anchor - DEMO_DEPTH_SECONDS + 1; s <= anchor; s++) {
    const p = priceAt(path, venue, coin, s);
    depth.push({
      coin,
      venue,
      time: s * MICROS_PER_SECOND,
      books: encodeBooks(depthBook(rng, p, coin, venue), EMPTY_BOOK),
    });
    trades.push({
      coin,
      venue,
      id: firstTradeId + (s - anchor + DEMO_DEPTH_SECONDS) * 3,
      time: s * MICROS_PER_SECOND + rng.int(0, 999) * 1000,
      price: p,
      qty: size(rng, coin, qd),
      buyerMaker: rng.next() < 0.5,
    });
  }
  return { depth, trades };
}

/** Closed 1m candles of the last DEMO_CANDLE_MINUTES. */
function candles({ rng, path, coin, venue, anchor }: VenueDemo): CandleRow[] {
  const { qty: qd } = DECIMALS[venue](coin);
  const rows: CandleRow[] = [];
  const lastMinute = Math.floor(anchor / 60) * 60 - 60; // the last closed minute
  for (let m = lastMinute - (DEMO_CANDLE_MINUTES - 1) * 60; m <= lastMinute; m += 60) {
    const prices = Array.from({ length: 60 }, (_, i) => priceAt(path, venue, coin, m + i));
    const volume = round(SIZE_SCALE(coin) * 40 * rng.uniform(0.3, 3), qd);
    const mid = prices.reduce((a, b) => a + b, 0) / prices.length;
    const takerShare = rng.uniform(0.3, 0.7);
    rows.push({
      coin,
      venue,
      interval: "1m",
      openTime: m * MICROS_PER_SECOND,
      open: prices[0],
      high: Math.max(...prices),
      low: Math.min(...prices),
      close: prices[59],
      volume,
      quoteVolume: round(volume * mid, 8),
      trades: rng.int(200, 3000),
      takerBuyVolume: round(volume * takerShare, qd),
      takerBuyQuoteVolume: round(volume * takerShare * mid, 8),
    });
  }
  return rows;
}

/** Futures open interest every 5 minutes over the candles' span. */
function openInterest({ rng, path, coin, venue, anchor }: VenueDemo): OpenInterestRow[] {
  const rows: OpenInterestRow[] = [];
  const firstPeriod = Math.floor(anchor / 300) * 300 - DEMO_CANDLE_MINUTES * 60 + 300;
  let oi = SIZE_SCALE(coin) * 150_000;
  for (let t = firstPeriod; t <= anchor; t += 300) {
    oi = round(oi * (1 + 0.002 * rng.normal()), 3);
    rows.push({
      coin,
      time: t * MICROS_PER_SECOND,
      openInterest: oi,
      openInterestValue: round(oi * priceAt(path, venue, coin, t), 8),
    });
  }
  return rows;
}

/** Futures funding rates settled in the last FUNDING_DAYS. */
function funding({ rng, path, coin, venue, anchor }: VenueDemo): FundingRow[] {
  const rows: FundingRow[] = [];
  const lastFunding = Math.floor(anchor / FUNDING_EVERY) * FUNDING_EVERY;
  for (let t = lastFunding - (FUNDING_DAYS * 86400 - FUNDING_EVERY); t <= lastFunding; t += FUNDING_EVERY) {
    rows.push({
      coin,
      time: t * MICROS_PER_SECOND,
      rate: round(0.0001 + 0.00005 * rng.normal(), 8),
      // Settlements before the price path began take its first price.
      markPrice: priceAt(path, venue, coin, Math.max(t, path.from)),
    });
  }
  return rows;
}

/** Futures mark prices of the last DEMO_DEPTH_SECONDS, carrying the latest funding rate. */
function markPrices({ rng, path, coin, venue, anchor }: VenueDemo, latest: FundingRow): MarkPriceRow[] {
  const rows: MarkPriceRow[] = [];
  const nextFunding = latest.time + FUNDING_EVERY * MICROS_PER_SECOND;
  for (let s = anchor - DEMO_DEPTH_SECONDS + 1; s <= anchor; s++) {
    const index = round(path.binance[s - path.from], 8);
    rows.push({
      coin,
      time: s * MICROS_PER_SECOND,
      markPrice: round(priceAt(path, venue, coin, s) + 0.01 * rng.normal(), 8),
      indexPrice: index,
      estimatedSettlePrice: index,
      fundingRate: latest.rate,
      nextFundingTime: nextFunding,
    });
  }
  return rows;
}

/** Every demo row of one coin and venue; the parts draw from one stream, in this order. */
function* venueRows(
  seed: number,
  path: CoinPath,
  coin: Coin,
  venue: Venue,
  anchor: number,
): Generator<ExchangeBatch> {
  const demo: VenueDemo = { rng: Rng.named(seed, `exchange:${coin}:${venue}`), path, coin, venue, anchor };
  yield depthAndTrades(demo);
  yield { candles: candles(demo) };
  if (venue !== "futures") return;
  const interest = openInterest(demo);
  const rates = funding(demo);
  yield { openInterest: interest, funding: rates, markPrices: markPrices(demo, rates[rates.length - 1]) };
}

/** Writes the exchange demo into a store; rerunning it adds nothing (writes are idempotent). */
export async function seedExchangeDemo(store: ExchangeStore, options: ExchangeDemoOptions): Promise<number> {
  const from = options.anchor - DEMO_CANDLE_MINUTES * 60 - 120;
  let rows = 0;
  for (const coin of options.coins) {
    const path = buildCoinPath(options.seed, coin, from, options.anchor);
    for (const venue of VENUES) {
      for (const batch of venueRows(options.seed, path, coin, venue, options.anchor)) {
        const counts = await store.insertBatch(batch);
        rows += Object.values(counts).reduce((a, b) => a + b, 0);
      }
    }
  }
  return rows;
}
