import assert from "node:assert/strict";
import { test } from "node:test";
import { Value } from "typebox/value";
import { DEFINITION_DEFAULTS, DEFINITION_SCHEMA } from "../../src/backtest/definition.ts";
import { type MarketResult, replayMarket } from "../../src/backtest/engine.ts";
import { aggregate } from "../../src/backtest/metrics.ts";
import type { Aggregate } from "../../src/backtest/metrics.ts";
import {
  AggregateSchema,
  MarketResultSchema,
  RunAnswerSchema,
  RunSchema,
  renderRunAnswer,
  StrategySchema,
  TradeSchema,
  renderAggregate,
  splitAggregate,
  tradeLinesPage,
} from "../../src/backtest/wire.ts";
import { mirrorBook, type OrderBook } from "../../src/domain/book.ts";
import type { RunRecord } from "../../src/store/ports/backtest-store.ts";
import { encodeBooks } from "../../src/wire/book-codec.ts";

// Runs stored before issue 24's result fields existed still answer in the documented shape.

const T0 = 1_784_851_200;
const snap = (sec: number, bids: [number, number][]) => {
  const up: OrderBook = {
    bids: bids.map(([price, size]) => ({ price, size })),
    asks: [{ price: 0.5, size: 100 }],
  };
  return {
    time: (T0 + sec) * 1e6,
    coinPrice: 100,
    priceUp: 0.49,
    priceDown: 0.51,
    books: encodeBooks(up, mirrorBook(up)),
  };
};

test("a run stored by the engine before issue 24 answers with the new fields as that engine made them", () => {
  // 10 bought at 0.50; the time limit sells 4 @ 0.48 at 1 s and 3 @ 0.47 at 2 s; the market ends with 3 held.
  const d = { ...DEFINITION_DEFAULTS, side: "UP" as const, position_size: 10, latency_ms: 0 };
  const timed = { ...d, exit: { ...d.exit, time_limit_s: 1 } };
  const market = {
    slug: `btc-updown-5m-${T0}`,
    coin: "btc" as const,
    marketType: "5m" as const,
    startTime: T0,
    endTime: T0 + 300,
    coinPriceStart: 100,
    winner: "Up" as const,
    feeSchedule: null,
  };
  const fresh = replayMarket(
    timed,
    market,
    [snap(0, [[0.48, 50]]), snap(1, [[0.48, 4]]), snap(2, [[0.47, 3]])],
    [],
  );
  // What the engine stored before: none of the new fields.
  const { rebates_usdc: _r, ...oldResult } = fresh;
  const old = {
    ...oldResult,
    trades: fresh.trades.map((t) => {
      const { last_fill_time: _l, queue_ahead: _q, unfilled: _u, rebate_usdc: _b, ...entry } = t.entry;
      const { unsold: _s, attempts: _a, empty_attempts: _e, ...exit } = t.exit ?? {};
      return { ...t, entry, exit };
    }),
  };
  const { rebates_usdc: _ra, ...oldAggregate } = aggregate([fresh]);
  const { count_rebates: _c, ...oldDefinition } = timed;
  const run: RunRecord = {
    id: "r1",
    keyId: "k1",
    account: "a1",
    strategyId: null,
    definition: JSON.stringify(oldDefinition),
    selection: JSON.stringify({
      coin: "btc",
      market_type: "5m",
      market_count: 1,
      start_time: null,
      end_time: null,
      hidden: [],
    }),
    status: "complete",
    createdAt: T0 * 1e6,
    startedAt: T0 * 1e6,
    finishedAt: T0 * 1e6,
    error: null,
    marketsDone: 1,
    marketsTotal: 1,
    aggregate: JSON.stringify(oldAggregate),
    research: null,
    unresolved: "[]",
    runner: null,
    leaseUntil: null,
    attempts: 1,
    idempotencyKey: null,
    requestHash: null,
  };
  const answer = answerOf(run, [JSON.stringify(old)]);
  const refs = {
    StrategyDefinition: DEFINITION_SCHEMA,
    BacktestTrade: TradeSchema,
    BacktestMarketResult: MarketResultSchema,
    BacktestAggregate: AggregateSchema,
    BacktestRun: RunSchema,
    Strategy: StrategySchema,
  };
  assert.ok(Value.Check(refs, RunAnswerSchema, answer), "the documented shape");
  const t = answer.results[0].trades[0];
  // One sale of the 7 shares sold, 3 unsold (those settled), no empty tries; the entry bought all 10.
  assert.deepEqual(
    [t.exit?.attempts.length, t.exit?.unsold, t.exit?.empty_attempts, t.entry.unfilled, t.entry.queue_ahead],
    [1, 3, 0, 0, null],
  );
  assert.deepEqual(
    [answer.results[0].rebates_usdc, answer.aggregate?.rebates_usdc, answer.run.definition.count_rebates],
    [0, 0, false],
  );
  // A result stored now reads back as it was stored.
  assert.deepEqual(
    answerOf({ ...run, definition: JSON.stringify(timed) }, [JSON.stringify(fresh)]).results[0],
    fresh,
  );
});

/** A run's answer as a client reads it: the rendered bytes, parsed. */
function answerOf(run: RunRecord, results: string[]) {
  const page = { total: results.length, limit: 100, offset: 0 };
  return JSON.parse(renderRunAnswer(run, null, results, page).json) as {
    run: { definition: { count_rebates: boolean } };
    aggregate: Aggregate | null;
    results: MarketResult[];
  };
}

// What the worker renders and a request splices (issue 24): the aggregate with its curve last, cut
// apart unparsed, and trade lines paged unparsed; both give what parsing would have.

const AGGREGATE = {
  equity_curve: [
    { time: "2026-07-24T00:05:00Z", equity: 1.5 },
    { time: "2026-07-24T00:10:00Z", equity: -0.25 },
  ],
  markets: 2,
  trades: 2,
  pnl: -0.25,
  roi: null,
} as unknown as Aggregate;

test("an aggregate rendered with its curve last splits into its figures and its curve", () => {
  const text = renderAggregate(AGGREGATE);
  assert.deepEqual(JSON.parse(text), AGGREGATE);
  assert.ok(text.endsWith(`"equity_curve":${JSON.stringify(AGGREGATE.equity_curve)}}`));
  const { figures, curve } = splitAggregate(text);
  const { equity_curve: expectedCurve, ...expectedFigures } = AGGREGATE;
  assert.deepEqual(JSON.parse(figures), expectedFigures);
  assert.deepEqual(JSON.parse(curve), expectedCurve);
  const empty = splitAggregate(renderAggregate({ ...AGGREGATE, equity_curve: [] }));
  assert.deepEqual([JSON.parse(empty.curve), JSON.parse(empty.figures).markets], [[], 2]);
});

test("a page of trade lines is the JSON array's elements of that page", () => {
  const trades = [{ n: 1, s: "a\nb" }, { n: 2 }, { n: 3 }];
  const lines = trades.map((t) => JSON.stringify(t)).join("\n");
  const page = tradeLinesPage(lines, 2, 1);
  assert.equal(page.total, 3);
  assert.deepEqual(JSON.parse(`[${page.items}]`), trades.slice(1, 3));
  assert.deepEqual(
    JSON.parse(`[${tradeLinesPage(lines, 10, 0).items}]`),
    trades,
    "a newline inside a string stays escaped",
  );
  assert.deepEqual(tradeLinesPage(lines, 5, 3), { items: "", total: 3 });
  assert.deepEqual(tradeLinesPage("", 5, 0), { items: "", total: 0 });
});
