import assert from "node:assert/strict";
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { test } from "node:test";
import { createGunzip } from "node:zlib";
import { winnerOf } from "../../../src/domain/market.ts";
import { ManualClock } from "../../../src/domain/time.ts";
import { silentLogger } from "../../../src/log.ts";
import { settlementPrice } from "../../../src/record/polymarket/settlement-price.ts";
import { RtdsFeed } from "../../../src/record/polymarket/rtds-feed.ts";
import { schedulerOn } from "../../../src/record/scheduler.ts";
import { PriceFeed } from "../../../src/upstream/price-feed.ts";

/**
 * The settlement rule on a real recorded day, through the collector's own price path: every
 * Chainlink tick of the fixture is fed to the RTDS message handler as the socket would deliver it (at
 * its receive time, corrections included), and each market is settled with the collector's rule.
 * The counts are those the importer's independent cross-check found (test/archive/upstream-import.test.ts).
 */

const DIR = new URL("../../fixtures/real-btc-5m-2026-07-24/", import.meta.url);

async function* lines(name: string): AsyncGenerator<string> {
  const input = createReadStream(new URL(name, DIR)).pipe(createGunzip());
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    if (line.trim() !== "") yield line;
  }
}

test("the collector's feed settles the fixture day as upstream did, except where the feed cannot", async () => {
  const clock = new ManualClock(0);
  const rtds = new RtdsFeed({ url: "ws://unused", scheduler: schedulerOn(clock), log: silentLogger });
  let header = true;
  for await (const line of lines("chainlink-btcusd-00-12utc.csv.gz")) {
    if (header) {
      header = false;
      continue;
    }
    const [feedTs, value, full, , recv] = line.split(",");
    clock.set(Number(recv) * 1000);
    rtds.onMessage(
      JSON.stringify({
        topic: "crypto_prices_chainlink",
        type: "update",
        timestamp: Number(recv),
        payload: {
          symbol: "btc/usd",
          timestamp: Number(feedTs),
          value: Number(value),
          full_accuracy_value: full,
        },
      }),
    );
  }
  assert.equal(rtds.malformed, 0);
  const feed = rtds.feed({ source: "chainlink", lookbackS: null }, "btc");

  let agree = 0;
  const disagree: string[] = [];
  let undecidable = 0;
  for await (const line of lines("markets-00-12utc.jsonl.gz")) {
    const m = JSON.parse(line) as {
      slug: string;
      start_sec: number;
      end_sec: number;
      resolved: boolean;
      outcome_prices: string[];
    };
    if (!m.resolved) continue;
    const upstream = m.outcome_prices[0] === "1" ? "Up" : "Down";
    const start = settlementPrice(feed, m.start_sec, 10);
    const end = settlementPrice(feed, m.end_sec, 10);
    if (start === null || end === null) undecidable++;
    else if (winnerOf(start, end) === upstream) agree++;
    else disagree.push(m.slug);
  }
  assert.equal(agree, 135);
  assert.deepEqual(disagree, ["btc-updown-5m-1784868900"]);
  assert.equal(undecidable, 9);
});

test("a live feed forgets old ticks but keeps the one still in effect", () => {
  const feed = new PriceFeed();
  for (const [second, value] of [
    [100, 1],
    [101, 2],
    [105, 3],
    [110, 4],
  ]) {
    feed.addTick(second, value, second * 1000);
  }
  feed.dropBefore(104);
  assert.equal(feed.size, 3);
  assert.deepEqual(feed.inEffectAt(104), { value: 2, tickSecond: 101 });
  assert.deepEqual(feed.inEffectAt(109), { value: 3, tickSecond: 105 });
  assert.equal(feed.inEffectAt(100), null);
  feed.dropBefore(50);
  assert.equal(feed.size, 3);
});
