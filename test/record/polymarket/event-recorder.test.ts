import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { isMarketEventType, type MarketEvent } from "../../../src/domain/event.ts";
import type { SnapshotRow } from "../../../src/domain/snapshot.ts";
import { ManualClock } from "../../../src/domain/time.ts";
import { deriveSnapshotsFromBlocks } from "../../../src/events/derive.ts";
import { EventBook } from "../../../src/events/event-book.ts";
import { silentLogger } from "../../../src/log.ts";
import { ClobFeed } from "../../../src/record/polymarket/clob-feed.ts";
import { Collector } from "../../../src/record/polymarket/collector.ts";
import { GammaClient } from "../../../src/record/polymarket/gamma-client.ts";
import { RtdsFeed } from "../../../src/record/polymarket/rtds-feed.ts";
import { schedulerOn } from "../../../src/record/scheduler.ts";
import type { StoredMarket } from "../../../src/store/ports/market-store.ts";
import type { Store } from "../../../src/store/ports/store.ts";
import { openTestStore } from "../../helpers/app.ts";
import { bookAround, DOWN, scaled, T, UP } from "../../helpers/polymarket-feeds.ts";
import {
  gammaMarket,
  type PolymarketUpstream,
  startPolymarketUpstream,
  until,
} from "../../helpers/polymarket-upstream.ts";

/**
 * The collector keeping events, against local servers playing Polymarket's protocols and a manual
 * clock: the store holds exactly the market-channel messages and coin-price updates sent (equal after
 * normalising key order), in order, each once, with their receive times; snapshots derived again from
 * the stored events equal the stored snapshots; book integrity is counted live, a disagreement of the
 * upstream with itself included.
 */

const SLUG = `btc-updown-5m-${T}`;
/** The next market of the series, followed ahead of its start: its events are kept before it opens. */
const NEXT = `btc-updown-5m-${T + 300}`;
const UP2 = "3333";
const DOWN2 = "4444";

/** The tokens a market-channel object names, read plainly. */
function tokensNamed(m: Record<string, unknown>): string[] {
  const entries = (m.price_changes ?? []) as Record<string, unknown>[];
  return [m.asset_id, ...entries.map((e) => e.asset_id), ...((m.assets_ids ?? []) as unknown[])].map(String);
}

/** A value with every object's keys sorted: what "equal after normalising key order" compares. */
function normalised(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalised);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, normalised((v as Record<string, unknown>)[k])]),
  );
}

async function all<T>(blocks: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const block of blocks) out.push(...block);
  return out;
}

