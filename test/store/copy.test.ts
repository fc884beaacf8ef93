import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { KeyService } from "../../src/access/keys.ts";
import { loadPlans } from "../../src/access/plans.ts";
import { COIN_EVENT_TOPICS, type CoinEvent, type MarketEvent } from "../../src/domain/event.ts";
import type { CandleRow, ExchangeBatch, TradeRow } from "../../src/domain/exchange.ts";
import { ManualClock } from "../../src/domain/time.ts";
import type { TradeRow as MarketTrade } from "../../src/domain/trade.ts";
import { seedDemo } from "../../src/demo/seed.ts";
import { seedExchangeDemo } from "../../src/demo/exchange-demo.ts";
import { copyStore, seriesName } from "../../src/store/copy.ts";
import type { ExchangeStore, SeriesCursor, SeriesExtent } from "../../src/store/ports/exchange-store.ts";
import { openStore } from "../../src/store/open.ts";
import type { RecordingGap } from "../../src/store/ports/market-store.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { ANCHOR, HAND_MARKET, insertHandMarket, makeTestApp } from "../helpers/app.ts";
import { ScratchSchemas, postgresTestUrl } from "../helpers/postgres.ts";
import { BIN } from "../helpers/paths.ts";
import pg from "pg";

const MONTH = "2026-07";

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "updown-copy-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function sqliteUrl(): string {
  return `sqlite:${join(dir, `db-${++files}.sqlite`)}`;
}

/** Exchange rows the API never shows (the demo writes the rest): a stored 1h candle, and eth trades. */
const EXTRA_EXCHANGE = {
  candles: [
    {
      coin: "btc",
      venue: "spot",
      interval: "1h",
      openTime: (ANCHOR - 7200) * 1e6,
      open: 64000.01,
      high: 64100.5,
      low: 63900.25,
      close: 64050.125,
      volume: 12.34567,
      quoteVolume: 790123.45678901,
      trades: 4321,
      takerBuyVolume: 6.5,
      takerBuyQuoteVolume: 416000.00000001,
    },
  ] satisfies CandleRow[],
  // Several trades a time, so that batches end among trades of one time.
  trades: Array.from({ length: 25 }, (_, i): TradeRow => ({
    coin: "eth",
    venue: "spot",
    id: 500 + i,
    time: (ANCHOR - 60) * 1e6 + Math.floor(i / 4) * 1000,
    price: 3000 + i / 100,
    qty: 0.1 + i / 1000,
    buyerMaker: i % 3 === 0,
  })),
};

/** What the source holds besides markets: three kinds of key and a ledger with each kind of charge. */
interface SourceKeys {
  active: string;
  revoked: string;
  enterprise: string;
}

/**
 * A source with demo markets (hourly and daily ones carry Polymarket aliases), the hand-written market
 * (one second without books), keys of each state and a quota ledger for the active key.
 */
/** The hand market's events: enough for two blocks, each a price_change with decimals kept as sent. */
const HAND_EVENTS: MarketEvent[] = Array.from({ length: 5000 }, (_, i) => {
  const timestampMs = HAND_MARKET.startTime * 1000 + i * 100;
  return {
    receivedUs: timestampMs * 1000 + 2500,
    timestampMs,
    type: "price_change",
    message: {
      market: HAND_MARKET.conditionId,
      price_changes: [
        { asset_id: HAND_MARKET.clobTokenUp, price: "0.510", size: `${i}.0`, side: "BUY", hash: `h${i}` },
      ],
      timestamp: String(timestampMs),
      event_type: "price_change",
    },
  };
});

const COIN_UPDATES: CoinEvent[] = Array.from({ length: 40 }, (_, i) => ({
  coin: i % 2 === 0 ? "sol" : "btc",
  topic: "crypto_prices_chainlink",
  receivedUs: (HAND_MARKET.startTime + i) * 1e6 + 300,
  timestampMs: (HAND_MARKET.startTime + i) * 1000,
  message: {
    topic: "crypto_prices_chainlink",
    payload: { symbol: "sol/usd", value: 150.5 + i },
    timestamp: i,
  },
}));

