import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFINITION_DEFAULTS, type StrategyDefinition } from "../../../src/backtest/definition.ts";
import { featureFn, MarketHistory, SnapshotView } from "../../../src/backtest/features.ts";
import { readExchangeHistory } from "../../../src/backtest/jobs/exchange-data.ts";
import { readSnapshots, replayMarkets, selectMarkets } from "../../../src/backtest/jobs/replay.ts";
import { exchangeNeeds } from "../../../src/backtest/lookback.ts";
import { EMPTY_BOOK } from "../../../src/domain/book.ts";
import type { CandleRow, DepthRow, TradeRow } from "../../../src/domain/exchange.ts";
import { parseIsoMicros } from "../../../src/domain/time.ts";
import type { ExchangeStore } from "../../../src/store/ports/exchange-store.ts";
import type { Store } from "../../../src/store/ports/store.ts";
import { encodeBooks } from "../../../src/wire/book-codec.ts";
import { HAND_MARKET, insertHandMarket, makeTestApp, openTestStore } from "../../helpers/app.ts";

// Binance's series read once per market from a real store for the features a definition names
// (docs/backtests.md, "Features"), then read by the engine by time. The hand market (sol 15m) has two
// snapshots, at 0 s and 1.5 s.

const T = HAND_MARKET.startTime;
const us = (sec: number) => Math.round((T + sec) * 1e6);

const depth = (sec: number, bid: number, ask: number): DepthRow => ({
  coin: "sol",
  venue: "spot",
  time: us(sec),
  books: encodeBooks({ bids: [{ price: bid, size: 1 }], asks: [{ price: ask, size: 2 }] }, EMPTY_BOOK),
});

const trade = (id: number, sec: number, price: number): TradeRow => ({
  coin: "sol",
  venue: "spot",
  id,
  time: us(sec),
  price,
  qty: 1,
  buyerMaker: false,
});

const candle = (openSec: number, close: number): CandleRow => ({
  coin: "sol",
  venue: "spot",
  interval: "1m",
  openTime: us(openSec),
  open: close,
  high: close,
  low: close,
  close,
  volume: 1,
  quoteVolume: close,
  trades: 1,
  takerBuyVolume: 0,
  takerBuyQuoteVolume: 0,
});

async function seeded(): Promise<Store> {
  const store = await openTestStore();
  await insertHandMarket(store);
  await store.exchange.insertBatch({
    // Mids 149.95 at -3 s, 150.05 at -0.5 s, 150.15 at 1.2 s and 150.25 at 1.4 s (the last of that
    // second), and one long after the market's last snapshot.
    depth: [
      depth(-3, 149.9, 150),
      depth(-0.5, 150, 150.1),
      depth(1.2, 150.1, 150.2),
      depth(1.4, 150.2, 150.3),
      depth(500, 1, 3),
    ],
    // 150 at -30 s, 150.1 at -10 s, 150.2 then 150.25 at 1 s.
    trades: [trade(1, -30, 150), trade(2, -10, 150.1), trade(3, 1, 150.2), trade(4, 1, 150.25)],
    // The candle of -120..-60 s closed at 149.9, known at -60 s.
    candles: [candle(-120, 149.9)],
    funding: [{ coin: "sol", time: us(-3600), rate: 0.0001, markPrice: null }],
    openInterest: [{ coin: "sol", time: us(-300), openInterest: 1234.5, openInterestValue: null }],
  });
  return store;
}

const definition = (entry: StrategyDefinition["entry"]): StrategyDefinition => ({
  ...DEFINITION_DEFAULTS,
  side: "UP",
  entry,
  latency_ms: 0,
  exit: { ...DEFINITION_DEFAULTS.exit, hold_to_resolution: true },
});

const EXCHANGE_ENTRY = definition([
  { feature: "spot_mid", op: ">", value: 150.2 },
  { feature: "spot_return_bps_20s", op: ">", value: 10 },
  { feature: "futures_open_interest", op: ">", value: 1000 },
  { feature: "futures_funding_rate", op: ">", value: 0 },
]);

