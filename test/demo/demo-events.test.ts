import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { booksEqual, type OrderBook } from "../../src/domain/book.ts";
import type { MarketEvent } from "../../src/domain/event.ts";
import { type MarketType, SETTLEMENT_FEED } from "../../src/domain/market.ts";
import type { TradeRow } from "../../src/domain/trade.ts";
import { demoCoinEvents, demoMarketEvents } from "../../src/demo/demo-events.ts";
import { SnapshotDeriver } from "../../src/events/derive.ts";
import {
  buildCoinPath,
  type DemoOptions,
  demoSpanStart,
  demoTrades,
  generateDemo,
  marketSeconds,
  marketSnapshots,
  priceAt,
} from "../../src/demo/demo.ts";
import { protocolFixture } from "../helpers/polymarket-upstream.ts";

// 2026-07-24T16:20:07Z, as in demo.test.ts: the live 5m market is 7 s old, the live 15m one 5 min.
const ANCHOR = Date.UTC(2026, 6, 24, 16, 20, 7) / 1000;
const COUNTS: Record<MarketType, number> = { "5m": 3, "15m": 2, "1h": 0, "4h": 0, "24h": 0 };
const OPTIONS: Omit<DemoOptions, "onProgress"> = { seed: 7, anchor: ANCHOR, counts: COUNTS, coins: ["btc"] };

const markets = [...generateDemo(OPTIONS)].map((d) => d.market);
const path = buildCoinPath(OPTIONS.seed, "btc", demoSpanStart(ANCHOR, COUNTS), ANCHOR);

function eventsOf(seed: number, index: number, onTrade?: (t: TradeRow) => void): MarketEvent[] {
  return [...demoMarketEvents({ seed, market: markets[index], path, anchor: ANCHOR, onTrade })];
}

const streams = markets.map((_, i) => eventsOf(OPTIONS.seed, i));

/** A plain book per token, prices and sizes as the messages' strings: the rebuild the test trusts. */
class PlainBook {
  bids = new Map<string, string>();
  asks = new Map<string, string>();

  toOrderBook(): OrderBook {
    const levels = (m: Map<string, string>, dir: number) =>
      [...m]
        .map(([price, size]) => ({ price: Number(price), size: Number(size) }))
        .sort((a, b) => dir * (a.price - b.price));
    return { bids: levels(this.bids, -1), asks: levels(this.asks, 1) };
  }

  /** An empty side's best is 0 (bids) or 1 (asks), as the upstream writes it. */
  best(): { bid: string; ask: string } {
    let bid = 0;
    let ask = 1;
    for (const p of this.bids.keys()) bid = Math.max(bid, Number(p));
    for (const p of this.asks.keys()) ask = Math.min(ask, Number(p));
    return { bid: String(bid), ask: String(ask) };
  }
}

type Level = { price: string; size: string };

