import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ManualClock } from "../../../src/domain/time.ts";
import { silentLogger } from "../../../src/log.ts";
import { BackgroundWork } from "../../../src/record/polymarket/background-work.ts";
import type { ClobFeed } from "../../../src/record/polymarket/clob-feed.ts";
import { GammaClient } from "../../../src/record/polymarket/gamma-client.ts";
import { MarketSettlement } from "../../../src/record/polymarket/market-settlement.ts";
import type { RtdsFeed } from "../../../src/record/polymarket/rtds-feed.ts";
import type { StoredMarket } from "../../../src/store/ports/market-store.ts";
import type { Store } from "../../../src/store/ports/store.ts";
import { openTestStore } from "../../helpers/app.ts";
import { bookAround, DOWN, feedsOver, liveMarket, scaled, T, UP } from "../../helpers/polymarket-feeds.ts";
import {
  gammaMarket,
  type PolymarketUpstream,
  startPolymarketUpstream,
  until,
} from "../../helpers/polymarket-upstream.ts";

/**
 * Settlement and resolution alone, over the local upstream (Gamma, the market channel, the price
 * socket) and a real store: each step when its second comes, the record upserted whole, the market
 * handed back once resolved or given up.
 */

let upstream: PolymarketUpstream;
let store: Store;
let clob: ClobFeed;
let rtds: RtdsFeed;
let stopFeeds: () => Promise<void>;
const clock = new ManualClock(T * 1e6);
const SLUG = liveMarket().slug;

before(async () => {
  upstream = await startPolymarketUpstream();
  store = await openTestStore();
  upstream.clob.setBook(UP, bookAround(48), false);
  upstream.clob.setBook(DOWN, bookAround(50), false);
  ({ clob, rtds, stop: stopFeeds } = feedsOver(upstream, clock));
  clob.follow([UP, DOWN]);
  await until(() => upstream.clob.subscribedTokens.size === 2, "the subscriptions");
  await until(() => upstream.rtds.clientCount === 1, "the price socket");
});

after(async () => {
  await stopFeeds();
  await upstream.close();
  await store.close();
});

function settlementOver(background: BackgroundWork, done: StoredMarket[]): MarketSettlement {
  return new MarketSettlement({
    store: store.markets,
    gamma: new GammaClient({ baseUrl: upstream.gammaUrl }),
    clob,
    prices: {
      feed: (m) => rtds.feed(m.settlement, m.coin),
      candles: null,
      candleWaitS: 120,
      maxFeedStalenessS: 10,
    },
    clock,
    log: silentLogger,
    background,
    resolutionEveryS: 15,
    liquidityBeforeCloseS: 20,
    done: (m) => void done.push(m),
  });
}

async function price(second: number, cents: number): Promise<void> {
  const frames = rtds.frames;
  upstream.rtds.price("chainlink", "btc", second * 1000, scaled(cents));
  await until(() => rtds.frames > frames, `the price of ${second}`);
}

/** One tick's steps at `second`, and the background work they started. */
async function at(settlement: MarketSettlement, background: BackgroundWork, second: number): Promise<void> {
  clock.set(second * 1e6 + 200_000);
  settlement.afterTick(second);
  await background.settled();
}

