import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ManualClock } from "../../../src/domain/time.ts";
import { silentLogger } from "../../../src/log.ts";
import { ClobFeed } from "../../../src/record/polymarket/clob-feed.ts";
import { Collector } from "../../../src/record/polymarket/collector.ts";
import { GammaClient } from "../../../src/record/polymarket/gamma-client.ts";
import { RtdsFeed } from "../../../src/record/polymarket/rtds-feed.ts";
import { schedulerOn } from "../../../src/record/scheduler.ts";
import type { Store } from "../../../src/store/ports/store.ts";
import { scaledDecimalToNumber } from "../../../src/upstream/price-feed.ts";
import { makeTestApp, openTestStore } from "../../helpers/app.ts";
import { polymarketSlug } from "../../../src/domain/slug.ts";
import {
  gammaMarket,
  type PolymarketUpstream,
  startPolymarketUpstream,
  twapGammaMarket,
  until,
} from "../../helpers/polymarket-upstream.ts";

/**
 * A 5-minute market after Polymarket's switch to TWAP settlement, recorded by the collector from local
 * servers speaking the fixtures' protocols (the Gamma TWAP record, the RTDS `crypto_prices_twap_sixty`
 * update, the market channel's `market_resolved` and `last_trade_price`). The instantaneous Chainlink
 * stream runs beside the TWAP stream at other values, so that taking the wrong one shows.
 */

const T = 1787414400; // the fixture market's start, 2026-08-22T16:00:00Z
const SLUG = `btc-updown-5m-${T}`;

/** TWAP and instantaneous values of a second, scaled by 1e18 as Chainlink's full accuracy values are. */
const twapAt = (s: number) => `${6_499_781_000 + (s - T) * 137}${"0".repeat(14)}`;
const instantAt = (s: number) => `${6_510_000_000 + (s - T) * 911}${"0".repeat(14)}`;

interface Run {
  upstream: PolymarketUpstream;
  store: Store;
  collector: Collector;
  tokens: [string, string];
}

/**
 * Runs the market second by second from 5 s before its start to 8 s after its end. `atSecond` lets a
 * scenario act on the upstream at a second of the market (0 is the start).
 */
async function runMarket(tokens: [string, string], atSecond: (i: number, run: Run) => void): Promise<Run> {
  const upstream = await startPolymarketUpstream();
  const store = await openTestStore();
  const clock = new ManualClock((T - 5) * 1e6);
  const scheduler = schedulerOn(clock);
  const clob = new ClobFeed({ url: upstream.clobUrl, scheduler, log: silentLogger, backoffInitialMs: 1 });
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
    // Started before the open: the market is the next one.
    lookahead: 1,
    resolutionEveryS: 5,
  });
  const run = { upstream, store, collector, tokens };
  try {
    await record(run, clock, clob, rtds, atSecond);
  } catch (err) {
    await close(run);
    throw err;
  }
  return run;
}

async function record(
  run: Run,
  clock: ManualClock,
  clob: ClobFeed,
  rtds: RtdsFeed,
  atSecond: (i: number, run: Run) => void,
): Promise<void> {
  const { upstream, collector, tokens } = run;
  upstream.gamma.markets.set(SLUG, twapGammaMarket(SLUG, 7001, tokens, T));
  const book = { bids: [{ price: 0.49, size: 100 }], asks: [{ price: 0.51, size: 100 }] };
  upstream.clob.setBook(tokens[0], book, false);
  upstream.clob.setBook(tokens[1], book, false);
  await collector.start();
  await until(() => upstream.rtds.clientCount === 1 && clob.notReady(tokens[0]) === null, "subscriptions");
  for (let s = T - 5; s <= T + 308; s++) {
    clock.set(s * 1e6 + 300_000);
    upstream.rtds.price("chainlink", "btc", s * 1000, instantAt(s));
    upstream.rtds.twap(60, "btc", s * 1000, twapAt(s));
    atSecond(s - T, run);
    const sentRtds = upstream.rtds.framesSent;
    const sentClob = upstream.clob.framesSent;
    await until(() => rtds.frames >= sentRtds && clob.frames >= sentClob, `frames of second ${s - T}`);
    await collector.tick();
    await collector.settled();
  }
  await collector.stop();
}

async function close(run: Run): Promise<void> {
  await run.collector.stop();
  await run.upstream.close();
  await run.store.close();
}

