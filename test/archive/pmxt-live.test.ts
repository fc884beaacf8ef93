import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { CoinPrices } from "../../src/archive/coin-prices.ts";
import { importPmxt } from "../../src/archive/pmxt-import.ts";
import { inputsOf } from "../../src/archive/pmxt-sources.ts";
import { readFeed } from "../../src/archive/upstream-import.ts";
import { ManualClock } from "../../src/domain/time.ts";
import { silentLogger } from "../../src/log.ts";
import { ClobFeed } from "../../src/record/polymarket/clob-feed.ts";
import { Collector } from "../../src/record/polymarket/collector.ts";
import { GammaClient } from "../../src/record/polymarket/gamma-client.ts";
import { RtdsFeed } from "../../src/record/polymarket/rtds-feed.ts";
import { schedulerOn } from "../../src/record/scheduler.ts";
import type { StoredMarket } from "../../src/store/ports/market-store.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { openTestStore } from "../helpers/app.ts";
import { scaled, T } from "../helpers/polymarket-feeds.ts";
import {
  gammaMarket,
  type PolymarketUpstream,
  startPolymarketUpstream,
  until,
} from "../helpers/polymarket-upstream.ts";
import { writePmxtFile } from "../helpers/pmxt-parquet.ts";
import { archiveOrder, conditionIdOf, marketStream, rowOf } from "../helpers/pmxt-stream.ts";

/**
 * Importing the archive's rows of a stream gives what recording the same messages live gives (DESIGN
 * 3.11): the messages are sent by a local server playing Polymarket's market channel to the real
 * collector on a manual clock, each at its receive time, with a Chainlink tick a second and a tick of
 * the collector at each whole second; the same messages are written as PMXT rows and imported, with
 * the same ticks as a feed file. Same events (receive times, messages), same snapshots at the seconds
 * the collector recorded, same trades.
 */

const SLUG = `btc-updown-5m-${T}`;
const UP = "7771";
const DOWN = "7772";
const LAST = T + 40;

async function all<U>(blocks: AsyncIterable<U[]>): Promise<U[]> {
  const out: U[] = [];
  for await (const b of blocks) out.push(...b);
  return out;
}

describe("import pmxt equals recording live", () => {
  let upstream: PolymarketUpstream;
  let live: Store;
  let imported: Store;
  let liveMarket: StoredMarket;
  let importedMarket: StoredMarket;
  let dir: string;
  const conditionId = conditionIdOf(0x5001);
  const stream = marketStream(
    { conditionId, clobTokenUp: UP, clobTokenDown: DOWN },
    9,
    (T + 1) * 1000 + 300,
    LAST * 1000,
    300,
  );

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "pmxt-live-"));
    upstream = await startPolymarketUpstream();
    const clock = new ManualClock((T + 1) * 1e6 + 200_000);
    upstream.clob.nowMs = () => Math.floor(clock.nowMicros() / 1000);
    live = await openTestStore();
    upstream.gamma.markets.set(SLUG, { ...gammaMarket(SLUG, 5001, [UP, DOWN]), conditionId });
    const scheduler = schedulerOn(clock);
    const clob = new ClobFeed({ url: upstream.clobUrl, scheduler, log: silentLogger, backoffInitialMs: 1 });
    const rtds = new RtdsFeed({ url: upstream.rtdsUrl, scheduler, log: silentLogger, backoffInitialMs: 1 });
    const collector = new Collector({
      store: live.markets,
      trades: live.trades,
      events: live.events,
      clock,
      log: silentLogger,
      gamma: new GammaClient({ baseUrl: upstream.gammaUrl }),
      clob,
      rtds,
      coins: ["btc"],
      marketTypes: ["5m"],
      maxFeedStalenessS: 0,
    });
    await collector.start();
    await until(
      () => upstream.clob.subscribedTokens.has(UP) && upstream.rtds.clientCount === 1,
      "subscribed",
    );
    const feed = ["feed_ts_ms,value,full_accuracy_value,server_ts_ms,recv_ms"];
    let next = 0;
    for (let second = T + 2; second <= LAST; second++) {
      // Every message received before the second's tick (or at it), each at its receive time.
      for (; next < stream.length && stream[next].receivedMs <= second * 1000; next++) {
        const base = clob.frames;
        clock.set(stream[next].receivedMs * 1000);
        upstream.clob.sendRaw(JSON.stringify(stream[next].message));
        await until(() => clob.frames > base, "the frame");
      }
      const price = scaled(6_500_000 + second - T);
      const framesBefore = rtds.frames;
      upstream.rtds.price("chainlink", "btc", second * 1000, price);
      await until(() => rtds.frames > framesBefore, "the price");
      feed.push(`${second * 1000},0,${price},${second * 1000},${second * 1000 + 50}`);
      clock.set(second * 1e6);
      await collector.tick();
      await collector.settled();
    }
    await collector.stop();
    liveMarket = (await live.markets.getMarket(SLUG)) as StoredMarket;

    const file = join(dir, "polymarket_orderbook_2026-07-24T00.parquet");
    writePmxtFile(file, archiveOrder(stream.map(rowOf)), 64);
    const feedFile = join(dir, "chainlink-btcusd.csv");
    writeFileSync(feedFile, `${feed.join("\n")}\n`);
    imported = await openTestStore();
    const { key: _key, snapshotCount: _count, ...record } = liveMarket;
    importedMarket = await imported.markets.upsertMarket(record);
    const prices = new CoinPrices(0);
    prices.add("btc", "chainlink", await readFeed(feedFile));
    await importPmxt({ store: imported, coins: ["btc"], inputs: inputsOf([file]), prices });
  });

  after(async () => {
    await upstream.close();
    await live.close();
    await imported.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the same events: receive times and messages", async () => {
    const a = await all(live.events.streamMarketEvents(liveMarket.key));
    const b = await all(imported.events.streamMarketEvents(importedMarket.key));
    assert.equal(a.length, stream.length);
    // Among equal receive times the archive orders by token; compare each time's events as a set.
    const key = (e: { receivedUs: number; timestampMs: number; type: string; message: unknown }) =>
      JSON.stringify([e.receivedUs, e.timestampMs, e.type, e.message]);
    assert.deepEqual(b.map(key).sort(), a.map(key).sort());
  });

  test("the same snapshots at every second the collector recorded", async () => {
    const page = { order: "asc" as const, limit: 1000, offset: 0, books: true };
    const a = await live.markets.snapshotPage(liveMarket.key, page);
    const b = await imported.markets.snapshotPage(importedMarket.key, page);
    assert.ok(a.length >= 30, `${a.length} live snapshots`);
    const byTime = new Map(b.map((r) => [r.time, r]));
    for (const row of a) assert.deepEqual(byTime.get(row.time), row, `second ${row.time / 1e6 - T}`);
  });

  test("the same trades and the same integrity counts", async () => {
    const page = { order: "asc" as const, limit: 1000, offset: 0 };
    const a = await live.trades.tradePage(liveMarket.key, page);
    assert.ok(a.length > 0);
    assert.deepEqual(await imported.trades.tradePage(importedMarket.key, page), a);
    const counts = await live.events.bookIntegrity(liveMarket.key);
    assert.ok(counts && counts.bestMatches > 0 && counts.bookMatches > 0, JSON.stringify(counts));
    assert.deepEqual(await imported.events.bookIntegrity(importedMarket.key), counts);
  });
});
