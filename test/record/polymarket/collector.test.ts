import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { displayedPrice, type OrderBook } from "../../../src/domain/book.ts";
import { decodeBooks } from "../../../src/wire/book-codec.ts";
import { ManualClock } from "../../../src/domain/time.ts";
import { silentLogger } from "../../../src/log.ts";
import { ClobFeed } from "../../../src/record/polymarket/clob-feed.ts";
import { Collector, type CollectorOptions } from "../../../src/record/polymarket/collector.ts";
import type { SocketFeedOptions } from "../../../src/record/polymarket/socket-feed.ts";
import { GammaClient } from "../../../src/record/polymarket/gamma-client.ts";
import { RtdsFeed } from "../../../src/record/polymarket/rtds-feed.ts";
import { schedulerOn } from "../../../src/record/scheduler.ts";
import type { Store } from "../../../src/store/ports/store.ts";
import { makeTestApp, openTestStore } from "../../helpers/app.ts";
import {
  gammaMarket,
  type PolymarketUpstream,
  startPolymarketUpstream,
  until,
} from "../../helpers/polymarket-upstream.ts";

/**
 * A whole 5-minute market recorded from local servers playing Polymarket's protocols, driven second
 * by second with a manual clock: discovery, books sent unsorted and as arrays, batched price changes,
 * trades, a tick size change, a silent freeze, a dropped connection, the settlement feed, the
 * liquidity before the close, and the resolution.
 */

const T = 1784851200; // a 5-minute boundary
const SLUG = `btc-updown-5m-${T}`;
const UP = "1111";
const DOWN = "2222";

/** A small deterministic generator, so that a failure can be replayed. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function initialBook(low: number): OrderBook {
  const bids = Array.from({ length: 8 }, (_, i) => ({ price: (low - i) / 100, size: 100 + i * 7.5 }));
  const asks = Array.from({ length: 8 }, (_, i) => ({ price: (low + 2 + i) / 100, size: 80 + i * 3.25 }));
  return { bids, asks };
}

/** Chainlink's full-accuracy value: dollars with 2 decimals, scaled by 1e18. */
function scaled(cents: number): string {
  return `${cents}${"0".repeat(16)}`;
}

/** A collector of BTC 5m markets over the local upstream, with feeds that reconnect at once. */
function collectorOver(
  upstream: PolymarketUpstream,
  store: Store,
  clock: ManualClock,
  options: { clob?: Partial<SocketFeedOptions>; collector?: Partial<CollectorOptions> } = {},
): { collector: Collector; clob: ClobFeed; rtds: RtdsFeed } {
  const scheduler = schedulerOn(clock);
  const clob = new ClobFeed({
    url: upstream.clobUrl,
    scheduler,
    log: silentLogger,
    backoffInitialMs: 1,
    backoffMaxMs: 5,
    ...options.clob,
  });
  const rtds = new RtdsFeed({ url: upstream.rtdsUrl, scheduler, log: silentLogger, backoffInitialMs: 1 });
  const collector = new Collector({
    store: store.markets,
    trades: store.trades,
    clock,
    log: silentLogger,
    gamma: new GammaClient({ baseUrl: upstream.gammaUrl }),
    clob,
    rtds,
    coins: ["btc"],
    marketTypes: ["5m"],
    ...options.collector,
  });
  return { collector, clob, rtds };
}

interface Expected {
  second: number;
  up: OrderBook;
  down: OrderBook;
  priceUp: number;
  priceDown: number;
  coinPrice: number;
}

