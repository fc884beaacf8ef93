import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ManualClock, type Micros } from "../../../src/domain/time.ts";
import { silentLogger } from "../../../src/log.ts";
import { GammaClient } from "../../../src/record/polymarket/gamma-client.ts";
import { MarketDiscovery } from "../../../src/record/polymarket/market-discovery.ts";
import type { StoredMarket } from "../../../src/store/ports/market-store.ts";
import type { Store } from "../../../src/store/ports/store.ts";
import { openTestStore } from "../../helpers/app.ts";
import { liveMarket, T } from "../../helpers/polymarket-feeds.ts";
import {
  gammaMarket,
  type PolymarketUpstream,
  startPolymarketUpstream,
} from "../../helpers/polymarket-upstream.ts";

/**
 * Market discovery alone, over the local Gamma server and a real store: the live and next market of
 * each series followed once stored, a market already followed or already resolved left alone, and on
 * a start the unresolved markets a previous run left.
 */

let upstream: PolymarketUpstream;
let store: Store;

before(async () => {
  upstream = await startPolymarketUpstream();
  store = await openTestStore();
});

after(async () => {
  await upstream.close();
  await store.close();
});

function discoveryOver(clock: ManualClock, followed: Map<string, StoredMarket>): MarketDiscovery {
  return new MarketDiscovery({
    store: store.markets,
    gamma: new GammaClient({ baseUrl: upstream.gammaUrl }),
    clock,
    log: silentLogger,
    coins: ["btc"],
    marketTypes: ["5m"],
    lookahead: 2,
    discoveryEveryS: 30,
    isFollowed: (slug) => followed.has(slug),
    follow: async (market: StoredMarket, _now: Micros) => void followed.set(market.slug, market),
  });
}

test("the live and next markets are stored and followed; followed, resolved and unknown ones are not", async () => {
  const slug = (i: number) => `btc-updown-5m-${T + 300 * i}`;
  upstream.gamma.markets.set(slug(0), gammaMarket(slug(0), 7000, ["a0", "b0"]));
  upstream.gamma.markets.set(slug(1), gammaMarket(slug(1), 7001, ["a1", "b1"]));
  // The third is not on Gamma yet; the second was resolved by a previous run (impossible upstream,
  // but a record that says so is never followed again).
  await store.markets.upsertMarket(
    liveMarket({ slug: slug(1), startTime: T + 300, endTime: T + 600, winner: "Up" }),
  );
  const clock = new ManualClock((T + 10) * 1e6);
  const followed = new Map<string, StoredMarket>();
  const discovery = discoveryOver(clock, followed);

  assert.equal(discovery.isDue(T + 10), true);
  await discovery.discover();
  assert.deepEqual([...followed.keys()], [slug(0)]);
  const live = followed.get(slug(0));
  assert.ok(live);
  assert.deepEqual(await store.markets.getMarket(slug(0)), live);
  assert.deepEqual(live.sources, ["recorded"], "a market the collector follows is recorded live");
  assert.equal(live.clobTokenUp, "a0");
  assert.equal(live.marketId, "7000");
  assert.equal(live.startTime, T);
  assert.equal(live.endTime, T + 300);
  assert.deepEqual(live.settlement, { source: "chainlink", lookbackS: null });
  assert.equal(discovery.isDue(T + 39), false);
  assert.equal(discovery.isDue(T + 40), true);

  // Next round: the followed market is not asked for again, the one not on Gamma is.
  upstream.gamma.requests = [];
  upstream.gamma.markets.set(slug(2), gammaMarket(slug(2), 7002, ["a2", "b2"]));
  clock.set((T + 40) * 1e6);
  await discovery.discover();
  assert.deepEqual([...followed.keys()], [slug(0), slug(2)]);
  assert.equal(
    upstream.gamma.requests.some((r) => r.includes(slug(0))),
    false,
  );
});

test("on a start, the unresolved markets of the last two days of the coins and types followed are taken over", async () => {
  const day = 86_400;
  const at = (start: number, changes = {}) =>
    liveMarket({ slug: `btc-updown-5m-${start}`, startTime: start, endTime: start + 300, ...changes });
  const now = T + 10 * day;
  await store.markets.upsertMarket(at(now - day));
  await store.markets.upsertMarket(at(now - 3 * day));
  await store.markets.upsertMarket(at(now - 2 * day + 600, { winner: "Down" }));
  await store.markets.upsertMarket(
    liveMarket({
      slug: `eth-updown-5m-${now - day}`,
      coin: "eth",
      startTime: now - day,
      endTime: now - day + 300,
    }),
  );
  const followed = new Map<string, StoredMarket>();
  await discoveryOver(new ManualClock(now * 1e6), followed).resumeUnresolved();
  assert.deepEqual([...followed.keys()], [`btc-updown-5m-${now - day}`]);
});