/** A store's events of every market (by slug), book-integrity counts, and coin updates. */
async function eventsOf(store: Store): Promise<unknown> {
  const { markets } = await store.markets.listMarkets({ limit: 10_000, offset: 0 });
  const coins: CoinEvent[] = [];
  for (const coin of ["btc", "sol"] as const) {
    for await (const block of store.events.streamCoinEvents(coin, "crypto_prices_chainlink"))
      coins.push(...block);
  }
  return {
    coins,
    markets: await Promise.all(
      markets.map(async (m) => [
        m.slug,
        await store.events.marketEventPage(m.key, { order: "asc", limit: 1e6, offset: 0 }),
        await store.events.bookIntegrity(m.key),
      ]),
    ),
  };
}

/** Every market event and every coin update the store holds, whatever their source. */
async function eventCounts(store: Store): Promise<{ market: number; coin: number }> {
  const { markets } = await store.markets.listMarkets({ limit: 10_000, offset: 0 });
  let market = 0;
  for (const m of markets) market += await store.events.countMarketEvents(m.key);
  let coin = 0;
  for (const c of ["btc", "sol"] as const) {
    for (const topic of COIN_EVENT_TOPICS) {
      for await (const block of store.events.streamCoinEvents(c, topic)) coin += block.length;
    }
  }
  return { market, coin };
}

async function fillSource(store: Store): Promise<SourceKeys> {
  await seedDemo(store, {
    seed: 11,
    anchor: ANCHOR,
    counts: { "5m": 3, "15m": 2, "1h": 2, "4h": 1, "24h": 0 },
    coins: ["btc", "sol"],
  });
  await seedExchangeDemo(store.exchange, { seed: 11, anchor: ANCHOR, coins: ["btc", "sol"] });
  await store.exchange.insertBatch(EXTRA_EXCHANGE);
  await insertHandMarket(store);
  const hand = (await store.markets.getMarket(HAND_MARKET.slug))!;
  await store.markets.recordGap(hand.key, {
    from: 1784851202e6,
    to: 1784851260e6,
    cause: "collector_down",
    detail: "test",
  });
  await store.events.appendMarketEvents([{ marketKey: hand.key, events: HAND_EVENTS }]);
  await store.events.addBookIntegrity(hand.key, {
    bookMatches: 3,
    bookMismatches: 1,
    bestMatches: 90,
    bestMismatches: 2,
  });
  await store.events.appendCoinEvents(COIN_UPDATES);
  // A trade with its transaction hash (as PMXT's archive gives them): copied with it.
  await store.trades.insertTrades([
    {
      marketKey: hand.key,
      rows: [
        {
          time: 1784851203_250_000,
          outcome: "Up",
          side: "BUY",
          price: 0.52,
          size: 12,
          feeRateBps: 0,
          transactionHash: `0x${"7a".repeat(32)}`,
        },
      ],
    },
  ]);
  const clock = new ManualClock(ANCHOR * 1e6 + 5);
  const keys = new KeyService(store.keys, clock, loadPlans());
  const active = (await keys.create({ plan: "pro", account: "acme", name: "active" })).key;
  const revoked = (await keys.create({ plan: "starter", account: "acme" })).key;
  await keys.revoke(revoked.slice(3, 11));
  const enterprise = (
    await keys.create({ plan: "enterprise", account: "big", perMinuteLimit: 5000, perDayLimit: 123_456 })
  ).key;
  const keyId = active.slice(3, 11);
  const charge = (chargeId: string, idempotencyKey: string | null) =>
    store.quota.chargeQuota({ keyId, month: MONTH, limit: 5, chargeId, idempotencyKey, at: ANCHOR * 1e6 });
  await charge("charge-1", "idem-1");
  await store.quota.recordChargeResult(keyId, "charge-1", '{"strategy":"kept"}');
  await charge("charge-2", null);
  await charge("charge-3", "idem-3");
  await store.quota.refundQuota(keyId, "charge-3", ANCHOR * 1e6 + 1);
  return { active, revoked, enterprise };
}

