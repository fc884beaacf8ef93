import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { COIN_EVENT_TOPICS, type CoinEvent, type MarketEvent } from "../../src/domain/event.ts";
import type { Coin, MarketType } from "../../src/domain/market.ts";
import type { TradeRow } from "../../src/domain/trade.ts";
import { demoCoinEvents, demoMarketEvents } from "../../src/demo/demo-events.ts";
import { type DemoMarket, type DemoOptions, demoTrades, generateDemo } from "../../src/demo/demo.ts";
import { DEMO_EVENT_MARKETS, seedDemo } from "../../src/demo/seed.ts";
import { deriveSnapshotsFromBlocks } from "../../src/events/derive.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { openTestStore } from "../helpers/app.ts";

// 2026-07-24T16:20:07Z: the live 5m market is 7 s old, the live 15m one 5 min, the live 1h one 20 min.
const ANCHOR = Date.UTC(2026, 6, 24, 16, 20, 7) / 1000;
const COUNTS: Record<MarketType, number> = { "5m": 6, "15m": 3, "1h": 1, "4h": 0, "24h": 0 };
const OPTIONS: DemoOptions = { seed: 5, anchor: ANCHOR, counts: COUNTS, coins: ["btc", "sol"] };

const demo: DemoMarket[] = [...generateDemo(OPTIONS)];

/** The markets that should have events: the latest DEMO_EVENT_MARKETS of each series. */
function withEvents(): DemoMarket[] {
  return demo.filter((d) => {
    const series = demo.filter(
      (o) => o.market.coin === d.market.coin && o.market.marketType === d.market.marketType,
    );
    return series.indexOf(d) >= series.length - DEMO_EVENT_MARKETS[d.market.marketType];
  });
}

function eventsOf(d: DemoMarket): MarketEvent[] {
  return [...demoMarketEvents({ seed: OPTIONS.seed, market: d.market, path: d.path, anchor: ANCHOR })];
}

async function keyOf(store: Store, d: DemoMarket): Promise<number> {
  const stored = await store.markets.getMarket(d.market.slug);
  assert.ok(stored, d.market.slug);
  return stored.key;
}

async function storedEvents(store: Store, key: number): Promise<MarketEvent[]> {
  const all: MarketEvent[] = [];
  for await (const block of store.events.streamMarketEvents(key)) all.push(...block);
  return all;
}

async function storedCoinEvents(store: Store, coin: Coin): Promise<CoinEvent[]> {
  const all: CoinEvent[] = [];
  for (const topic of COIN_EVENT_TOPICS) {
    for await (const block of store.events.streamCoinEvents(coin, topic)) all.push(...block);
  }
  return all;
}

/** What a market holds: events, snapshots, trades and integrity counts. */
async function contentOf(store: Store, d: DemoMarket) {
  const key = await keyOf(store, d);
  return {
    events: await store.events.countMarketEvents(key),
    snapshots: await store.markets.snapshotPage(key, {
      order: "asc",
      limit: 100_000,
      offset: 0,
      books: true,
    }),
    trades: await store.trades.tradePage(key, { order: "asc", limit: 100_000, offset: 0 }),
    integrity: await store.events.bookIntegrity(key),
  };
}

