import { createReadStream, statSync } from "node:fs";
import { basename } from "node:path";
import type { Readable } from "node:stream";
import { createInterface } from "node:readline";
import type { Coin, Market } from "../domain/market.ts";
import { type PricePoint, settlementName } from "../domain/settlement.ts";
import { PriceFeed } from "../upstream/price-feed.ts";
import { type FeedFile, ImportError } from "./upstream-import.ts";
import { zipEntryStream } from "./zip.ts";

/**
 * Coin prices for snapshots derived from imported events (DESIGN 3.5, 3.11): each coin's Chainlink
 * feed files (the upstream importer's shapes: the instantaneous stream or a TWAP stream) and Binance's
 * public 1 s klines. A market takes, in this order, its own settlement stream (DESIGN 3.4), else
 * Chainlink's instantaneous stream, else Binance's 1 s closes; which one filled its `coin_price` is
 * its coin price source (docs/archives.md). The 1 s klines also give the 1m candles' opens and closes
 * that settle 1h and 24h markets (DESIGN 3.4): `candlePrice`.
 */

/** Where a market's snapshot coin prices came from: a settlement feed's name, or `binance_1s`. */
export type CoinPriceSource = string;

export const BINANCE_1S = "binance_1s";

/** A coin's price at a second (the tick in effect, at most `maxStalenessS` old), and where it came from. */
export interface CoinPriceSeries {
  source: CoinPriceSource;
  at(second: number): number | null;
}

/**
 * What Binance's 1 s klines say of the 1m candles they make up: a 1m candle opens at its first second's
 * open and closes at its last second's close. Only those two seconds of each minute are kept.
 */
export class MinuteCandles {
  /** By the minute's first second. */
  private readonly opens = new Map<number, number>();
  private readonly closes = new Map<number, number>();

  /** One 1 s kline, opening at `second`. */
  add(second: number, open: number, close: number): void {
    const inMinute = ((second % 60) + 60) % 60;
    if (inMinute === 0) this.opens.set(second, open);
    if (inMinute === 59) this.closes.set(second - 59, close);
  }

  merge(other: MinuteCandles): void {
    for (const [s, v] of other.opens) this.opens.set(s, v);
    for (const [s, v] of other.closes) this.closes.set(s, v);
  }

  /** The open or close of the 1m candle opening at `openTime`; null when that second's kline is missing. */
  price(openTime: number, field: "open" | "close"): number | null {
    return (field === "open" ? this.opens : this.closes).get(openTime) ?? null;
  }
}

/** A file of Binance's 1 s klines: its closes as a price feed, and the 1m candles' edges. */
export interface BinanceKlines {
  feed: PriceFeed;
  candles: MinuteCandles;
}

export class CoinPrices {
  /** By coin, then by source name. */
  private readonly feeds = new Map<Coin, Map<CoinPriceSource, PriceFeed>>();
  private readonly candles = new Map<Coin, MinuteCandles>();
  private readonly maxStalenessS: number;

  constructor(maxStalenessS: number) {
    this.maxStalenessS = maxStalenessS;
  }

  add(coin: Coin, source: CoinPriceSource, feed: PriceFeed): void {
    let byName = this.feeds.get(coin);
    if (!byName) this.feeds.set(coin, (byName = new Map()));
    const existing = byName.get(source);
    if (!existing) {
      byName.set(source, feed);
      return;
    }
    // Several files of one stream (one a day): one feed.
    for (const t of feed.ticks()) existing.addTick(t.second, t.value, t.receivedAtMs);
  }

  /** A file of 1 s klines of a coin: its closes as the `binance_1s` feed, and its 1m candles. */
  addKlines(coin: Coin, klines: BinanceKlines): void {
    this.add(coin, BINANCE_1S, klines.feed);
    let candles = this.candles.get(coin);
    if (!candles) this.candles.set(coin, (candles = new MinuteCandles()));
    candles.merge(klines.candles);
  }