describe("collector: events of a live market, stored as sent", () => {
  let upstream: PolymarketUpstream;
  let store: Store;
  let collector: Collector;
  let market: StoredMarket;
  let next: StoredMarket;
  const clock = new ManualClock((T + 1) * 1e6 + 200_000);
  /** The market-channel objects the upstream sent about the market, in the order sent. */
  let sentMessages: unknown[] = [];
  let sentPrices: unknown[] = [];
  let malformed = 0;
  let tickSizeUp: number | null = null;

  before(async () => {
    upstream = await startPolymarketUpstream();
    upstream.clob.sent = [];
    upstream.rtds.sent = [];
    upstream.clob.nowMs = () => Math.floor(clock.nowMicros() / 1000);
    store = await openTestStore();
    upstream.gamma.markets.set(SLUG, gammaMarket(SLUG, 5001, [UP, DOWN]));
    upstream.gamma.markets.set(NEXT, gammaMarket(NEXT, 5002, [UP2, DOWN2]));
    for (const [id, low] of [
      [UP, 48],
      [DOWN, 50],
      [UP2, 40],
      [DOWN2, 58],
    ] as const)
      upstream.clob.setBook(id, bookAround(low), false);
    const scheduler = schedulerOn(clock);
    const clob = new ClobFeed({ url: upstream.clobUrl, scheduler, log: silentLogger, backoffInitialMs: 1 });
    const rtds = new RtdsFeed({ url: upstream.rtdsUrl, scheduler, log: silentLogger, backoffInitialMs: 1 });
    collector = new Collector({
      store: store.markets,
      trades: store.trades,
      events: store.events,
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
    await until(() => [UP, DOWN, UP2, DOWN2].every((id) => clob.notReady(id) === null), "the books");
    await until(() => upstream.rtds.clientCount === 1, "the price socket");

    let serverBase = upstream.clob.framesSent;
    let clientBase = clob.frames;
    for (let i = 1; i < 40; i++) {
      clock.set((T + i) * 1e6 + 200_000);
      // Second 8 has no coin price: a gap in the snapshots, not in the events.
      if (i !== 8) upstream.rtds.price("chainlink", "btc", (T + i) * 1000, scaled(6_500_000 + i));
      if (i % 3 === 0) upstream.rtds.twap(60, "btc", (T + i) * 1000, scaled(6_500_000 + i));
      if (i === 20) {
        upstream.clob.disconnectAll();
        await until(() => clob.notReady(UP) !== null, "the client to notice the disconnect");
        await until(() => [UP, DOWN, UP2, DOWN2].every((id) => clob.notReady(id) === null), "books again");
        serverBase = upstream.clob.framesSent;
        clientBase = clob.frames;
      }
      const id = i % 2 === 0 ? UP : DOWN;
      const top = upstream.clob.trueBook(id).bids[0].price;
      upstream.clob.priceChange(
        [
          { id, side: "BUY", price: top, size: 100 + i },
          { id: i % 2 === 0 ? DOWN : UP, side: "SELL", price: 0.6, size: i % 4 === 1 ? 0 : 10 + i },
        ],
        i % 5 === 0,
      );
      if (i % 4 === 0) upstream.clob.trade(id, top, { timestampMs: (T + i) * 1000, size: String(i) });
      if (i % 10 === 5) upstream.clob.setBook(UP, upstream.clob.trueBook(UP));
      if (i === 12) upstream.clob.tickSizeChange(DOWN, "0.001");
      // A message without its timestamp cannot be an event: counted as malformed and applied to
      // nothing, so that the live books stay those the stored events rebuild.
      if (i === 16)
        upstream.clob.sendRaw(
          JSON.stringify({ event_type: "tick_size_change", asset_id: UP, new_tick_size: "0.5" }),
        );
      // One message about the tokens of both markets: kept under each.
      if (i === 14)
        upstream.clob.priceChange([
          { id: DOWN, side: "BUY", price: 0.45, size: 7 },
          { id: UP2, side: "SELL", price: 0.7, size: 3 },
        ]);
      if (i === 30) {
        // The upstream disagrees with itself: a best bid its own book does not have (the entry removes
        // a level that is not there, so the books stay equal).
        upstream.clob.sendRaw(
          JSON.stringify({
            event_type: "price_change",
            market: "0xmarket",
            timestamp: String((T + i) * 1000),
            price_changes: [
              {
                asset_id: UP,
                price: "0.2",
                side: "BUY",
                size: "0",
                hash: "x",
                best_bid: "0.99",
                best_ask: "0.5",
              },
            ],
          }),
        );
      }
      // A frame may arrive after the tick at the same clock time: it is an event of the next tick.
      const sent = upstream.clob.framesSent - serverBase;
      await until(
        () => clob.frames - clientBase >= sent && rtds.frames >= upstream.rtds.framesSent,
        `frames of second ${i}`,
      );
      await collector.tick();
      await collector.settled();
    }
    // Received after the last tick: written by the stop.
    upstream.clob.trade(UP, 0.5, { timestampMs: (T + 40) * 1000, size: "40" });
    await until(() => clob.frames - clientBase >= upstream.clob.framesSent - serverBase, "the last trade");
    await collector.stop();
    malformed = clob.malformed;
    tickSizeUp = clob.book(UP)?.tickSize ?? null;
    market = (await store.markets.getMarket(SLUG)) as StoredMarket;
    next = (await store.markets.getMarket(NEXT)) as StoredMarket;
    sentMessages = (upstream.clob.sent ?? [])
      .filter((f) => f.text !== "PONG")
      .flatMap((f) => {
        const v = JSON.parse(f.text) as unknown;
        return Array.isArray(v) ? v : [v];
      })
      .filter((m: Record<string, unknown>) => isMarketEventType(String(m.event_type)) && "timestamp" in m);
    sentPrices = (upstream.rtds.sent ?? []).map((t) => JSON.parse(t) as unknown);
  });

  after(async () => {
    await upstream.close();
    await store.close();
  });

  test("the store holds exactly the market-channel messages sent, in order, each once, under each market they name", async () => {
    const stored = await all(store.events.streamMarketEvents(market.key));
    const about = (tokens: string[]) =>
      sentMessages
        .filter((m) => tokensNamed(m as Record<string, unknown>).some((t) => tokens.includes(t)))
        .map((m) => JSON.stringify(normalised(m)));
    const sent = about([UP, DOWN]);
    assert.ok(sent.length > 50, `${sent.length} messages sent`);
    assert.deepEqual(
      stored.map((e) => JSON.stringify(normalised(e.message))),
      sent,
    );
    assert.equal(await store.events.countMarketEvents(market.key), sent.length);
    const storedNext = await all(store.events.streamMarketEvents(next.key));
    assert.deepEqual(
      storedNext.map((e) => JSON.stringify(normalised(e.message))),
      about([UP2, DOWN2]),
    );
    assert.equal(
      storedNext.filter((e) => e.type === "price_change").length,
      1,
      "the message about both markets",
    );
    assert.equal(collector.eventsWritten, stored.length + storedNext.length);
    assert.equal(malformed, 1, "the message without a timestamp");
    assert.equal(tickSizeUp, 0.01, "and it changed nothing");
    for (const e of stored) {
      assert.equal(e.type, e.message.event_type);
      assert.equal(e.timestampMs, Number(e.message.timestamp));
    }
    // Receive times never go back, and the clock's second they came in is the second they were sent in.
    for (let i = 1; i < stored.length; i++) assert.ok(stored[i].receivedUs >= stored[i - 1].receivedUs);
    const resent = stored.filter((e) => e.type === "book").length;
    assert.equal(resent, 2 + 4 + 2, "the first books, a book every 10 s, the books after the reconnect");
  });

  test("every coin-price update sent is stored under its coin and topic", async () => {
    const chainlink = await all(store.events.streamCoinEvents("btc", "crypto_prices_chainlink"));
    const twap = await all(store.events.streamCoinEvents("btc", "crypto_prices_twap_sixty"));
    const byTopic = (topic: string) =>
      sentPrices
        .filter((m) => (m as Record<string, unknown>).topic === topic)
        .map((m) => JSON.stringify(normalised(m)));
    assert.deepEqual(
      chainlink.map((e) => JSON.stringify(normalised(e.message))),
      byTopic("crypto_prices_chainlink"),
    );
    assert.deepEqual(
      twap.map((e) => JSON.stringify(normalised(e.message))),
      byTopic("crypto_prices_twap_sixty"),
    );
    assert.equal(chainlink.length, 38);
    assert.equal(twap.length, 13);
    assert.equal(collector.coinEventsWritten, 38 + 13);
  });

  test("snapshots derived again from the stored events equal the stored snapshots", async () => {
    const rows = await store.markets.snapshotPage(market.key, {
      order: "asc",
      limit: 1000,
      offset: 0,
      books: true,
    });
    assert.equal(rows.length, 38);
    const gaps = await store.markets.listGaps(market.key);
    assert.deepEqual(
      gaps.filter((g) => g.cause === "no_coin_price").map((g) => [g.from, g.to]),
      [[(T + 8) * 1e6 + 200_000, (T + 8) * 1e6 + 200_000]],
    );
    const events = await all(store.events.streamMarketEvents(market.key));
    const inGap = events.filter(
      (e) => e.receivedUs > (T + 7) * 1e6 + 200_000 && e.receivedUs <= (T + 8) * 1e6 + 200_000,
    );
    assert.ok(inGap.length >= 1, "the events of the gap second are stored");
    // The trade received after the last tick, at the same clock time, is stamped after it.
    assert.ok((events.at(-1) as MarketEvent).receivedUs > (rows.at(-1) as SnapshotRow).time);
    assert.equal((events.at(-1) as MarketEvent).message.size, "40");
    const byTime = new Map(rows.map((r) => [r.time, r]));
    const derived: SnapshotRow[] = [];
    for await (const row of deriveSnapshotsFromBlocks(
      store.events.streamMarketEvents(market.key),
      { up: UP, down: DOWN },
      rows.map((r) => r.time),
      (t) => byTime.get(t)?.coinPrice ?? null,
    ))
      derived.push(row);
    assert.deepEqual(derived, rows);
  });

  test("book integrity is counted live: every check matched but the upstream's own disagreement", async () => {
    const counts = await store.events.bookIntegrity(market.key);
    assert.ok(counts);
    const stored: MarketEvent[] = await all(store.events.streamMarketEvents(market.key));
    // The same rule offline, over the stored events; it does not know of the reconnect, after which
    // the live books were not compared (messages may have been missed while the connection was down).
    const offline = new EventBook({ up: UP, down: DOWN });
    for (const e of stored) offline.apply(e);
    assert.deepEqual(counts, {
      bookMatches: offline.integrity.bookMatches - 2,
      bookMismatches: 0,
      bestMatches: offline.integrity.bestMatches,
      bestMismatches: 1,
    });
    assert.equal(offline.integrity.bestMismatches, 1);
    assert.ok(counts.bookMatches >= 4 && counts.bestMatches >= 70, JSON.stringify(counts));
  });
});
