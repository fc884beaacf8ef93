import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import {
  type CoinEvent,
  type MarketEvent,
  type MarketEventType,
  marketEventOf,
} from "../../src/domain/event.ts";
import type { EventStore } from "../../src/store/ports/event-store.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { BLOCK_EVENTS, SEAL_IDLE_US } from "../../src/store/rules/event-blocks.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { type StoreTests, describeStoreTests } from "./store-tests.ts";

const PROTOCOL = join(FIXTURES, "polymarket-protocol");

function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(PROTOCOL, name), "utf8")) as Record<string, unknown>;
}

/** JSON with every object's keys sorted: what "byte-equal after normalising key order" compares. */
function normalised(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

function eventOf(message: Record<string, unknown>, receivedUs: number): MarketEvent {
  const event = marketEventOf(message, receivedUs);
  assert.ok(!("problem" in event), JSON.stringify(event));
  return event;
}

const T0_MS = 1_786_604_000_000;
const MARKET_ID = "0x6bd56627aa21311850825edb27e53434a0e17a4f782be0086bc07f71eee00d0d";
const UP = "350977769852917329387037893294763093471844346281449484439085576212613048126";
const DOWN = "71321045679252212594626385532706912750332728571942532289631379312455583992563";

/** A price_change of both tokens as the upstream sends it; `i` makes it unique. */
function priceChange(i: number, timestampMs: number): Record<string, unknown> {
  const up = 10 + (i % 80);
  return {
    market: MARKET_ID,
    price_changes: [
      {
        asset_id: UP,
        price: `0.${String(up).padStart(2, "0")}`,
        size: `${(i * 7) % 5000}.${i % 100}`,
        side: i % 2 === 0 ? "BUY" : "SELL",
        hash: (i * 2654435761).toString(16).padStart(40, "0").slice(-40),
        best_bid: "0.5",
        best_ask: "0.510",
      },
      {
        asset_id: DOWN,
        price: `0.${String(100 - up).padStart(2, "0")}`,
        size: "150.0",
        side: i % 2 === 0 ? "SELL" : "BUY",
        hash: (i * 40503).toString(16).padStart(40, "0").slice(-40),
        best_bid: "0.49",
        best_ask: "0.5",
      },
    ],
    timestamp: String(timestampMs),
    event_type: "price_change",
  };
}

function lastTrade(i: number, timestampMs: number): Record<string, unknown> {
  return {
    event_type: "last_trade_price",
    market: MARKET_ID,
    asset_id: i % 2 === 0 ? UP : DOWN,
    fee_rate_bps: "0",
    price: "0.51",
    side: "BUY",
    size: `${i}.0`,
    timestamp: String(timestampMs),
  };
}

/** `n` events, one each 10 ms of receive time (upstream timestamps a few ms earlier), every 5th a trade. */
function stream(n: number, fromUs: number, seed = 0): MarketEvent[] {
  return Array.from({ length: n }, (_, k) => {
    const i = seed + k;
    const receivedUs = fromUs + k * 10_000 + (i % 7);
    const ts = Math.floor(receivedUs / 1000) - 3;
    return eventOf(i % 5 === 4 ? lastTrade(i, ts) : priceChange(i, ts), receivedUs);
  });
}

async function all(
  events: AsyncIterable<MarketEvent[]>,
): Promise<{ events: MarketEvent[]; blocks: number[] }> {
  const out: MarketEvent[] = [];
  const blocks: number[] = [];
  for await (const block of events) {
    out.push(...block);
    blocks.push(block.length);
  }
  return { events: out, blocks };
}

async function everything(events: EventStore, marketKey: number): Promise<MarketEvent[]> {
  return events.marketEventPage(marketKey, { order: "asc", limit: 1e9, offset: 0 });
}

const T0_US = T0_MS * 1000;

const EVENT_STORE_TESTS: StoreTests<EventStore> = {
  "the protocol's messages come back as they were sent, every field and decimal string": async (events) => {
    const messages = [
      fixture("ws-market-book-captured.json"),
      fixture("ws-market-price-change.json"),
      fixture("ws-market-last-trade-price.json"),
      fixture("ws-market-resolved.json"),
      // Unknown fields and unusual values are kept too.
      {
        ...fixture("ws-market-price-change.json"),
        extra: { nested: [1, -0, 2.5e-300, true, null, "", "0.0100", "007", "1e5"], "": "empty key" },
        big: 2 ** 70,
      },
    ];
    const stored = messages.map((m, i) => eventOf(m, T0_US + i));
    assert.equal(await events.appendMarketEvents([{ marketKey: 1, events: stored }]), messages.length);
    const back = await everything(events, 1);
    assert.deepEqual(back, stored);
    assert.deepEqual(
      back.map((e) => normalised(e.message)),
      messages.map(normalised),
    );
    assert.ok(Object.is((back[4].message.extra as { nested: unknown[] }).nested[1], -0));
    // Key order too, as the upstream sent it.
    assert.deepEqual(
      back.map((e) => JSON.stringify(e.message)),
      messages.map((m) => JSON.stringify(m)),
    );
  },
  "repeats and overlapping batches are stored once": async (events) => {
    const s = stream(300, T0_US);
    assert.equal(await events.appendMarketEvents([{ marketKey: 2, events: s.slice(0, 200) }]), 200);
    // A restarted collector's replay overlapping what was stored, a batch repeating its own events.
    assert.equal(await events.appendMarketEvents([{ marketKey: 2, events: s.slice(100, 300) }]), 100);
    assert.equal(await events.appendMarketEvents([{ marketKey: 2, events: [...s, ...s.slice(0, 50)] }]), 0);
    assert.equal(await events.appendMarketEvents([{ marketKey: 2, events: [s[5], s[5]] }]), 0);
    assert.equal(await events.countMarketEvents(2), 300);
    assert.deepEqual(await everything(events, 2), s);
    // The same message at another receive time is another event; the same receive time with another message too.
    const again = { ...s[0], receivedUs: s[0].receivedUs + 1 };
    const other = eventOf(priceChange(99_999, s[0].timestampMs), s[0].receivedUs);
    assert.equal(await events.appendMarketEvents([{ marketKey: 2, events: [again, other] }]), 2);
    assert.equal(await events.countMarketEvents(2), 302);
  },
  "two appends of the same batch at once store it once": async (events) => {
    const s = stream(500, T0_US);
    const added = await Promise.all([
      events.appendMarketEvents([{ marketKey: 3, events: s }]),
      events.appendMarketEvents([{ marketKey: 3, events: s }]),
      events.appendMarketEvents([{ marketKey: 3, events: s.slice(250) }]),
    ]);
    assert.equal(added[0] + added[1] + added[2], 500);
    assert.deepEqual(await everything(events, 3), s);
  },
  "events come in receive order, arrival order within a receive time": async (events) => {
    const s = stream(6, T0_US);
    const same = s.map((e) => ({ ...e, receivedUs: T0_US + 50 }));
    // Given out of order; three share a receive time (in the order they arrived in).
    await events.appendMarketEvents([{ marketKey: 4, events: [s[3], same[1], s[0], same[4], same[2]] }]);
    // A later batch at the same receive time goes after those stored.
    await events.appendMarketEvents([{ marketKey: 4, events: [same[0], s[5]] }]);
    assert.deepEqual(await everything(events, 4), [s[0], same[1], same[4], same[2], same[0], s[3], s[5]]);
  },
  "pages go oldest or newest first, with offset and limit, over every block": async (events) => {
    const s = stream(BLOCK_EVENTS * 2 + 500, T0_US);
    for (let i = 0; i < s.length; i += 700)
      await events.appendMarketEvents([{ marketKey: 5, events: s.slice(i, i + 700) }]);
    const desc = s.toReversed();
    for (const [offset, limit] of [
      [0, 10],
      [BLOCK_EVENTS - 3, 7],
      [BLOCK_EVENTS * 2 + 495, 10],
      [s.length, 5],
      [0, 0],
    ]) {
      assert.deepEqual(
        await events.marketEventPage(5, { order: "asc", limit, offset }),
        s.slice(offset, offset + limit),
      );
      assert.deepEqual(
        await events.marketEventPage(5, { order: "desc", limit, offset }),
        desc.slice(offset, offset + limit),
      );
    }
  },
  "timestamp ranges include both ends; types filter; counts match pages": async (events) => {
    const s = stream(BLOCK_EVENTS + 300, T0_US);
    await events.appendMarketEvents([{ marketKey: 6, events: s }]);
    const fromMs = s[1000].timestampMs;
    const toMs = s[4200].timestampMs;
    for (const types of [undefined, ["last_trade_price"], ["price_change", "book"]] as (
      MarketEventType[] | undefined
    )[]) {
      const want = s.filter(
        (e) =>
          e.timestampMs >= fromMs && e.timestampMs <= toMs && (types === undefined || types.includes(e.type)),
      );
      const range = { fromMs, toMs, types };
      assert.equal(await events.countMarketEvents(6, range), want.length);
      assert.deepEqual(
        await events.marketEventPage(6, { ...range, order: "asc", limit: 1e6, offset: 0 }),
        want,
      );
      assert.deepEqual(
        await events.marketEventPage(6, { ...range, order: "desc", limit: 20, offset: 3 }),
        want.toReversed().slice(3, 23),
      );
      assert.deepEqual((await all(events.streamMarketEvents(6, range))).events, want);
    }
    assert.equal(await events.countMarketEvents(6, { fromMs: s.at(-1)!.timestampMs + 1 }), 0);
    assert.equal(await events.countMarketEvents(6, { types: ["market_resolved"] }), 0);
    assert.deepEqual(await events.marketEventSpan(6), {
      count: s.length,
      firstReceivedUs: s[0].receivedUs,
      lastReceivedUs: s.at(-1)!.receivedUs,
      firstTimestampMs: s[0].timestampMs,
      lastTimestampMs: s.at(-1)!.timestampMs,
    });
    assert.equal(await events.marketEventSpan(999), null);
  },
  "a large market streams a block at a time": async (events) => {
    const n = 100_000;
    const s = stream(n, T0_US);
    // As the collector writes: small appends, each past the end.
    for (let i = 0; i < n; i += 2500)
      await events.appendMarketEvents([{ marketKey: 7, events: s.slice(i, i + 2500) }]);
    const { events: back, blocks } = await all(events.streamMarketEvents(7));
    assert.equal(back.length, n);
    // As text: a deep comparison of 100k objects takes seconds (the messages hold no -0 or NaN).
    assert.equal(JSON.stringify(back), JSON.stringify(s));
    assert.ok(blocks.length >= n / BLOCK_EVENTS, `blocks ${blocks.length}`);
    assert.ok(Math.max(...blocks) <= BLOCK_EVENTS, `largest block ${Math.max(...blocks)}`);
    assert.equal(await events.countMarketEvents(7), n);
  },
  "a stream read while appends rewrite its blocks sees every event once, in order": async (events) => {
    const s = stream(BLOCK_EVENTS * 3, T0_US);
    const odd = s.filter((_, i) => i % 2 === 1);
    const even = s.filter((_, i) => i % 2 === 0);
    await events.appendMarketEvents([{ marketKey: 13, events: odd }]);
    const read: MarketEvent[] = [];
    let blocks = 0;
    for await (const block of events.streamMarketEvents(13)) {
      read.push(...block);
      // Between blocks, the events in between arrive: every block is rewritten, before and after the reader.
      if (blocks++ === 0) await events.appendMarketEvents([{ marketKey: 13, events: even }]);
    }
    const ids = read.map((e) => e.receivedUs);
    assert.deepEqual(
      ids,
      [...new Set(ids)].sort((a, b) => a - b),
      "in receive order, none twice",
    );
    const seen = new Set(ids);
    assert.ok(
      odd.every((e) => seen.has(e.receivedUs)),
      "what was stored when the stream began is all read",
    );
    assert.deepEqual(await everything(events, 13), s);
  },
  "an earlier stretch appended after a later one falls in place before it, across blocks": async (events) => {
    // As `import pmxt` of hour H+1, then in a later run of hour H: the later events fill whole blocks first.
    const s = stream(BLOCK_EVENTS * 3 + 300, T0_US);
    const cut = BLOCK_EVENTS + 150;
    for (let i = cut; i < s.length; i += 1000)
      await events.appendMarketEvents([{ marketKey: 14, events: s.slice(i, Math.min(i + 1000, s.length)) }]);
    for (let i = 0; i < cut; i += 1000)
      await events.appendMarketEvents([{ marketKey: 14, events: s.slice(i, Math.min(i + 1000, cut)) }]);
    assert.equal(JSON.stringify(await everything(events, 14)), JSON.stringify(s));
    const streamed = await all(events.streamMarketEvents(14));
    assert.equal(JSON.stringify(streamed.events), JSON.stringify(s));
    assert.ok(Math.max(...streamed.blocks) <= BLOCK_EVENTS, `largest block ${Math.max(...streamed.blocks)}`);
    const span = await events.marketEventSpan(14);
    assert.equal(span?.firstReceivedUs, s[0].receivedUs);
    assert.equal(span?.lastReceivedUs, s.at(-1)!.receivedUs);
    assert.equal(span?.count, s.length);
  },
  "an idle tail is sealed by a later append, and reads the same": async (events) => {
    const s = stream(400, T0_US);
    for (let i = 0; i < s.length; i += 8)
      await events.appendMarketEvents([{ marketKey: 8, events: s.slice(i, i + 8) }]);
    assert.equal((await all(events.streamMarketEvents(8))).blocks.length, 50);
    const later = stream(3, s.at(-1)!.receivedUs + SEAL_IDLE_US + 1);
    await events.appendMarketEvents([{ marketKey: 9, events: later }]);
    const sealed = await all(events.streamMarketEvents(8));
    assert.deepEqual(sealed.blocks, [400]);
    assert.deepEqual(sealed.events, s);
    // Appending to it again after sealing still works, idempotently.
    assert.equal(await events.appendMarketEvents([{ marketKey: 8, events: [...s.slice(390), ...later] }]), 3);
    assert.deepEqual(await everything(events, 8), [...s, ...later]);
  },
  "several markets in one batch, each under its own key": async (events) => {
    const a = stream(20, T0_US, 1);
    const b = stream(30, T0_US, 2);
    assert.equal(
      await events.appendMarketEvents([
        { marketKey: 11, events: a },
        { marketKey: 10, events: b },
        { marketKey: 12, events: [] },
      ]),
      50,
    );
    assert.deepEqual(await everything(events, 11), a);
    assert.deepEqual(await everything(events, 10), b);
    assert.deepEqual(await everything(events, 12), []);
    const markets = await events.marketsWithEvents();
    assert.ok(markets.includes(10) && markets.includes(11) && !markets.includes(12));
    assert.deepEqual(
      markets,
      markets.toSorted((x, y) => x - y),
    );
  },
  "coin updates are kept per coin and topic, in receive order, within a range": async (events) => {
    const prices = fixture("rtds-crypto-prices-update.json");
    const twap = fixture("rtds-crypto-twap-sixty-update.json");
    const updates: CoinEvent[] = [];
    for (let i = 0; i < 30; i++) {
      const ts = 1_786_179_814_147 + i * 1000;
      updates.push({
        coin: "btc",
        topic: "crypto_prices",
        receivedUs: ts * 1000 + 400,
        timestampMs: ts,
        message: { ...prices, timestamp: ts },
      });
      updates.push({
        coin: i % 2 === 0 ? "btc" : "eth",
        topic: "crypto_prices_twap_sixty",
        receivedUs: ts * 1000 + 900,
        timestampMs: ts,
        message: i === 0 ? twap : { ...twap, timestamp: ts },
      });
    }
    assert.equal(await events.appendCoinEvents(updates.toReversed()), 60);
    assert.equal(await events.appendCoinEvents(updates.slice(10, 20)), 0);
    // Later updates of two streams at once, each past its stream's end (the live case).
    const later = updates.slice(-2).map((u) => ({ ...u, receivedUs: u.receivedUs + 5_000_000 }));
    assert.equal(await events.appendCoinEvents(later), 2);
    updates.push(...later);
    const read = async (coin: "btc" | "eth", topic: CoinEvent["topic"], range = {}) => {
      const out: CoinEvent[] = [];
      for await (const block of events.streamCoinEvents(coin, topic, range)) out.push(...block);
      return out;
    };
    const want = (coin: string, topic: string) => updates.filter((u) => u.coin === coin && u.topic === topic);
    assert.deepEqual(await read("btc", "crypto_prices"), want("btc", "crypto_prices"));
    assert.deepEqual(await read("btc", "crypto_prices_twap_sixty"), want("btc", "crypto_prices_twap_sixty"));
    assert.deepEqual(await read("eth", "crypto_prices_twap_sixty"), want("eth", "crypto_prices_twap_sixty"));
    assert.deepEqual(await read("eth", "crypto_prices"), []);
    assert.equal(normalised((await read("btc", "crypto_prices_twap_sixty"))[0].message), normalised(twap));
    const fromMs = updates[10].timestampMs;
    const toMs = updates[20].timestampMs;
    assert.deepEqual(
      await read("btc", "crypto_prices", { fromMs, toMs }),
      want("btc", "crypto_prices").filter((u) => u.timestampMs >= fromMs && u.timestampMs <= toMs),
    );
  },
  "book-integrity counts add up": async (events) => {
    assert.equal(await events.bookIntegrity(20), null);
    await events.addBookIntegrity(20, {
      bookMatches: 1,
      bookMismatches: 0,
      bestMatches: 10,
      bestMismatches: 2,
    });
    await events.addBookIntegrity(20, {
      bookMatches: 2,
      bookMismatches: 1,
      bestMatches: 5,
      bestMismatches: 0,
    });
    await Promise.all(
      Array.from({ length: 10 }, () =>
        events.addBookIntegrity(20, { bookMatches: 0, bookMismatches: 0, bestMatches: 1, bestMismatches: 1 }),
      ),
    );
    assert.deepEqual(await events.bookIntegrity(20), {
      bookMatches: 3,
      bookMismatches: 1,
      bestMatches: 25,
      bestMismatches: 12,
    });
    assert.equal(await events.bookIntegrity(21), null);
  },
  "random streams appended in random batches read back equal": async (events) => {
    let marketKey = 100;
    const eventArb = fc.record({
      dUs: fc.integer({ min: 0, max: 3 }),
      kind: fc.integer({ min: 0, max: 9 }),
      i: fc.integer({ min: 0, max: 40 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { minLength: 1, maxLength: 60 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 6 }),
        async (specs, cuts) => {
          marketKey++;
          let us = T0_US;
          const s = specs.map(({ dUs, kind, i }) => {
            us += dUs;
            const ts = Math.floor(us / 1000) + (i % 3);
            return eventOf(kind < 7 ? priceChange(i, ts) : lastTrade(i, ts), us);
          });
          // Batches: random slices (overlapping, repeated, out of order) that together cover the stream.
          const batches = cuts.map(([a, b]) =>
            s.slice(Math.min(a, b) % s.length, (Math.max(a, b) % s.length) + 1),
          );
          batches.push(s);
          const model: MarketEvent[] = [];
          const seen = new Set<string>();
          for (const batch of batches) {
            const fresh = batch.filter((e) => {
              const id = `${e.receivedUs} ${normalised(e.message)}`;
              if (seen.has(id)) return false;
              seen.add(id);
              return true;
            });
            model.push(...fresh);
            await events.appendMarketEvents([{ marketKey, events: batch }]);
          }
          const expected = model.toSorted((a, b) => a.receivedUs - b.receivedUs);
          assert.deepEqual(await everything(events, marketKey), expected);
          assert.equal(await events.countMarketEvents(marketKey), expected.length);
        },
      ),
      { numRuns: 40, seed: 22 },
    );
  },
};

export function eventStoreContract(backend: string, open: () => Promise<Store>): void {
  describeStoreTests(`EventStore contract (${backend})`, open, (store) => store.events, EVENT_STORE_TESTS);
}