describe("seeding the demo", () => {
  let store: Store;
  let seeded: { markets: number; snapshots: number };

  before(async () => {
    store = await openTestStore();
    seeded = await seedDemo(store, OPTIONS);
  });
  after(async () => {
    await store.close();
  });

  it("stores the events of the latest markets of each series, as generated, and of no other", async () => {
    const expected = withEvents();
    // Per coin: the latest four 5m markets and the latest two 15m ones (the live ones included).
    assert.equal(expected.length, 2 * (DEMO_EVENT_MARKETS["5m"] + DEMO_EVENT_MARKETS["15m"]));
    assert.ok(expected.every((d) => d.market.marketType === "5m" || d.market.marketType === "15m"));
    const keys = await Promise.all(expected.map((d) => keyOf(store, d)));
    assert.deepEqual([...(await store.events.marketsWithEvents())].sort(), [...keys].sort());
    for (const d of expected) {
      assert.deepEqual(await storedEvents(store, await keyOf(store, d)), eventsOf(d), d.market.slug);
    }
  });

  it("stores the coin prices under those markets as the real-time data socket's updates", async () => {
    for (const coin of OPTIONS.coins) {
      const own = withEvents().filter((d) => d.market.coin === coin);
      const from = Math.min(...own.map((d) => d.market.startTime));
      const generated = [...demoCoinEvents(OPTIONS.seed, own[0].path, from, ANCHOR)];
      assert.equal(generated.length, 2 * (ANCHOR - from + 1));
      const byTopic = (events: CoinEvent[]) =>
        COIN_EVENT_TOPICS.flatMap((topic) => events.filter((e) => e.topic === topic));
      assert.deepEqual(await storedCoinEvents(store, coin), byTopic(generated), coin);
    }
  });

  it("derives their snapshots from the events: every market's snapshots and trades are the demo's as before", async () => {
    let total = 0;
    for (const d of demo) {
      const { snapshots, trades } = await contentOf(store, d);
      // What the seeder stored before events: the BookModel's rows, and demoTrades over them.
      const rows = [...d.snapshots()];
      assert.deepEqual(snapshots, rows, d.market.slug);
      const tradeAt = demoTrades(OPTIONS.seed, d.market.slug);
      const expected = rows
        .flatMap((r) => tradeAt(r) ?? [])
        .sort((a: TradeRow, b: TradeRow) => a.time - b.time);
      assert.deepEqual(trades, expected, d.market.slug);
      total += rows.length;
    }
    assert.deepEqual(seeded, { markets: demo.length, snapshots: total });
  });

  it("keeps snapshots and events in agreement: derived again from the stored events, the snapshots are the stored ones", async () => {
    for (const d of withEvents()) {
      const key = await keyOf(store, d);
      const { snapshots, integrity } = await contentOf(store, d);
      const again = [];
      const derived = deriveSnapshotsFromBlocks(
        store.events.streamMarketEvents(key),
        { up: d.market.clobTokenUp, down: d.market.clobTokenDown },
        snapshots.map((r) => r.time),
        (time) => snapshots.find((r) => r.time === time)?.coinPrice ?? null,
      );
      for await (const row of derived) again.push(row);
      assert.deepEqual(again, snapshots, d.market.slug);
      // Every book after a trade and every best bid and ask matched the rebuild, and were counted.
      assert.ok(integrity && integrity.bestMatches > 0, d.market.slug);
      assert.equal(integrity.bookMismatches + integrity.bestMismatches, 0);
    }
    for (const d of demo.filter((o) => !withEvents().includes(o))) {
      assert.equal((await contentOf(store, d)).integrity, null);
    }
  });

  it("adds nothing when run again: the same events, snapshots, trades and integrity counts", async () => {
    const before = await Promise.all(demo.map((d) => contentOf(store, d)));
    const coinsBefore = await storedCoinEvents(store, "btc");
    await seedDemo(store, OPTIONS);
    assert.deepEqual(await Promise.all(demo.map((d) => contentOf(store, d))), before);
    assert.deepEqual(await storedCoinEvents(store, "btc"), coinsBefore);
    const d = withEvents()[0];
    const key = await keyOf(store, d);
    assert.equal(await store.events.appendMarketEvents([{ marketKey: key, events: eventsOf(d) }]), 0);
    // And a fresh store seeded alike holds the same.
    const other = await openTestStore();
    try {
      await seedDemo(other, OPTIONS);
      assert.deepEqual(await Promise.all(demo.map((m) => contentOf(other, m))), before);
      assert.deepEqual(await storedEvents(other, await keyOf(other, d)), await storedEvents(store, key));
      assert.deepEqual(await storedCoinEvents(other, "btc"), coinsBefore);
    } finally {
      await other.close();
    }
  });
});

describe("seeding the demo without events", () => {
  it("writes the same snapshots and trades, and no events, when no market is to have them", async () => {
    const counts: Record<MarketType, number> = { "5m": 2, "15m": 1, "1h": 0, "4h": 0, "24h": 0 };
    const none: Record<MarketType, number> = { "5m": 0, "15m": 0, "1h": 0, "4h": 0, "24h": 0 };
    const options: DemoOptions = { seed: 3, anchor: ANCHOR, counts, coins: ["sol"] };
    const [a, b] = [await openTestStore(), await openTestStore()];
    try {
      await seedDemo(a, options);
      await seedDemo(b, { ...options, eventMarkets: none });
      assert.equal((await a.events.marketsWithEvents()).length, 3);
      assert.deepEqual(await b.events.marketsWithEvents(), []);
      for (const d of generateDemo(options)) {
        const [ca, cb] = [await contentOf(a, d), await contentOf(b, d)];
        assert.deepEqual(cb.snapshots, ca.snapshots, d.market.slug);
        assert.deepEqual(cb.trades, ca.trades, d.market.slug);
        assert.equal(cb.events, 0);
        assert.ok(ca.events > 0);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });
});
