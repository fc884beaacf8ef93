import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Value } from "typebox/value";
import {
  type Condition,
  DEFINITION_DEFAULTS,
  type StrategyDefinition,
} from "../../src/backtest/definition.ts";
import { replayMarket } from "../../src/backtest/engine.ts";
import { normalizeDefinition } from "../../src/backtest/input.ts";
import type { ReplayMarket } from "../../src/backtest/features.ts";
import { feeOf, type Print, walkBook } from "../../src/backtest/fills.ts";
import { aggregate } from "../../src/backtest/metrics.ts";
import { AggregateSchema, MarketResultSchema, TradeSchema } from "../../src/backtest/wire.ts";
import { mirrorBook, type OrderBook } from "../../src/domain/book.ts";
import { encodeBooks } from "../../src/wire/book-codec.ts";
import type { FeeSchedule, Winner } from "../../src/domain/market.ts";
import type { SnapshotRow } from "../../src/domain/snapshot.ts";

// Small hand-built markets; every expected number is worked out by hand in the comment beside it.

const T0 = 1_784_851_200;
const FEES: FeeSchedule = { rate: 0.07, exponent: 1, takerOnly: true, rebateRate: 0.2 };

function market(over: Partial<ReplayMarket> = {}): ReplayMarket {
  return {
    slug: `btc-updown-5m-${T0}`,
    coin: "btc",
    marketType: "5m",
    startTime: T0,
    endTime: T0 + 300,
    coinPriceStart: 100,
    winner: "Up",
    feeSchedule: null,
    ...over,
  };
}

type Side = [price: number, size: number][];

/** The Up book best first; the Down book is its mirror, as on Polymarket. */
function book(bids: Side, asks: Side): OrderBook {
  return {
    bids: bids.map(([price, size]) => ({ price, size })),
    asks: asks.map(([price, size]) => ({ price, size })),
  };
}

/** A snapshot `sec` seconds into the market, its Up price the midpoint of the book given (0.5 if a side is empty). */
function snap(sec: number, up: OrderBook, over: Partial<SnapshotRow> = {}): SnapshotRow {
  const mid = up.bids.length > 0 && up.asks.length > 0 ? (up.bids[0].price + up.asks[0].price) / 2 : 0.5;
  return {
    time: (T0 + sec) * 1e6,
    coinPrice: 100,
    priceUp: mid,
    priceDown: Math.round((1 - mid) * 1e6) / 1e6,
    books: encodeBooks(up, mirrorBook(up)),
    ...over,
  };
}

function def(over: Partial<StrategyDefinition> = {}): StrategyDefinition {
  return { ...DEFINITION_DEFAULTS, exit: { ...DEFINITION_DEFAULTS.exit }, side: "UP", ...over };
}

const exit = (over: Partial<StrategyDefinition["exit"]>) => ({ ...DEFINITION_DEFAULTS.exit, ...over });
const when = (feature: string, op: Condition["op"], value: number | string): Condition => ({
  feature,
  op,
  value,
});

/** A recorded Up trade `sec` seconds into the market (`outcome` Down for the other token). */
function trade(sec: number, price: number, size: number, outcome: "Up" | "Down" = "Up"): Print {
  return { time: Math.round((T0 + sec) * 1e6), outcome, price, size };
}

/** The engine's ISO time (microseconds) of `sec` seconds into the market. */
function iso(sec: number): string {
  return new Date(Math.round((T0 + sec) * 1000)).toISOString().replace("Z", "000Z");
}

/** The three-level ask side most tests buy from: 10 @ 0.50, 20 @ 0.51, 100 @ 0.52. */
const DEEP = book(
  [[0.48, 50]],
  [
    [0.5, 10],
    [0.51, 20],
    [0.52, 100],
  ],
);
/** Only 30 shares offered: 10 @ 0.50 and 20 @ 0.51. */
const THIN = book(
  [[0.48, 50]],
  [
    [0.5, 10],
    [0.51, 20],
  ],
);

function replay(
  d: StrategyDefinition,
  snaps: SnapshotRow[],
  over: Partial<ReplayMarket> = {},
  prints: Print[] = [],
) {
  const result = replayMarket(d, market(over), snaps, prints);
  assert.ok(
    Value.Check({ BacktestTrade: TradeSchema }, MarketResultSchema, result),
    "the result has the documented shape",
  );
  return result;
}

