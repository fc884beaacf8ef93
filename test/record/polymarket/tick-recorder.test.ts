import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { decodeBooks } from "../../../src/wire/book-codec.ts";
import { ManualClock } from "../../../src/domain/time.ts";
import { silentLogger } from "../../../src/log.ts";
import { BackgroundWork } from "../../../src/record/polymarket/background-work.ts";
import type { ClobFeed } from "../../../src/record/polymarket/clob-feed.ts";
import type { RtdsFeed } from "../../../src/record/polymarket/rtds-feed.ts";
import { TickRecorder } from "../../../src/record/polymarket/tick-recorder.ts";
import type { Store } from "../../../src/store/ports/store.ts";
import { openTestStore } from "../../helpers/app.ts";
import { bookAround, DOWN, feedsOver, liveMarket, scaled, T, UP } from "../../helpers/polymarket-feeds.ts";
import {
  type PolymarketUpstream,
  startPolymarketUpstream,
  until,
} from "../../helpers/polymarket-upstream.ts";

/**
 * The tick recorder alone, over the real market channel and price socket of the local upstream and
 * a real store: one snapshot per market per cadence slot, and every other second of a live market in
 * a gap with its cause, the time before it was followed included.
 */

let upstream: PolymarketUpstream;
let store: Store;
let clob: ClobFeed;
let rtds: RtdsFeed;
let stopFeeds: () => Promise<void>;
const clock = new ManualClock((T + 3) * 1e6 + 200_000);

before(async () => {
  upstream = await startPolymarketUpstream();
  store = await openTestStore();
  upstream.clob.setBook(UP, bookAround(48), false);
  upstream.clob.setBook(DOWN, bookAround(50), false);
  ({ clob, rtds, stop: stopFeeds } = feedsOver(upstream, clock));
  clob.follow([UP, DOWN]);
  await until(() => clob.notReady(UP) === null && clob.notReady(DOWN) === null, "both books");
  await until(() => upstream.rtds.clientCount === 1, "the price socket");
});

after(async () => {
  await stopFeeds();
  await upstream.close();
  await store.close();
});

function recorderOver(background = new BackgroundWork(silentLogger)): TickRecorder {
  return new TickRecorder({
    store: store.markets,
    clob,
    rtds,
    log: silentLogger,
    background,
    maxFeedStalenessS: 2,
    intervalMs: 1000,
  });
}

/** Sets the clock to 200 ms into `second` and has the price socket deliver that second's price. */
async function priceAt(second: number, cents: number): Promise<void> {
  clock.set(second * 1e6 + 200_000);
  const frames = rtds.frames;
  upstream.rtds.price("chainlink", "btc", second * 1000, scaled(cents));
  await until(() => rtds.frames > frames, `the price of ${second}`);
}

test("a market followed late: the seconds before are one gap, then a snapshot a second, never two in a slot", async () => {
  const market = await store.markets.upsertMarket(liveMarket());
  const background = new BackgroundWork(silentLogger);
  const recorder = recorderOver(background);
  await recorder.follow(market, clock.nowMicros());
  for (let s = T + 3; s < T + 6; s++) {
    await priceAt(s, 6_500_000 + s - T);
    await recorder.record(clock.nowMicros());
    // A timer firing twice in the slot records nothing more.
    await recorder.record(clock.nowMicros() + 500_000);
  }
  // The feed goes quiet: its last price is stale once older than two seconds.
  for (let s = T + 6; s < T + 10; s++) {
    clock.set(s * 1e6 + 200_000);
    await recorder.record(clock.nowMicros());
  }
  await priceAt(T + 10, 6_500_100);
  await recorder.record(clock.nowMicros());
  await background.settled();

  assert.equal(recorder.written, 6);
  const rows = await store.markets.snapshotPage(market.key, {
    order: "asc",
    limit: 100,
    offset: 0,
    books: true,
  });
  assert.deepEqual(
    rows.map((r) => [r.time, r.coinPrice]),
    [
      [(T + 3) * 1e6 + 200_000, 65_000.03],
      [(T + 4) * 1e6 + 200_000, 65_000.04],
      [(T + 5) * 1e6 + 200_000, 65_000.05],
      [(T + 6) * 1e6 + 200_000, 65_000.05],
      [(T + 7) * 1e6 + 200_000, 65_000.05],
      [(T + 10) * 1e6 + 200_000, 65_001],
    ],
  );
  const first = rows[0];
  assert.equal(first.priceUp, 0.49);
  assert.equal(first.priceDown, 0.51);
  assert.ok(first.books);
  assert.deepEqual(decodeBooks(first.books).up.bids[0], { price: 0.48, size: 100 });
  assert.deepEqual(
    (await store.markets.listGaps(market.key)).map((g) => [g.from, g.to, g.cause, g.detail]),
    [
      [T * 1e6, (T + 3) * 1e6 + 200_000, "not_recording", "recording started after the market opened"],
      [(T + 8) * 1e6 + 200_000, (T + 9) * 1e6 + 200_000, "no_coin_price", "chainlink price 3 s old"],
    ],
  );
});

test("a restart opens the gap since the last stored snapshot; a stop writes the gap still open", async () => {
  const market = await store.markets.getMarket(liveMarket().slug);
  assert.ok(market, "recorded by the test before");
  const recorder = recorderOver();
  clock.set((T + 14) * 1e6 + 200_000);
  await recorder.follow(market, clock.nowMicros());
  await priceAt(T + 14, 6_500_200);
  await recorder.record(clock.nowMicros());
  // The market channel goes away and stays away; recording stops in the middle of that gap.
  upstream.clob.refusing = true;
  upstream.clob.disconnectAll();
  await until(() => clob.notReady(UP) !== null, "the client to notice the disconnect");
  for (let s = T + 15; s < T + 17; s++) {
    await priceAt(s, 6_500_200);
    await recorder.record(clock.nowMicros());
  }
  await recorder.closeGaps();

  assert.equal(recorder.written, 1);
  assert.deepEqual(
    (await store.markets.listGaps(market.key)).slice(2).map((g) => [g.from, g.to, g.cause]),
    [
      [(T + 11) * 1e6 + 200_000, (T + 14) * 1e6 + 200_000, "collector_down"],
      [(T + 15) * 1e6 + 200_000, (T + 16) * 1e6 + 200_000, "upstream_disconnected"],
    ],
  );
});