/** The store's exchange port, counting the calls made through it. */
function counted(exchange: ExchangeStore): { exchange: ExchangeStore; calls: string[] } {
  const calls: string[] = [];
  const proxy = new Proxy(exchange, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { exchange: proxy, calls };
}

test("Binance's series of the market's coin, read from the store: each value the latest at or before the decision", async () => {
  const store = await seeded();
  try {
    const [m] = (
      await selectMarkets(store.markets, {
        coin: "sol",
        market_type: "15m",
        market_count: 1,
        start_time: null,
        end_time: null,
        hidden: [],
      })
    ).replay;
    const snapshots = await readSnapshots(store.markets, m.key);
    const exchange = await readExchangeHistory(
      store.exchange,
      "sol",
      snapshots,
      exchangeNeeds(EXCHANGE_ENTRY),
    );
    const history = new MarketHistory(snapshots, [], exchange);
    const valuesOf = (name: string) =>
      snapshots.map((s, i) => featureFn(name)(new SnapshotView(HAND_MARKET, s, history, i)));
    // At 0 s the -0.5 s book; at 1.5 s the 1.4 s one (1.2 s is the same second's earlier book).
    assert.deepEqual(valuesOf("spot_mid"), [(150 + 150.1) / 2, (150.2 + 150.3) / 2]);
    // 20 s at 0: 150.1 (the -10 s trade, later than the candle's close at -60 s) against 150 (-30 s):
    // +6.666667 bps. At 1.5 s: 150.25 (1 s, the second's last trade) against 150 (-18.5 s: the -30 s
    // trade): +16.666667.
    assert.deepEqual(valuesOf("spot_return_bps_20s"), [6.666667, 16.666667]);
    // 60 s at 0: at -60 s no trade is recorded yet, and the candle's close is (149.9):
    // (150.1 - 149.9) / 149.9 = +13.342228 bps.
    assert.deepEqual(valuesOf("spot_return_bps_60s").slice(0, 1), [13.342228]);
    assert.deepEqual(valuesOf("futures_funding_rate"), [0.0001, 0.0001]);
    assert.deepEqual(valuesOf("futures_open_interest"), [1234.5, 1234.5]);
    // No futures book or trade was recorded.
    assert.deepEqual(valuesOf("futures_mid"), [null, null]);
  } finally {
    await store.close();
  }
});

test("a run reads each series once per market, only for the features its definition names", async () => {
  const store = await seeded();
  try {
    const selected = await selectMarkets(store.markets, {
      coin: "sol",
      market_type: "15m",
      market_count: 1,
      start_time: null,
      end_time: null,
      hidden: [],
    });
    const spy = counted(store.exchange);
    const stores = { markets: store.markets, trades: store.trades, exchange: spy.exchange };
    // At 0 s the mid is 150.05: no entry; at 1.5 s every condition holds (150.25, +16.67 bps, 1234.5,
    // 0.0001), but that second's books were not recorded: the order is decided and never fills.
    const done = await replayMarkets(stores, EXCHANGE_ENTRY, selected.replay);
    assert.deepEqual([done?.results[0].trades.length, done?.results[0].orders_unfilled], [0, 1]);
    // One page of each series it names: spot depth, spot trades and candles, funding, open interest.
    assert.deepEqual(spy.calls.splice(0).sort(), [
      "candlePage",
      "depthPage",
      "fundingPage",
      "lastTradeEachSecond",
      "openInterestPage",
    ]);
    // A mid above 150 holds at 0 s already: bought there.
    const early = definition([{ feature: "spot_mid", op: ">", value: 150 }]);
    const bought = await replayMarkets(stores, early, selected.replay);
    assert.equal(bought?.results[0].trades[0].entry.decision_time, "2026-07-24T00:00:00.000000Z");
    // Only the spot book is read for it.
    assert.deepEqual(spy.calls.splice(0), ["depthPage"]);
    await replayMarkets(
      stores,
      definition([{ feature: "traded_volume_30s", op: ">=", value: 0 }]),
      selected.replay,
    );
    assert.deepEqual(spy.calls, []);
  } finally {
    await store.close();
  }
});

test("through the API, a run's worker reads Binance's series: the demo's open interest is known, its books only where recorded", async () => {
  const t = await makeTestApp({ exchange: true });
  try {
    const run = (entry: StrategyDefinition["entry"]) =>
      t.app.inject({
        method: "POST",
        url: "/v1/backtest-ai/run",
        payload: {
          definition: { version: 2, side: "UP", entry },
          coin: "btc",
          market_type: "5m",
          market_count: 2,
          wait: 60,
        },
        headers: { "x-api-key": t.key },
      });
    // The demo records open interest every 5 minutes over the last 2 hours: known in the latest markets.
    const known = await run([{ feature: "futures_open_interest", op: ">", value: 0 }]);
    assert.equal(known.statusCode, 200, known.body);
    assert.equal(known.json().aggregate.trades, 2);
    // Its books cover only the last 5 minutes before now: an entry on the spot mid is decided only
    // where a book at most 10 s old was recorded.
    const [first] = await t.store.exchange.depthPage("btc", "spot", { order: "asc", limit: 1, offset: 0 });
    const withMid = await run([{ feature: "spot_mid", op: ">", value: 0 }]);
    assert.equal(withMid.statusCode, 200, withMid.body);
    const decided = (withMid.json().results as { trades: { entry: { decision_time: string } }[] }[]).flatMap(
      (r) => r.trades.map((tr) => parseIsoMicros(tr.entry.decision_time) as number),
    );
    assert.ok(decided.length < 2, "an older market has no book");
    for (const time of decided) assert.ok(time >= first.time, "decided only where a book was recorded");
  } finally {
    await t.close();
  }
});
