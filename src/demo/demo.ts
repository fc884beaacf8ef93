import { createHash } from "node:crypto";
import { displayedPrice, type Level, mirrorBook, type OrderBook } from "../domain/book.ts";
import { encodeBooks } from "../wire/book-codec.ts";
import {
  type Coin,
  coinFacts,
  MARKET_TYPE_SECONDS,
  MARKET_TYPES,
  type Market,
  type MarketType,
  SETTLEMENT_FEED,
  type SettlementFeed,
  winnerOf,
} from "../domain/market.ts";
import { DEMO_FEE_SCHEDULE, demoSettlement } from "../domain/settlement.ts";
import type { TradeRow } from "../domain/trade.ts";
import { formatSlug, polymarketSlug } from "../domain/slug.ts";
import type { SnapshotRow } from "../domain/snapshot.ts";
import { MICROS_PER_SECOND } from "../domain/time.ts";

/**
 * Deterministic demo data: plausible markets, prices and order books for every series, so that the
 * service can be tried without an upstream. The same (seed, anchor, counts, coins) always gives the
 * same bytes; every random draw comes from a seeded PRNG stream named after what it feeds, so that a
 * market's data depends only on the seed, the anchor and its own slug (plus its coin's price path).
 */

export interface DemoOptions {
  seed: number;
  /** Unix second "now": the latest market of each series contains it and is live. */
  anchor: number;
  /** Markets per series, per coin, including the live one. */
  counts: Record<MarketType, number>;
  coins: Coin[];
  /** Also a little Binance spot and futures data (src/demo/exchange-demo.ts). Default false. */
  exchange?: boolean;
  /**
   * How many of each series' latest markets also get events, their snapshots derived from them
   * (src/demo/seed.ts). Default DEMO_EVENT_MARKETS there; all zero: snapshots only, as before events.
   */
  eventMarkets?: Record<MarketType, number>;
  onProgress?: (doneSnapshots: number, totalSnapshots: number) => void;
}

// ---------------------------------------------------------------------------------------------------
// Randomness

