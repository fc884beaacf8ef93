import assert from "node:assert/strict";
import { test } from "node:test";
import {
  fillFromPrint,
  makerFeeOf,
  makerRebateOf,
  netSalePrice,
  type RestingOrder,
} from "../../src/backtest/fills.ts";
import type { FeeSchedule } from "../../src/domain/market.ts";

// The maker rules of fills.ts one print at a time; the engine's tests run them through whole markets.

const FEES: FeeSchedule = { rate: 0.07, exponent: 1, takerOnly: true, rebateRate: 0.2 };
const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

test("a print gives a resting buy what traded at or through its price after it joined, queue first", () => {
  const order: RestingOrder = { outcome: "Up", limit: 0.4, placedAt: 1_000, queueAhead: 30, size: 25 };
  const print = (time: number, price: number, size: number, outcome: "Up" | "Down" = "Up") => ({
    time,
    outcome,
    price,
    size,
  });
  // Not after it joined, the other token, above the limit: nothing, and the queue untouched.
  assert.equal(fillFromPrint(order, print(1_000, 0.4, 100)), 0);
  assert.equal(fillFromPrint(order, print(2_000, 0.4, 100, "Down")), 0);
  assert.equal(fillFromPrint(order, print(2_000, 0.41, 100)), 0);
  assert.equal(order.queueAhead, 30);
  // 20 at the price: all to the queue (10 left). 15 through it: 10 to the queue, 5 ours (20 wanted still).
  assert.equal(fillFromPrint(order, print(3_000, 0.4, 20)), 0);
  assert.equal(fillFromPrint(order, print(4_000, 0.39, 15)), 5);
  // 100 more: the order takes the 20 it still wants, no more.
  assert.equal(fillFromPrint(order, print(5_000, 0.4, 100)), 20);
  assert.deepEqual([order.queueAhead, order.size], [0, 0]);
});

test("a maker's fee, rebate, and a sale's price net of its fee", () => {
  // Takers only: a maker pays nothing; on a schedule charging both, 10 * 0.07 * 0.4 * 0.6 = 0.168.
  assert.equal(makerFeeOf(FEES, 10, 0.4), 0);
  assert.equal(r6(makerFeeOf({ ...FEES, takerOnly: false }, 10, 0.4)), 0.168);
  // The rebate: 20% of what the taker paid, 0.2 * 0.168 = 0.0336; no schedule, no rebate.
  assert.equal(r6(makerRebateOf(FEES, 10, 0.4)), 0.0336);
  assert.equal(makerRebateOf(null, 10, 0.4), 0);
  // Selling at 0.60 brings 0.60 - 0.07 * 0.60 * 0.40 = 0.5832 a share; without fees the price itself.
  assert.equal(r6(netSalePrice(FEES, 0.6)), 0.5832);
  assert.equal(netSalePrice(null, 0.6), 0.6);
});
