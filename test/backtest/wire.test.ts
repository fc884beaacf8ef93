import assert from "node:assert/strict";
import { test } from "node:test";
import type { Aggregate } from "../../src/backtest/metrics.ts";
import { renderAggregate, splitAggregate, tradeLinesPage } from "../../src/backtest/wire.ts";

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