describe("demo market events", () => {
  it("rebuild the BookModel's books of both tokens at every second, best bid and ask agreeing", () => {
    let entries = 0;
    for (let i = 0; i < markets.length; i++) {
      const market = markets[i];
      const events = streams[i];
      const books = new Map([
        [market.clobTokenUp, new PlainBook()],
        [market.clobTokenDown, new PlainBook()],
      ]);
      let next = 0;
      let seconds = 0;
      for (const s of marketSeconds(OPTIONS.seed, market, path, ANCHOR)) {
        for (; next < events.length && events[next].receivedUs <= s.second * 1e6; next++) {
          const m = events[next].message;
          if (m.event_type === "book") {
            const book = books.get(m.asset_id as string) as PlainBook;
            book.bids = new Map((m.bids as Level[]).map((l) => [l.price, l.size]));
            book.asks = new Map((m.asks as Level[]).map((l) => [l.price, l.size]));
          } else if (m.event_type === "price_change") {
            for (const e of m.price_changes as Record<string, string>[]) {
              const book = books.get(e.asset_id) as PlainBook;
              const side = e.side === "BUY" ? book.bids : book.asks;
              if (e.size === "0") side.delete(e.price);
              else side.set(e.price, e.size);
              assert.deepEqual(book.best(), { bid: e.best_bid, ask: e.best_ask });
              entries++;
            }
          }
        }
        const up = books.get(market.clobTokenUp)?.toOrderBook() as OrderBook;
        const down = books.get(market.clobTokenDown)?.toOrderBook() as OrderBook;
        assert.ok(booksEqual(up, s.up), `${market.slug} Up at ${s.second}`);
        assert.ok(booksEqual(down, s.down), `${market.slug} Down at ${s.second}`);
        seconds++;
      }
      assert.ok(seconds > 0);
    }
    assert.ok(entries > 1000, `${entries} entries`);
  });

  it("give the demo's snapshots by the one derivation rule, every integrity check matching", () => {
    for (let i = 0; i < markets.length; i++) {
      const market = markets[i];
      const rows = [...marketSnapshots(OPTIONS.seed, market, path, ANCHOR)];
      const deriver = new SnapshotDeriver(
        { up: market.clobTokenUp, down: market.clobTokenDown },
        rows.map((r) => r.time),
        (time) => priceAt(path, SETTLEMENT_FEED[market.marketType], time / 1e6),
      );
      const derived = [...streams[i].flatMap((e) => deriver.push(e)), ...deriver.finish()];
      assert.deepEqual(derived, rows, market.slug);
      const integrity = deriver.book.integrity;
      assert.equal(integrity.bookMismatches + integrity.bestMismatches, 0, market.slug);
      assert.ok(integrity.bestMatches > 100, market.slug);
      assert.equal(deriver.book.unreadable, 0);
      if (streams[i].some((e) => e.type === "last_trade_price")) assert.ok(integrity.bookMatches > 0);
    }
  });

  it("keep the upstream's field names and types, as in the protocol fixtures", () => {
    const fixtures = {
      book: protocolFixture("ws-market-book-captured.json"),
      price_change: protocolFixture("ws-market-price-change.json"),
      last_trade_price: protocolFixture("ws-market-last-trade-price.json"),
      market_resolved: protocolFixture("ws-market-resolved.json"),
    };
    // Field names and the JSON type of each, whatever their order.
    const shape = (o: Record<string, unknown>) =>
      Object.entries(o)
        .map(([k, v]) => `${k}:${Array.isArray(v) ? "array" : typeof v}`)
        .sort()
        .join(",");
    const entryShape = shape((fixtures.price_change.price_changes as Record<string, unknown>[])[0]);
    const levelShape = shape((fixtures.book.bids as Record<string, unknown>[])[0]);
    const decimal = /^(0|[1-9]\d*)(\.\d*[1-9])?$/;
    const seen = new Set<string>();
    for (let i = 0; i < markets.length; i++) {
      for (const e of streams[i]) {
        const m = e.message as Record<string, unknown>;
        seen.add(e.type);
        assert.equal(m.event_type, e.type);
        assert.equal(shape(m), shape(fixtures[e.type as keyof typeof fixtures]), e.type);
        assert.equal(m.timestamp, String(e.timestampMs));
        assert.equal(m.market, markets[i].conditionId);
        // Sent a few ms before we received it.
        assert.ok(e.receivedUs - e.timestampMs * 1000 > 0 && e.receivedUs - e.timestampMs * 1000 < 41_000);
        if (e.type === "book") {
          assert.match(m.hash as string, /^[0-9a-f]{40}$/);
          assert.equal(m.tick_size, "0.01");
          const bids = (m.bids as Level[]).map((l) => Number(l.price));
          const asks = (m.asks as Level[]).map((l) => Number(l.price));
          // Upstream order: bids ascending, asks descending.
          assert.deepEqual(
            bids,
            [...bids].sort((a, b) => a - b),
          );
          assert.deepEqual(
            asks,
            [...asks].sort((a, b) => b - a),
          );
          for (const l of [...(m.bids as Level[]), ...(m.asks as Level[])]) {
            assert.equal(shape(l), levelShape);
            assert.match(l.price, decimal);
            assert.match(l.size, decimal);
          }
          assert.match(m.last_trade_price as string, /^$|^0\.\d{3}$/);
        } else if (e.type === "price_change") {
          const entries = m.price_changes as Record<string, string>[];
          const tokens = new Set(entries.map((x) => x.asset_id));
          assert.deepEqual(tokens, new Set([markets[i].clobTokenUp, markets[i].clobTokenDown]));
          for (const x of entries) {
            assert.equal(shape(x), entryShape);
            assert.match(x.hash, /^[0-9a-f]{40}$/);
            for (const k of ["price", "size", "best_bid", "best_ask"]) assert.match(x[k], decimal, k);
            assert.ok(x.side === "BUY" || x.side === "SELL");
          }
        } else if (e.type === "last_trade_price") {
          assert.match(m.price as string, decimal);
          assert.match(m.size as string, decimal);
          assert.equal(m.fee_rate_bps, "0");
        }
      }
    }
    assert.deepEqual(seen, new Set(["book", "price_change", "last_trade_price", "market_resolved"]));
  });

  it("come in receive order, each second's changes within the second before it", () => {
    for (let i = 0; i < markets.length; i++) {
      const events = streams[i];
      for (let k = 1; k < events.length; k++) assert.ok(events[k].receivedUs >= events[k - 1].receivedUs);
      const start = markets[i].startTime * 1e6;
      assert.equal(events[0].type, "book");
      assert.equal(events[1].type, "book");
      assert.ok(events[0].receivedUs > start - 1e6 && events[0].receivedUs <= start);
      const changes = events.filter((e) => e.type === "price_change");
      const seconds = new Set(changes.map((e) => Math.ceil(e.receivedUs / 1e6)));
      assert.equal(seconds.size, changes.length, "one price_change a second");
    }
  });

  it("carry the demo's trades, each followed by the traded token's book", () => {
    let trades = 0;
    for (let i = 0; i < markets.length; i++) {
      const market = markets[i];
      const told: TradeRow[] = [];
      const events = eventsOf(OPTIONS.seed, i, (t) => told.push(t));
      // The trades the seeder writes: demoTrades over the market's seconds.
      const tradeAt = demoTrades(OPTIONS.seed, market.slug);
      const expected: TradeRow[] = [];
      for (const s of marketSeconds(OPTIONS.seed, market, path, ANCHOR)) {
        const t = tradeAt({ time: s.second * 1e6, priceUp: s.priceUp, priceDown: s.priceDown });
        if (t) expected.push(t);
      }
      assert.deepEqual(told, expected);
      const sent = events.flatMap((e, k) => (e.type === "last_trade_price" ? [k] : []));
      assert.equal(sent.length, expected.length);
      const byTime = [...expected].sort((a, b) => a.time - b.time);
      sent.forEach((k, n) => {
        const m = events[k].message;
        const t = byTime[n];
        assert.equal(events[k].timestampMs * 1000, t.time);
        assert.equal(m.asset_id, t.outcome === "Up" ? market.clobTokenUp : market.clobTokenDown);
        assert.deepEqual([m.price, m.side, m.size], [String(t.price), t.side, String(t.size)]);
        const book = events[k + 1].message;
        assert.equal(book.event_type, "book");
        assert.equal(book.asset_id, m.asset_id);
        assert.equal(book.last_trade_price, t.price.toFixed(3));
      });
      trades += sent.length;
    }
    assert.ok(trades > 10, `${trades} trades`);
  });

  it("end a resolved market with market_resolved naming the winner; the live one has none", () => {
    for (let i = 0; i < markets.length; i++) {
      const market = markets[i];
      const resolved = streams[i].filter((e) => e.type === "market_resolved");
      if (market.winner === null) {
        assert.equal(resolved.length, 0);
        continue;
      }
      assert.equal(resolved.length, 1);
      assert.equal(streams[i].at(-1), resolved[0]);
      const m = resolved[0].message;
      assert.equal(m.winning_outcome, market.winner);
      assert.equal(m.winning_asset_id, market.winner === "Up" ? market.clobTokenUp : market.clobTokenDown);
      assert.deepEqual(m.assets_ids, [market.clobTokenUp, market.clobTokenDown]);
      assert.equal(m.id, market.marketId);
      assert.equal(Math.floor(resolved[0].receivedUs / 1e6), market.resolvedAt);
    }
    assert.ok(markets.some((m) => m.winner === null) && markets.some((m) => m.winner !== null));
  });

  it("are deterministic and depend on the seed", () => {
    for (let i = 0; i < markets.length; i++) assert.deepEqual(eventsOf(OPTIONS.seed, i), streams[i]);
    assert.notDeepEqual(eventsOf(OPTIONS.seed + 1, 0), streams[0]);
  });
});

