import type { CoinEvent, MarketEvent } from "../domain/event.ts";
import {
  type Coin,
  MARKET_TYPE_SECONDS,
  type Market,
  type MarketType,
  SETTLEMENT_FEED,
} from "../domain/market.ts";
import type { SnapshotRow } from "../domain/snapshot.ts";
import { MICROS_PER_SECOND } from "../domain/time.ts";
import type { TradeRow } from "../domain/trade.ts";
import { SnapshotDeriver } from "../events/derive.ts";
import type { Store } from "../store/ports/store.ts";
import { demoCoinEvents, demoMarketEvents } from "./demo-events.ts";
import {
  type CoinPath,
  type DemoMarket,
  type DemoOptions,
  demoSnapshotTotal,
  demoTrades,
  generateDemo,
  marketStartContaining,
  priceAt,
} from "./demo.ts";
import { seedExchangeDemo } from "./exchange-demo.ts";

const BATCH_ROWS = 5_000;
const BATCH_EVENTS = 2_000;

/**
 * The demo markets that also get events (DESIGN 3.10): the latest ones of each series, the live one
 * included. Generating, storing and deriving a second of events costs several times what a snapshot
 * alone does (a second's `price_change` carries tens of level changes of both tokens), so only the most
 * recent markets have them, which keeps the first start under a minute; the older ones have snapshots
 * only, as before. docs/configuration.md ("Demo events") says which.
 */
export const DEMO_EVENT_MARKETS: Record<MarketType, number> = {
  "5m": 4,
  "15m": 2,
  "1h": 0,
  "4h": 0,
  "24h": 0,
};

/** Whether a demo market is one of the latest of its series that get events. */
function hasDemoEvents(market: Market, anchor: number, counts: Record<MarketType, number>): boolean {
  const count = counts[market.marketType] ?? 0;
  const live = marketStartContaining(market.marketType, anchor);
  return count > 0 && market.startTime > live - count * MARKET_TYPE_SECONDS[market.marketType];
}

type SeedStore = Pick<Store, "markets" | "trades" | "exchange" | "events">;

/**
 * Writes the demo into a store. Returns the markets and snapshot rows written; rerunning it over the
 * same store rewrites the markets and leaves the stored snapshots and events as they are (inserts are
 * idempotent). The markets that have events (hasDemoEvents) get their snapshots derived from their
 * events by the one rule (src/events/derive.ts), which gives the BookModel's snapshots exactly.
 */
export async function seedDemo(
  store: SeedStore,
  options: DemoOptions,
): Promise<{ markets: number; snapshots: number }> {
  const total = demoSnapshotTotal(options);
  let markets = 0;
  let done = 0;
  const batch: SnapshotRow[] = [];
  const trades: TradeRow[] = [];
  const flush = async (key: number): Promise<void> => {
    await store.markets.insertSnapshots(key, batch);
    await store.trades.insertTrades([{ marketKey: key, rows: trades }]);
    done += batch.length;
    batch.length = 0;
    trades.length = 0;
    options.onProgress?.(done, total);
  };
  /** Per coin, its path and the first second of its markets with events. */
  const coinSpans = new Map<Coin, { path: CoinPath; from: number }>();
  for (const demo of generateDemo(options)) {
    const stored = await store.markets.upsertMarket(demo.market);
    // The demo stands in for a live recording (its snapshots derived from events as the collector's are).
    await store.markets.markSource(stored.key, "recorded");
    markets++;
    if (hasDemoEvents(demo.market, options.anchor, options.eventMarkets ?? DEMO_EVENT_MARKETS)) {
      await seedEvents(store, demo, options, stored.key, batch, trades, flush);
      const span = coinSpans.get(demo.market.coin);
      const from = Math.min(span?.from ?? demo.market.startTime, demo.market.startTime);
      coinSpans.set(demo.market.coin, { path: demo.path, from });
      continue;
    }
    const tradeAt = demoTrades(options.seed, demo.market.slug);
    for (const row of demo.snapshots()) {
      batch.push(row);
      const trade = tradeAt(row);
      if (trade) trades.push(trade);
      if (batch.length === BATCH_ROWS) await flush(stored.key);
    }
    if (batch.length > 0) await flush(stored.key);
  }
  // The coin prices under those markets, as the real-time data socket sends them.
  for (const { path, from } of coinSpans.values()) {
    const events: CoinEvent[] = [];
    for (const event of demoCoinEvents(options.seed, path, from, options.anchor)) {
      events.push(event);
      if (events.length === BATCH_EVENTS) await store.events.appendCoinEvents(events.splice(0));
    }
    if (events.length > 0) await store.events.appendCoinEvents(events);
  }
  // A little Binance spot and futures data too, so that the exchange endpoints answer.
  if (options.exchange) {
    await seedExchangeDemo(store.exchange, {
      seed: options.seed,
      anchor: options.anchor,
      coins: options.coins,
    });
  }
  return { markets, snapshots: done };
}

/**
 * A market's events, and its snapshots derived from them as they are written: each second's coin
 * price from the demo's coin path, as for the other markets. The integrity counts of the rebuild (all
 * matches: the demo's messages agree with themselves) are added once, after the market's last event.
 */
async function seedEvents(
  store: SeedStore,
  demo: DemoMarket,
  options: DemoOptions,
  key: number,
  batch: SnapshotRow[],
  trades: TradeRow[],
  flush: (key: number) => Promise<void>,
): Promise<void> {
  const { market, path } = demo;
  const feed = SETTLEMENT_FEED[market.marketType];
  const first = market.startTime * MICROS_PER_SECOND;
  const times = Array.from({ length: demo.snapshotCount }, (_, i) => first + i * MICROS_PER_SECOND);
  const deriver = new SnapshotDeriver({ up: market.clobTokenUp, down: market.clobTokenDown }, times, (time) =>
    priceAt(path, feed, time / MICROS_PER_SECOND),
  );
  const events: MarketEvent[] = [];
  const writeEvents = async (): Promise<void> => {
    if (events.length === 0) return;
    await store.events.appendMarketEvents([{ marketKey: key, events }]);
    events.length = 0;
  };
  const source = demoMarketEvents({
    seed: options.seed,
    market,
    path,
    anchor: options.anchor,
    onTrade: (trade) => trades.push(trade),
  });
  for (const event of source) {
    events.push(event);
    for (const row of deriver.push(event)) batch.push(row);
    if (events.length >= BATCH_EVENTS) await writeEvents();
    // A snapshot is written after the events it was derived from.
    if (batch.length >= BATCH_ROWS) {
      await writeEvents();
      await flush(key);
    }
  }
  for (const row of deriver.finish()) batch.push(row);
  await writeEvents();
  if (batch.length > 0 || trades.length > 0) await flush(key);
  if ((await store.events.bookIntegrity(key)) === null) {
    await store.events.addBookIntegrity(key, deriver.book.integrity);
  }
}