describe("fills: a market order walks the recorded book", () => {
  test("a market buy walks three levels", () => {
    // 40 shares: 10 @ 0.50 + 20 @ 0.51 + 10 @ 0.52 = 5.00 + 10.20 + 5.20 = 20.40 USDC, average 0.51.
    const fill = walkBook(DEEP.asks, "buy", 40, null, null);
    assert.deepEqual(fill.levels, [
      { price: 0.5, size: 10 },
      { price: 0.51, size: 20 },
      { price: 0.52, size: 10 },
    ]);
    assert.equal(fill.size, 40);
    assert.equal(Math.round(fill.notional * 1e6) / 1e6, 20.4);
    assert.equal(Math.round((fill.avgPrice ?? 0) * 1e6) / 1e6, 0.51);
    assert.equal(fill.bestPrice, 0.5);
    // Through the engine, at latency 0, the same 40 shares from the decision's own snapshot.
    const r = replay(def({ position_size: 40, latency_ms: 0 }), [snap(0, DEEP), snap(1, DEEP)]);
    assert.equal(r.trades[0].entry.cost, 20.4);
    assert.equal(r.trades[0].entry.price, 0.51);
    assert.equal(r.trades[0].entry.levels.length, 3);
  });

  test("a partial fill when depth runs out", () => {
    // 40 asked, 30 offered: 10 @ 0.50 + 20 @ 0.51 = 15.20 USDC, 10 unfilled.
    const fill = walkBook(THIN.asks, "buy", 40, null, null);
    assert.equal(fill.size, 30);
    assert.equal(fill.unfilled, 10);
    assert.equal(Math.round(fill.notional * 1e6) / 1e6, 15.2);
    const r = replay(def({ position_size: 40, latency_ms: 0 }), [snap(0, THIN)]);
    assert.equal(r.trades[0].entry.size, 30);
    assert.equal(r.trades[0].entry.cost, 15.2);
  });

  test("the price cap: no level above max_fill_price is taken", () => {
    // Cap 0.51: 10 @ 0.50 + 20 @ 0.51 = 15.20 USDC; the 0.52 level is left although the order wants 40.
    const fill = walkBook(DEEP.asks, "buy", 40, 0.51, null);
    assert.deepEqual([fill.size, fill.unfilled, fill.bestPrice], [30, 10, 0.5]);
    const r = replay(def({ position_size: 40, max_fill_price: 0.51, latency_ms: 0 }), [snap(0, DEEP)]);
    assert.equal(r.trades[0].entry.size, 30);
    // A cap below the best ask fills nothing: an unfilled order, no trade.
    const none = replay(def({ position_size: 40, max_fill_price: 0.49, latency_ms: 0 }), [snap(0, DEEP)]);
    assert.deepEqual([none.trades.length, none.orders_unfilled], [0, 1]);
  });

  test("the fee at p = 0.1, 0.5 and 0.9: C * 0.07 * p * (1 - p), in shares on a buy", () => {
    // 100 * 0.07 * 0.1 * 0.9 = 0.63 USDC; 100 * 0.07 * 0.25 = 1.75; 100 * 0.07 * 0.9 * 0.1 = 0.63.
    assert.equal(Math.round(feeOf(FEES, 100, 0.1) * 1e9) / 1e9, 0.63);
    assert.equal(Math.round(feeOf(FEES, 100, 0.5) * 1e9) / 1e9, 1.75);
    assert.equal(Math.round(feeOf(FEES, 100, 0.9) * 1e9) / 1e9, 0.63);
    assert.equal(feeOf(null, 100, 0.5), 0, "no schedule, no fee");
    // A buy pays in shares: 0.63 / 0.1 = 6.3 shares, 1.75 / 0.5 = 3.5, 0.63 / 0.9 = 0.7.
    for (const [p, shares] of [
      [0.1, 6.3],
      [0.5, 3.5],
      [0.9, 0.7],
    ]) {
      const fill = walkBook([{ price: p, size: 1000 }], "buy", 100, null, FEES);
      assert.equal(Math.round(fill.feeShares * 1e9) / 1e9, shares, `at ${p}`);
      const r = replay(
        def({ latency_ms: 0 }),
        [snap(0, book([[Math.round((p - 0.01) * 100) / 100, 1000]], [[p, 1000]]))],
        {
          feeSchedule: FEES,
        },
      );
      assert.equal(r.trades[0].entry.shares_received, Math.round((100 - shares) * 1e6) / 1e6);
    }
    // A sell pays in USDC: 100 shares at 0.5 bring 50.00 - 1.75 = 48.25.
    const sell = walkBook([{ price: 0.5, size: 1000 }], "sell", 100, null, FEES);
    assert.equal(Math.round((sell.notional - sell.feeUsdc) * 1e6) / 1e6, 48.25);
  });
});

