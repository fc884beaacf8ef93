import assert from "node:assert/strict";
import { test } from "node:test";
import {
  priceAt,
  type PriceSources,
  settlementPrice,
} from "../../../src/record/polymarket/settlement-price.ts";
import { PriceFeed } from "../../../src/upstream/price-feed.ts";
import { liveMarket, T } from "../../helpers/polymarket-feeds.ts";

/** The settlement rule's price at a start or end point: a tick in effect, or a Binance 1m candle's. */

function feedOf(ticks: [number, number][]): PriceFeed {
  const feed = new PriceFeed();
  for (const [second, value] of ticks) feed.addTick(second, value, second * 1000 + 100);
  return feed;
}

test("the tick in effect at the second, unless older than the staleness limit", () => {
  const feed = feedOf([
    [T - 3, 100],
    [T + 10, 101],
  ]);
  assert.equal(settlementPrice(feed, T, 10), 100);
  assert.equal(settlementPrice(feed, T + 9, 10), null, "12 s old");
  assert.equal(settlementPrice(feed, T + 10, 10), 101);
  assert.equal(settlementPrice(feed, T - 4, 10), null, "none yet");
});

test("a candle's open or close; while it is missing, nothing until it is overdue, then the Binance tick", async () => {
  const hour = liveMarket({
    slug: `btc-updown-1h-${T}`,
    marketType: "1h",
    endTime: T + 3600,
    settlement: { source: "binance", lookbackS: null },
  });
  const candles = new Map([[T, { open: 200, close: 201 }]]);
  const asked: number[] = [];
  const sources: PriceSources = {
    feed: () =>
      feedOf([
        [T, 199.5],
        [T + 3599, 205.25],
      ]),
    candles: async (coin, openTime) => {
      assert.equal(coin, "btc");
      asked.push(openTime);
      return candles.get(openTime) ?? null;
    },
    candleWaitS: 120,
    maxFeedStalenessS: 10,
  };
  const start = { kind: "candle", openTime: T, field: "open" } as const;
  const end = { kind: "candle", openTime: T + 3540, field: "close" } as const;
  assert.equal(await priceAt(sources, hour, start, T + 62), 200);
  assert.equal(await priceAt(sources, hour, end, T + 3602), null, "the last candle not stored yet");
  assert.equal(
    await priceAt(sources, hour, end, T + 3600 + 120),
    205.25,
    "overdue: the tick in effect at the close",
  );
  assert.deepEqual(asked, [T, T + 3540, T + 3540]);
  assert.equal(await priceAt({ ...sources, candles: null }, hour, start, T + 62), 199.5);
  const tick = { kind: "tick", second: T + 3599 } as const;
  assert.equal(await priceAt(sources, hour, tick, T + 3601), 205.25);
});