describe("a TWAP 5m market through the collector, resolved by the market channel", () => {
  let run: Run;
  const tokens: [string, string] = ["8801", "8802"];
  before(async () => {
    run = await runMarket(tokens, (i, { upstream }) => {
      if (i === 40)
        upstream.clob.trade(tokens[0], 0.55, {
          timestampMs: (T + 40) * 1000 + 125,
          size: "12.5",
          side: "BUY",
        });
      if (i === 41)
        upstream.clob.trade(tokens[1], 0.44, { timestampMs: (T + 41) * 1000 + 7, size: "3", side: "SELL" });
      // Gamma never closes the market in this run: only the channel's message resolves it.
      if (i === 303) upstream.clob.resolve(tokens, tokens[1], (T + 303) * 1000 + 550);
    });
  });
  after(() => run && close(run));

  test("start and end prices are the TWAP stream's values at the open and the close", async () => {
    const m = await run.store.markets.getMarket(SLUG);
    assert.ok(m);
    assert.equal(m.coinPriceStart, scaledDecimalToNumber(twapAt(T)));
    assert.equal(m.coinPriceEnd, scaledDecimalToNumber(twapAt(T + 300)));
    assert.deepEqual(m.settlement, { source: "chainlink_twap", lookbackS: 60 });
    assert.deepEqual(m.feeSchedule, { rate: 0.07, exponent: 1, takerOnly: true, rebateRate: 0.2 });
    assert.equal(run.collector.settlementDisagreements, 0);
  });

  test("the market channel's market_resolved resolved it, with Gamma still open", async () => {
    const m = await run.store.markets.getMarket(SLUG);
    assert.equal(m?.winner, "Down");
    assert.equal(m?.resolvedAt, T + 303);
  });

  test("each snapshot's coin price is the TWAP stream's at that second", async () => {
    const m = (await run.store.markets.getMarket(SLUG))!;
    const rows = await run.store.markets.snapshotPage(m.key, {
      order: "asc",
      limit: 1000,
      offset: 0,
      books: false,
    });
    assert.equal(rows.length, 300);
    for (const r of rows) assert.equal(r.coinPrice, scaledDecimalToNumber(twapAt(Math.floor(r.time / 1e6))));
  });

  test("the API serves settlement, fee_schedule and the trades", async () => {
    const t = await makeTestApp({ store: run.store, seed: false, clock: new ManualClock((T + 400) * 1e6) });
    try {
      const market = (await t.get(`/v1/markets/${SLUG}`)).json();
      assert.deepEqual(market.settlement, { source: "chainlink_twap", lookback_s: 60 });
      assert.deepEqual(market.fee_schedule, { rate: 0.07, exponent: 1, taker_only: true, rebate_rate: 0.2 });
      const trades = (await t.get(`/v1/markets/${SLUG}/trades`)).json();
      assert.deepEqual(trades.trades, [
        {
          time: "2026-08-22T16:00:41.007000Z",
          outcome: "Down",
          token_id: "8802",
          side: "SELL",
          price: 0.44,
          size: 3,
          fee_rate_bps: 0,
          transaction_hash: null,
        },
        {
          time: "2026-08-22T16:00:40.125000Z",
          outcome: "Up",
          token_id: "8801",
          side: "BUY",
          price: 0.55,
          size: 12.5,
          fee_rate_bps: 0,
          transaction_hash: null,
        },
      ]);
    } finally {
      await t.app.close();
    }
  });
});

describe("a TWAP 5m market whose Gamma record carries the price to beat", () => {
  let run: Run;
  const tokens: [string, string] = ["9901", "9902"];
  const priceToBeat = 64999.5;
  before(async () => {
    run = await runMarket(tokens, (i, { upstream }) => {
      const m = upstream.gamma.markets.get(SLUG) as Record<string, unknown>;
      // Gamma publishes the price to beat a little after the open.
      if (i === 30) m.events = [{ id: "ev-7001", eventMetadata: { priceToBeat } }];
      if (i === 301) {
        const won = twapAt(T + 300) >= twapAt(T) ? '["1", "0"]' : '["0", "1"]';
        Object.assign(m, { closed: true, outcomePrices: won, closedTime: "2026-08-22 16:05:04+00" });
      }
    });
  });
  after(() => run && close(run));

  test("Gamma's price to beat is kept over the stream's, and the disagreement is counted", async () => {
    const m = await run.store.markets.getMarket(SLUG);
    assert.ok(m);
    assert.equal(m.coinPriceStart, priceToBeat);
    assert.notEqual(scaledDecimalToNumber(twapAt(T)), priceToBeat);
    assert.equal(run.collector.settlementDisagreements, 1);
    // Resolved by polling Gamma (the fallback), the end price still the stream's.
    assert.equal(m.winner, "Up");
    assert.equal(m.coinPriceEnd, scaledDecimalToNumber(twapAt(T + 300)));
    assert.equal(m.resolvedAt, T + 304);
  });
});

