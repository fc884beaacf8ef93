import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type ConditionNode,
  DEFINITION_DEFAULTS,
  type StrategyDefinition,
} from "../../src/backtest/definition.ts";
import { replayMarket } from "../../src/backtest/engine.ts";
import { featureFn, MarketHistory, type ReplayMarket, SnapshotView } from "../../src/backtest/features.ts";
import { mirrorBook, type OrderBook } from "../../src/domain/book.ts";
import type { SnapshotRow } from "../../src/domain/snapshot.ts";
import { isoMicros } from "../../src/domain/time.ts";
import { encodeBooks } from "../../src/wire/book-codec.ts";

// Lookback features and condition trees on small hand-built markets; every expected number is worked
// out by hand in the comment beside it.

const T0 = 1_784_851_200;

const MARKET: ReplayMarket = {
  slug: `btc-updown-5m-${T0}`,
  coin: "btc",
  marketType: "5m",
  startTime: T0,
  endTime: T0 + 300,
  coinPriceStart: 100,
  winner: "Up",
  feeSchedule: null,
};

/** One Up book everywhere: bid 0.48, asks 100 @ 0.50; the Down book its mirror. */
const UP: OrderBook = { bids: [{ price: 0.48, size: 100 }], asks: [{ price: 0.5, size: 100 }] };

/** A snapshot `sec` seconds in, with its coin and Up prices (Down is 1 - Up). */
function snap(sec: number, coin: number, up: number): SnapshotRow {
  return {
    time: (T0 + sec) * 1e6,
    coinPrice: coin,
    priceUp: up,
    priceDown: Math.round((1 - up) * 1e6) / 1e6,
    books: encodeBooks(UP, mirrorBook(UP)),
  };
}

/** Coin 100, 101, 99, 100, 102 and Up 0.50, 0.55, 0.45, 0.40, 0.60 at seconds 0, 10, 20, 30, 40. */
const SNAPS = [
  snap(0, 100, 0.5),
  snap(10, 101, 0.55),
  snap(20, 99, 0.45),
  snap(30, 100, 0.4),
  snap(40, 102, 0.6),
];

/** A feature's value at each snapshot, as the engine computes it during a replay. */
function values(name: string): (number | null)[] {
  const history = new MarketHistory(SNAPS);
  const f = featureFn(name);
  return SNAPS.map((s, i) => f(new SnapshotView(MARKET, s, history, i)));
}

describe("lookback features read only the snapshots at or before the decision", () => {
  test("coin return in bps over 10 s and 20 s", () => {
    // 10 s: at 10 (101-100)/100 = +100 bps; at 20 (99-101)/101 = -198.019802 bps; at 30 (100-99)/99 =
    // +101.010101; at 40 (102-100)/100 = +200. At 0 there is no snapshot 10 s earlier: unknown.
    assert.deepEqual(values("coin_return_bps_10s"), [null, 100, -198.019802, 101.010101, 200]);
    // 20 s: at 20 (99-100)/100 = -100; at 30 (100-101)/101 = -99.009901; at 40 (102-99)/99 = +303.030303.
    assert.deepEqual(values("coin_return_bps_20s"), [null, null, -100, -99.009901, 303.030303]);
  });

  test("a lookback between snapshots takes the latest one at or before decision - N", () => {
    // 15 s at 20: 20 - 15 = 5, the latest snapshot at or before 5 is 0 (coin 100): (99-100)/100 = -100.
    // At 30: 15, so snapshot 10 (101): (100-101)/101 = -99.009901. At 40: 25, so snapshot 20 (99):
    // (102-99)/99 = +303.030303. At 10: 10 - 15 = -5, before the first snapshot: unknown, never
    // filled in from a later one.
    assert.deepEqual(values("coin_return_bps_15s"), [null, null, -100, -99.009901, 303.030303]);
  });

  test("Up and Down price change in cents", () => {
    // Up 10 s: 0.55-0.50 = +5, 0.45-0.55 = -10, 0.40-0.45 = -5, 0.60-0.40 = +20 (rounded, so -10 is -10).
    assert.deepEqual(values("price_up_change_cents_10s"), [null, 5, -10, -5, 20]);
    // Down is the mirror: -5, +10, +5, -20.
    assert.deepEqual(values("price_down_change_cents_10s"), [null, -5, 10, 5, -20]);
  });

  test("realized volatility: the root of the summed squared returns over the window", () => {
    // Returns between snapshots, bps: r1 = +100, r2 = -198.019802, r3 = +101.010101, r4 = +200.
    // 20 s at 20: sqrt(100^2 + 198.019802^2) = sqrt(10000 + 39211.8420) = 221.837413.
    // 20 s at 30: sqrt(198.019802^2 + 101.010101^2) = sqrt(39211.8420 + 10203.0405) = 222.2946.
    // 20 s at 40: sqrt(101.010101^2 + 200^2) = sqrt(10203.0405 + 40000) = 224.0604.
    const v = values("coin_volatility_bps_20s");
    assert.deepEqual(v.slice(0, 2), [null, null]);
    assert.deepEqual(
      v.slice(2).map((x) => Math.round((x as number) * 1e4) / 1e4),
      [221.8374, 222.2946, 224.0604],
    );
  });

  test("a view without its market's history knows no lookback", () => {
    assert.equal(featureFn("coin_return_bps_10s")(new SnapshotView(MARKET, SNAPS[1])), null);
  });
});

