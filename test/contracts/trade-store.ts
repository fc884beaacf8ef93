import assert from "node:assert/strict";
import type { TradeRow } from "../../src/domain/trade.ts";
import type { Store } from "../../src/store/ports/store.ts";
import type { TradeStore } from "../../src/store/ports/trade-store.ts";
import { HAND_MARKET } from "../helpers/app.ts";
import { type StoreTests, describeStoreTests } from "./store-tests.ts";

const T = HAND_MARKET.startTime * 1e6;

/** Five trades, two of them at one time (told apart by outcome and side), given out of order. */
const TRADES: TradeRow[] = [
  {
    time: T + 3_000_000,
    outcome: "Up",
    side: "BUY",
    price: 0.53,
    size: 10,
    feeRateBps: 0,
    transactionHash: null,
  },
  {
    time: T + 1_000_000,
    outcome: "Down",
    side: "SELL",
    price: 0.47,
    size: 25.5,
    feeRateBps: 0,
    transactionHash: null,
  },
  {
    time: T + 1_000_000,
    outcome: "Up",
    side: "BUY",
    price: 0.52,
    size: 4,
    feeRateBps: 0,
    transactionHash: null,
  },
  {
    time: T + 2_500_000,
    outcome: "Up",
    side: "SELL",
    price: 0.51,
    size: 100,
    feeRateBps: 1000,
    transactionHash: "0xabc1",
  },
  {
    time: T + 9_000_000,
    outcome: "Down",
    side: "BUY",
    price: 0.46,
    size: 7.25,
    feeRateBps: 0,
    transactionHash: null,
  },
];

/** The trades in the stores' ascending order: time, then outcome, side, price, size. */
const ASCENDING = [TRADES[1], TRADES[2], TRADES[3], TRADES[0], TRADES[4]];

const TRADE_STORE_TESTS: StoreTests<TradeStore> = {
  "trades are stored once, however often they arrive": async (trades, store) => {
    const m = await store.markets.upsertMarket(HAND_MARKET);
    assert.equal(await trades.insertTrades([{ marketKey: m.key, rows: TRADES }]), 5);
    // A replay (a reconnect, a restarted collector) and a batch repeating a trade add nothing.
    assert.equal(await trades.insertTrades([{ marketKey: m.key, rows: [...TRADES, TRADES[0]] }]), 0);
    assert.equal(await trades.countTrades(m.key), 5);
  },
  "pages come in time order, newest first or oldest first, ties in one fixed order": async (
    trades,
    store,
  ) => {
    const m = await store.markets.getMarket(HAND_MARKET.slug);
    assert.ok(m);
    assert.deepEqual(await trades.tradePage(m.key, { order: "asc", limit: 10, offset: 0 }), ASCENDING);
    assert.deepEqual(
      await trades.tradePage(m.key, { order: "desc", limit: 10, offset: 0 }),
      ASCENDING.toReversed(),
    );
    assert.deepEqual(await trades.tradePage(m.key, { order: "desc", limit: 2, offset: 1 }), [
      TRADES[0],
      TRADES[3],
    ]);
  },
  "a time range bounds pages and counts, both ends included": async (trades, store) => {
    const m = await store.markets.getMarket(HAND_MARKET.slug);
    assert.ok(m);
    const range = { from: T + 1_000_000, to: T + 3_000_000 };
    assert.equal(await trades.countTrades(m.key, range.from, range.to), 4);
    assert.deepEqual(
      await trades.tradePage(m.key, { order: "asc", limit: 10, offset: 0, ...range }),
      ASCENDING.slice(0, 4),
    );
    assert.equal(await trades.countTrades(m.key, T + 9_000_001), 0);
  },
  "trades of several markets go in one batch, each under its own market": async (trades, store) => {
    const other = await store.markets.upsertMarket({ ...HAND_MARKET, slug: "sol-updown-15m-1784852100" });
    const first = await store.markets.getMarket(HAND_MARKET.slug);
    assert.ok(first);
    const added = await trades.insertTrades([
      { marketKey: other.key, rows: [TRADES[0]] },
      { marketKey: first.key, rows: [TRADES[4]] },
    ]);
    assert.equal(added, 1);
    assert.equal(await trades.countTrades(other.key), 1);
    assert.equal(await trades.countTrades(first.key), 5);
    assert.equal(await trades.insertTrades([]), 0);
  },
  "a trade's hash is not its identity: a copy with one fills in a stored trade's missing hash, once": async (
    trades,
    store,
  ) => {
    const m = await store.markets.upsertMarket({ ...HAND_MARKET, slug: "eth-updown-15m-1784852100" });
    const live = { ...TRADES[0], transactionHash: null };
    const hashed = { ...TRADES[0], transactionHash: `0x${"ab".repeat(32)}` };
    // Recorded live without the hash, then imported with it: one trade, not new, the hash filled in.
    assert.equal(await trades.insertTrades([{ marketKey: m.key, rows: [live] }]), 1);
    assert.equal(await trades.insertTrades([{ marketKey: m.key, rows: [hashed] }]), 0);
    assert.deepEqual(await trades.tradePage(m.key, { order: "asc", limit: 10, offset: 0 }), [hashed]);
    // A later copy without it, or with another, leaves the stored hash as it is.
    const other = { ...hashed, transactionHash: `0x${"cd".repeat(32)}` };
    assert.equal(await trades.insertTrades([{ marketKey: m.key, rows: [live, other] }]), 0);
    assert.deepEqual(await trades.tradePage(m.key, { order: "desc", limit: 10, offset: 0 }), [hashed]);
    assert.equal(await trades.countTrades(m.key), 1);
  },
};

/** The behaviour every TradeStore must share; each backend's test file calls it with an empty, migrated store. */
export function tradeStoreContract(name: string, open: () => Promise<Store>): void {
  describeStoreTests(`TradeStore contract: ${name}`, open, (store) => store.trades, TRADE_STORE_TESTS);
}