/** Bodies of every read the API offers over the store's markets, by URL, asked with `key`. */
async function apiAnswers(store: Store, key: string): Promise<Map<string, string>> {
  const t = await makeTestApp({ store, seed: false });
  const answers = new Map<string, string>();
  const get = async (url: string) => {
    const res = await t.get(url, { "x-api-key": key });
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    answers.set(url, res.body);
    return res.body;
  };
  const list = JSON.parse(await get("/v1/markets?limit=100")) as {
    markets: { slug: string; polymarket_slug: string | null; start_time: string }[];
  };
  assert.ok(list.markets.length > 10);
  for (const m of list.markets) {
    const base = `/v1/markets/${m.slug}`;
    await get(base);
    if (m.polymarket_slug) await get(`/v1/markets/${m.polymarket_slug}`);
    await get(`${base}/snapshots?include_orderbook=true`);
    await get(`${base}/snapshots?include_orderbook=true&order=asc&limit=7&offset=3`);
    await get(`${base}/snapshots?limit=1000&offset=1000`);
    await get(`${base}/snapshots/at?time=${encodeURIComponent(m.start_time)}&include_orderbook=true`);
    await get(`${base}/snapshots/export?format=ndjson&include_orderbook=true`);
  }
  assert.ok(
    [...answers].some(([url, body]) => url.startsWith("/v1/markets/") && body.includes('"bids":[{')),
    "books are among the bodies compared",
  );
  await get("/v1/backtest-ai/quota");
  const seen = (await store.exchange.listSeries()).filter((s) => s.kind !== "trades" || s.coin !== "eth");
  assert.ok(seen.length >= 18, "demo exchange data of two coins on both venues");
  for (const { coin, venue } of seen.filter((s) => s.kind === "depth")) {
    const base = `/v1/${coin}/${venue}`;
    await get(`${base}/latest`);
    await get(`${base}/trades/latest?limit=1000`);
    await get(`${base}/snapshots?limit=1000`);
    await get(`${base}/snapshots?order=asc&limit=7&offset=3`);
    for (const interval of ["1m", "5m", "1h"]) await get(`${base}/candles?interval=${interval}&limit=1000`);
    if (venue === "futures") {
      for (const what of ["funding-rates", "open-interest", "mark-price"])
        await get(`${base}/${what}?limit=1000`);
    }
  }
  assert.ok(
    [...answers].some(([url, body]) => url.endsWith("/snapshots?limit=1000") && body.includes('"bids":[{')),
    "depth books are among the bodies compared",
  );
  // The app's own key was made in this store; it is not part of what is compared.
  await t.app.close();
  return answers;
}

/** Every exchange row the store holds, series by series as stored (depth books as their bytes). */
async function exchangeRows(exchange: ExchangeStore): Promise<Map<string, unknown[]>> {
  const all = new Map<string, unknown[]>();
  for (const series of await exchange.listSeries()) {
    const rows: unknown[] = [];
    let after: SeriesCursor | null = null;
    for (;;) {
      const batch = Object.values(await exchange.seriesPage(series, after, 1000))[0];
      rows.push(...batch);
      if (batch.length < 1000) break;
      const last = batch[batch.length - 1] as { time?: number; openTime?: number; id?: number };
      after = { time: last.time ?? last.openTime!, id: last.id };
    }
    assert.equal(rows.length, series.rows, seriesName(series));
    all.set(seriesName(series), rows);
  }
  return all;
}

function assertSameAnswers(actual: Map<string, string>, expected: Map<string, string>, where: string): void {
  assert.deepEqual([...actual.keys()], [...expected.keys()], `${where}: the same URLs`);
  for (const [url, body] of expected) assert.equal(actual.get(url), body, `${where}: ${url}`);
}

/** Everything the store keeps about keys and the ledger, as read back. */
async function accessRecords(store: Store, keys: SourceKeys) {
  const ids = Object.values(keys).map((k) => k.slice(3, 11));
  return {
    keys: await Promise.all(ids.map((id) => store.keys.findApiKey(id))),
    ledger: await store.quota.listQuotaCharges(null, 1000),
    used: await store.quota.quotaUsed(keys.active.slice(3, 11), MONTH),
  };
}

/** The key works, the revoked one is refused, over an app on `store`; also the enterprise key's limits. */
async function assertKeysWork(store: Store, keys: SourceKeys): Promise<void> {
  const t = await makeTestApp({ store, seed: false });
  try {
    const ok = await t.get("/v1/markets?limit=1", { "x-api-key": keys.active });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.headers["x-tier"], "pro");
    const refused = await t.get("/v1/markets?limit=1", { "x-api-key": keys.revoked });
    assert.equal(refused.statusCode, 401);
    const big = await t.get("/v1/markets?limit=1", { "x-api-key": keys.enterprise });
    assert.equal(big.statusCode, 200);
    assert.equal(big.headers["x-ratelimit-limit"], "123456");
    const quota = JSON.parse((await t.get("/v1/backtest-ai/quota", { "x-api-key": keys.active })).body) as {
      used: number;
    };
    assert.equal(quota.used, 2, "two live charges");
  } finally {
    await t.app.close();
  }
}

