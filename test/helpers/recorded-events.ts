import { readFileSync } from "node:fs";
import type { MarketEvent } from "../../src/domain/event.ts";
import { marketEventOf } from "../../src/domain/event.ts";
import type { Market } from "../../src/domain/market.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { HAND_MARKET } from "./app.ts";

/**
 * Market-channel events for the API's tests, made from the real protocol fixtures
 * (test/fixtures/polymarket-protocol/) with their tokens, market and times changed to a test market's:
 * a `book` of each token, then price changes, trades, a tick size change, best bid and ask, and the
 * resolution, each received some milliseconds after its upstream timestamp.
 */

const fixture = (name: string) =>
  JSON.parse(
    readFileSync(new URL(`../fixtures/polymarket-protocol/${name}.json`, import.meta.url), "utf8"),
  ) as Record<string, unknown>;

const BOOK = fixture("ws-market-book-captured");
const PRICE_CHANGE = fixture("ws-market-price-change");
const TRADE = fixture("ws-market-last-trade-price");
const RESOLVED = fixture("ws-market-resolved");

/** A second market beside HAND_MARKET: the next 15 minutes of SOL, with tokens of its own. */
export const NEXT_MARKET: Market = {
  ...HAND_MARKET,
  slug: "sol-updown-15m-1784852100",
  marketId: "3047974",
  startTime: 1784852100,
  endTime: 1784853000,
  conditionId: "0x47dc035f067c3e24cdb0f205dc5d60ec0e4e4dddf2479c192e08035bc2f3a4f0",
  clobTokenUp: "3333",
  clobTokenDown: "4444",
  resolvedAt: 1784853018,
};

/** How long after its upstream timestamp each event is received (µs). */
const LATENCY_US = 1_234;

function event(message: Record<string, unknown>, timestampMs: number, receivedUs?: number): MarketEvent {
  const m = { ...message, timestamp: String(timestampMs) };
  const e = marketEventOf(m, receivedUs ?? timestampMs * 1000 + LATENCY_US);
  if ("problem" in e) throw new Error(e.problem);
  return e;
}

export interface StreamOptions {
  /** The first event's upstream timestamp (ms); default 5 s before the market starts. */
  startMs?: number;
  /** Price changes after the two books, default 20. */
  changes?: number;
  /** Milliseconds between events after the books, default 250. */
  stepMs?: number;
  /** Levels of each side of the books (default: the fixture's own). */
  levels?: number;
}

/** A recorded stream of `market`'s events, in receive order. */
export function marketEvents(market: Market, options: StreamOptions = {}): MarketEvent[] {
  const up = market.clobTokenUp;
  const down = market.clobTokenDown;
  const start = options.startMs ?? market.startTime * 1000 - 5_000;
  const step = options.stepMs ?? 250;
  const ladder = (from: number, dir: number) =>
    Array.from({ length: options.levels ?? 0 }, (_, i) => ({
      price: (from + (dir * i) / 10_000).toFixed(4),
      size: String(100 + i),
    }));
  const book = (asset: string, t: number) =>
    event(
      {
        ...BOOK,
        market: market.conditionId,
        asset_id: asset,
        ...(options.levels ? { bids: ladder(0.01, 1), asks: ladder(0.99, -1) } : {}),
      },
      t,
    );
  const events = [book(up, start), book(down, start + 1)];
  let t = start + 1;
  const changes = options.changes ?? 20;
  for (let i = 0; i < changes; i++) {
    t += step;
    const asset = i % 2 === 0 ? up : down;
    const price = (0.3 + (i % 10) / 100).toFixed(2);
    const entry = (PRICE_CHANGE.price_changes as Record<string, unknown>[])[0];
    events.push(
      event(
        {
          ...PRICE_CHANGE,
          market: market.conditionId,
          price_changes: [{ ...entry, asset_id: asset, price, size: String(10 + i), hash: `0xh${i}` }],
        },
        t,
      ),
    );
    if (i % 5 === 4) {
      t += step;
      events.push(event({ ...TRADE, market: market.conditionId, asset_id: asset, price, size: `${i}.5` }, t));
    }
  }
  t += step;
  events.push(
    event(
      {
        event_type: "tick_size_change",
        asset_id: up,
        market: market.conditionId,
        old_tick_size: "0.01",
        new_tick_size: "0.001",
      },
      t,
    ),
  );
  t += step;
  events.push(
    event(
      {
        event_type: "best_bid_ask",
        market: market.conditionId,
        asset_id: up,
        best_bid: "0.30",
        best_ask: "0.31",
        spread: "0.01",
      },
      t,
    ),
  );
  t += step;
  events.push(
    event(
      {
        ...RESOLVED,
        market: market.conditionId,
        assets_ids: [up, down],
        winning_asset_id: up,
        winning_outcome: "Up",
      },
      t,
    ),
  );
  return events;
}

/** Stores the market (its record) and its events; answers the stored market's key. */
export async function recordMarket(store: Store, market: Market, events: MarketEvent[]): Promise<number> {
  const stored = await store.markets.upsertMarket(market);
  await store.events.appendMarketEvents([{ marketKey: stored.key, events }]);
  return stored.key;
}

/** The events of several markets in one receive order (a tie to the market listed first). */
export function inReceiveOrder(...streams: MarketEvent[][]): MarketEvent[] {
  const all = streams.flatMap((s, market) => s.map((e, i) => ({ e, market, i })));
  all.sort((a, b) => a.e.receivedUs - b.e.receivedUs || a.market - b.market || a.i - b.i);
  return all.map((x) => x.e);
}