describe("fills: limit orders", () => {
  const limit = def({
    order_type: "LIMIT",
    limit_price: { reference: "best_bid", offset: 0 },
    position_size: 10,
  });

  test("a limit order with nothing traded at or through its price never fills", () => {
    // Bid 0.48 at the decision: the order rests at 0.48; the asks stay at 0.50 (and 0.48 exactly is
    // not through), and no trade is recorded, so nothing fills and the order counts as unfilled.
    const touching = book([[0.47, 5]], [[0.48, 5]]);
    const r = replay(limit, [snap(0, DEEP), snap(1, DEEP), snap(2, touching), snap(3, DEEP)]);
    assert.deepEqual([r.trades.length, r.orders_unfilled], [0, 1]);
  });

  const through = book([[0.46, 5]], [[0.47, 5]]);
  const snaps = [snap(0, DEEP), snap(1, DEEP), snap(2, DEEP), snap(3, through)];

  test("a best ask below the limit fills nothing by itself: only recorded trades fill a resting order", () => {
    // Changed deliberately (issue 24): the engine used to fill all 10 shares at snapshot 3, where the best
    // ask (0.47) is below the limit, whatever the size and whatever traded. Without a trade, nothing fills.
    const r = replay(limit, snaps, { feeSchedule: FEES });
    assert.deepEqual([r.trades.length, r.orders_unfilled], [0, 1]);
  });

  test("one that fills from trades at or through its price, after the queue ahead, at its price, as a maker", () => {
    // Rests at 0.48 from snapshot 1 (the next after the decision), behind the 50 shares displayed at 0.48
    // there. Trades of Up: 40 @ 0.48 at 2.5 s (queue 50 -> 10), 15 @ 0.47 at 3.2 s (queue 10 -> 0, ours 5),
    // 20 @ 0.46 at 3.5 s (ours 5: the order is done). 10 shares at 0.48 = 4.80 USDC, no fee for a maker on
    // a taker-only schedule; first fill 3.2 s, last 3.5 s.
    const prints = [trade(2.5, 0.48, 40), trade(3.2, 0.47, 15), trade(3.5, 0.46, 20)];
    const r = replay(limit, snaps, { feeSchedule: FEES }, prints);
    const e = r.trades[0].entry;
    assert.deepEqual(
      [e.price, e.size, e.cost, e.fee_usdc, e.maker_size, e.queue_ahead, e.unfilled],
      [0.48, 10, 4.8, 0, 10, 50, 0],
    );
    assert.deepEqual([e.fill_time, e.last_fill_time], [iso(3.2), iso(3.5)]);
  });
});

describe("latency", () => {
  const prices = [
    book([[0.4, 100]], [[0.42, 100]]),
    book([[0.5, 100]], [[0.52, 100]]),
    book([[0.6, 100]], [[0.62, 100]]),
  ];
  const snaps = prices.map((b, i) => snap(i, b));
  const entryPrice = (latency: number | null) =>
    replay(def({ position_size: 10, latency_ms: latency }), snaps).trades[0].entry.price;

  test("latency 0 fills against the decision's own snapshot; by default, the next one", () => {
    // Decision at snapshot 0 (ask 0.42). Latency 0: 0.42. Default: snapshot 1's ask, 0.52.
    assert.equal(entryPrice(0), 0.42);
    assert.equal(entryPrice(null), 0.52);
    // 1500 ms: the first snapshot at or after t + 1.5 s is snapshot 2 (ask 0.62).
    assert.equal(entryPrice(1500), 0.62);
  });
});