describe("an hourly market settled on Binance's 1m candles", () => {
  const H = 1787414400; // an hour boundary
  const tokens: [string, string] = ["7701", "7702"];
  const upstreamSlug = polymarketSlug("btc", "1h", H) as string;
  /** The stored candles: the hour's first minute and its last. */
  const CANDLES = new Map([
    [H, { open: 65000.25, close: 65001 }],
    [H + 3540, { open: 65100, close: 65123.5 }],
  ]);

  test("start is the first minute's open, end the last minute's close, not the per-second price", async () => {
    const upstream = await startPolymarketUpstream();
    const store = await openTestStore();
    // Started ten seconds before the close: the start price is looked up then, from the stored candle.
    const clock = new ManualClock((H + 3590) * 1e6);
    const scheduler = schedulerOn(clock);
    const clob = new ClobFeed({ url: upstream.clobUrl, scheduler, log: silentLogger, backoffInitialMs: 1 });
    const rtds = new RtdsFeed({ url: upstream.rtdsUrl, scheduler, log: silentLogger, backoffInitialMs: 1 });
    const asked: number[] = [];
    const collector = new Collector({
      store: store.markets,
      trades: store.trades,
      candles: async (coin, openTime) => {
        asked.push(openTime);
        return coin === "btc" ? (CANDLES.get(openTime) ?? null) : null;
      },
      clock,
      log: silentLogger,
      gamma: new GammaClient({ baseUrl: upstream.gammaUrl }),
      clob,
      rtds,
      coins: ["btc"],
      marketTypes: ["1h"],
      lookahead: 0,
      resolutionEveryS: 2,
    });
    try {
      upstream.gamma.markets.set(upstreamSlug, gammaMarket(upstreamSlug, 6001, tokens));
      const book = { bids: [{ price: 0.49, size: 100 }], asks: [{ price: 0.51, size: 100 }] };
      upstream.clob.setBook(tokens[0], book, false);
      upstream.clob.setBook(tokens[1], book, false);
      await collector.start();
      await until(
        () => upstream.rtds.clientCount === 1 && clob.notReady(tokens[0]) === null,
        "subscriptions",
      );
      for (let s = H + 3590; s <= H + 3610; s++) {
        clock.set(s * 1e6 + 300_000);
        upstream.rtds.price("binance", "btc", s * 1000, String(64000 + (s % 100)));
        if (s === H + 3601) {
          const m = upstream.gamma.markets.get(upstreamSlug) as Record<string, unknown>;
          Object.assign(m, {
            closed: true,
            outcomePrices: '["1", "0"]',
            closedTime: "2026-08-22 17:00:05+00",
          });
        }
        const sent = upstream.rtds.framesSent;
        await until(() => rtds.frames >= sent, `prices of second ${s}`);
        await collector.tick();
        await collector.settled();
      }
      const m = await store.markets.getMarket(`btc-updown-1h-${H}`);
      assert.ok(m);
      assert.deepEqual(m.settlement, { source: "binance", lookbackS: null });
      assert.equal(m.coinPriceStart, 65000.25);
      assert.equal(m.coinPriceEnd, 65123.5);
      assert.equal(m.winner, "Up");
      assert.ok(asked.includes(H) && asked.includes(H + 3540));
      // Snapshots carry the Binance price of their second.
      const [last] = await store.markets.snapshotPage(m.key, {
        order: "desc",
        limit: 1,
        offset: 0,
        books: false,
      });
      assert.equal(last.coinPrice, 64000 + ((H + 3599) % 100));
    } finally {
      await collector.stop();
      await upstream.close();
      await store.close();
    }
  });
});

describe("discovery of the newer coins", () => {
  test("follows their 5m and 15m series and asks for no other", async () => {
    const upstream = await startPolymarketUpstream();
    const store = await openTestStore();
    const clock = new ManualClock(T * 1e6);
    const scheduler = schedulerOn(clock);
    const collector = new Collector({
      store: store.markets,
      trades: store.trades,
      clock,
      log: silentLogger,
      gamma: new GammaClient({ baseUrl: upstream.gammaUrl }),
      clob: new ClobFeed({ url: upstream.clobUrl, scheduler, log: silentLogger }),
      rtds: new RtdsFeed({ url: upstream.rtdsUrl, scheduler, log: silentLogger, coins: ["xrp", "hype"] }),
      coins: ["xrp", "hype"],
      marketTypes: ["5m", "15m", "1h", "4h", "24h"],
      lookahead: 0,
    });
    try {
      upstream.gamma.markets.set(
        `xrp-updown-5m-${T}`,
        twapGammaMarket(`xrp-updown-5m-${T}`, 5101, ["x1", "x2"], T),
      );
      await collector.start();
      const asked = [
        ...new Set(upstream.gamma.requests.map((r) => new URL(r, "http://x").searchParams.get("slug"))),
      ];
      assert.deepEqual(asked.sort(), [
        `hype-updown-15m-${T}`,
        `hype-updown-5m-${T}`,
        `xrp-updown-15m-${T}`,
        `xrp-updown-5m-${T}`,
      ]);
      assert.deepEqual(collector.followedSlugs, [`xrp-updown-5m-${T}`]);
      await until(() => upstream.rtds.subscriptions.length > 0, "the price subscription");
      const [subscription] = upstream.rtds.subscriptions as {
        subscriptions: { topic: string; filters: string }[];
      }[];
      assert.deepEqual(
        subscription.subscriptions.map((s) => s.topic),
        ["crypto_prices", "crypto_prices_chainlink", "crypto_prices_twap_thirty", "crypto_prices_twap_sixty"],
      );
      assert.equal(subscription.subscriptions[0].filters, "xrpusdt,hypeusdt");
    } finally {
      await collector.stop();
      await upstream.close();
      await store.close();
    }
  });
});
