import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { booksEqual, decimalsOf, displayedPrice, mirrorBook } from "../../src/domain/book.ts";
import { decodeBooks } from "../../src/wire/book-codec.ts";
import {
  type Coin,
  MARKET_TYPE_SECONDS,
  MARKET_TYPES,
  type Market,
  type MarketType,
  SETTLEMENT_FEED,
  winnerOf,
} from "../../src/domain/market.ts";
import type { SnapshotRow } from "../../src/domain/snapshot.ts";
import {
  buildCoinPath,
  type DemoOptions,
  demoSnapshotTotal,
  demoSpanStart,
  generateDemo,
  normalCdf,
  perSecondSigma,
  priceAt,
  Rng,
  upProbability,
} from "../../src/demo/demo.ts";
import { seedDemo } from "../../src/demo/seed.ts";
import { SqliteStore } from "../../src/store/dialects/sqlite/sqlite-store.ts";
import { DEFAULT_DEMO_COUNTS } from "../../src/config.ts";

// 2026-07-24T16:20:07Z: twenty minutes into the daily, 4h and 1h markets that opened at 16:00, which
// keeps their live parts short and the whole test fast.
const ANCHOR = Date.UTC(2026, 6, 24, 16, 20, 7) / 1000;
const COUNTS: Record<MarketType, number> = { "5m": 4, "15m": 3, "1h": 2, "4h": 1, "24h": 1 };
const OPTIONS: Omit<DemoOptions, "onProgress"> = {
  seed: 7,
  anchor: ANCHOR,
  counts: COUNTS,
  coins: ["btc", "eth"],
};

interface Generated {
  market: Market;
  rows: SnapshotRow[];
}

function generateAll(options: Omit<DemoOptions, "onProgress">): Generated[] {
  return [...generateDemo(options)].map((d) => ({ market: d.market, rows: [...d.snapshots()] }));
}

const demo = generateAll(OPTIONS);

function series(coin: Coin, type: MarketType): Generated[] {
  return demo.filter((g) => g.market.coin === coin && g.market.marketType === type);
}

function find(coin: Coin, type: MarketType, startTime: number): Generated {
  const g = demo.find(
    (d) => d.market.coin === coin && d.market.marketType === type && d.market.startTime === startTime,
  );
  assert.ok(g, `${coin} ${type} ${startTime} exists`);
  return g;
}

