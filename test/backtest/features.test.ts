import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type ConditionNode,
  DEFINITION_DEFAULTS,
  type StrategyDefinition,
} from "../../src/backtest/definition.ts";
import { replayMarket } from "../../src/backtest/engine.ts";
import { featureFn, MarketHistory, type ReplayMarket, SnapshotView } from "../../src/backtest/features.ts";
import type { Print } from "../../src/backtest/fills.ts";
import {
  EMPTY_EXCHANGE,
  type ExchangeHistory,
  priceAt,
  type StepSeries,
  StepSeriesBuilder,
} from "../../src/backtest/lookback.ts";
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

// The features of issue 25's first point on the same five snapshots: the distance to the price to beat,
// the market's traded volume, Binance's values at the time, and the time of day. Each value is worked
// out by hand beside it; then each decision's values are recomputed with everything after it changed.

const S = 1e6;
const at = (sec: number) => (T0 + sec) * S;

/** Up 10 @ 0.50 at 5 s, Down 20 @ 0.45 at 10 s, Up 5 @ 0.60 at 15 s, Up 100 @ 0.60 at 40 s. */
const PRINTS: Print[] = [
  { time: at(5), outcome: "Up", price: 0.5, size: 10 },
  { time: at(10), outcome: "Down", price: 0.45, size: 20 },
  { time: at(15), outcome: "Up", price: 0.6, size: 5 },
  { time: at(40), outcome: "Up", price: 0.6, size: 100 },
];

type Points = [sec: number, value: number][];

/** Binance's series by hand, each as (seconds from the start, value). */
const EXCHANGE: Record<"mid" | "trades" | "closes" | "funding" | "oi", Points> = {
  // Spot depth mids: 100.5 at -5 s, 101 at 10 s, 99.5 at 25 s.
  mid: [
    [-5, 100.5],
    [10, 101],
    [25, 99.5],
  ],
  // Spot trades: 100 at -25 s, 101 at 5 s, 102 at 12 s, 101.5 at 38 s.
  trades: [
    [-25, 100],
    [5, 101],
    [12, 102],
    [38, 101.5],
  ],
  // The 1m candle opened at -60 s closed at 100.2: known at 0 s.
  closes: [[0, 100.2]],
  // Funding settled at 0.0001 eight hours before the start, 0.0002 at 20 s.
  funding: [
    [-8 * 3600, 0.0001],
    [20, 0.0002],
  ],
  // Open interest 5000 at -400 s, 5100 at 30 s.
  oi: [
    [-400, 5000],
    [30, 5100],
  ],
};

function series(points: Points): StepSeries {
  const b = new StepSeriesBuilder();
  for (const [sec, value] of points) b.push(at(sec), value);
  return b.build();
}

function exchangeOf(x: typeof EXCHANGE): ExchangeHistory {
  return {
    ...EMPTY_EXCHANGE,
    spot: { mid: series(x.mid), trades: series(x.trades), closes: series(x.closes) },
    funding: series(x.funding),
    openInterest: series(x.oi),
  };
}

/** A feature's value at each snapshot with the market's trades and Binance's series above. */
function valuesWith(name: string): (number | null)[] {
  const history = new MarketHistory(SNAPS, PRINTS, exchangeOf(EXCHANGE));
  const f = featureFn(name);
  return SNAPS.map((s, i) => f(new SnapshotView(MARKET, s, history, i)));
}