  /** A settlement price on a Binance 1m candle (DESIGN 3.4) from the coin's 1 s klines; null when not given. */
  candlePrice(coin: Coin, point: Extract<PricePoint, { kind: "candle" }>): number | null {
    return this.candles.get(coin)?.price(point.openTime, point.field) ?? null;
  }

  /** The series a market's snapshots take their coin price from; null when no file covers its coin. */
  forMarket(market: Market): CoinPriceSeries | null {
    const byName = this.feeds.get(market.coin);
    if (!byName) return null;
    for (const source of [settlementName(market.settlement), "chainlink", BINANCE_1S]) {
      const feed = byName.get(source);
      if (feed) return { source, at: (second) => this.priceAt(feed, second) };
    }
    return null;
  }

  private priceAt(feed: PriceFeed, second: number): number | null {
    const tick = feed.inEffectAt(second);
    return tick !== null && second - tick.tickSecond <= this.maxStalenessS ? tick.value : null;
  }
}

/** `[COIN:]FEED` where FEED is the upstream importer's `[twapN=]FILE`; the coin from the file name otherwise. */
export function parseCoinFeedArgument(
  text: string,
  coins: readonly Coin[],
  parseFeed: (text: string) => FeedFile | null,
): { coin: Coin; feed: FeedFile } | { problem: string } {
  const m = /^([a-z0-9]+):(.+)$/i.exec(text);
  const prefixed = m && coins.includes(m[1].toLowerCase()) ? m[1].toLowerCase() : null;
  const feed = parseFeed(prefixed ? (m as RegExpExecArray)[2] : text);
  if (feed === null)
    return { problem: `--feed ${text}: the TWAP lookback must be a positive number of seconds` };
  const coin = prefixed ?? coinOfFileName(feed.path, coins);
  if (coin === null) return { problem: `--feed ${text}: name the coin (--feed btc:FILE)` };
  return { coin, feed };
}

/** The configured coin a file's name names (`chainlink-btcusd-...`, `BTCUSDT-1s-...`), or null. */
export function coinOfFileName(path: string, coins: readonly Coin[]): Coin | null {
  const words = basename(path)
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  for (const w of words) {
    for (const coin of coins) if (w === coin || w === `${coin}usd` || w === `${coin}usdt`) return coin;
  }
  return null;
}

/**
 * Binance's 1 s klines (data.binance.vision: a zip of one CSV, or the CSV): `open_time, open, high,
 * low, close, ...`, times in ms, or µs (spot files from 2025 on). The close of the candle opening at
 * second s is the price in effect from s + 1; the opens and closes at minutes' edges make the 1m candles.
 */
export async function readBinanceKlines(path: string): Promise<BinanceKlines> {
  const feed = new PriceFeed();
  const candles = new MinuteCandles();
  let input: Readable;
  try {
    input = path.toLowerCase().endsWith(".zip")
      ? (await zipEntryStream(path, statSync(path).size)).stream
      : createReadStream(path);
  } catch (err) {
    throw new ImportError(path, null, err instanceof Error ? err.message : String(err));
  }
  let no = 0;
  try {
    for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      no++;
      const cells = line.trim().split(",");
      if (cells.length < 5 || !/^\d+$/.test(cells[0])) continue; // a header line, or the end
      const openTime = Number(cells[0]);
      const ms = openTime >= 1e14 ? Math.floor(openTime / 1000) : openTime;
      const open = Number(cells[1]);
      const close = Number(cells[4]);
      if (!Number.isFinite(close)) throw new ImportError(path, no, `close is not a number: ${cells[4]}`);
      if (!Number.isFinite(open)) throw new ImportError(path, no, `open is not a number: ${cells[1]}`);
      const second = Math.floor(ms / 1000);
      feed.addTick(second + 1, close, (second + 1) * 1000);
      candles.add(second, open, close);
    }
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError(path, null, err instanceof Error ? err.message : String(err));
  }
  if (feed.size === 0) throw new ImportError(path, null, "no kline rows");
  return { feed, candles };
}