describe("demo data", () => {
  it("is deterministic and depends on the seed", () => {
    const again = generateAll(OPTIONS);
    assert.deepEqual(
      again.map((g) => g.market),
      demo.map((g) => g.market),
    );
    for (let i = 0; i < demo.length; i++) assert.deepEqual(again[i].rows, demo[i].rows, demo[i].market.slug);
    const other = [...generateDemo({ ...OPTIONS, seed: 8 })];
    assert.notEqual(other[0].market.coinPriceStart, demo[0].market.coinPriceStart);
  });

  it("has the requested markets per series, oldest first, the last one live around the anchor", () => {
    for (const coin of OPTIONS.coins) {
      for (const type of MARKET_TYPES) {
        const markets = series(coin, type).map((g) => g.market);
        assert.equal(markets.length, COUNTS[type], `${coin} ${type}`);
        for (let i = 1; i < markets.length; i++) assert.equal(markets[i].startTime, markets[i - 1].endTime);
        const live = markets.filter((m) => m.winner === null);
        assert.equal(live.length, 1);
        assert.equal(live[0], markets.at(-1));
        assert.ok(live[0].startTime <= ANCHOR && ANCHOR < live[0].endTime);
        assert.equal(live[0].coinPriceEnd, null);
        assert.equal(live[0].finalVolume, null);
        assert.equal(live[0].finalLiquidity, null);
        assert.equal(live[0].resolvedAt, null);
        assert.equal(typeof live[0].coinPriceStart, "number");
      }
    }
  });

  it("aligns start times: UTC multiples of the length, daily markets at 16:00 UTC", () => {
    for (const { market } of demo) {
      assert.equal(market.endTime - market.startTime, MARKET_TYPE_SECONDS[market.marketType]);
      const offset = market.marketType === "24h" ? 16 * 3600 : 0;
      assert.equal((market.startTime - offset) % MARKET_TYPE_SECONDS[market.marketType], 0, market.slug);
    }
  });

  it("gives the live market snapshots from its start through the anchor second", () => {
    for (const { market, rows } of demo.filter((g) => g.market.winner === null)) {
      assert.equal(rows.length, ANCHOR - market.startTime + 1);
      assert.equal(rows[0].time, market.startTime * 1e6);
      assert.equal(rows.at(-1)?.time, ANCHOR * 1e6);
    }
  });

  it("gives resolved markets one snapshot per whole second from start to end - 1", () => {
    const resolved = demo.filter((g) => g.market.winner !== null);
    assert.ok(resolved.length > 10);
    for (const { market, rows } of resolved) {
      assert.equal(rows.length, market.endTime - market.startTime, market.slug);
      rows.forEach((r, i) => {
        assert.equal(r.time, (market.startTime + i) * 1e6);
      });
    }
  });

  it("resolves consistently with the settlement prices", () => {
    for (const { market, rows } of demo.filter((g) => g.market.winner !== null)) {
      assert.ok(market.coinPriceStart !== null && market.coinPriceEnd !== null);
      assert.equal(market.winner, winnerOf(market.coinPriceStart, market.coinPriceEnd));
      assert.equal(rows[0].coinPrice, market.coinPriceStart);
      assert.ok(market.resolvedAt !== null && market.finalVolume !== null && market.finalLiquidity !== null);
      // Resolution comes 10-120 s after the end, but never after "now".
      assert.ok(
        market.resolvedAt >= Math.min(market.endTime + 10, ANCHOR) &&
          market.resolvedAt <= market.endTime + 120,
      );
      assert.ok(market.resolvedAt <= ANCHOR);
      assert.equal(decimalsOf(market.finalVolume, 2) >= 0, true);
      assert.ok(
        market.finalVolume >= 20_000 && market.finalLiquidity >= 5_000 && market.finalLiquidity <= 50_000,
      );
      assert.equal(Math.floor(market.updatedAt / 1e6), market.resolvedAt);
    }
    // Both outcomes occur, so the winner is not constant.
    assert.equal(new Set(demo.map((g) => g.market.winner)).size, 3);
  });

  it("settles each market where the next one of its series starts", () => {
    for (const coin of OPTIONS.coins) {
      for (const type of MARKET_TYPES) {
        const s = series(coin, type);
        for (let i = 1; i < s.length; i++) {
          assert.equal(s[i - 1].market.coinPriceEnd, s[i].market.coinPriceStart);
          assert.equal(s[i - 1].market.coinPriceEnd, s[i].rows[0].coinPrice);
        }
      }
    }
  });

  it("samples one price path per coin across series", () => {
    const start = Date.UTC(2026, 6, 24, 16, 15) / 1000;
    for (const coin of OPTIONS.coins) {
      const m5 = find(coin, "5m", start);
      const m15 = find(coin, "15m", start);
      assert.equal(m5.market.coinPriceStart, m15.market.coinPriceStart);
      // Every second they share has the same price.
      for (let i = 0; i < m5.rows.length; i++) assert.equal(m5.rows[i].coinPrice, m15.rows[i].coinPrice);
      // At 16:00 the 15m and 4h markets (Chainlink) agree, as do the 1h and daily ones (Binance).
      const at16 = start - 900;
      assert.equal(
        find(coin, "15m", at16).market.coinPriceStart,
        find(coin, "4h", at16).market.coinPriceStart,
      );
      assert.equal(
        find(coin, "1h", at16).market.coinPriceStart,
        find(coin, "24h", at16).market.coinPriceStart,
      );
    }
  });

  it("prices Binance a few bps off Chainlink, at the feed's decimals", () => {
    const from = demoSpanStart(ANCHOR, COUNTS);
    for (const coin of ["btc", "eth", "sol"] as const) {
      const path = buildCoinPath(7, coin, from, ANCHOR);
      const decimals = coin === "sol" ? 3 : 2;
      let differs = 0;
      for (let t = from; t <= ANCHOR; t += 97) {
        const chainlink = priceAt(path, "chainlink", t);
        const binance = priceAt(path, "binance", t);
        assert.ok(decimalsOf(chainlink, 8) >= 0);
        assert.ok(decimalsOf(binance, decimals) >= 0, `${binance}`);
        assert.ok(Math.abs(binance / chainlink - 1) < 6e-4, `${coin} basis at ${t}`);
        if (binance !== chainlink) differs++;
      }
      assert.ok(differs > 0);
    }
    const btc = buildCoinPath(7, "btc", from, ANCHOR);
    assert.ok(btc.chainlink[0] > 50_000 && btc.chainlink[0] < 80_000);
  });

  it("sets coin_price to the settlement feed of the market's type", () => {
    const from = demoSpanStart(ANCHOR, COUNTS);
    for (const coin of OPTIONS.coins) {
      const path = buildCoinPath(7, coin, from, ANCHOR);
      for (const { market, rows } of demo.filter((g) => g.market.coin === coin)) {
        const feed = SETTLEMENT_FEED[market.marketType];
        for (let i = 0; i < rows.length; i += 61) {
          assert.equal(rows[i].coinPrice, priceAt(path, feed, market.startTime + i), market.slug);
        }
      }
    }
  });

  it("builds 20-level books around the Up probability, with the Down book mirrored", () => {
    let wideSpreads = 0;
    let walls = 0;
    let snapshots = 0;
    for (const { market, rows } of demo) {
      const sigma = perSecondSigma(market.coin);
      let lastUp: number | null = null;
      let lastDown: number | null = null;
      rows.forEach((row, i) => {
        assert.ok(row.books);
        const { up, down } = decodeBooks(row.books);
        const bid = Math.round(up.bids[0].price * 100);
        const ask = Math.round(up.asks[0].price * 100);
        assert.equal(up.bids.length, Math.min(20, bid));
        assert.equal(up.asks.length, Math.min(20, 100 - ask));
        up.bids.forEach((l, k) => {
          assert.equal(l.price, (bid - k) / 100);
        });
        up.asks.forEach((l, k) => {
          assert.equal(l.price, (ask + k) / 100);
        });
        assert.ok(bid >= 1 && ask <= 99 && ask - bid >= 1 && ask - bid <= 3);
        if (ask - bid > 1) wideSpreads++;
        for (const l of [...up.bids, ...up.asks]) {
          assert.ok(l.size >= 5 && l.size <= 50_000 && decimalsOf(l.size, 2) >= 0);
          if (l.size >= 10_000) walls++;
        }
        assert.ok(booksEqual(down, mirrorBook(up)));
        const p = upProbability(
          row.coinPrice,
          market.coinPriceStart ?? 0,
          sigma,
          market.endTime - market.startTime - i,
        );
        // Best bid at the tick at or below the probability, kept inside the book's price range.
        assert.equal(bid, Math.max(1, Math.min(99 - (ask - bid), Math.floor(p * 100 + 1e-9))), `${p}`);
        assert.equal(row.priceUp, displayedPrice(up, lastUp));
        assert.equal(row.priceDown, displayedPrice(down, lastDown));
        assert.ok(row.priceUp > 0 && row.priceUp < 1 && row.priceDown > 0 && row.priceDown < 1);
        lastUp = row.priceUp;
        lastDown = row.priceDown;
        snapshots++;
      });
    }
    assert.ok(wideSpreads > 0 && wideSpreads < snapshots * 0.3, `${wideSpreads} of ${snapshots}`);
    assert.ok(walls > 0);
  });

  it("gives markets unique, well-formed identifiers", () => {
    const markets = demo.map((g) => g.market);
    for (const key of [
      "slug",
      "marketId",
      "eventId",
      "conditionId",
      "clobTokenUp",
      "clobTokenDown",
    ] as const) {
      assert.equal(new Set(markets.map((m) => m[key])).size, markets.length, key);
    }
    for (const m of markets) {
      assert.match(m.marketId, /^\d+$/);
      assert.match(m.eventId, /^\d+$/);
      assert.match(m.conditionId, /^0x[0-9a-f]{64}$/);
      assert.match(m.clobTokenUp, /^[1-9]\d{75,77}$/);
      assert.match(m.clobTokenDown, /^[1-9]\d{75,77}$/);
      assert.equal(m.polymarketSlug === null, m.marketType !== "1h" && m.marketType !== "24h");
      assert.equal(Math.floor(m.createdAt / 1e6), m.startTime - 86_400);
    }
  });

  it("has more than 50 BTC markets of 5m and 15m with the default counts", () => {
    const options = { seed: 1, anchor: ANCHOR, counts: DEFAULT_DEMO_COUNTS, coins: ["btc"] as Coin[] };
    const perType = new Map<MarketType, number>();
    let total = 0;
    for (const d of generateDemo(options)) {
      perType.set(d.market.marketType, (perType.get(d.market.marketType) ?? 0) + 1);
      total += d.snapshotCount;
    }
    assert.ok((perType.get("5m") ?? 0) > 50);
    assert.ok((perType.get("15m") ?? 0) > 50);
    assert.equal(total, demoSnapshotTotal(options));
  });

  it("seeds a store, reporting progress, and can run again without duplicating", async () => {
    const store = new SqliteStore(":memory:");
    await store.migrate();
    const counts: Record<MarketType, number> = { "5m": 2, "15m": 1, "1h": 0, "4h": 0, "24h": 0 };
    const options: DemoOptions = { seed: 3, anchor: ANCHOR, counts, coins: ["sol"] };
    const progress: [number, number][] = [];
    const result = await seedDemo(store, { ...options, onProgress: (d, t) => progress.push([d, t]) });
    assert.deepEqual(result, { markets: 3, snapshots: 300 + 8 + 308 });
    assert.deepEqual(progress.at(-1), [616, 616]);
    const live = await store.markets.getMarket(`sol-updown-5m-${ANCHOR - 7}`);
    assert.equal(live?.snapshotCount, 8);
    await seedDemo(store, options);
    assert.equal(await store.markets.countMarkets(), 3);
    assert.equal(live && (await store.markets.countSnapshots(live.key)), 8);
    await store.close();
  });
});