describe("the distance to the price to beat, traded volume, Binance's values and the time of day", () => {
  test("beat_distance_sd: (coin - start price) / (sigma * sqrt(remaining_s)), sigma from the lookback", () => {
    // 20 s at 20: returns r1 = +100, r2 = -198.019802 bps since snapshot 0: Σr² = 49211.841976, √ =
    // 221.837422 bps over 20 s, so sigma = 99 * 0.0221837422 / √20 = 0.491083 a √s; 280 s left:
    // (99 - 100) / (0.491083 * √280 = 8.217468) = -0.121693.
    // At 30 the coin is at the price to beat (100): 0. At 40: r3, r4 since snapshot 20: Σr² =
    // 10203.040506 + 40000 = 50203.040506, √ = 224.060350; sigma = 102 * 0.022406035 / √20 = 0.511034;
    // 260 s left: 2 / (0.511034 * 16.124515) = 0.242713. At 0 and 10 no snapshot 20 s earlier: unknown.
    assert.deepEqual(valuesWith("beat_distance_sd_20s"), [null, null, -0.121693, 0, 0.242713]);
  });

  test("beat_distance_sd is unknown when the coin did not move over the lookback, or the market is over", () => {
    const flat = [snap(0, 100, 0.5), snap(10, 100, 0.5), snap(300, 101, 0.5)];
    const history = new MarketHistory(flat);
    const f = featureFn("beat_distance_sd_10s");
    // At 10: no move since 0, sigma 0. At 300: the end, no time left.
    assert.deepEqual(
      flat.map((s, i) => f(new SnapshotView(MARKET, s, history, i))),
      [null, null, null],
    );
  });

  test("traded volume over N s: shares, and USDC, of both outcomes after decision - N and at or before it", () => {
    // 10 s at 10: (0, 10] holds 10 Up + 20 Down = 30 shares, 10*0.5 + 20*0.45 = 14 USDC; at 20: (10, 20]
    // 5 shares, 3 USDC; at 30: nothing; at 40: (30, 40] 100 shares, 60 USDC. At 0 the market's record
    // does not reach 10 s back: unknown.
    assert.deepEqual(valuesWith("traded_volume_10s"), [null, 30, 5, 0, 100]);
    assert.deepEqual(valuesWith("traded_usdc_10s"), [null, 14, 3, 0, 60]);
    // 30 s at 30: (0, 30] 35 shares; at 40: (10, 40] 105 shares.
    assert.deepEqual(valuesWith("traded_volume_30s"), [null, null, null, 35, 105]);
  });

  test("Binance's spot mid: the latest depth snapshot's, at most 10 s old", () => {
    // At 0 the -5 s book (100.5); at 10 and 20 the 10 s one (101, 10 s old at 20); at 30 the 25 s one;
    // at 40 it is 15 s old: not recorded then, unknown.
    assert.deepEqual(valuesWith("spot_mid"), [100.5, 101, 101, 99.5, null]);
    // No futures depth was recorded at all.
    assert.deepEqual(valuesWith("futures_mid"), [null, null, null, null, null]);
  });

  test("Binance's spot return over N s: the later of the last trade and the last closed candle, each way", () => {
    // Price at 0: the candle closed at 0 (100.2) is later than the -25 s trade; at -10: the -25 s trade
    // (100). +20 bps. At 10: the 5 s trade 101 against 100.2: +79.840319. At 20: 102 (12 s) against
    // 101: +99.009901. At 30: 102 against 102: 0. At 40: 101.5 (38 s) against 102 (12 s): -49.019608.
    assert.deepEqual(valuesWith("spot_return_bps_10s"), [20, 79.840319, 99.009901, 0, -49.019608]);
    // Recorded before the market, so known from its first second; futures were not recorded.
    assert.deepEqual(valuesWith("futures_return_bps_10s"), [null, null, null, null, null]);
    // A price older than 60 s is not the price: at 100 s the last trade (38 s) is 62 s old.
    const spot = exchangeOf(EXCHANGE).spot;
    assert.equal(priceAt(spot, at(98)), 101.5);
    assert.equal(priceAt(spot, at(100)), null);
  });

  test("Binance's funding rate and open interest: the latest at or before the decision", () => {
    assert.deepEqual(valuesWith("futures_funding_rate"), [0.0001, 0.0001, 0.0002, 0.0002, 0.0002]);
    assert.deepEqual(valuesWith("futures_open_interest"), [5000, 5000, 5000, 5100, 5100]);
  });

  test("the time of day in UTC: hour and minute of the day", () => {
    // T0 is 00:00:00 UTC; 13:45:30 is 49530 s later (hour 13, minute 825); a second before T0 is 23:59:59.
    const view = (sec: number) => new SnapshotView(MARKET, snap(sec, 100, 0.5));
    const times = [0, 49_530, -1].map((sec) => [
      featureFn("hour_utc")(view(sec)),
      featureFn("minute_of_day_utc")(view(sec)),
    ]);
    assert.deepEqual(times, [
      [0, 0],
      [13, 825],
      [23, 1439],
    ]);
  });

  test("no value depends on anything after the decision: the future changed, every value stays", () => {
    const names = [
      "beat_distance_sd_20s",
      "traded_volume_10s",
      "traded_usdc_30s",
      "spot_mid",
      "spot_return_bps_10s",
      "futures_funding_rate",
      "futures_open_interest",
      "coin_volatility_bps_20s",
      "hour_utc",
    ];
    const full = names.map(valuesWith);
    for (let i = 0; i < SNAPS.length; i++) {
      const sec = SNAPS[i].time / S - T0;
      // Everything after the decision replaced: later points with other values, some in the decision's
      // second just after it, and later snapshots and trades of a different market.
      const before = (points: Points): Points => [
        ...points.filter(([t]) => t <= sec),
        [sec + 0.5, 7],
        [sec + 3, 9],
      ];
      const changed = Object.fromEntries(
        Object.entries(EXCHANGE).map(([k, points]) => [k, before(points)]),
      ) as typeof EXCHANGE;
      const snaps = [...SNAPS.slice(0, i + 1), snap(sec + 1, 500, 0.9), snap(sec + 5, 1, 0.1)];
      const prints = [
        ...PRINTS.filter((p) => p.time <= SNAPS[i].time),
        { time: SNAPS[i].time + 1, outcome: "Up" as const, price: 0.9, size: 1e6 },
      ];
      const history = new MarketHistory(snaps, prints, exchangeOf(changed));
      const view = new SnapshotView(MARKET, snaps[i], history, i);
      assert.deepEqual(
        names.map((name) => featureFn(name)(view)),
        full.map((v) => v[i]),
        `at ${sec} s`,
      );
    }
  });
});