describe("settlement and exits", () => {
  const flat = [snap(0, DEEP), snap(1, DEEP), snap(2, DEEP)];
  const hold = def({ position_size: 10, latency_ms: 0, exit: exit({ hold_to_resolution: true }) });

  test("a win, a loss and a 50-50: a share pays 1, 0 or 0.5", () => {
    // 10 shares bought at 0.50 = 5.00 USDC. Up wins: 10.00, PnL +5.00; Down wins: 0, PnL -5.00; 50-50: 5.00, PnL 0.
    const pnl = (winner: Winner) => replay(hold, flat, { winner }).trades[0];
    assert.deepEqual([pnl("Up").pnl, pnl("Up").settlement?.payout_per_share], [5, 1]);
    assert.deepEqual([pnl("Down").pnl, pnl("Down").roi], [-5, -1]);
    assert.deepEqual([pnl("50-50").pnl, pnl("50-50").settlement?.proceeds], [0, 5]);
    assert.equal(pnl("Up").exit_reason, "resolution");
    // Holding Down in a market Up won: the Down ask mirrors the Up bid, 1 - 0.48 = 0.52; 10 shares = 5.20, lost.
    const down = replay({ ...hold, side: "DOWN" }, flat, { winner: "Up" }).trades[0];
    assert.deepEqual([down.entry.price, down.pnl], [0.52, -5.2]);
  });

  test("take profit, stop loss and a time exit", () => {
    // Latency 0 throughout: an order fills against the snapshot that decided it.
    // Bought 10 at 0.50 (snapshot 0). Take profit 20%: the bid must reach 0.50 * 1.2 = 0.60; at
    // snapshot 1 it is 0.55, at snapshot 2 0.60, sold there: 6.00 - 5.00 = +1.00.
    const up = [
      snap(0, DEEP),
      snap(1, book([[0.55, 50]], [[0.57, 50]])),
      snap(2, book([[0.6, 50]], [[0.62, 50]])),
      snap(3, book([[0.61, 50]], [[0.63, 50]])),
    ];
    const tp = replay(def({ position_size: 10, latency_ms: 0, exit: exit({ take_profit_pct: 20 }) }), [
      ...up,
      snap(4, DEEP),
    ]);
    assert.deepEqual(
      [tp.trades[0].exit_reason, tp.trades[0].exit?.price, tp.trades[0].pnl],
      ["take_profit", 0.6, 1],
    );
    // Stop loss 10%: the bid must fall to 0.45; at snapshot 1 it is 0.47, at snapshot 2 0.44, sold there:
    // 4.40 - 5.00 = -0.60.
    const down = [
      snap(0, DEEP),
      snap(1, book([[0.47, 50]], [[0.49, 50]])),
      snap(2, book([[0.44, 50]], [[0.46, 50]])),
      snap(3, book([[0.43, 50]], [[0.45, 50]])),
    ];
    const sl = replay(def({ position_size: 10, latency_ms: 0, exit: exit({ stop_loss_pct: 10 }) }), down);
    assert.deepEqual(
      [sl.trades[0].exit_reason, sl.trades[0].exit?.price, sl.trades[0].pnl],
      ["stop_loss", 0.44, -0.6],
    );
    // Time limit 2 s: filled at snapshot 0, 2 s old at snapshot 2, sold there at the bid 0.48:
    // 4.80 - 5.00 = -0.20, held 2 s.
    const tl = replay(def({ position_size: 10, latency_ms: 0, exit: exit({ time_limit_s: 2 }) }), [
      ...flat,
      snap(3, DEEP),
    ]);
    const t0 = tl.trades[0];
    assert.deepEqual(
      [t0.exit_reason, t0.exit?.decision_time?.slice(17, 19), t0.pnl, t0.held_s],
      ["time_limit", "02", -0.2, 2],
    );
  });

  test("max_loss_percent forces the position out at that drawdown, also when held to resolution", () => {
    // Changed deliberately (issue 24): max_loss_percent used to stop new entries once the run's realized
    // loss reached it; it is now PolyHistorical's forced exit of a position. Bought 10 at 0.50 (5.00
    // USDC); max loss 20%: out once the bid (no fees here) is at most 0.50 * 0.8 = 0.40. Bid 0.45 at 1 s
    // (-10%), 0.40 at 2 s: sold there, 10 @ 0.40 = 4.00, PnL -1.00 (-20%), though Down won and holding
    // would have lost all 5.00.
    const falling = [
      snap(0, DEEP),
      snap(1, book([[0.45, 50]], [[0.47, 50]])),
      snap(2, book([[0.4, 50]], [[0.42, 50]])),
      snap(3, book([[0.3, 50]], [[0.32, 50]])),
    ];
    for (const hold_to_resolution of [false, true]) {
      const d = def({
        position_size: 10,
        latency_ms: 0,
        max_loss_percent: 20,
        exit: exit({ hold_to_resolution }),
      });
      const t = replay(d, falling, { winner: "Down" }).trades[0];
      assert.deepEqual(
        [t.exit_reason, t.exit?.decision_time, t.exit?.price, t.pnl, t.roi, t.settlement],
        ["max_loss", iso(2), 0.4, -1, -0.2, null],
      );
    }
    // Each market is its own: a loss in one never stops the entries of the next.
    const d = def({
      position_size: 10,
      latency_ms: 0,
      max_loss_percent: 50,
      exit: exit({ hold_to_resolution: true }),
    });
    const traded = [0, 1, 2].map(
      (i) => replayMarket(d, market({ winner: "Down", slug: `m${i}` }), flat, []).trades.length,
    );
    assert.deepEqual(traded, [1, 1, 1]);
  });
});

describe("decisions at the decision time only", () => {
  const series = [0.44, 0.48, 0.49, 0.52, 0.55].map((p) => book([[p - 0.01, 100]], [[p + 0.01, 100]]));

  test("crosses_above holds where one snapshot is at or below and the next above", () => {
    // price_up (the mid) is 0.44, 0.48, 0.49, 0.52: it crosses 0.5 between snapshots 2 and 3, so the
    // decision is snapshot 3 (T0 + 3 s) and, by default latency, the fill is snapshot 4's ask 0.56.
    const d = def({ position_size: 10, entry: [when("price_up", "crosses_above", 0.5)] });
    const r = replay(
      d,
      series.map((b, i) => snap(i, b)),
    );
    assert.equal(r.trades[0].entry.decision_time.slice(17, 19), "03");
    assert.equal(r.trades[0].entry.price, 0.56);
    // No cross on a rising series that starts above: the first snapshot has no snapshot before it.
    const above = replay(d, [snap(0, series[3]), snap(1, series[4])]);
    assert.equal(above.trades.length, 0);
    // crosses_below, and a feature against another feature.
    const below = def({ position_size: 10, entry: [when("price_down", "crosses_below", "price_up")] });
    assert.equal(
      replay(
        below,
        series.map((b, i) => snap(i, b)),
      ).trades[0].entry.decision_time.slice(17, 19),
      "03",
    );
  });

  test("changing the snapshots after a decision never changes that decision", () => {
    const d = def({
      position_size: 10,
      entry: [when("price_up", "<", 0.5)],
      exit: exit({ hold_to_resolution: true }),
    });
    const snaps = series.map((b, i) => snap(i, b));
    const before = replay(d, snaps).trades[0];
    // Decided at snapshot 0 (0.44 < 0.5), filled at snapshot 1. Everything after the fill rewritten.
    const changed = [
      ...snaps.slice(0, 2),
      ...[9, 9, 9].map((_, i) => snap(i + 2, book([[0.01, 1]], [[0.99, 1]]))),
    ];
    const after = replay(d, changed).trades[0];
    assert.deepEqual(after.entry, before.entry);
    // The same inputs give the same bytes.
    assert.equal(JSON.stringify(replay(d, snaps)), JSON.stringify(replay(d, snaps)));
  });
});

