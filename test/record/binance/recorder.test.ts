import assert from "node:assert/strict";
import { after, afterEach, before, beforeEach, describe, test } from "node:test";
import { EMPTY_BOOK } from "../../../src/domain/book.ts";
import { encodeBooks } from "../../../src/wire/book-codec.ts";
import type { Venue } from "../../../src/domain/exchange.ts";
import {
  type BinanceRecorder,
  type RecorderEvent,
  type RecorderOptions,
  startBinanceRecorder,
} from "../../../src/record/binance/recorder.ts";
import { silentLogger } from "../../../src/log.ts";
import { SqliteStore } from "../../../src/store/dialects/sqlite/sqlite-store.ts";
import type { Store } from "../../../src/store/ports/store.ts";
import type { ExchangeStore } from "../../../src/store/ports/exchange-store.ts";
import { BinanceUpstream } from "../../helpers/binance-upstream.ts";
import { FakeScheduler, settle } from "../../helpers/fake-scheduler.ts";

/** 2026-07-24T00:20:34.000Z, ms. */
const T0 = 1784852434_000;

/** The recorder's events as they come, with a way to wait for the next ones. */
class Events {
  readonly all: RecorderEvent[] = [];
  private waiters: (() => void)[] = [];
  push = (e: RecorderEvent) => {
    this.all.push(e);
    for (const w of this.waiters.splice(0)) w();
  };
  of(type: RecorderEvent["type"], venue?: Venue): RecorderEvent[] {
    return this.all.filter((e) => e.type === type && (venue === undefined || e.venue === venue));
  }
  /** Resolves once `count` events of the type (and venue) have come in all. */
  async reach(count: number, type: RecorderEvent["type"], venue?: Venue): Promise<RecorderEvent[]> {
    while (this.of(type, venue).length < count) await new Promise<void>((r) => this.waiters.push(r));
    return this.of(type, venue);
  }
}

let upstream: BinanceUpstream;
let scheduler: FakeScheduler;
let store: Store;
let events: Events;
let recorder: BinanceRecorder | null;