/** Every market's recorded gaps, by slug. */
async function gapsBySlug(store: Store): Promise<Map<string, RecordingGap[]>> {
  const { markets } = await store.markets.listMarkets({ limit: 10_000, offset: 0 });
  return new Map(
    await Promise.all(markets.map(async (m) => [m.slug, await store.markets.listGaps(m.key)] as const)),
  );
}

/** Every market's trades, oldest first, by slug. */
async function tradesBySlug(store: Store): Promise<Map<string, MarketTrade[]>> {
  const { markets } = await store.markets.listMarkets({ limit: 10_000, offset: 0 });
  return new Map(
    await Promise.all(
      markets.map(
        async (m) =>
          [m.slug, await store.trades.tradePage(m.key, { order: "asc", limit: 10_000, offset: 0 })] as const,
      ),
    ),
  );
}

async function marketCounts(store: Store): Promise<Map<string, number>> {
  const { markets } = await store.markets.listMarkets({ limit: 10_000, offset: 0 });
  return new Map(
    await Promise.all(markets.map(async (m) => [m.slug, await store.markets.countSnapshots(m.key)] as const)),
  );
}

describe("copy SQLite to SQLite", () => {
  test("gives the same API answers, keys that work (revoked ones refused) and the same quota ledger", async () => {
    const source = await openStore(sqliteUrl());
    const target = await openStore(sqliteUrl());
    try {
      const keys = await fillSource(source);
      const records = await accessRecords(source, keys);
      const warnings: string[] = [];
      const result = await copyStore({
        from: source,
        to: target,
        batch: 97,
        onWarning: (w) => warnings.push(w),
      });
      assert.equal(result.markets, await source.markets.countMarkets());
      assert.equal(result.snapshotsAdded, result.snapshots);
      assert.deepEqual([result.apiKeys, result.quotaCharges], [3, 3]);
      const series = await source.exchange.listSeries();
      assert.equal(result.exchangeSeries, series.length);
      assert.equal(
        result.exchangeRows,
        series.reduce((n, s) => n + s.rows, 0),
      );
      assert.equal(result.exchangeRowsAdded, result.exchangeRows);
      assert.deepEqual(await target.exchange.listSeries(), series, "every series, its count and latest time");
      assert.deepEqual(await exchangeRows(target.exchange), await exchangeRows(source.exchange));
      assert.deepEqual(warnings, []);
      assert.deepEqual(await accessRecords(target, keys), records);
      assert.deepEqual(await marketCounts(target), await marketCounts(source));
      assert.deepEqual(await gapsBySlug(target), await gapsBySlug(source));
      assert.equal((await gapsBySlug(target)).get(HAND_MARKET.slug)?.length, 1);
      const sourceTrades = await tradesBySlug(source);
      assert.ok(
        [...sourceTrades.values()].some((t) => t.length > 0),
        "the demo markets have trades",
      );
      assert.deepEqual(await tradesBySlug(target), sourceTrades, "every trade, in the same order");
      assert.equal(sourceTrades.get(HAND_MARKET.slug)?.[0]?.transactionHash, `0x${"7a".repeat(32)}`);
      assert.equal(result.tradesAdded, result.trades);
      const sourceEvents = await eventCounts(source);
      // Read once: a copy reads its source and never writes to it.
      const sourceEventsAll = await eventsOf(source);
      assert.deepEqual(await eventsOf(target), sourceEventsAll, "events, integrity counts, coin updates");
      assert.deepEqual(
        [result.events, result.eventsAdded, result.coinEvents, result.coinEventsAdded],
        [sourceEvents.market, sourceEvents.market, sourceEvents.coin, sourceEvents.coin],
      );
      assert.ok(
        sourceEvents.market > HAND_EVENTS.length,
        "the demo's markets have events beside the hand market's",
      );

      const again = await copyStore({ from: source, to: target, batch: 97 });
      assert.equal(again.tradesAdded, 0, "trades are copied again, and change nothing");
      assert.deepEqual([again.eventsAdded, again.coinEventsAdded], [0, 0], "events are stored once");
      assert.deepEqual(await eventsOf(target), sourceEventsAll, "integrity counts are not added twice");
      assert.equal(again.marketsComplete, again.markets, "a second run finds everything complete");
      assert.equal(again.snapshotsCopied, 0);
      assert.equal(again.exchangeSeriesComplete, again.exchangeSeries);
      assert.equal(again.exchangeRowsCopied, 0);
      assert.deepEqual(
        await accessRecords(target, keys),
        records,
        "putting keys and charges again changes nothing",
      );

      await assertKeysWork(target, keys);
      assertSameAnswers(await apiAnswers(target, keys.active), await apiAnswers(source, keys.active), "copy");
    } finally {
      await source.close();
      await target.close();
    }
  });

  test("a destination market with the same slug takes the source's record and sources; its own extra seconds stay, with a warning", async () => {
    const source = await openStore(sqliteUrl());
    const target = await openStore(sqliteUrl());
    try {
      await insertHandMarket(source);
      const hand = (await source.markets.getMarket(HAND_MARKET.slug))!;
      await source.markets.markSource(hand.key, "recorded");
      await source.markets.markSource(hand.key, "pmxt");
      await source.imports.setCoinPriceSource(hand.key, "chainlink");
      const stale = await target.markets.upsertMarket({
        ...HAND_MARKET,
        winner: null,
        resolvedAt: null,
        finalVolume: 1,
      });
      await target.markets.insertSnapshots(stale.key, [
        { time: 1784851100_000000, coinPrice: 1, priceUp: 0.5, priceDown: 0.5, books: null },
      ]);
      const warnings: string[] = [];
      await copyStore({ from: source, to: target, batch: 10, onWarning: (w) => warnings.push(w) });
      const {
        key: _a,
        snapshotCount: targetCount,
        sources,
        ...copied
      } = (await target.markets.getMarket(HAND_MARKET.slug))!;
      assert.deepEqual(copied, HAND_MARKET);
      assert.deepEqual(sources, ["recorded", "pmxt"]);
      assert.equal(
        await target.imports.coinPriceSource((await target.markets.getMarket(HAND_MARKET.slug))!.key),
        "chainlink",
      );
      assert.equal(targetCount, 3);
      assert.deepEqual(warnings, [
        `${HAND_MARKET.slug}: the destination keeps 1 snapshots the source does not have`,
      ]);
    } finally {
      await source.close();
      await target.close();
    }
  });

  test("exchange rows at the destination are kept: a time both hold keeps the destination's row, extra rows a warning", async () => {
    const source = await openStore(sqliteUrl());
    const target = await openStore(sqliteUrl());
    try {
      const funding = (time: number, rate: number) => ({ coin: "btc" as const, time, rate, markPrice: null });
      await source.exchange.insertBatch({ funding: [1, 2, 3].map((h) => funding(h * 3600e6, 0.0001)) });
      // The destination holds a time of its own and the source's latest, with another rate: nothing comes
      // after its latest time, so the counts differ and the series is gone through from the first row.
      await target.exchange.insertBatch({ funding: [funding(0, 0.5), funding(3 * 3600e6, 0.7)] });
      const warnings: string[] = [];
      const result = await copyStore({
        from: source,
        to: target,
        batch: 2,
        onWarning: (w) => warnings.push(w),
      });
      assert.deepEqual([result.exchangeRows, result.exchangeRowsCopied, result.exchangeRowsAdded], [3, 3, 2]);
      assert.deepEqual(warnings, [
        "btc futures funding: the destination keeps 1 rows the source does not have",
      ]);
      assert.deepEqual(
        (await target.exchange.fundingPage("btc", { order: "asc", limit: 10, offset: 0 })).map((f) => f.rate),
        [0.5, 0.0001, 0.0001, 0.7],
      );
    } finally {
      await source.close();
      await target.close();
    }
  });
});