describe("metrics", () => {
  test("the aggregate over markets, worked by hand", () => {
    const d = def({ position_size: 10, latency_ms: 0, exit: exit({ hold_to_resolution: true }) });
    const flat = [snap(0, DEEP), snap(1, DEEP)];
    // Three markets, 10 shares at 0.50 each (cost 5.00): Up (+5), Down (-5), Up (+5).
    const results = (["Up", "Down", "Up"] as const).map((winner, i) =>
      replayMarket(d, market({ winner, slug: `m${i}` }), flat, []),
    );
    const a = aggregate(results);
    assert.ok(Value.Check(AggregateSchema, a));
    // PnL 5 - 5 + 5 = 5 on cost 15: ROI 0.333333; win rate 2/3; profit factor 10 / 5 = 2.
    assert.deepEqual([a.pnl, a.cost, a.roi, a.win_rate, a.profit_factor], [5, 15, 0.333333, 0.666667, 2]);
    // Equity 5, 0, 5: the drawdown is 5. Returns 1, -1, 1: mean 1/3, sample sd sqrt(4/3) = 1.154701,
    // Sharpe 0.288675; downside deviation sqrt(1/3) = 0.57735, Sortino 0.57735.
    assert.deepEqual(
      a.equity_curve.map((p) => p.equity),
      [5, 0, 5],
    );
    assert.deepEqual([a.max_drawdown, a.sharpe, a.sortino], [5, 0.288675, 0.57735]);
    // Each position held from its fill (0 s) to the market's end (300 s): 900 s of 900 s.
    assert.deepEqual([a.time_in_market_s, a.time_in_market_pct], [900, 100]);
  });
});

describe("the worked example of docs/backtests.md", () => {
  test("buy Up under 0.50, take profit 20%, with Polymarket's crypto fees: +5.429003 USDC", () => {
    const snaps = [
      snap(
        0,
        book(
          [[0.47, 200]],
          [
            [0.49, 60],
            [0.5, 100],
          ],
        ),
      ),
      snap(
        1,
        book(
          [[0.49, 200]],
          [
            [0.5, 50],
            [0.51, 100],
          ],
        ),
      ),
      snap(2, book([[0.55, 200]], [[0.57, 50]])),
      snap(3, book([[0.66, 200]], [[0.68, 50]])),
      snap(
        4,
        book(
          [
            [0.6, 60],
            [0.59, 100],
          ],
          [[0.62, 50]],
        ),
      ),
    ];
    const d = def({ entry: [when("price_up", "<", 0.5)], exit: exit({ take_profit_pct: 20 }) });
    const t = replay(d, snaps, { feeSchedule: FEES }).trades[0];
    // Decided at 0 s (mid 0.48), filled at 1 s: 50 @ 0.50 + 50 @ 0.51 = 50.50 USDC, average 0.505;
    // fees 0.875 + 0.87465 = 1.74965 USDC, taken as 1.75 + 1.715 = 3.465 shares: 96.535 held.
    assert.deepEqual(
      [
        t.entry.cost,
        t.entry.price,
        t.entry.fee_usdc,
        t.entry.fee_shares,
        t.entry.shares_received,
        t.entry.slippage_bps,
      ],
      [50.5, 0.505, 1.74965, 3.465, 96.535, 520.83],
    );
    // Take profit net of fees: a share held cost 50.50 / 96.535 = 0.523126; 20% above is 0.627751. At 2 s
    // the bid 0.55 brings 0.55 - 0.07 * 0.55 * 0.45 = 0.532675 a share after the fee: not enough; at 3 s
    // the bid 0.66 brings 0.66 - 0.07 * 0.66 * 0.34 = 0.644292: take profit. (Changed deliberately, issue
    // 24: second 3's bid was 0.61, which before fees passed 0.505 * 1.2 = 0.606 but brings 0.593347.)
    // Sold at 4 s: 60 @ 0.60 + 36.535 @ 0.59 = 57.55565 USDC, fees 1.008 + 0.618647 = 1.626647, proceeds
    // 55.929003, PnL 5.429003.
    assert.deepEqual(
      [t.exit?.decision_time?.slice(17, 19), t.exit?.proceeds, t.exit?.fee_usdc, t.pnl, t.roi],
      ["03", 55.929003, 1.626647, 5.429003, 0.107505],
    );
  });
});

