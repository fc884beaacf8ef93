import type { OrderBook } from "../domain/book.ts";
import type { CoinEvent, MarketEvent, MarketEventType } from "../domain/event.ts";
import type { Market } from "../domain/market.ts";
import { MICROS_PER_SECOND } from "../domain/time.ts";
import type { TradeRow } from "../domain/trade.ts";
import { type CoinPath, demoTrades, hash32, marketSeconds, priceAt, Rng } from "./demo.ts";

/**
 * A demo market's event stream in Polymarket's market-channel shapes (DESIGN 3.10), generated from the
 * same BookModel as its snapshots, so that the snapshots derived from the events are the demo's:
 * - a `book` per token when the market starts (bids ascending, asks descending, as upstream sends them);
 * - each later second, one `price_change` turning the previous second's books into this second's, with
 *   an entry per changed level of the Up token followed by the mirrored entry of the Down token (a bid
 *   for Up at p is an ask for Down at 1-p), each with its token's best bid and ask after it;
 * - each of the demo's trades (demoTrades) as a `last_trade_price`, followed by a `book` of the traded
 *   token, as upstream sends one after a trade;
 * - a resolved market's `market_resolved` after its end.
 *
 * Times: the messages that make a second's books are received within the second before it (the
 * snapshot at second t is the book after every event received at or before t); a trade is received a
 * few ms after its time. Each `timestamp` (ms, the upstream's send time) is a few ms before the receive
 * time. Prices and sizes are decimal strings written as the upstream writes them ("0.5", "123.4").
 * Every draw comes from a stream of its own (`events:<slug>`): the books and trades are as before.
 */

/** Prices are integer ticks of a cent in the demo's books. */
const TICKS = 100;

/** Network delay between the upstream's timestamp and our receive time, in µs. */
const MIN_DELAY_US = 1_000;
const MAX_DELAY_US = 40_000;

type Side = "BUY" | "SELL";

/** The Up token's book by tick: size in the upstream's decimal, 0 where no level rests. */
interface TickBook {
  bids: Float64Array;
  asks: Float64Array;
}

function emptyTickBook(): TickBook {
  return { bids: new Float64Array(TICKS + 1), asks: new Float64Array(TICKS + 1) };
}

function tickOf(price: number): number {
  return Math.round(price * TICKS);
}

/** Each tick's price as the upstream writes it ("0.5", "0.51"; "0" and "1" for an empty side's best). */
const PRICE_TEXT = Array.from({ length: TICKS + 1 }, (_, tick) => String(tick / TICKS));

function priceText(tick: number): string {
  return PRICE_TEXT[tick];
}

function tickBookOf(book: OrderBook): TickBook {
  const b = emptyTickBook();
  for (const l of book.bids) b.bids[tickOf(l.price)] = l.size;
  for (const l of book.asks) b.asks[tickOf(l.price)] = l.size;
  return b;
}

/** Best bid and ask ticks of the Up book; 0 and TICKS stand for an empty side, as the upstream says. */
function bestTicks(b: TickBook): { bid: number; ask: number } {
  return { bid: bestBidBelow(b, TICKS - 1), ask: bestAskAbove(b, 1) };
}

function bestBidBelow(b: TickBook, from: number): number {
  for (let t = from; t > 0; t--) if (b.bids[t] > 0) return t;
  return 0;
}

function bestAskAbove(b: TickBook, from: number): number {
  for (let t = from; t < TICKS; t++) if (b.asks[t] > 0) return t;
  return TICKS;
}

const HEX_BYTES = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Forty hex digits, like the upstream's book hashes. */
function hashOf(rng: Rng): string {
  let hex = "";
  for (let i = 0; i < 5; i++) {
    const n = Math.floor(rng.next() * 4294967296);
    hex +=
      HEX_BYTES[n >>> 24] + HEX_BYTES[(n >>> 16) & 255] + HEX_BYTES[(n >>> 8) & 255] + HEX_BYTES[n & 255];
  }
  return hex;
}