// Runs against the server DATABASE_URL names; once one is named, an unreachable server fails these
// tests rather than skipping them.
const pgUrl = postgresTestUrl();

if (pgUrl === null) {
  test("copy through PostgreSQL", { skip: "DATABASE_URL is not postgres" }, () => {});
} else {
  describe("copy SQLite to PostgreSQL and back", () => {
    const schemas = new ScratchSchemas(pgUrl);
    after(() => schemas.dropAll());

    test("all three give byte-identical API answers; keys authenticate and quota is equal on each", async () => {
      const source = await openStore(sqliteUrl());
      const middle = await openStore(await schemas.create());
      const back = await openStore(sqliteUrl());
      try {
        const keys = await fillSource(source);
        const records = await accessRecords(source, keys);
        const there = await copyStore({ from: source, to: middle, batch: 500 });
        assert.equal(there.snapshotsAdded, there.snapshots);
        assert.ok(there.exchangeRows > 0);
        assert.equal(there.exchangeRowsAdded, there.exchangeRows);
        const home = await copyStore({ from: middle, to: back, batch: 333 });
        assert.equal(home.snapshotsAdded, there.snapshots);
        assert.equal(home.exchangeRowsAdded, there.exchangeRows);
        for (const [from, to] of [
          [source, middle],
          [middle, back],
        ]) {
          const again = await copyStore({ from, to, batch: 500 });
          assert.equal(again.marketsComplete, again.markets, "a second run finds everything complete");
          assert.equal(again.exchangeSeriesComplete, again.exchangeSeries);
          assert.deepEqual([again.snapshotsCopied, again.exchangeRowsCopied], [0, 0]);
        }
        // What the source holds, read once: a copy reads its source and never writes to it.
        const series = await source.exchange.listSeries();
        const rows = await exchangeRows(source.exchange);
        const counts = await marketCounts(source);
        const gaps = await gapsBySlug(source);
        const events = await eventsOf(source);

        for (const [name, store] of [
          ["postgres", middle],
          ["sqlite again", back],
        ] as const) {
          assert.deepEqual(await accessRecords(store, keys), records, name);
          assert.deepEqual(await marketCounts(store), counts, name);
          assert.deepEqual(await gapsBySlug(store), gaps, name);
          assert.deepEqual(await store.exchange.listSeries(), series, name);
          assert.deepEqual(await exchangeRows(store.exchange), rows, name);
          assert.deepEqual(await eventsOf(store), events, name);
          await assertKeysWork(store, keys);
        }
        const expected = await apiAnswers(source, keys.active);
        assertSameAnswers(await apiAnswers(middle, keys.active), expected, "postgres");
        assertSameAnswers(await apiAnswers(back, keys.active), expected, "sqlite again");
      } finally {
        await Promise.all([source.close(), middle.close(), back.close()]);
      }
    });
  });
}