describe("collector: a whole simulated 5m market", () => {
  let upstream: PolymarketUpstream;
  let store: Store;
  const clock = new ManualClock((T - 10) * 1e6);
  let clob: ClobFeed;
  let collector: Collector;
  const expected: Expected[] = [];
  const skipped = new Map<number, string>();
  const prices = new Map<number, number>();
  let startCents = 0;
  let endCents = 0;

  before(async () => {
    upstream = await startPolymarketUpstream();
    store = await openTestStore();
    upstream.gamma.markets.set(SLUG, gammaMarket(SLUG, 5001, [UP, DOWN]));
    upstream.gamma.onlyInEvents.add(SLUG);
    upstream.clob.setBook(UP, initialBook(48), false);
    upstream.clob.setBook(DOWN, initialBook(50), false);
    let rtds: RtdsFeed;
    ({ collector, clob, rtds } = collectorOver(upstream, store, clock, {
      clob: { heartbeatIntervalMs: 1000, silenceLimitMs: 3000 },
      collector: { resolutionEveryS: 5 },
    }));
    await collector.start();
    await until(
      () => upstream.rtds.clientCount === 1 && upstream.clob.subscribedTokens.size === 2,
      "subscriptions",
    );
    await until(() => clob.notReady(UP) === null && clob.notReady(DOWN) === null, "initial books");

    const rand = lcg(42);
    let cents = 6_500_000;
    let clientBase = clob.frames;
    let serverBase = upstream.clob.framesSent;
    let rtdsSent = upstream.rtds.framesSent;
    for (let s = T - 10; s <= T + 306; s++) {
      clock.set(s * 1e6 + 200_000);
      const i = s - T;
      cents += Math.round((rand() - 0.5) * 2000);
      prices.set(s, cents / 100);
      if (s === T) startCents = cents;
      if (s === T + 300) endCents = cents;
      upstream.rtds.price("chainlink", "btc", s * 1000, scaled(cents));
      rtdsSent = upstream.rtds.framesSent;

      if (i === 100) upstream.clob.freeze();
      if (i === 106) upstream.clob.thaw();
      if (i === 200) {
        upstream.clob.refusing = true;
        upstream.clob.disconnectAll();
        await until(() => clob.notReady(UP) !== null, "the client to notice the disconnect");
      }
      if (i === 203) upstream.clob.refusing = false;
      if ((i >= 106 && i <= 107) || i === 203) {
        await until(
          () => clob.notReady(UP) === null && clob.notReady(DOWN) === null,
          "books after reconnecting",
        );
        clientBase = clob.frames;
        serverBase = upstream.clob.framesSent;
      }

      const frozen = i >= 100 && i < 106;
      if (!frozen && s < T + 300) {
        // Two to four changes over both tokens, in no particular order; some remove a level.
        const changes = Array.from({ length: 2 + Math.floor(rand() * 3) }, () => {
          const id = rand() < 0.5 ? UP : DOWN;
          const book = upstream.clob.trueBook(id);
          const side = rand() < 0.5 ? ("BUY" as const) : ("SELL" as const);
          const levels = side === "BUY" ? book.bids : book.asks;
          const remove = levels.length > 3 && rand() < 0.3;
          const best = side === "BUY" ? (levels[0]?.price ?? 0.4) : (levels[0]?.price ?? 0.6);
          // After the tick size change to 0.001, half-cent prices appear.
          const step = i >= 150 ? 0.005 : 0.01;
          const price = remove
            ? levels[Math.floor(rand() * levels.length)].price
            : Math.round((best + (side === "BUY" ? -1 : 1) * Math.floor(rand() * 5) * step) * 1000) / 1000;
          return { id, side, price, size: remove ? 0 : (Math.round(rand() * 50000) + 100) / 100 };
        });
        upstream.clob.priceChange(changes, i % 7 === 0);
        if (i % 5 === 0) upstream.clob.trade(rand() < 0.5 ? UP : DOWN, Math.round(rand() * 98 + 1) / 100);
        if (i % 60 === 30) upstream.clob.setBook(UP, upstream.clob.trueBook(UP));
        if (i === 150) upstream.clob.tickSizeChange(UP, "0.001");
      }
      if (i === 280) {
        const m = upstream.gamma.markets.get(SLUG) as Record<string, unknown>;
        Object.assign(m, { liquidity: "4321.5", liquidityNum: 4321.5 });
      }
      if (i === 300) {
        const won = endCents >= startCents ? '["1", "0"]' : '["0", "1"]';
        const m = upstream.gamma.markets.get(SLUG) as Record<string, unknown>;
        // After the close the upstream reports no liquidity: the value taken before must stay.
        Object.assign(m, {
          closed: true,
          outcomePrices: won,
          liquidity: "0",
          liquidityNum: 0,
          volumeNum: 98765.4,
          closedTime: `${new Date((T + 316) * 1000).toISOString().slice(0, 19).replace("T", " ")}+00`,
        });
      }
      const refused = i >= 200 && i < 203;
      if (!frozen && !refused) {
        const sent = upstream.clob.framesSent - serverBase;
        await until(
          () => clob.frames - clientBase >= sent && rtds.frames >= rtdsSent,
          `frames of second ${i}`,
        );
      } else {
        await until(() => rtds.frames >= rtdsSent, `prices of second ${i}`);
      }

      await collector.tick();
      await collector.settled();
      if (s >= T && s < T + 300) {
        if (i >= 103 && i < 106) skipped.set(s, "upstream_silent");
        else if (refused) skipped.set(s, "upstream_disconnected");
        else {
          const up = upstream.clob.trueBook(UP);
          const down = upstream.clob.trueBook(DOWN);
          expected.push({
            second: s,
            up,
            down,
            priceUp: displayedPrice(up, upstream.clob.lastTrade.get(UP) ?? null) as number,
            priceDown: displayedPrice(down, upstream.clob.lastTrade.get(DOWN) ?? null) as number,
            coinPrice: cents / 100,
          });
        }
      }
    }
    await collector.stop();
  });

  after(async () => {
    await collector.stop();
    await upstream.close();
    await store.close();
  });

  test("discovery found the market through /events when /markets had nothing", () => {
    assert.ok(upstream.gamma.requests.includes(`/markets?slug=${SLUG}`));
    assert.ok(upstream.gamma.requests.includes(`/events?slug=${SLUG}`));
  });

  test("one snapshot a second, books equal to the upstream's at that second, best first", async () => {
    const market = await store.markets.getMarket(SLUG);
    assert.ok(market);
    const rows = await store.markets.snapshotPage(market.key, {
      order: "asc",
      limit: 1000,
      offset: 0,
      books: true,
    });
    assert.equal(rows.length, 294);
    assert.equal(market.snapshotCount, 294);
    assert.deepEqual(
      rows.map((r) => r.time),
      expected.map((e) => e.second * 1e6 + 200_000),
    );
    for (const [n, row] of rows.entries()) {
      const e = expected[n];
      const books = decodeBooks(row.books as Uint8Array);
      assert.deepEqual(books.up, e.up, `Up book at second ${e.second - T}`);
      assert.deepEqual(books.down, e.down, `Down book at second ${e.second - T}`);
      assert.equal(row.priceUp, e.priceUp, `price_up at second ${e.second - T}`);
      assert.equal(row.priceDown, e.priceDown);
      assert.equal(row.coinPrice, e.coinPrice);
    }
    assert.ok(
      rows.some((r) =>
        decodeBooks(r.books as Uint8Array).up.bids.some((l) => Math.round(l.price * 100) !== l.price * 100),
      ),
      "three-decimal prices after the tick size change were recorded",
    );
  });

  test("the market record: start and end prices from the feed, liquidity from before the close, the winner", async () => {
    const market = await store.markets.getMarket(SLUG);
    assert.ok(market);
    assert.equal(market.coinPriceStart, startCents / 100);
    assert.equal(market.coinPriceEnd, endCents / 100);
    assert.equal(market.winner, endCents >= startCents ? "Up" : "Down");
    assert.equal(market.finalLiquidity, 4321.5);
    assert.equal(market.finalVolume, 98765.4);
    assert.equal(market.resolvedAt, T + 316);
    assert.equal(market.clobTokenUp, UP);
    assert.equal(market.clobTokenDown, DOWN);
    assert.equal(market.marketId, "5001");
    assert.equal(market.eventId, "ev-5001");
  });

  test("the coverage endpoint reports both gaps with their causes", async () => {
    const t = await makeTestApp({ store, seed: false, clock: new ManualClock((T + 400) * 1e6) });
    const res = await t.get(`/v1/markets/${SLUG}/coverage`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.expected_snapshots, 300);
    assert.equal(body.recorded_snapshots, 294);
    assert.equal(body.missing_snapshots, 6);
    assert.equal(body.largest_gap_seconds, 4);
    assert.deepEqual(
      body.gaps.map((g: { from: string; to: string; missing_snapshots: number; cause: string }) => [
        g.from,
        g.to,
        g.missing_snapshots,
        g.cause,
      ]),
      [
        [iso(T + 102), iso(T + 106), 3, "upstream_silent"],
        [iso(T + 199), iso(T + 203), 3, "upstream_disconnected"],
      ],
    );
    assert.equal([...skipped.values()].length, 6);
    await t.app.close();
  });
});