describe("demo helpers", () => {
  it("computes the normal CDF to 1e-12, exactly 0.5 at 0", () => {
    const known: [number, number][] = [
      [0, 0.5],
      [1, 0.8413447460685429],
      [-1, 0.15865525393145707],
      [1.96, 0.9750021048517795],
      [-2, 0.022750131948179195],
      [-4, 3.167124183311998e-5],
      [3.5, 0.9997673709209645],
      [-8, 6.22096057427178e-16],
    ];
    for (const [x, phi] of known) assert.ok(Math.abs(normalCdf(x) - phi) < 1e-12, `Phi(${x})`);
    assert.equal(normalCdf(0), 0.5);
  });

  it("draws standard normals", () => {
    const rng = new Rng(123);
    let sum = 0;
    let sumSq = 0;
    const n = 50_000;
    for (let i = 0; i < n; i++) {
      const z = rng.normal();
      sum += z;
      sumSq += z * z;
    }
    assert.ok(Math.abs(sum / n) < 0.02);
    assert.ok(Math.abs(sumSq / n - 1) < 0.03);
  });
});

describe("demo data of the newer coins", () => {
  it("XRP, DOGE, BNB and HYPE get their 5m and 15m series; the others' data is as before", () => {
    const wider = generateAll({ ...OPTIONS, coins: ["btc", "eth", "xrp", "doge", "bnb", "hype"] });
    for (const coin of ["xrp", "doge", "bnb", "hype"]) {
      const own = wider.filter((g) => g.market.coin === coin);
      assert.deepEqual([...new Set(own.map((g) => g.market.marketType))], ["5m", "15m"], coin);
      assert.equal(own.length, COUNTS["5m"] + COUNTS["15m"]);
      for (const g of own) {
        assert.ok(g.rows.length > 0);
        assert.deepEqual(g.market.feeSchedule, { rate: 0.07, exponent: 1, takerOnly: true, rebateRate: 0.2 });
      }
    }
    // Adding coins draws from streams of their own: BTC's and ETH's markets and rows are unchanged.
    assert.deepEqual(
      wider.filter((g) => g.market.coin === "btc" || g.market.coin === "eth"),
      demo,
    );
    const ids = wider.map((g) => g.market.marketId);
    assert.equal(new Set(ids).size, ids.length, "market ids unique across coins");
  });

  it("demo markets settle as the upstream's would: TWAP from the switch on, for 5m and 15m", () => {
    const before = generateAll({ ...OPTIONS, coins: ["xrp"] });
    assert.ok(
      before.every((g) => g.market.settlement.source === "chainlink"),
      "July 2026: before the switch",
    );
    const after = generateAll({ ...OPTIONS, anchor: ANCHOR + 40 * 86_400, coins: ["btc"] });
    for (const g of after) {
      const twap = g.market.marketType === "5m" || g.market.marketType === "15m";
      assert.deepEqual(
        g.market.settlement,
        twap
          ? { source: "chainlink_twap", lookbackS: 60 }
          : { source: g.market.marketType === "4h" ? "chainlink" : "binance", lookbackS: null },
      );
    }
  });
});