describe("condition trees over the new features", () => {
  test("any of (spot up 50 bps in 10 s, funding above 0.00015) and not (10 s volume above 50 shares)", () => {
    // spot_return_bps_10s > 50 at 10 (79.8) and 20 (99.0); funding > 0.00015 from 20 on; so any: 10, 20,
    // 30, 40. Volume over 10 s above 50 at 40 (100): not, so 10, 20, 30.
    const d = def([
      {
        any: [
          { feature: "spot_return_bps_10s", op: ">", value: 50 },
          { feature: "futures_funding_rate", op: ">", value: 0.00015 },
        ],
      },
      { not: { feature: "traded_volume_10s", op: ">", value: 50 } },
    ]);
    const seconds: number[] = [];
    for (let i = 0; i < SNAPS.length; i++) {
      const sec = SNAPS[i].time / S - T0;
      const only = { ...d, entry: [...d.entry, { feature: "elapsed_s", op: ">=" as const, value: sec }] };
      const r = replayMarket(only, MARKET, SNAPS.slice(0, i + 1), PRINTS, exchangeOf(EXCHANGE));
      if (r.trades.length > 0) seconds.push(sec);
    }
    assert.deepEqual(seconds, [10, 20, 30]);
  });

  test("a replay without Binance's series knows none of its values: their conditions never hold", () => {
    const d = def([{ feature: "spot_mid", op: ">", value: 0 }]);
    assert.equal(replayMarket(d, MARKET, SNAPS, PRINTS).trades.length, 0);
    assert.equal(replayMarket(d, MARKET, SNAPS, PRINTS, exchangeOf(EXCHANGE)).trades.length, 1);
  });
});