describe("maker fills: the queue, what traded, expiry, rebates (issue 24)", () => {
  const limitAt = (price: number, over: Partial<StrategyDefinition> = {}) =>
    def({
      order_type: "LIMIT",
      limit_price: { reference: "fixed", offset: price },
      latency_ms: 0,
      exit: exit({ hold_to_resolution: true }),
      ...over,
    });

  test("a 10,000-share limit buy behind 500 displayed shares fills only what traded through after those 500", () => {
    // Limit 0.34, placed at 0 s (latency 0) into a book showing 500 shares bid at 0.34: no ask at or
    // below 0.34 to take, so all 10,000 rest behind a queue of 500.
    const q = book(
      [
        [0.34, 500],
        [0.33, 800],
      ],
      [[0.36, 300]],
    );
    const prints = [
      trade(0, 0.34, 400), // at the second it joined the book, not after: does not count
      trade(0.5, 0.34, 300), // queue 500 -> 200
      trade(1.2, 0.33, 250), // through the price: queue 200 -> 0, ours 50
      trade(1.5, 0.66, 1000, "Down"), // the other token: does not count
      trade(2, 0.35, 100), // above the limit: does not count
      trade(2.5, 0.34, 44), // ours 44
      trade(280, 0.3, 10), // after the last snapshot, before the end (300 s): ours 10
      trade(301, 0.3, 1000), // after the market's end: the order was cancelled
    ];
    const r = replay(
      limitAt(0.34, { position_size: 10_000 }),
      [0, 1, 2, 3].map((s) => snap(s, q)),
      {},
      prints,
    );
    const t = r.trades[0];
    // 50 + 44 + 10 = 104 shares at 0.34 = 35.36 USDC; the other 9,896 were cancelled at the end.
    assert.deepEqual(
      [t.entry.size, t.entry.maker_size, t.entry.cost, t.entry.unfilled, t.entry.queue_ahead],
      [104, 104, 35.36, 9896, 500],
    );
    assert.deepEqual(t.entry.levels, [{ price: 0.34, size: 104 }]);
    assert.deepEqual([t.entry.fill_time, t.entry.last_fill_time], [iso(1.2), iso(280)]);
    // Up won: 104 - 35.36 = +68.64; held from the first fill (1.2 s) to the end: 298.8 s.
    assert.deepEqual([t.pnl, t.held_s, r.orders_unfilled], [68.64, 298.8, 0]);
  });

  const e = book([[0.47, 100]], [[0.49, 100]]);
  const flat = [0, 1, 2, 3, 4].map((s) => snap(s, e));

  test("a limit that expires: what traded up to expire_after_s fills, the rest is cancelled", () => {
    // Limit 0.45 with nothing displayed at 0.45 (the bid is 0.47): no queue. Expiry 2 s after it joined
    // the book at 0 s. 4 @ 0.45 at 1.5 s and 3 @ 0.44 at 2.0 s (at the expiry: counts) fill 7; the 100
    // traded at 2.5 s come after the cancellation. 7 @ 0.45 = 3.15 USDC, 3 unfilled; Up won: +3.85.
    const prints = [trade(1.5, 0.45, 4), trade(2, 0.44, 3), trade(2.5, 0.4, 100)];
    const d = limitAt(0.45, { position_size: 10, limit_expiry_s: 2 });
    const t = replay(d, flat, {}, prints).trades[0];
    assert.deepEqual(
      [t.entry.size, t.entry.cost, t.entry.unfilled, t.entry.queue_ahead, t.pnl],
      [7, 3.15, 3, 0, 3.85],
    );
    // Nothing traded before the expiry: no trade, one order unfilled.
    const none = replay(d, flat, {}, [trade(2.5, 0.4, 100)]);
    assert.deepEqual([none.trades.length, none.orders_unfilled], [0, 1]);
    // Nor when the expiry (100 s) falls after the last snapshot (4 s), before the end: still one order.
    const late = replay({ ...d, limit_expiry_s: 100 }, flat, {}, [trade(150, 0.4, 100)]);
    assert.deepEqual([late.trades.length, late.orders_unfilled], [0, 1]);
    // Traded between the last snapshot and the expiry: it fills (4 @ 0.45 at 50 s), the rest is cancelled.
    const filled = replay({ ...d, limit_expiry_s: 100 }, flat, {}, [
      trade(50, 0.45, 4),
      trade(150, 0.4, 100),
    ]);
    assert.deepEqual(
      [filled.trades[0].entry.size, filled.trades[0].entry.unfilled, filled.orders_unfilled],
      [4, 6, 0],
    );
    // expire_after_s is how PolyHistorical-style bodies say it: the same field.
    const read = normalizeDefinition({ side: "UP", order_type: "LIMIT", expire_after_s: 2 }, "");
    assert.equal(read.limit_expiry_s, 2);
  });

  test("the maker rebate is reported apart from fees, and counted only when asked", () => {
    // The 7 maker shares at 0.45 above, on Polymarket's schedule (rate 0.07, takers only, rebate 20%):
    // the maker pays no fee; the takers it met paid 7 * 0.07 * 0.45 * 0.55 = 0.121275 USDC, of which 20%,
    // 0.024255, comes back. count_rebates: PnL 3.85 + 0.024255 = 3.874255.
    const prints = [trade(1.5, 0.45, 4), trade(2, 0.44, 3)];
    const d = limitAt(0.45, { position_size: 10, limit_expiry_s: 2 });
    const counted = replay({ ...d, count_rebates: true }, flat, { feeSchedule: FEES }, prints);
    const t = counted.trades[0];
    assert.deepEqual([t.entry.fee_usdc, t.entry.rebate_usdc, t.pnl], [0, 0.024255, 3.874255]);
    assert.deepEqual([counted.fees_usdc, counted.rebates_usdc], [0, 0.024255]);
    const a = aggregate([counted]);
    assert.deepEqual([a.fees_paid, a.rebates_usdc, a.pnl], [0, 0.024255, 3.874255]);
    // Not asked: no rebate, PnL 3.85.
    const plain = replay(d, flat, { feeSchedule: FEES }, prints).trades[0];
    assert.deepEqual([plain.entry.rebate_usdc, plain.pnl], [0, 3.85]);
  });
});

