import assert from "node:assert/strict";
import { test } from "node:test";
import type { Level, OrderBook } from "../../src/domain/book.ts";
import { TakenLiquidity } from "../../src/backtest/impact.ts";

// The self-impact rule of docs/backtests.md: what we took stays taken until the recorded book shows the
// level refilled (its size rises) or the level leaves the book.

const asks = (...levels: [number, number][]): Level[] => levels.map(([price, size]) => ({ price, size }));
const books = (a: Level[]) => (token: string) =>
  token === "up" ? ({ bids: [], asks: a } as OrderBook) : null;

test("taken liquidity stays taken, shrinks with its level, and is whole again once refilled or gone", () => {
  const t = new TakenLiquidity();
  const shown = asks([0.5, 10], [0.51, 20], [0.52, 100]);
  t.take("up", "asks", shown, asks([0.5, 10], [0.51, 20], [0.52, 10]));
  // The same book again: 0.50 and 0.51 are ours, 90 of 0.52 left.
  t.observe(books(shown));
  assert.deepEqual(t.available("up", "asks", shown), asks([0.52, 90]));
  // The other token and the other side are untouched.
  assert.deepEqual(t.available("down", "asks", shown), shown);
  assert.deepEqual(t.available("up", "bids", shown), shown);
  // 0.52 shrinks to 60 (others took 40): our 10 stay subtracted, 50 left. 0.50 refills to 15 (more than
  // the 10 shown): all 15 are there. 0.51 leaves the book.
  const next = asks([0.5, 15], [0.52, 60]);
  t.observe(books(next));
  assert.deepEqual(t.available("up", "asks", next), asks([0.5, 15], [0.52, 50]));
  // 0.51 returns with 20: new liquidity, all of it offered; 0.52 grows back to 70: refilled, all 70.
  const back = asks([0.5, 15], [0.51, 20], [0.52, 70]);
  t.observe(books(back));
  assert.deepEqual(t.available("up", "asks", back), back);
});