describe("demo coin events", () => {
  it("are the coin path's prices, one a second on each topic, in the real-time data socket's shapes", () => {
    const fixture = protocolFixture("rtds-crypto-prices-update.json");
    const shape = (o: Record<string, unknown>) =>
      Object.entries(o)
        .map(([k, v]) => `${k}:${typeof v}`)
        .sort()
        .join(",");
    const from = ANCHOR - 120;
    const events = [...demoCoinEvents(OPTIONS.seed, path, from, ANCHOR)];
    assert.equal(events.length, 2 * 121);
    for (const e of events) {
      const m = e.message as Record<string, unknown>;
      const payload = m.payload as Record<string, unknown>;
      assert.equal(shape(m), shape(fixture));
      assert.equal(shape(payload), shape(fixture.payload as Record<string, unknown>));
      assert.equal(m.topic, e.topic);
      assert.equal(m.timestamp, e.timestampMs);
      assert.ok(e.receivedUs > e.timestampMs * 1000 && e.receivedUs - e.timestampMs * 1000 < 41_000);
      const second = (payload.timestamp as number) / 1000;
      assert.ok(
        Number.isInteger(second) && e.timestampMs > second * 1000 && e.timestampMs < second * 1000 + 100,
      );
      if (e.topic === "crypto_prices_chainlink") {
        assert.equal(payload.symbol, "btc/usd");
        assert.equal(payload.value, priceAt(path, "chainlink", second));
        const scaled = payload.full_accuracy_value as string;
        assert.match(scaled, /^[1-9]\d{18,}$/);
        assert.equal(Number(`${scaled.slice(0, -18)}.${scaled.slice(-18)}`), payload.value);
      } else {
        assert.equal(e.topic, "crypto_prices");
        assert.equal(payload.symbol, "btcusdt");
        assert.equal(payload.value, priceAt(path, "binance", second));
        assert.equal(payload.full_accuracy_value, (payload.value as number).toFixed(8));
      }
      assert.equal(e.coin, "btc");
    }
    // The same seconds give the same updates, whatever the span asked for.
    assert.deepEqual([...demoCoinEvents(OPTIONS.seed, path, ANCHOR - 10, ANCHOR)], events.slice(-22));
  });
});