/** 32-bit FNV-1a with a final avalanche, to turn stream names into PRNG seeds. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** mulberry32: tiny, fast and good enough for synthetic data; never Math.random, to stay reproducible. */
export class Rng {
  private state: number;
  private spareNormal = Number.NaN;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  static named(seed: number, stream: string): Rng {
    return new Rng(hash32(`${seed}:${stream}`));
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  /** Integer in [lo, hi], both included. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** Standard normal by Box-Muller; each pair of uniforms gives two draws, the second kept for later. */
  normal(): number {
    if (!Number.isNaN(this.spareNormal)) {
      const z = this.spareNormal;
      this.spareNormal = Number.NaN;
      return z;
    }
    const u1 = 1 - this.next(); // (0, 1]: log(0) would be -Infinity
    const u2 = this.next();
    const r = Math.sqrt(-2 * Math.log(u1));
    this.spareNormal = r * Math.sin(2 * Math.PI * u2);
    return r * Math.cos(2 * Math.PI * u2);
  }
}

/**
 * Standard normal CDF by Hart's rational approximation (algorithm 5666, as given by West 2005), good
 * to about 1e-14 and exactly 0.5 at 0, so a market that has not moved sits at even odds.
 */
const HART_NUMERATOR = [
  3.52624965998911e-2, 0.700383064443688, 6.37396220353165, 33.912866078383, 112.079291497871,
  221.213596169931, 220.206867912376,
];
const HART_DENOMINATOR = [
  8.83883476483184e-2, 1.75566716318264, 16.064177579207, 86.7807322029461, 296.564248779674,
  637.333633378831, 793.826512519948, 440.413735824752,
];

/** A polynomial with coefficients from the highest power down, evaluated at x. */
function horner(coefficients: number[], x: number): number {
  let value = 0;
  for (const c of coefficients) value = value * x + c;
  return value;
}

export function normalCdf(x: number): number {
  const a = Math.abs(x);
  if (a > 37) return x > 0 ? 1 : 0;
  const e = Math.exp((-a * a) / 2);
  let tail: number;
  if (a < 7.07106781186547) {
    tail = (e * horner(HART_NUMERATOR, a)) / horner(HART_DENOMINATOR, a);
  } else {
    // Continued fraction for the far tail.
    const cf = a + 1 / (a + 2 / (a + 3 / (a + 4 / (a + 0.65))));
    tail = e / cf / 2.506628274631;
  }
  return x > 0 ? 1 - tail : tail;
}

function roundTo(value: number, decimals: number): number {
  const scale = 10 ** decimals;
  return Math.round(value * scale) / scale;
}

// ---------------------------------------------------------------------------------------------------
// Coin prices

const SECONDS_PER_YEAR = 31_536_000;

interface CoinParams {
  annualVolatility: number;
  level: number;
  binanceDecimals: number;
}

const COIN_PARAMS: Record<Coin, CoinParams> = {
  btc: { annualVolatility: 0.5, level: 65_000, binanceDecimals: 2 },
  eth: { annualVolatility: 0.65, level: 3_500, binanceDecimals: 2 },
  sol: { annualVolatility: 0.8, level: 150, binanceDecimals: 3 },
  xrp: { annualVolatility: 0.8, level: 2.5, binanceDecimals: 4 },
  doge: { annualVolatility: 0.9, level: 0.2, binanceDecimals: 5 },
  bnb: { annualVolatility: 0.6, level: 650, binanceDecimals: 2 },
  hype: { annualVolatility: 1.0, level: 40, binanceDecimals: 3 },
};

/** A configured coin the demo has no figures for walks from 100 like a volatile coin. */
const OTHER_COIN: CoinParams = { annualVolatility: 0.9, level: 100, binanceDecimals: 3 };

function paramsOf(coin: Coin): CoinParams {
  return COIN_PARAMS[coin] ?? OTHER_COIN;
}

/** Per-second volatility of log price. */
export function perSecondSigma(coin: Coin): number {
  return paramsOf(coin).annualVolatility / Math.sqrt(SECONDS_PER_YEAR);
}

/**
 * One coin's prices for every second of [from, to], on both settlement feeds. Its volatility is not a
 * field: read it with perSecondSigma(coin). Node 24.21's V8 now and then (under load, with Maglev and
 * TurboFan both at work) gave the paths of two coins one shared box for that double, so the first
 * coin's path read the second's volatility: see docs/decisions.md, "A V8 bug in the demo's volatility".
 */
export interface CoinPath {
  coin: Coin;
  from: number;
  to: number;
  chainlink: Float64Array;
  binance: Float64Array;
}

export function feedSeries(path: CoinPath, feed: SettlementFeed): Float64Array {
  return feed === "chainlink" ? path.chainlink : path.binance;
}

export function priceAt(path: CoinPath, feed: SettlementFeed, second: number): number {
  if (second < path.from || second > path.to)
    throw new RangeError(`second ${second} is outside the price path`);
  return feedSeries(path, feed)[second - path.from];
}

/**
 * The walk runs backwards from the anchor, so the price of a given second depends on the seed and the
 * anchor only, not on how far back the counts reach; the live price sits near the coin's usual level.
 */
export function buildCoinPath(seed: number, coin: Coin, from: number, to: number): CoinPath {
  const params = paramsOf(coin);
  const sigma = perSecondSigma(coin);
  const rng = Rng.named(seed, `path:${coin}`);
  const n = to - from + 1;
  const chainlink = new Float64Array(n);
  const binance = new Float64Array(n);
  let logPrice = Math.log(params.level * rng.uniform(0.97, 1.03));
  const basis = basisFunction(rng);
  for (let i = n - 1; i >= 0; i--) {
    const p = roundTo(Math.exp(logPrice), 8);
    chainlink[i] = p;
    binance[i] = roundTo(p * (1 + basis(from + i)), params.binanceDecimals);
    logPrice -= sigma * rng.normal();
  }
  return { coin, from, to, chainlink, binance };
}

/** Binance trades a few bps off the Chainlink aggregate; two slow waves keep the gap smooth. */
function basisFunction(rng: Rng): (second: number) => number {
  const phase1 = rng.uniform(0, 2 * Math.PI);
  const phase2 = rng.uniform(0, 2 * Math.PI);
  const offset = rng.uniform(-1e-4, 1e-4);
  const w1 = (2 * Math.PI) / (6 * 3600);
  const w2 = (2 * Math.PI) / (47 * 60);
  return (t) => offset + 2.5e-4 * Math.sin(w1 * t + phase1) + 1e-4 * Math.sin(w2 * t + phase2);
}

// ---------------------------------------------------------------------------------------------------
// Market times and records

/** Daily markets open at 16:00 UTC (noon US Eastern in summer); the others on UTC multiples of their length. */
const DAILY_OFFSET = 16 * 3600;

function seriesOffset(type: MarketType): number {
  return type === "24h" ? DAILY_OFFSET : 0;
}

/** Start of the market of this type whose [start, end) contains the second. */
export function marketStartContaining(type: MarketType, second: number): number {
  const len = MARKET_TYPE_SECONDS[type];
  const offset = seriesOffset(type);
  return Math.floor((second - offset) / len) * len + offset;
}

/** Start times of a series' `count` latest markets, oldest first; the last one contains the anchor. */
export function seriesStarts(type: MarketType, count: number, anchor: number): number[] {
  const len = MARKET_TYPE_SECONDS[type];
  const live = marketStartContaining(type, anchor);
  return Array.from({ length: count }, (_, i) => live - (count - 1 - i) * len);
}

/** Markets wanted of a series; counts built from user input may leave a type out or go negative. */
function countOf(counts: Record<MarketType, number>, type: MarketType): number {
  const n = counts[type];
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/** First second any series reaches back to: where the coin price paths begin. */
export function demoSpanStart(anchor: number, counts: Record<MarketType, number>): number {
  let from = anchor;
  for (const type of MARKET_TYPES) {
    const count = countOf(counts, type);
    if (count > 0) from = Math.min(from, seriesStarts(type, count, anchor)[0]);
  }
  return from;
}

/** Snapshots a market has: every second of a resolved one, up to and including the anchor for the live one. */
export function snapshotCountOf(startTime: number, endTime: number, anchor: number): number {
  return anchor >= endTime ? endTime - startTime : anchor - startTime + 1;
}

const COIN_INDEX: Record<Coin, number> = { btc: 0, eth: 1, sol: 2 };

/**
 * Ids are numbered from the market's 5-minute slot, coin and type, which keeps them unique across
 * all series (every start time, daily ones included, falls on a 5-minute boundary). BTC, ETH and SOL
 * keep the numbering they had before coins were configuration; any other coin's ids are set apart by
 * a leading 9 and three digits of its code's hash.
 */
function numericIds(coin: Coin, type: MarketType, startTime: number): { marketId: string; eventId: string } {
  const slot = Math.floor(startTime / 300);
  const index = COIN_INDEX[coin];
  if (index === undefined) {
    const tag = String(hash32(`coin:${coin}`) % 1000).padStart(3, "0");
    const n = String(slot * 5 + MARKET_TYPES.indexOf(type)).padStart(10, "0");
    return { marketId: `9${tag}${n}`, eventId: `8${tag}${n}` };
  }
  const n = slot * 15 + index * 5 + MARKET_TYPES.indexOf(type);
  return { marketId: String(n), eventId: String(100_000_000 + n) };
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

const TOKEN_FLOOR = 10n ** 76n;

/** CLOB token ids look like Polymarket's: 77-digit decimals (a 256-bit hash folded into that range). */
function tokenId(slug: string, outcome: string): string {
  const n = BigInt(`0x${sha256Hex(`token:${slug}:${outcome}`)}`);
  return String(TOKEN_FLOOR + (n % (9n * TOKEN_FLOOR)));
}

function logUniform(rng: Rng, lo: number, hi: number): number {
  return Math.exp(rng.uniform(Math.log(lo), Math.log(hi)));
}

/** Builds the market record; `path` must cover the market's start and, once resolved, its end. */
export function buildMarket(
  seed: number,
  coin: Coin,
  type: MarketType,
  startTime: number,
  path: CoinPath,
  anchor: number,
): Market {
  const endTime = startTime + MARKET_TYPE_SECONDS[type];
  const slug = formatSlug(coin, type, startTime);
  const rng = Rng.named(seed, `meta:${slug}`);
  const feed = SETTLEMENT_FEED[type];
  const coinPriceStart = priceAt(path, feed, startTime);
  const createdAt = (startTime - 86_400) * MICROS_PER_SECOND + rng.int(0, 999_999);
  const updatedSub = rng.int(0, 999_999);
  const base = {
    slug,
    polymarketSlug: polymarketSlug(coin, type, startTime),
    coin,
    marketType: type,
    ...numericIds(coin, type, startTime),
    startTime,
    endTime,
    coinPriceStart,
    conditionId: `0x${sha256Hex(`condition:${slug}`)}`,
    clobTokenUp: tokenId(slug, "Up"),
    clobTokenDown: tokenId(slug, "Down"),
    createdAt,
    settlement: demoSettlement(type, startTime),
    feeSchedule: DEMO_FEE_SCHEDULE,
  };
  if (anchor < endTime) {
    return {
      ...base,
      coinPriceEnd: null,
      winner: null,
      finalVolume: null,
      finalLiquidity: null,
      resolvedAt: null,
      updatedAt: anchor * MICROS_PER_SECOND + updatedSub,
    };
  }
  const coinPriceEnd = priceAt(path, feed, endTime);
  // Never resolved after "now": a market that ended moments before the anchor resolves by the anchor.
  const resolvedAt = Math.min(endTime + rng.int(10, 120), anchor);
  // Longer markets trade more, though less than in proportion to their length.
  const lengthFactor = Math.sqrt(MARKET_TYPE_SECONDS[type] / 300);
  return {
    ...base,
    coinPriceEnd,
    winner: winnerOf(coinPriceStart, coinPriceEnd),
    finalVolume: roundTo(logUniform(rng, 20_000, 150_000) * lengthFactor, 2),
    finalLiquidity: roundTo(logUniform(rng, 5_000, 50_000), 2),
    resolvedAt,
    updatedAt: resolvedAt * MICROS_PER_SECOND + updatedSub,
  };
}

// ---------------------------------------------------------------------------------------------------
// Order books

const BOOK_DEPTH = 20;
const MIN_TICK = 1;
const MAX_TICK = 99;
/** Chance per second that a level's resting size changes; books move a little each second, not wholesale. */
const RESAMPLE_CHANCE = 0.15;
const WALL_CHANCE = 0.01;

/** P(end price >= start price) for a driftless log-price walk, kept off the 0 and 1 edges like the real books. */
export function upProbability(
  price: number,
  startPrice: number,
  sigma: number,
  remainingSeconds: number,
): number {
  const p = normalCdf(Math.log(price / startPrice) / (sigma * Math.sqrt(remainingSeconds)));
  return Math.min(0.99, Math.max(0.01, p));
}

/**
 * The Up token's book of one market over time. Sizes are kept per level (distance from the touch) in
 * cents of a share and redrawn now and then; prices are integer ticks turned into decimals once.
 */
export class BookModel {
  private readonly rng: Rng;
  private readonly bidSizes = new Int32Array(BOOK_DEPTH);
  private readonly askSizes = new Int32Array(BOOK_DEPTH);
  private spread = 1;
  private wideSecondsLeft = 0;

  constructor(rng: Rng) {
    this.rng = rng;
    for (let i = 0; i < BOOK_DEPTH; i++) {
      this.bidSizes[i] = this.drawSize(i);
      this.askSizes[i] = this.drawSize(i);
    }
  }

  /** Resting size in cents of a share: lognormal, deeper levels larger, and now and then a wall. */
  private drawSize(level: number): number {
    if (level >= 3 && this.rng.next() < WALL_CHANCE)
      return Math.round(this.rng.uniform(10_000, 50_000) * 100);
    const median = 60 * (1 + level) ** 1.1;
    // Truncating the normal (rather than clamping the size) keeps odd round sizes from piling up at a cap.
    let z = this.rng.normal();
    while (Math.abs(z) > 2.5) z = this.rng.normal();
    return Math.round(median * Math.exp(0.7 * z) * 100);
  }

  private step(): void {
    for (let i = 0; i < BOOK_DEPTH; i++) {
      if (this.rng.next() < RESAMPLE_CHANCE) this.bidSizes[i] = this.drawSize(i);
      if (this.rng.next() < RESAMPLE_CHANCE) this.askSizes[i] = this.drawSize(i);
    }
    if (this.wideSecondsLeft > 0) {
      this.wideSecondsLeft--;
      if (this.wideSecondsLeft === 0) this.spread = 1;
    } else if (this.rng.next() < 0.02) {
      this.spread = this.rng.int(2, 3);
      this.wideSecondsLeft = this.rng.int(3, 20);
    }
  }

  /** Advances one second and returns the Up book around the given probability, best first. */
  next(probability: number): OrderBook {
    this.step();
    const bestBid = Math.max(
      MIN_TICK,
      Math.min(MAX_TICK - this.spread, Math.floor(probability * 100 + 1e-9)),
    );
    const bestAsk = bestBid + this.spread;
    const bids: Level[] = [];
    const asks: Level[] = [];
    for (let i = 0; i < BOOK_DEPTH && bestBid - i >= MIN_TICK; i++) {
      bids.push({ price: (bestBid - i) / 100, size: this.bidSizes[i] / 100 });
    }
    for (let i = 0; i < BOOK_DEPTH && bestAsk + i <= MAX_TICK; i++) {
      asks.push({ price: (bestAsk + i) / 100, size: this.askSizes[i] / 100 });
    }
    return { bids, asks };
  }
}

// ---------------------------------------------------------------------------------------------------
// Markets with their snapshots

/** One generated market: its record and, on demand, its snapshot rows (regenerated identically per call). */
export interface DemoMarket {
  market: Market;
  /** The coin's prices the market's data follows (its events are generated over it too). */
  path: CoinPath;
  snapshotCount: number;
  snapshots(): Generator<SnapshotRow>;
}

/** One second of a demo market: its coin price, both tokens' books and the prices they display. */
export interface DemoSecond {
  second: number;
  coinPrice: number;
  up: OrderBook;
  down: OrderBook;
  priceUp: number;
  priceDown: number;
}

/**
 * A market's seconds from its start to its end (exclusive) or the anchor (inclusive): the BookModel's
 * books, which the snapshots encode and the demo's events (demo-events.ts) change from second to second.
 */
export function* marketSeconds(
  seed: number,
  market: Market,
  path: CoinPath,
  anchor: number,
): Generator<DemoSecond> {
  const prices = feedSeries(path, SETTLEMENT_FEED[market.marketType]);
  const startPrice = priceAt(path, SETTLEMENT_FEED[market.marketType], market.startTime);
  const sigma = perSecondSigma(market.coin);
  const last = Math.min(market.endTime - 1, anchor);
  const book = new BookModel(Rng.named(seed, `book:${market.slug}`));
  let lastUp: number | null = null;
  let lastDown: number | null = null;
  for (let t = market.startTime; t <= last; t++) {
    const coinPrice = prices[t - path.from];
    const up = book.next(upProbability(coinPrice, startPrice, sigma, market.endTime - t));
    const down = mirrorBook(up);
    // The books never leave the midpoint rule, but the last trade is what Polymarket falls back on.
    const priceUp: number = displayedPrice(up, lastUp) ?? lastUp ?? 0.5;
    const priceDown: number = displayedPrice(down, lastDown) ?? lastDown ?? 0.5;
    lastUp = priceUp;
    lastDown = priceDown;
    yield { second: t, coinPrice, up, down, priceUp, priceDown };
  }
}

/** Snapshot rows of a market, one per second from its start to its end (exclusive) or the anchor (inclusive). */
export function* marketSnapshots(
  seed: number,
  market: Market,
  path: CoinPath,
  anchor: number,
): Generator<SnapshotRow> {
  for (const s of marketSeconds(seed, market, path, anchor)) {
    yield {
      time: s.second * MICROS_PER_SECOND,
      coinPrice: s.coinPrice,
      priceUp: s.priceUp,
      priceDown: s.priceDown,
      books: encodeBooks(s.up, s.down),
    };
  }
}

/** A series' markets, oldest first, each with its snapshots; `path` must cover the oldest start to the anchor. */
export function* generateSeries(
  seed: number,
  path: CoinPath,
  type: MarketType,
  count: number,
  anchor: number,
): Generator<DemoMarket> {
  for (const start of seriesStarts(type, count, anchor)) {
    const market = buildMarket(seed, path.coin, type, start, path, anchor);
    yield {
      market,
      path,
      snapshotCount: snapshotCountOf(market.startTime, market.endTime, anchor),
      snapshots: () => marketSnapshots(seed, market, path, anchor),
    };
  }
}

/** The series the demo has of a coin: those Polymarket runs for it (5m and 15m only, for the newer coins). */
function demoTypesOf(coin: Coin): MarketType[] {
  return MARKET_TYPES.filter((type) => coinFacts(coin).types.includes(type));
}

/** Every market of the demo: coin by coin, series by series, oldest first within a series. */
export function* generateDemo(options: Omit<DemoOptions, "onProgress">): Generator<DemoMarket> {
  const from = demoSpanStart(options.anchor, options.counts);
  for (const coin of options.coins) {
    const path = buildCoinPath(options.seed, coin, from, options.anchor);
    for (const type of demoTypesOf(coin)) {
      const count = countOf(options.counts, type);
      if (count > 0) yield* generateSeries(options.seed, path, type, count, options.anchor);
    }
  }
}

/** Total snapshots the demo will write, known before generating any. */
export function demoSnapshotTotal(options: Omit<DemoOptions, "onProgress">): number {
  let total = 0;
  for (const coin of options.coins) {
    for (const type of demoTypesOf(coin)) {
      const len = MARKET_TYPE_SECONDS[type];
      for (const start of seriesStarts(type, countOf(options.counts, type), options.anchor)) {
        total += snapshotCountOf(start, start + len, options.anchor);
      }
    }
  }
  return total;
}

/**
 * A few trades a minute of a demo market, drawn from a stream of their own (so that the snapshots'
 * streams are as before): each at the displayed price of its outcome, a cent off now and then.
 */
export function demoTrades(
  seed: number,
  slug: string,
): (row: Pick<SnapshotRow, "time" | "priceUp" | "priceDown">) => TradeRow | null {
  const rng = Rng.named(seed, `trades:${slug}`);
  return (row) => {
    if (rng.next() >= 0.08) return null;
    const outcome = rng.next() < 0.5 ? "Up" : "Down";
    const side = rng.next() < 0.55 ? "BUY" : "SELL";
    const shown = outcome === "Up" ? row.priceUp : row.priceDown;
    const cents = Math.min(
      99,
      Math.max(1, Math.round(shown * 100) + (side === "BUY" ? 1 : -1) * rng.int(0, 1)),
    );
    return {
      time: row.time + rng.int(0, 999) * 1000,
      outcome,
      side,
      price: cents / 100,
      size: roundTo(logUniform(rng, 5, 2_000), 2),
      feeRateBps: 0,
      transactionHash: null,
    };
  };
}