/** One level change of the Up book: the side and tick, and the new size (0 removes the level). */
interface LevelChange {
  side: Side;
  tick: number;
  size: number;
}

/**
 * The level changes that turn one Up book into the next: removals first, so that no moment in between
 * shows a crossed book (what remains is then always a part of the next book), then new and resized levels.
 */
function levelChanges(from: TickBook, to: TickBook): LevelChange[] {
  const removals: LevelChange[] = [];
  const sets: LevelChange[] = [];
  for (const [side, a, b] of [
    ["BUY", from.bids, to.bids],
    ["SELL", from.asks, to.asks],
  ] as const) {
    for (let tick = 1; tick < TICKS; tick++) {
      if (a[tick] === b[tick]) continue;
      (b[tick] === 0 ? removals : sets).push({ side, tick, size: b[tick] });
    }
  }
  return [...removals, ...sets];
}

/** What a demo market's stream is made of; the tokens' books follow the market's BookModel. */
export interface DemoEventOptions {
  seed: number;
  market: Market;
  path: CoinPath;
  anchor: number;
  /** Called with each of the market's trades (the demo's trades table holds the same), in time order. */
  onTrade?: (trade: TradeRow) => void;
}

/** The messages of one market, with what they need to remember between seconds. */
class DemoStream {
  readonly rng: Rng;
  readonly market: Market;
  readonly up: string;
  readonly down: string;
  /** The Up book after the changes emitted so far. */
  current = emptyTickBook();
  /** Trades received later than the changes emitted so far, by receive time. */
  readonly pending: { receivedUs: number; trade: TradeRow }[] = [];
  lastReceivedUs = 0;

  constructor(seed: number, market: Market) {
    this.rng = Rng.named(seed, `events:${market.slug}`);
    this.market = market;
    this.up = market.clobTokenUp;
    this.down = market.clobTokenDown;
  }

  /** The upstream's send time (ms) of a message we received at `receivedUs`. */
  sentMs(receivedUs: number): number {
    return Math.floor((receivedUs - this.rng.int(MIN_DELAY_US, MAX_DELAY_US)) / 1000);
  }

  /** A token's `book` message of the current Up book (the Down book is its mirror). */
  book(assetId: string, timestampMs: number, lastTrade: number | null): Record<string, unknown> {
    const b = this.current;
    const isUp = assetId === this.up;
    const bids: { price: string; size: string }[] = [];
    const asks: { price: string; size: string }[] = [];
    // Upstream order: bids ascending, asks descending, the best of each last.
    for (let tick = 1; tick < TICKS; tick++) {
      const size = isUp ? b.bids[tick] : b.asks[TICKS - tick];
      if (size > 0) bids.push({ price: priceText(tick), size: String(size) });
    }
    for (let tick = TICKS - 1; tick > 0; tick--) {
      const size = isUp ? b.asks[tick] : b.bids[TICKS - tick];
      if (size > 0) asks.push({ price: priceText(tick), size: String(size) });
    }
    return {
      market: this.market.conditionId,
      asset_id: assetId,
      timestamp: String(timestampMs),
      hash: hashOf(this.rng),
      bids,
      asks,
      tick_size: "0.01",
      event_type: "book",
      last_trade_price: lastTrade === null ? "" : lastTrade.toFixed(3),
    };
  }