function iso(second: number): string {
  return new Date(second * 1000 + 200).toISOString().replace("Z", "000Z");
}

describe("collector: a late start, unreadable frames, and a stop in the middle of a gap", () => {
  test("each missed stretch is recorded with its cause, and garbage never stops recording", async () => {
    const upstream = await startPolymarketUpstream();
    const store = await openTestStore();
    // The collector starts 5 s after the market opened.
    const clock = new ManualClock((T + 5) * 1e6 + 200_000);
    upstream.gamma.markets.set(SLUG, gammaMarket(SLUG, 5002, [UP, DOWN]));
    upstream.clob.setBook(UP, initialBook(48), false);
    upstream.clob.setBook(DOWN, initialBook(50), false);
    const { collector, clob, rtds } = collectorOver(upstream, store, clock, { collector: { lookahead: 0 } });
    try {
      await collector.start();
      await until(() => clob.notReady(UP) === null && clob.notReady(DOWN) === null, "books");
      await until(() => upstream.rtds.clientCount === 1, "the price socket");
      const tick = async (i: number) => {
        clock.set((T + i) * 1e6 + 200_000);
        upstream.rtds.price("chainlink", "btc", (T + i) * 1000, scaled(6_500_000));
        await until(() => rtds.frames >= i - 4, `price of second ${i}`);
        await collector.tick();
        await collector.settled();
      };
      for (let i = 5; i < 10; i++) await tick(i);
      // Unreadable frames are counted and skipped; the next seconds are recorded as before.
      const framesBefore = clob.frames;
      upstream.clob.sendRaw("not json");
      upstream.clob.sendRaw(
        '[{"event_type":"price_change","price_changes":[{"asset_id":"1111","side":"UP"}]}]',
      );
      await until(() => clob.frames >= framesBefore + 2, "the garbage frames");
      assert.equal(clob.malformed, 2);
      for (let i = 10; i < 12; i++) await tick(i);
      // The socket goes away and stays away; the collector is stopped in the middle of that gap.
      upstream.clob.refusing = true;
      upstream.clob.disconnectAll();
      await until(() => clob.notReady(UP) !== null, "the client to notice the disconnect");
      for (let i = 12; i < 15; i++) await tick(i);
      await collector.stop();

      const market = await store.markets.getMarket(SLUG);
      assert.ok(market);
      assert.equal(market.snapshotCount, 7);
      assert.deepEqual(
        (await store.markets.listGaps(market.key)).map((g) => [g.from, g.to, g.cause]),
        [
          [T * 1e6, (T + 5) * 1e6 + 200_000, "not_recording"],
          [(T + 12) * 1e6 + 200_000, (T + 14) * 1e6 + 200_000, "upstream_disconnected"],
        ],
      );
    } finally {
      await collector.stop();
      await upstream.close();
      await store.close();
    }
  });
});
