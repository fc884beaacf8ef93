import { join } from "node:path";
import type { OrderBook } from "../src/domain/book.ts";
import { ManualClock } from "../src/domain/time.ts";
import { silentLogger } from "../src/log.ts";
import { ClobFeed } from "../src/record/polymarket/clob-feed.ts";
import { Collector } from "../src/record/polymarket/collector.ts";
import { GammaClient } from "../src/record/polymarket/gamma-client.ts";
import { RtdsFeed } from "../src/record/polymarket/rtds-feed.ts";
import { schedulerOn } from "../src/record/scheduler.ts";
import { SqliteStore } from "../src/store/dialects/sqlite/sqlite-store.ts";
import type { SnapshotBatch } from "../src/store/ports/market-store.ts";
import { startPolymarketUpstream, until } from "../test/helpers/polymarket-upstream.ts";

/**
 * Recording throughput: the collector following many live markets at once (each token's book 20
 * levels a side, a tenth of the tokens changing every second, as on a busy day), driven tick by tick
 * with a manual clock against local upstream servers, on a SQLite file. Measured is the wall time of
 * the ticks themselves (building, encoding and writing every market's snapshot in one transaction),
 * as snapshots per second, against a bulk insert of the same rows into a fresh file in the same run.
 */

export interface RecordingResult {
  markets: number;
  ticks: number;
  snapshots: number;
  recordingPerSecond: number;
  bulkPerSecond: number;
  ratio: number;
  tickP50Ms: number;
  tickMaxMs: number;
  /** Market events and coin-price updates written (0 with events off). */
  eventsWritten: number;
}

const NOW = 1784851200;

function book(seed: number): OrderBook {
  const mid = 30 + (seed % 40);
  return {
    bids: Array.from({ length: 20 }, (_, i) => ({
      price: (mid - i) / 100,
      size: 100 + ((seed * 7 + i * 13) % 900),
    })),
    asks: Array.from({ length: 20 }, (_, i) => ({
      price: (mid + 1 + i) / 100,
      size: 50 + ((seed * 3 + i * 11) % 700),
    })),
  };
}

export async function measureRecording(opts: {
  tmp: string;
  markets: number;
  ticks: number;
  /** Keep every message as events too (the collector's default); default false. */
  events?: boolean;
}): Promise<RecordingResult> {
  const upstream = await startPolymarketUpstream();
  let n = 0;
  upstream.clob.autoBook = () => book(n++);
  const store = new SqliteStore(join(opts.tmp, "recording.db"));
  await store.migrate();
  // Daily markets that opened a second apart are all live at NOW: as many as wanted, each its own slug.
  for (let i = 0; i < opts.markets; i++) {
    const start = NOW - 3600 - i;
    await store.markets.upsertMarket({
      slug: `btc-updown-24h-${start}`,
      polymarketSlug: null,
      coin: "btc",
      marketType: "24h",
      marketId: String(i),
      eventId: String(i),
      startTime: start,
      endTime: start + 86_400,
      coinPriceStart: 65000,
      coinPriceEnd: null,
      conditionId: `0x${i}`,
      clobTokenUp: `up-${i}`,
      clobTokenDown: `down-${i}`,
      winner: null,
      finalVolume: null,
      finalLiquidity: null,
      resolvedAt: null,
      createdAt: 0,
      updatedAt: 0,
      settlement: { source: "binance", lookbackS: null },
      feeSchedule: null,
    });
  }
  const clock = new ManualClock(NOW * 1e6);
  const scheduler = schedulerOn(clock);
  const clob = new ClobFeed({ url: upstream.clobUrl, scheduler, log: silentLogger });
  const rtds = new RtdsFeed({ url: upstream.rtdsUrl, scheduler, log: silentLogger });
  const collector = new Collector({
    store: store.markets,
    trades: store.trades,
    events: opts.events ? store.events : null,
    clock,
    log: silentLogger,
    gamma: new GammaClient({ baseUrl: upstream.gammaUrl }),
    clob,
    rtds,
    coins: ["btc"],
    marketTypes: ["24h"],
    lookahead: 0,
    discoveryEveryS: 1e9,
  });
  await collector.start();
  const tokens = opts.markets * 2;
  await until(
    () => upstream.clob.subscribedTokens.size === tokens && upstream.rtds.clientCount === 1,
    "subscriptions",
    30_000,
  );
  await until(() => clob.notReady(`down-${opts.markets - 1}`) === null, "books", 30_000);

  const durations: number[] = [];
  let sent = upstream.clob.framesSent;
  let base = clob.frames;
  for (let t = 0; t < opts.ticks; t++) {
    const second = NOW + t;
    clock.set(second * 1e6 + 100_000);
    upstream.rtds.price("binance", "btc", second * 1000, String(65000 + t));
    for (let k = 0; k < tokens / 10; k++) {
      const i = (t * 7919 + k * 104729) % opts.markets;
      const id = k % 2 === 0 ? `up-${i}` : `down-${i}`;
      const top = upstream.clob.trueBook(id).bids[0]?.price ?? 0.3;
      upstream.clob.priceChange([{ id, side: "BUY", price: top, size: 10 + ((t + k) % 500) }]);
    }
    const want = upstream.clob.framesSent - sent;
    await until(() => clob.frames - base >= want && rtds.frames >= t + 1, "frames");
    sent = upstream.clob.framesSent;
    base = clob.frames;
    const began = performance.now();
    await collector.tick();
    durations.push(performance.now() - began);
  }
  await collector.stop();
  await upstream.close();
  const eventsWritten = collector.eventsWritten + collector.coinEventsWritten;

  // The same rows, written in bulk into a fresh file.
  const { markets } = await store.markets.listMarkets({ limit: opts.markets, offset: 0 });
  const batch: SnapshotBatch[] = [];
  for (const m of markets) {
    batch.push({
      marketKey: m.key,
      rows: await store.markets.snapshotPage(m.key, {
        order: "asc",
        limit: opts.ticks,
        offset: 0,
        books: true,
      }),
    });
  }
  const snapshots = batch.reduce((s, b) => s + b.rows.length, 0);
  await store.close();
  const bulk = new SqliteStore(join(opts.tmp, "bulk.db"));
  await bulk.migrate();
  const began = performance.now();
  await bulk.markets.insertSnapshotBatch(batch);
  const bulkMs = performance.now() - began;
  await bulk.close();

  const recordingMs = durations.reduce((s, d) => s + d, 0);
  const sorted = durations.toSorted((a, b) => a - b);
  const recordingPerSecond = snapshots / (recordingMs / 1000);
  const bulkPerSecond = snapshots / (bulkMs / 1000);
  return {
    markets: opts.markets,
    ticks: opts.ticks,
    snapshots,
    recordingPerSecond: Math.round(recordingPerSecond),
    bulkPerSecond: Math.round(bulkPerSecond),
    ratio: Math.round((recordingPerSecond / bulkPerSecond) * 1000) / 1000,
    tickP50Ms: Math.round(sorted[Math.floor(sorted.length / 2)] * 10) / 10,
    tickMaxMs: Math.round((sorted.at(-1) ?? 0) * 10) / 10,
    eventsWritten,
  };
}
