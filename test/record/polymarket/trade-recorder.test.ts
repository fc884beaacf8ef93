import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ManualClock } from "../../../src/domain/time.ts";
import { silentLogger } from "../../../src/log.ts";
import type { ClobFeed } from "../../../src/record/polymarket/clob-feed.ts";
import { TradeRecorder } from "../../../src/record/polymarket/trade-recorder.ts";
import type { Store } from "../../../src/store/ports/store.ts";
import { openTestStore } from "../../helpers/app.ts";
import { bookAround, DOWN, feedsOver, liveMarket, T, UP } from "../../helpers/polymarket-feeds.ts";
import {
  type PolymarketUpstream,
  startPolymarketUpstream,
  until,
} from "../../helpers/polymarket-upstream.ts";

/**
 * The trade recorder alone, over the real market channel of the local upstream and a real store:
 * each trade under its market and outcome, a trade received twice stored once, and trades of tokens
 * no followed market owns dropped.
 */

let upstream: PolymarketUpstream;
let store: Store;
let clob: ClobFeed;
let stopFeeds: () => Promise<void>;
const OTHER = "3333";

before(async () => {
  upstream = await startPolymarketUpstream();
  store = await openTestStore();
  for (const [id, low] of [
    [UP, 48],
    [DOWN, 50],
    [OTHER, 30],
  ] as const)
    upstream.clob.setBook(id, bookAround(low), false);
  ({ clob, stop: stopFeeds } = feedsOver(upstream, new ManualClock(T * 1e6)));
  clob.follow([UP, DOWN, OTHER]);
  await until(() => upstream.clob.subscribedTokens.size === 3, "the subscriptions");
});

after(async () => {
  await stopFeeds();
  await upstream.close();
  await store.close();
});

test("trades are stored under their market and outcome, once each, with their hash when the message has one; an unowned token's are dropped", async () => {
  const market = await store.markets.upsertMarket(liveMarket());
  const recorder = new TradeRecorder({ trades: store.trades, clob, log: silentLogger });
  const frames = clob.frames;
  upstream.clob.trade(UP, 0.49, { timestampMs: T * 1000 + 250, size: "10", side: "BUY" });
  const hash = `0x${"5e".repeat(32)}`;
  upstream.clob.trade(DOWN, 0.51, {
    timestampMs: T * 1000 + 500,
    size: "20",
    side: "SELL",
    transactionHash: hash,
  });
  upstream.clob.trade(OTHER, 0.3, { timestampMs: T * 1000 + 600, size: "30", side: "BUY" });
  await until(() => clob.frames >= frames + 3, "the three trades");
  await recorder.record([market]);
  // The same trade again (a replay after a reconnect): stored once.
  upstream.clob.trade(UP, 0.49, { timestampMs: T * 1000 + 250, size: "10", side: "BUY" });
  await until(() => clob.frames >= frames + 4, "the replayed trade");
  await recorder.record([market]);
  // Nothing received: nothing written, nothing thrown.
  await recorder.record([market]);

  assert.equal(recorder.written, 2);
  const rows = await store.trades.tradePage(market.key, { order: "asc", limit: 10, offset: 0 });
  assert.deepEqual(
    rows.map((r) => [r.time, r.outcome, r.side, r.price, r.size, r.transactionHash]),
    [
      [T * 1e6 + 250_000, "Up", "BUY", 0.49, 10, null],
      [T * 1e6 + 500_000, "Down", "SELL", 0.51, 20, hash],
    ],
  );
});