  /** The `price_change` turning the current Up book (and its mirror) into `next`; null when equal. */
  priceChange(next: TickBook, timestampMs: number): Record<string, unknown> | null {
    const changes = levelChanges(this.current, next);
    if (changes.length === 0) return null;
    const entries: Record<string, unknown>[] = [];
    const working = this.current;
    const best = bestTicks(working);
    for (const c of changes) {
      if (c.side === "BUY") {
        working.bids[c.tick] = c.size;
        if (c.size > 0 && c.tick > best.bid) best.bid = c.tick;
        else if (c.size === 0 && c.tick === best.bid) best.bid = bestBidBelow(working, c.tick);
      } else {
        working.asks[c.tick] = c.size;
        if (c.size > 0 && c.tick < best.ask) best.ask = c.tick;
        else if (c.size === 0 && c.tick === best.ask) best.ask = bestAskAbove(working, c.tick);
      }
      const size = String(c.size);
      entries.push({
        asset_id: this.up,
        price: priceText(c.tick),
        side: c.side,
        size,
        hash: hashOf(this.rng),
        best_bid: priceText(best.bid),
        best_ask: priceText(best.ask),
      });
      // The Down token's mirror: an Up bid at p is a Down ask at 1 - p; its best bid is 1 - Up's best ask.
      entries.push({
        asset_id: this.down,
        price: priceText(TICKS - c.tick),
        side: c.side === "BUY" ? "SELL" : "BUY",
        size,
        hash: hashOf(this.rng),
        best_bid: priceText(TICKS - best.ask),
        best_ask: priceText(TICKS - best.bid),
      });
    }
    return {
      market: this.market.conditionId,
      price_changes: entries,
      timestamp: String(timestampMs),
      event_type: "price_change",
    };
  }

  /** Holds a trade until the changes received before it are out. */
  addTrade(trade: TradeRow): void {
    const receivedUs = trade.time + this.rng.int(MIN_DELAY_US, MAX_DELAY_US);
    let at = this.pending.length;
    while (at > 0 && this.pending[at - 1].receivedUs > receivedUs) at--;
    this.pending.splice(at, 0, { receivedUs, trade });
  }

  /** The held trades received before `receivedUs`: each a `last_trade_price`, then the traded token's `book`. */
  *tradesBefore(receivedUs: number): Generator<MarketEvent> {
    while (this.pending.length > 0 && this.pending[0].receivedUs < receivedUs) {
      const { receivedUs: at, trade } = this.pending.shift() as { receivedUs: number; trade: TradeRow };
      const assetId = trade.outcome === "Up" ? this.up : this.down;
      const timestampMs = trade.time / 1000;
      yield event(at, timestampMs, "last_trade_price", {
        event_type: "last_trade_price",
        market: this.market.conditionId,
        asset_id: assetId,
        fee_rate_bps: String(trade.feeRateBps),
        price: String(trade.price),
        side: trade.side,
        size: String(trade.size),
        timestamp: String(timestampMs),
      });
      const bookUs = at + this.rng.int(50, 900);
      yield event(bookUs, timestampMs, "book", this.book(assetId, timestampMs, trade.price));
      this.lastReceivedUs = Math.max(this.lastReceivedUs, bookUs);
    }
  }

  /** A resolved market's `market_resolved`, after everything else; null for the demo's live market. */
  resolved(): MarketEvent | null {
    const m = this.market;
    // The demo's markets resolve Up or Down (never 50-50, which the upstream resolves otherwise).
    if ((m.winner !== "Up" && m.winner !== "Down") || m.resolvedAt === null) return null;
    const receivedUs = Math.max(
      m.resolvedAt * MICROS_PER_SECOND + this.rng.int(0, MICROS_PER_SECOND - 1),
      this.lastReceivedUs + 1,
    );
    const timestampMs = this.sentMs(receivedUs);
    return event(receivedUs, timestampMs, "market_resolved", {
      event_type: "market_resolved",
      id: m.marketId,
      market: m.conditionId,
      assets_ids: [this.up, this.down],
      winning_asset_id: m.winner === "Up" ? this.up : this.down,
      winning_outcome: m.winner,
      timestamp: String(timestampMs),
      tags: ["crypto"],
    });
  }
}

function event(
  receivedUs: number,
  timestampMs: number,
  type: MarketEventType,
  message: Record<string, unknown>,
): MarketEvent {
  return { receivedUs, timestampMs, type, message };
}

/**
 * The market's events in receive order. Deterministic: the same options give the same events, field
 * for field.
 */