test("start price from the feed, liquidity before the close, end price, and the winner market_resolved announced", async () => {
  upstream.gamma.markets.set(SLUG, { ...gammaMarket(SLUG, 5001, [UP, DOWN]), liquidityNum: 1234.5 });
  const background = new BackgroundWork(silentLogger);
  const done: StoredMarket[] = [];
  const settlement = settlementOver(background, done);
  settlement.follow(await store.markets.upsertMarket(liveMarket()));

  await price(T, 6_500_000);
  await at(settlement, background, T + 1);
  assert.equal((await store.markets.getMarket(SLUG))?.coinPriceStart, null, "not before two seconds");
  await at(settlement, background, T + 2);
  assert.equal((await store.markets.getMarket(SLUG))?.coinPriceStart, 65_000);

  await at(settlement, background, T + 280);
  await price(T + 300, 6_490_000);
  await at(settlement, background, T + 302);
  const resolvedMs = (T + 301) * 1000 + 500;
  upstream.clob.resolve([UP, DOWN], DOWN, resolvedMs);
  await until(() => clob.resolutionOf(UP) !== null, "the announcement");
  await at(settlement, background, T + 303);

  const record = await store.markets.getMarket(SLUG);
  assert.ok(record);
  assert.deepEqual(
    [record.winner, record.coinPriceStart, record.coinPriceEnd, record.finalLiquidity, record.resolvedAt],
    ["Down", 65_000, 64_900, 1234.5, T + 301],
  );
  assert.deepEqual(
    done.map((m) => m.slug),
    [SLUG],
  );
  assert.equal(settlement.disagreements, 0);
  // Handed back: no step of it runs again.
  upstream.gamma.requests = [];
  await at(settlement, background, T + 400);
  assert.deepEqual(upstream.gamma.requests, []);
});

test("without an announcement Gamma is polled; its own prices are kept, and a disagreement counted", async () => {
  const start = T + 300;
  const slug = `btc-updown-5m-${start}`;
  const background = new BackgroundWork(silentLogger);
  const done: StoredMarket[] = [];
  const settlement = settlementOver(background, done);
  const market = liveMarket({
    slug,
    startTime: start,
    endTime: start + 300,
    clobTokenUp: "c",
    clobTokenDown: "d",
  });
  settlement.follow(await store.markets.upsertMarket({ ...market, coinPriceStart: 64_900 }));
  const open = gammaMarket(slug, 5002, ["c", "d"]);
  upstream.gamma.markets.set(slug, open);
  await price(start + 300, 6_495_000);
  // The end price is read at +2 s, and the first poll follows on the next tick.
  await at(settlement, background, start + 302);
  upstream.gamma.requests = [];
  await at(settlement, background, start + 303);
  assert.ok(upstream.gamma.requests.some((r) => r.includes(slug)));
  assert.equal(done.length, 0, "Gamma has not closed it yet");

  upstream.gamma.markets.set(slug, {
    ...open,
    closed: true,
    umaResolutionStatus: "resolved",
    outcomePrices: '["1", "0"]',
    closedTime: `${new Date((start + 310) * 1000).toISOString().slice(0, 19).replace("T", " ")}+00`,
    events: [{ id: "ev-5002", eventMetadata: { priceToBeat: 64_900, finalPrice: 64_960.5 } }],
  });
  await at(settlement, background, start + 317);
  assert.equal(done.length, 0, "the next poll is due 15 s after the first");
  await at(settlement, background, start + 318);
  const record = await store.markets.getMarket(slug);
  assert.ok(record);
  assert.deepEqual(
    [record.winner, record.coinPriceStart, record.coinPriceEnd, record.resolvedAt],
    ["Up", 64_900, 64_960.5, start + 310],
  );
  assert.equal(settlement.disagreements, 1, "64950 from the feed against Gamma's 64960.5");
  assert.deepEqual(
    done.map((m) => m.slug),
    [slug],
  );
});

test("a market still unresolved two days after its end is handed back, its record unchanged", async () => {
  const start = T - 3 * 86_400;
  const slug = `btc-updown-5m-${start}`;
  const background = new BackgroundWork(silentLogger);
  const done: StoredMarket[] = [];
  const settlement = settlementOver(background, done);
  const stored = await store.markets.upsertMarket(
    liveMarket({ slug, startTime: start, endTime: start + 300, coinPriceStart: 60_000 }),
  );
  settlement.follow(stored);
  await at(settlement, background, start + 300 + 2 * 86_400 + 1);
  assert.deepEqual(
    done.map((m) => m.slug),
    [slug],
  );
  assert.deepEqual(await store.markets.getMarket(slug), stored);
});