/** The store, with its exchange's insertBatch failing after `inserts` batches (a connection lost mid-copy). */
function failingAfter(store: Store, inserts: number): Store {
  let left = inserts;
  const bound = <T extends object>(target: T, p: string | symbol) => {
    const value = Reflect.get(target, p, target) as unknown;
    return typeof value === "function" ? value.bind(target) : value;
  };
  const exchange = new Proxy(store.exchange, {
    get(target, p) {
      if (p !== "insertBatch") return bound(target, p);
      return async (batch: ExchangeBatch) => {
        if (left-- <= 0) throw new Error("connection lost");
        return target.insertBatch(batch);
      };
    },
  });
  return new Proxy(store, { get: (target, p) => (p === "exchange" ? exchange : bound(target, p)) });
}

describe("copying exchange data, cut short and run again", () => {
  const schemas = pgUrl === null ? null : new ScratchSchemas(pgUrl);
  after(() => schemas?.dropAll());
  const cases: [string, () => Promise<string>][] = [["SQLite", async () => sqliteUrl()]];
  if (schemas) cases.push(["PostgreSQL", () => schemas.create()]);

  for (const [name, destination] of cases) {
    test(`into ${name}: each series continues after the destination's latest time (trades from it), nothing twice`, async () => {
      const source = await openStore(sqliteUrl());
      const target = await openStore(await destination());
      try {
        await seedDemo(source, {
          seed: 5,
          anchor: ANCHOR,
          counts: { "5m": 1, "15m": 0, "1h": 0, "4h": 0, "24h": 0 },
          coins: ["btc"],
        });
        await seedExchangeDemo(source.exchange, { seed: 5, anchor: ANCHOR, coins: ["btc"] });
        await source.exchange.insertBatch({ trades: EXTRA_EXCHANGE.trades });
        const series = await source.exchange.listSeries();
        const total = series.reduce((n, s) => n + s.rows, 0);
        const batch = 10;
        const batches = new Map(series.map((s) => [seriesName(s), Math.ceil(s.rows / batch)]));
        const stored = async () => (await target.exchange.listSeries()).reduce((n, s) => n + s.rows, 0);
        assert.deepEqual(
          series.slice(0, 5).map((s) => seriesName(s)),
          ["btc futures depth", "btc spot depth", "btc futures trades", "btc spot trades", "eth spot trades"],
        );

        // Cut in the second depth series, after 5 of its batches.
        const first = batches.get("btc futures depth")! + 5;
        await assert.rejects(
          copyStore({ from: source, to: failingAfter(target, first), batch }),
          /connection lost/,
        );
        const rows = (n: string) => series.find((s) => seriesName(s) === n)!.rows;
        assert.equal(await stored(), rows("btc futures depth") + 5 * batch);

        // Cut again after the first batch of eth trades: it ends among the trades of one time.
        const second =
          batches.get("btc spot depth")! -
          5 +
          batches.get("btc futures trades")! +
          batches.get("btc spot trades")! +
          1;
        await assert.rejects(
          copyStore({ from: source, to: failingAfter(target, second), batch }),
          /connection lost/,
        );
        const partial = await stored();
        const [eth] = (await target.exchange.listSeries()).filter((s) => seriesName(s) === "eth spot trades");
        assert.equal(eth.rows, batch);
        const ethTrades = EXTRA_EXCHANGE.trades;
        assert.equal(eth.last, ethTrades[batch - 1].time);
        assert.equal(ethTrades[batch].time, eth.last, "the next trade has the same time");

        const done = await copyStore({ from: source, to: target, batch });
        assert.equal(done.exchangeRowsAdded, total - partial, "only what was missing");
        // Of those already there, only the trades at the eth series' latest time are read again.
        const sameTime = ethTrades.slice(0, batch).filter((t) => t.time === eth.last).length;
        assert.equal(done.exchangeRowsCopied, total - partial + sameTime);
        assert.equal(done.exchangeSeriesComplete, 4, "the series copied whole before are skipped");
        assert.deepEqual(await target.exchange.listSeries(), series);
        assert.deepEqual(await exchangeRows(target.exchange), await exchangeRows(source.exchange));
      } finally {
        await source.close();
        await target.close();
      }
    });
  }
});