describe("exits that keep working (issue 24)", () => {
  const timed = def({ position_size: 10, latency_ms: 0, exit: exit({ time_limit_s: 1 }) });

  test("a partial exit is retried at each later snapshot until it is done", () => {
    // Bought 10 @ 0.50 at 0 s (5.00 USDC). Time limit 1 s: at 1 s the bids hold 4 @ 0.48 (sold: 1.92),
    // at 2 s 3 @ 0.47 (1.41), at 3 s 50 @ 0.46 (the last 3: 1.38). 4.71 USDC for 10, average 0.471;
    // PnL -0.29, closed at 3 s. (Changed deliberately, issue 24: the 6 unsold shares used to ride to
    // settlement.)
    const snaps = [
      snap(0, DEEP),
      snap(1, book([[0.48, 4]], [[0.5, 10]])),
      snap(2, book([[0.47, 3]], [[0.5, 10]])),
      snap(3, book([[0.46, 50]], [[0.5, 10]])),
      snap(4, DEEP),
    ];
    const t = replay(timed, snaps, { winner: "Down" }).trades[0];
    const x = t.exit;
    assert.ok(x);
    assert.deepEqual(
      x.attempts.map((a) => [a.time, a.size, a.price, a.proceeds]),
      [
        [iso(1), 4, 0.48, 1.92],
        [iso(2), 3, 0.47, 1.41],
        [iso(3), 3, 0.46, 1.38],
      ],
    );
    assert.deepEqual([x.size, x.unsold, x.price, x.proceeds, x.empty_attempts], [10, 0, 0.471, 4.71, 0]);
    assert.deepEqual(
      [t.exit_reason, t.settlement, t.pnl, t.closed_at, t.held_s],
      ["time_limit", null, -0.29, iso(3), 3],
    );
    // When the market ends first, what is left settles: 7 sold (3.33 USDC), 3 held, Up won: 3.00. PnL +1.33.
    const cut = replay(timed, snaps.slice(0, 3), { winner: "Up" }).trades[0];
    assert.deepEqual(
      [cut.exit?.size, cut.exit?.unsold, cut.settlement?.shares, cut.exit_reason, cut.pnl],
      [7, 3, 3, "time_limit", 1.33],
    );
  });

  test("an exit into an empty bid side is retried later, never a silent hold", () => {
    // Bought 10 @ 0.50. The time limit fires at 1 s, when no one bids; nor at 2 s; at 3 s 50 @ 0.45:
    // sold there, 4.50 USDC, PnL -0.50.
    const noBids = book([], [[0.5, 10]]);
    const snaps = [snap(0, DEEP), snap(1, noBids), snap(2, noBids), snap(3, book([[0.45, 50]], [[0.5, 10]]))];
    const t = replay(timed, snaps, { winner: "Down" }).trades[0];
    assert.deepEqual(
      [t.exit?.decision_time, t.exit?.empty_attempts, t.exit?.fill_time, t.exit?.size, t.pnl],
      [iso(1), 2, iso(3), 10, -0.5],
    );
    // No bid ever again: the exit is on the record, nothing sold, all 10 shares settle (Down won: 0).
    const stuck = replay(timed, snaps.slice(0, 3), { winner: "Down" }).trades[0];
    assert.deepEqual(
      [stuck.exit_reason, stuck.exit?.empty_attempts, stuck.exit?.price, stuck.exit?.unsold, stuck.pnl],
      ["time_limit", 2, null, 10, -5],
    );
  });

  test("take profit on the price net of the exit's fee", () => {
    // Polymarket's fees. Bought 100 @ 0.50 = 50.00 USDC; fee 100 * 0.07 * 0.25 = 1.75 USDC = 3.5 shares,
    // so 96.5 held at 50 / 96.5 = 0.518135 each. Take profit 10%: a share must bring 0.569948 after the
    // exit's fee, bid - 0.07 * bid * (1 - bid):
    //   1 s: bid 0.55 -> 0.532675 (before fees 0.55 >= 0.50 * 1.1 was a take profit: changed deliberately)
    //   2 s: bid 0.58 -> 0.562948, not yet
    //   3 s: bid 0.60 -> 0.5832: sold, 96.5 @ 0.60 = 57.90, fee 96.5 * 0.0168 = 1.6212, proceeds 56.2788.
    // PnL 6.2788, ROI 12.5576% (at least the 10% asked).
    const snaps = [
      snap(0, book([[0.48, 500]], [[0.5, 1000]])),
      snap(1, book([[0.55, 500]], [[0.57, 500]])),
      snap(2, book([[0.58, 500]], [[0.6, 500]])),
      snap(3, book([[0.6, 500]], [[0.62, 500]])),
    ];
    const d = def({ position_size: 100, latency_ms: 0, exit: exit({ take_profit_pct: 10 }) });
    const t = replay(d, snaps, { feeSchedule: FEES }).trades[0];
    assert.deepEqual(
      [t.exit_reason, t.exit?.decision_time, t.exit?.fee_usdc, t.exit?.proceeds, t.pnl, t.roi],
      ["take_profit", iso(3), 1.6212, 56.2788, 6.2788, 0.125576],
    );
  });
});