export function* demoMarketEvents(options: DemoEventOptions): Generator<MarketEvent> {
  const { seed, market, path, anchor } = options;
  const stream = new DemoStream(seed, market);
  const tradeAt = demoTrades(seed, market.slug);
  for (const s of marketSeconds(seed, market, path, anchor)) {
    const next = tickBookOf(s.up);
    // Received within the second before the one whose books it makes.
    const receivedUs = s.second * MICROS_PER_SECOND - stream.rng.int(0, MICROS_PER_SECOND - 1);
    yield* stream.tradesBefore(receivedUs);
    const timestampMs = stream.sentMs(receivedUs);
    if (s.second === market.startTime) {
      stream.current = next;
      yield event(receivedUs, timestampMs, "book", stream.book(stream.up, timestampMs, null));
      yield event(receivedUs, timestampMs, "book", stream.book(stream.down, timestampMs, null));
    } else {
      const change = stream.priceChange(next, timestampMs);
      if (change) yield event(receivedUs, timestampMs, "price_change", change);
      stream.current = next;
    }
    stream.lastReceivedUs = Math.max(stream.lastReceivedUs, receivedUs);
    const trade = tradeAt({ time: s.second * MICROS_PER_SECOND, priceUp: s.priceUp, priceDown: s.priceDown });
    if (trade) {
      options.onTrade?.(trade);
      stream.addTrade(trade);
    }
  }
  yield* stream.tradesBefore(Number.POSITIVE_INFINITY);
  const resolved = stream.resolved();
  if (resolved) yield resolved;
}

/**
 * The real-time data socket's price updates of a coin over [from, to] (seconds), one a second on the
 * Chainlink topic and on the Binance one, in the socket's shapes (`btc/usd` with the value scaled by
 * 1e18 in `full_accuracy_value`; `btcusdt` with eight decimals): the demo's coin path, which the
 * markets' `coin_price` follows. Each is received a few ms after its send time, which is a few ms after
 * the price's second; the delays depend on the second alone, so any span gives the same updates.
 */
export function* demoCoinEvents(
  seed: number,
  path: CoinPath,
  from: number,
  to: number,
): Generator<CoinEvent> {
  const coin = path.coin;
  const connectionId = connectionIdOf(seed);
  for (let second = Math.max(from, path.from); second <= Math.min(to, path.to); second++) {
    for (const topic of ["crypto_prices_chainlink", "crypto_prices"] as const) {
      const chainlink = topic === "crypto_prices_chainlink";
      const jitter = hash32(`${seed}:${coin}:${topic}:${second}`);
      const timestampMs = second * 1000 + 20 + (jitter % 80);
      const receivedUs = timestampMs * 1000 + MIN_DELAY_US + ((jitter >>> 8) % (MAX_DELAY_US - MIN_DELAY_US));
      const value = priceAt(path, chainlink ? "chainlink" : "binance", second);
      yield {
        coin,
        topic,
        receivedUs,
        timestampMs,
        message: {
          connection_id: connectionId,
          topic,
          type: "update",
          timestamp: timestampMs,
          payload: {
            symbol: chainlink ? `${coin}/usd` : `${coin}usdt`,
            timestamp: second * 1000,
            value,
            full_accuracy_value: chainlink ? scaledBy1e18(value) : value.toFixed(8),
          },
        },
      };
    }
  }
}

/** The socket names its connection in every message: a UUID, here one per seed. */
function connectionIdOf(seed: number): string {
  const hex = [0, 1, 2, 3].map((i) => hash32(`${seed}:rtds:${i}`).toString(16).padStart(8, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A price with at most 8 decimals as an integer of 1e-18 units, as Chainlink's full accuracy writes it. */
function scaledBy1e18(value: number): string {
  const [whole, fraction] = value.toFixed(8).split(".");
  return `${whole}${fraction}0000000000`.replace(/^0+(?=\d)/, "");
}