// In a describe of its own, so that its hooks wrap only its tests when it shares a process (test/run.ts).
describe("BinanceRecorder", () => {
  before(async () => {
    scheduler = new FakeScheduler(T0);
    upstream = await BinanceUpstream.start(scheduler, T0 - 3600_000, T0 + 3600_000);
  });
  after(() => upstream.close());
  beforeEach(async () => {
    store = new SqliteStore(":memory:");
    await store.migrate();
    events = new Events();
    recorder = null;
  });
  afterEach(async () => {
    await recorder?.stop();
    for (const c of upstream.connections) c.socket.terminate();
    upstream.connections.length = 0;
    upstream.refuseStreams = false;
    await store.close();
  });

  function start(options: Partial<RecorderOptions> = {}): BinanceRecorder {
    recorder = startBinanceRecorder({
      store: store.exchange,
      coins: ["btc"],
      venues: ["spot", "futures"],
      urls: upstream.urls,
      scheduler,
      pollMs: 0,
      random: () => 0.5,
      onEvent: events.push,
      ...options,
    });
    return recorder;
  }

  const level = (price: string, qty: string) => [price, qty];

  describe("live recording", { timeout: 30_000 }, () => {
    test("subscribes every stream and records depth (one a second), trades, closed candles and mark prices", async () => {
      start({ coins: ["btc", "eth"] });
      const spot = await upstream.connected("spot", 1);
      const futures = await upstream.connected("futures", 1);
      await events.reach(2, "open");
      assert.deepEqual(spot.streams, [
        "btcusdt@depth20@1000ms",
        "btcusdt@trade",
        "btcusdt@kline_1m",
        "ethusdt@depth20@1000ms",
        "ethusdt@trade",
        "ethusdt@kline_1m",
      ]);
      assert.deepEqual(futures.streams, [
        "btcusdt@depth20@500ms",
        "btcusdt@aggTrade",
        "btcusdt@kline_1m",
        "btcusdt@markPrice@1s",
        "ethusdt@depth20@500ms",
        "ethusdt@aggTrade",
        "ethusdt@kline_1m",
        "ethusdt@markPrice@1s",
      ]);

      // Spot's partial depth carries no time: it is stamped on arrival. A second one in the same
      // second is not kept.
      upstream.send("spot", "btcusdt@depth20@1000ms", {
        lastUpdateId: 160,
        bids: [level("65000.01000000", "0.50000000"), level("65000.00000000", "1.25000000")],
        asks: [level("65000.02000000", "0.00012000"), level("65000.10000000", "3.00000000")],
      });
      upstream.send("spot", "btcusdt@depth20@1000ms", { lastUpdateId: 161, bids: [], asks: [] });
      // Futures' depth has an event time: 100 ms and 600 ms share a second, 1100 ms is the next.
      for (const [E, bid] of [
        [T0 + 100, "65010.1"],
        [T0 + 600, "65010.2"],
        [T0 + 1100, "65010.3"],
      ] as const) {
        upstream.send("futures", "btcusdt@depth20@500ms", {
          e: "depthUpdate",
          E,
          T: E - 2,
          s: "BTCUSDT",
          U: 1,
          u: 2,
          pu: 0,
          b: [level(bid, "2.500")],
          a: [level("65010.4", "0.004")],
        });
      }
      upstream.send("spot", "btcusdt@trade", {
        e: "trade",
        E: T0 + 5,
        s: "BTCUSDT",
        t: 5000002,
        p: "65000.01000000",
        q: "0.10000000",
        T: T0 + 3,
        m: true,
        M: true,
      });
      upstream.send("futures", "ethusdt@aggTrade", {
        e: "aggTrade",
        E: T0 + 9,
        s: "ETHUSDT",
        a: 777,
        p: "3500.12",
        q: "1.500",
        f: 100,
        l: 105,
        T: T0 + 8,
        m: false,
      });
      const kline = (x: boolean) => ({
        e: "kline",
        E: T0,
        s: "BTCUSDT",
        k: {
          t: T0 - 34_000 - 60_000,
          T: T0 - 34_001,
          s: "BTCUSDT",
          i: "1m",
          f: 1,
          L: 2,
          o: "64990.00000000",
          c: "65000.00000000",
          h: "65010.50000000",
          l: "64980.25000000",
          v: "12.34500000",
          n: 420,
          x,
          q: "802246.40000000",
          V: "6.00000000",
          Q: "390000.60000000",
          B: "0",
        },
      });
      upstream.send("spot", "btcusdt@kline_1m", kline(false));
      upstream.send("spot", "btcusdt@kline_1m", kline(true));
      upstream.send("futures", "btcusdt@markPrice@1s", {
        e: "markPriceUpdate",
        E: T0 + 1000,
        s: "BTCUSDT",
        p: "65011.23456789",
        i: "65000.50000000",
        P: "65001.10000000",
        r: "0.00012000",
        T: 1784880000000,
      });
      await events.reach(10, "message");
      assert.equal(events.of("flush").length, 0, "nothing written before the flush");
      await scheduler.advance(1000);
      await events.reach(1, "flush");
      assert.deepEqual(events.of("flush")[0].counts, {
        depth: 3,
        trades: 2,
        candles: 1,
        funding: 0,
        openInterest: 0,
        markPrices: 1,
      });
      assert.deepEqual(await store.exchange.latestDepth("btc", "spot"), {
        coin: "btc",
        venue: "spot",
        time: T0 * 1000,
        books: encodeBooks(
          {
            bids: [
              { price: 65000.01, size: 0.5 },
              { price: 65000, size: 1.25 },
            ],
            asks: [
              { price: 65000.02, size: 0.00012 },
              { price: 65000.1, size: 3 },
            ],
          },
          EMPTY_BOOK,
        ),
      });
      const futuresDepth = await store.exchange.depthPage("btc", "futures", {
        order: "asc",
        limit: 10,
        offset: 0,
      });
      assert.deepEqual(
        futuresDepth.map((d) => d.time),
        [(T0 + 100) * 1000, (T0 + 1100) * 1000],
      );
      assert.deepEqual(await store.exchange.latestTrades("btc", "spot", 10), [
        {
          coin: "btc",
          venue: "spot",
          id: 5000002,
          time: (T0 + 3) * 1000,
          price: 65000.01,
          qty: 0.1,
          buyerMaker: true,
        },
      ]);
      assert.deepEqual(await store.exchange.latestTrades("eth", "futures", 10), [
        {
          coin: "eth",
          venue: "futures",
          id: 777,
          time: (T0 + 8) * 1000,
          price: 3500.12,
          qty: 1.5,
          buyerMaker: false,
        },
      ]);
      assert.deepEqual(
        await store.exchange.candlePage("btc", "spot", "1m", { order: "asc", limit: 10, offset: 0 }),
        [
          {
            openTime: (T0 - 94_000) * 1000,
            lastOpenTime: (T0 - 94_000) * 1000,
            open: 64990,
            high: 65010.5,
            low: 64980.25,
            close: 65000,
            volume: 12.345,
            quoteVolume: 802246.4,
            trades: 420,
            takerBuyVolume: 6,
            takerBuyQuoteVolume: 390000.6,
          },
        ],
      );
      assert.deepEqual(await store.exchange.markPricePage("btc", { order: "asc", limit: 10, offset: 0 }), [
        {
          coin: "btc",
          time: (T0 + 1000) * 1000,
          markPrice: 65011.23456789,
          indexPrice: 65000.5,
          estimatedSettlePrice: 65001.1,
          fundingRate: 0.00012,
          nextFundingTime: 1784880000000 * 1000,
        },
      ]);
    });

    test("a malformed event is skipped; the stream goes on", async () => {
      const warnings: string[] = [];
      start({ venues: ["spot"], log: { ...silentLogger, warn: (_fields, m) => warnings.push(m) } });
      await upstream.connected("spot", 1);
      await events.reach(1, "open");
      upstream.send("spot", "btcusdt@trade", { e: "trade", t: 1, p: "abc", q: "1", T: T0 });
      upstream.send("spot", "btcusdt@trade", { e: "trade", t: 2, p: "1.5", q: "1", T: T0 });
      await events.reach(2, "message");
      await scheduler.advance(1000);
      assert.deepEqual(
        (await store.exchange.latestTrades("btc", "spot", 10)).map((t) => t.id),
        [2],
      );
      assert.equal(warnings.length, 1);
      assert.match(warnings[0], /p is not a number/);
    });

    test("a write the store refuses is tried again with the next second's rows", async () => {
      let refuse = true;
      const flaky = {
        insertBatch: (batch: Parameters<ExchangeStore["insertBatch"]>[0]) => {
          if (refuse) {
            refuse = false;
            return Promise.reject(new Error("database is locked"));
          }
          return store.exchange.insertBatch(batch);
        },
      } as unknown as ExchangeStore;
      start({ venues: ["futures"], store: flaky });
      await upstream.connected("futures", 1);
      await events.reach(1, "open");
      const trade = (a: number) => ({ e: "aggTrade", a, p: "1", q: "1", T: T0 + a, m: true });
      upstream.send("futures", "btcusdt@aggTrade", trade(1));
      await events.reach(1, "message");
      await scheduler.advance(1000);
      const [error] = await events.reach(1, "error");
      assert.equal(error.detail, "database is locked");
      upstream.send("futures", "btcusdt@aggTrade", trade(2));
      await events.reach(2, "message");
      await scheduler.advance(1000);
      await events.reach(1, "flush");
      assert.deepEqual(
        (await store.exchange.latestTrades("btc", "futures", 10)).map((t) => t.id),
        [2, 1],
      );
    });

    test("stop writes what is buffered and leaves no timer behind", async () => {
      const r = start({ venues: ["futures"] });
      await upstream.connected("futures", 1);
      await events.reach(1, "open");
      upstream.send("futures", "btcusdt@aggTrade", { e: "aggTrade", a: 9, p: "1", q: "1", T: T0, m: true });
      await events.reach(1, "message");
      await r.stop();
      assert.equal((await store.exchange.latestTrades("btc", "futures", 10)).length, 1);
      assert.equal(scheduler.pending, 0);
    });
  });

  describe("connections", { timeout: 30_000 }, () => {
    test("a silent stream is dropped and made again with the same streams", async () => {
      start({ venues: ["spot"], silenceMs: 10_000, backoffMs: 1000 });
      const first = await upstream.connected("spot", 1);
      await events.reach(1, "open");
      const closed = new Promise((resolve) => first.socket.once("close", resolve));
      await scheduler.advance(9_999);
      assert.equal(events.of("reconnect").length, 0);
      await scheduler.advance(1);
      const [reconnect] = await events.reach(1, "reconnect");
      assert.deepEqual([reconnect.detail, reconnect.delayMs], ["silent for 10 s", 1000]);
      await closed;
      await scheduler.advance(1000);
      const second = await upstream.connected("spot", 2);
      assert.deepEqual(second.streams, first.streams);
      await events.reach(2, "open");
    });

    test("messages keep a connection alive", async () => {
      start({ venues: ["spot"], silenceMs: 10_000 });
      await upstream.connected("spot", 1);
      await events.reach(1, "open");
      for (let i = 1; i <= 5; i++) {
        await scheduler.advance(6_000);
        upstream.send("spot", "btcusdt@trade", { e: "trade", t: i, p: "1", q: "1", T: T0, m: true });
        await events.reach(i, "message");
      }
      assert.equal(events.of("reconnect").length, 0);
      assert.equal(upstream.connections.length, 1);
    });

    test("a connection dropped mid-stream is made again; replayed events are not stored twice", async () => {
      start({ venues: ["futures"], backoffMs: 1000 });
      await upstream.connected("futures", 1);
      await events.reach(1, "open");
      const trade = (a: number) => ({
        e: "aggTrade",
        E: T0,
        s: "BTCUSDT",
        a,
        p: "65000.1",
        q: "0.5",
        T: T0 + a,
        m: false,
      });
      upstream.send("futures", "btcusdt@aggTrade", trade(1));
      upstream.send("futures", "btcusdt@aggTrade", trade(2));
      await events.reach(2, "message");
      upstream.drop("futures");
      const [reconnect] = await events.reach(1, "reconnect");
      assert.equal(reconnect.delayMs, 1000);
      await scheduler.advance(1000);
      const second = await upstream.connected("futures", 2);
      assert.ok(second.streams.includes("btcusdt@aggTrade"));
      await events.reach(2, "open");
      for (const a of [1, 2, 3]) upstream.send("futures", "btcusdt@aggTrade", trade(a));
      await events.reach(5, "message");
      await scheduler.advance(1000);
      assert.deepEqual(
        (await store.exchange.latestTrades("btc", "futures", 10)).map((t) => t.id),
        [3, 2, 1],
      );
    });

    test("reconnect delays double while connecting fails and start again once a connection delivers", async () => {
      start({ venues: ["spot"], backoffMs: 1000, maxBackoffMs: 4000 });
      await upstream.connected("spot", 1);
      await events.reach(1, "open");
      upstream.refuseStreams = true;
      upstream.drop("spot");
      await events.reach(1, "reconnect");
      for (const [n, delay] of [
        [2, 2000],
        [3, 4000],
        [4, 4000],
      ]) {
        await scheduler.advance(events.of("reconnect").at(-1)!.delayMs!);
        const reconnects = await events.reach(n, "reconnect");
        assert.equal(reconnects[n - 1].delayMs, delay);
      }
      upstream.refuseStreams = false;
      await scheduler.advance(4000);
      await upstream.connected("spot", 2);
      await events.reach(2, "open");
      upstream.send("spot", "btcusdt@trade", { e: "trade", t: 1, p: "1", q: "1", T: T0, m: true });
      await events.reach(1, "message");
      upstream.drop("spot");
      const reconnects = await events.reach(5, "reconnect");
      assert.deepEqual(
        reconnects.map((r) => r.delayMs),
        [1000, 2000, 4000, 4000, 1000],
      );
    });

    test("before the 24-hour limit a new connection takes over without a gap", async () => {
      start({ venues: ["spot"], maxConnectionMs: 60_000, silenceMs: 120_000 });
      const first = await upstream.connected("spot", 1);
      await events.reach(1, "open");
      const firstClosed = new Promise((resolve) => first.socket.once("close", resolve));
      await scheduler.advance(60_000);
      await events.reach(1, "rotate");
      const second = await upstream.connected("spot", 2);
      await events.reach(2, "open");
      assert.equal(
        first.socket.readyState,
        first.socket.OPEN,
        "the old connection stays until the new one delivers",
      );
      // Both connections carry the message; it is stored once.
      upstream.send("spot", "btcusdt@trade", { e: "trade", t: 7, p: "1", q: "1", T: T0, m: true });
      await firstClosed;
      assert.equal(second.socket.readyState, second.socket.OPEN);
      assert.equal(events.of("reconnect").length, 0);
      await settle();
      await scheduler.advance(1000);
      assert.deepEqual(
        (await store.exchange.latestTrades("btc", "spot", 10)).map((t) => t.id),
        [7],
      );
    });
  });

  describe("REST polling", { timeout: 30_000 }, () => {
    test("funding rates and open interest are polled and stored", async () => {
      start({ venues: ["futures"], pollMs: 300_000 });
      await scheduler.advance(0);
      await events.reach(1, "poll");
      await scheduler.advance(1000);
      await events.reach(1, "flush");
      assert.ok((await store.exchange.countFunding("btc")) >= 1);
      assert.equal(await store.exchange.countOpenInterest("btc"), 3);
      assert.deepEqual(
        upstream.requestsTo("/futures/data/openInterestHist").map((r) => [r.query.symbol, r.query.period]),
        [["BTCUSDT", "5m"]],
      );
    });
  });
});