describe("self-impact (issue 24)", () => {
  // 40 shares a time, latency 0, a time limit of 1 s, two entries a market. At 0 s the first entry takes
  // 10 @ 0.50 + 20 @ 0.51 + 10 @ 0.52 = 20.40 USDC; at 1 s it sells 40 @ 0.48; at 2 s the second enters.
  const d = def({
    position_size: 40,
    latency_ms: 0,
    max_entries_per_market: 2,
    exit: exit({ time_limit_s: 1 }),
  });

  test("a second entry does not see again the liquidity the first took", () => {
    // The recorded book at 2 s is still DEEP, but 0.50 and 0.51 are ours already and 10 of 0.52's 100:
    // the second entry gets 40 @ 0.52 = 20.80 USDC (not 20.40 again).
    const r = replay(d, [snap(0, DEEP), snap(1, DEEP), snap(2, DEEP)]);
    assert.deepEqual(
      r.trades.map((t) => [t.entry.cost, t.entry.levels]),
      [
        [
          20.4,
          [
            { price: 0.5, size: 10 },
            { price: 0.51, size: 20 },
            { price: 0.52, size: 10 },
          ],
        ],
        [20.8, [{ price: 0.52, size: 40 }]],
      ],
    );
  });

  test("liquidity the book shows refilled is there again", () => {
    // At 2 s the book shows 15 at 0.50, more than the 10 it showed: refilled, all 15 are offered. 0.51
    // still shows 20 (all ours), 0.52 100 (10 ours). 15 @ 0.50 + 25 @ 0.52 = 7.50 + 13.00 = 20.50 USDC.
    const refilled = book(
      [[0.48, 50]],
      [
        [0.5, 15],
        [0.51, 20],
        [0.52, 100],
      ],
    );
    const r = replay(d, [snap(0, DEEP), snap(1, DEEP), snap(2, refilled)]);
    assert.deepEqual(
      [r.trades[1].entry.cost, r.trades[1].entry.levels],
      [
        20.5,
        [
          { price: 0.5, size: 15 },
          { price: 0.52, size: 25 },
        ],
      ],
    );
  });
});

describe("metrics over every market (issue 24)", () => {
  test("a market without a trade counts as a return of 0 in Sharpe and Sortino", () => {
    // Returns 1, -1, 1 and an idle market's 0: mean 0.25; sample variance (0.5625 + 1.5625 + 0.5625 +
    // 0.0625) / 3 = 0.916667, sd 0.957427, Sharpe 0.261116 (0.288675 without the idle market); downside
    // deviation sqrt(1 / 4) = 0.5, Sortino 0.5.
    const d = def({ position_size: 10, latency_ms: 0, exit: exit({ hold_to_resolution: true }) });
    const flat = [snap(0, DEEP), snap(1, DEEP)];
    const traded = (["Up", "Down", "Up"] as const).map((winner, i) =>
      replayMarket(d, market({ winner, slug: `m${i}` }), flat, []),
    );
    const idle = replayMarket(
      { ...d, entry: [when("price_up", ">", 0.9)] },
      market({ slug: "m3" }),
      flat,
      [],
    );
    const a = aggregate([...traded, idle]);
    assert.deepEqual([a.markets, a.markets_traded, a.sharpe, a.sortino], [4, 3, 0.261116, 0.5]);
  });
});