function def(entry: ConditionNode[], over: Partial<StrategyDefinition> = {}): StrategyDefinition {
  return {
    ...DEFINITION_DEFAULTS,
    exit: { ...DEFINITION_DEFAULTS.exit },
    side: "UP",
    entry,
    latency_ms: 0,
    max_entries_per_market: 5,
    ...over,
  };
}

/**
 * The seconds into the market at which the entry conditions hold: for each snapshot, the market replayed
 * up to it with `elapsed_s >= its second` added, so that only a decision there can enter (latency 0
 * fills it from the same snapshot).
 */
function entries(d: StrategyDefinition): number[] {
  const seconds: number[] = [];
  for (let i = 0; i < SNAPS.length; i++) {
    const sec = SNAPS[i].time / 1e6 - T0;
    const only = { ...d, entry: [...d.entry, { feature: "elapsed_s", op: ">=" as const, value: sec }] };
    const r = replayMarket(only, MARKET, SNAPS.slice(0, i + 1), []);
    if (r.trades.length > 0) seconds.push(sec);
  }
  return seconds;
}

describe("condition trees: all, any, not, nested, with lookbacks", () => {
  const rose = { feature: "coin_return_bps_10s", op: ">" as const, value: 0 };
  const cheap = { feature: "price_up", op: "<" as const, value: 0.5 };

  test("a lookback condition enters only where the lookback is known and holds", () => {
    // Coin up over 10 s at 10 (+100), 30 (+101) and 40 (+200); at 0 unknown, so no entry.
    assert.deepEqual(entries(def([rose])), [10, 30, 40]);
  });

  test("any: either holds", () => {
    // Up below 0.5 at 20 (0.45) and 30 (0.40); coin up at 10, 30, 40: any of them at 10, 20, 30, 40.
    assert.deepEqual(entries(def([{ any: [rose, cheap] }])), [10, 20, 30, 40]);
  });

  test("all: both hold, the same as listing them in entry", () => {
    // Both only at 30 (coin +101 bps and Up 0.40).
    assert.deepEqual(entries(def([{ all: [rose, cheap] }])), [30]);
    assert.deepEqual(entries(def([rose, cheap])), [30]);
  });

  test("not: the condition does not hold, an unknown lookback included", () => {
    // The coin not up over 10 s: at 0 (unknown, so the condition does not hold) and 20 (-198).
    assert.deepEqual(entries(def([{ not: rose }])), [0, 20]);
  });

  test("nested: not up price between 0.45 and 0.55, or the Up price fell 5 cents in 10 s", () => {
    // between = all(>= 0.45, <= 0.55): at 0 (0.50), 10 (0.55), 20 (0.45); not between: 30, 40.
    // fell 5 cents: change <= -5 at 20 (-10) and 30 (-5). Either: 20, 30, 40.
    const between = {
      all: [
        { feature: "price_up", op: ">=" as const, value: 0.45 },
        { feature: "price_up", op: "<=" as const, value: 0.55 },
      ],
    };
    const fell = { feature: "price_up_change_cents_10s", op: "<=" as const, value: -5 };
    assert.deepEqual(entries(def([{ any: [{ not: between }, fell] }])), [20, 30, 40]);
  });

  test("trees in exit conditions: any closes the position", () => {
    // Enter at 0 (no entry condition); exit when (coin up over 10 s and Up >= 0.55): at 10 (+100 bps,
    // 0.55) the sale is decided, and fills at 10 (latency 0) at the bid 0.48.
    const d = def([], {
      max_entries_per_market: 1,
      exit: {
        ...DEFINITION_DEFAULTS.exit,
        conditions: [{ all: [rose, { feature: "price_up", op: ">=", value: 0.55 }] }],
      },
    });
    const r = replayMarket(d, MARKET, SNAPS, []);
    assert.equal(r.trades.length, 1);
    assert.deepEqual(
      [r.trades[0].exit_reason, r.trades[0].exit?.decision_time],
      ["condition", isoMicros((T0 + 10) * 1e6)],
    );
  });

  test("a version 1 definition gives the same bytes as the same rules in version 2", () => {
    const v1 = def([cheap], { version: 1 });
    const v2 = def([cheap], { version: 2 });
    const a = replayMarket(v1, MARKET, SNAPS, []);
    const b = replayMarket(v2, MARKET, SNAPS, []);
    assert.equal(JSON.stringify(a), JSON.stringify(b));
    assert.ok(a.trades.length > 0);
  });
});