/** `updown copy` as a child process; resolves with its exit code and output. */
function updownCopy(args: string[], onStderr?: (text: string, kill: () => void) => void) {
  const child = spawn(process.execPath, [BIN, "copy", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
    onStderr?.(stderr, () => child.kill("SIGKILL"));
  });
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}

/**
 * The destination's count once nothing writes to it any more. The killed client's process is gone; on
 * PostgreSQL its backend may still be finishing the batch it sent, so wait for that backend (found by the
 * application name the destination URL gives it) to end.
 */
async function settledCount(url: string): Promise<number> {
  const application = url.startsWith("sqlite:") ? null : new URL(url).searchParams.get("application_name");
  if (url.startsWith("postgres") && !application)
    throw new Error("a PostgreSQL destination needs an application_name");
  if (application) {
    const admin = new pg.Client({ connectionString: pgUrl! });
    await admin.connect();
    try {
      for (;;) {
        const { rows } = await admin.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1",
          [application],
        );
        if (rows[0].n === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await admin.end();
    }
  }
  const store = await openStore(url);
  try {
    return [...(await marketCounts(store)).values()].reduce((a, b) => a + b, 0);
  } finally {
    await store.close();
  }
}

describe("updown copy, killed and run again", () => {
  let sourceUrl: string;
  let sourceCounts: Map<string, number>;
  let sourceSeries: SeriesExtent[];
  let total: number;
  const schemas = pgUrl === null ? null : new ScratchSchemas(pgUrl);

  before(async () => {
    sourceUrl = sqliteUrl();
    const source = await openStore(sourceUrl);
    // A daily market first (copies go oldest first): 86,400 seconds, enough to be cut in the middle.
    await seedDemo(source, {
      seed: 3,
      anchor: ANCHOR,
      counts: { "5m": 4, "15m": 2, "1h": 1, "4h": 0, "24h": 1 },
      coins: ["eth"],
    });
    await seedExchangeDemo(source.exchange, { seed: 3, anchor: ANCHOR, coins: ["eth"] });
    sourceCounts = await marketCounts(source);
    sourceSeries = await source.exchange.listSeries();
    total = [...sourceCounts.values()].reduce((a, b) => a + b, 0);
    await source.close();
  });
  after(() => schemas?.dropAll());

  const cases: [string, () => Promise<string>][] = [["SQLite", async () => sqliteUrl()]];
  if (schemas) {
    cases.push([
      "PostgreSQL",
      async () => {
        const url = new URL(await schemas.create());
        url.searchParams.set("application_name", `copy_${process.pid}_${Date.now()}`);
        return url.toString();
      },
    ]);
  }

  for (const [name, destination] of cases) {
    test(`into ${name}: SIGKILL mid-way, the same command finishes the job without duplicates or re-copying`, async () => {
      const to = await destination();
      const args = ["--from", sourceUrl, "--to", to, "--batch", "400"];
      const killed = await updownCopy(args, (stderr, kill) => {
        if (/^Copying: .* snapshots/m.test(stderr)) kill();
      });
      assert.equal(killed.signal, "SIGKILL", killed.stderr);
      const partial = await settledCount(to);
      assert.ok(partial > 0 && partial < total, `killed mid-way: ${partial} of ${total}`);

      const resumed = await updownCopy(args);
      assert.equal(resumed.code, 0, resumed.stderr);
      const written = /\(([\d,]+) written by this run/.exec(resumed.stdout)?.[1];
      assert.equal(Number(written?.replaceAll(",", "")), total - partial, "only what was missing");
      assert.match(
        resumed.stdout,
        new RegExp(`^Copied ${sourceCounts.size} markets.*, ${total.toLocaleString("en-US")} snapshots`),
      );
      const store = await openStore(to);
      try {
        assert.deepEqual(await marketCounts(store), sourceCounts, "each market's count equals the source's");
        assert.deepEqual(await store.exchange.listSeries(), sourceSeries, "every exchange series too");
        const { markets } = await store.markets.listMarkets({ limit: 100, offset: 0 });
        for (const m of markets) assert.equal(m.snapshotCount, sourceCounts.get(m.slug), m.slug);
      } finally {
        await store.close();
      }
    });
  }
});

describe("updown copy refuses with one line and exit status 2", () => {
  const run = (args: string[]) => {
    const res = spawnSync(process.execPath, [BIN, "copy", ...args], { encoding: "utf8" });
    return { code: res.status, stdout: res.stdout, stderr: res.stderr };
  };

  test("the same database twice, an unknown scheme, a missing source, an unreachable destination", () => {
    const file = join(dir, "refusals.sqlite");
    const seeded = spawnSync(process.execPath, [BIN, "migrate", "--database-url", `sqlite:${file}`]);
    assert.equal(seeded.status, 0);
    const cases: [string[], RegExp][] = [
      [
        ["--from", `sqlite:${file}`, "--to", `sqlite:${join(dir, ".", "refusals.sqlite")}`],
        /name the same database/,
      ],
      [
        ["--from", "postgres://u@db.example/x", "--to", "postgres://u:secret@DB.example:5432/x"],
        /name the same database/,
      ],
      [
        ["--from", `sqlite:${file}`, "--to", "mysql://h/db"],
        /--to must start with sqlite:, postgres:\/\/ or postgresql:\/\//,
      ],
      [["--from", `sqlite:${join(dir, "missing.sqlite")}`, "--to", sqliteUrl()], /no such database file/],
      [
        ["--from", `sqlite:${file}`, "--to", "postgres://u:secret@127.0.0.1:1/db"],
        /^error: cannot open the destination postgres:\/\/u@127\.0\.0\.1:1\/db: .*ECONNREFUSED/,
      ],
      [["--from", `sqlite:${file}`], /copy needs --from URL and --to URL/],
      [["--from", `sqlite:${file}`, "--to", sqliteUrl(), "--batch", "0"], /--batch must be/],
    ];
    for (const [args, message] of cases) {
      const res = run(args);
      assert.equal(res.code, 2, args.join(" "));
      assert.match(res.stderr, message);
      assert.match(res.stderr, /^error: [^\n]*\n$/, "one line");
      assert.ok(!res.stderr.includes("secret"), "never the password");
      assert.equal(res.stdout, "");
    }
  });

  test("--help explains resuming", () => {
    const res = run(["--help"]);
    assert.equal(res.code, 0);
    assert.match(res.stdout, /Resuming: /);
    assert.match(
      spawnSync(process.execPath, [BIN, "--help"], { encoding: "utf8" }).stdout,
      /\n {2}copy +Copy a database/,
    );
  });
});
