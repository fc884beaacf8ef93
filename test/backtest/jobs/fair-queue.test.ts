import assert from "node:assert/strict";
import { test } from "node:test";
import { FairQueue } from "../../../src/backtest/jobs/fair-queue.ts";

// The order queued runs start in: round robin over accounts, then over each account's keys, each key's
// runs in the order they came.

function drain(q: FairQueue): string[] {
  const out: string[] = [];
  for (let id = q.shift(); id !== undefined; id = q.shift()) out.push(id);
  return out;
}

test("one account's 20 runs through 10 keys hold another account's run up by one start", () => {
  const q = new FairQueue();
  for (let i = 0; i < 20; i++) q.push(`a${i}`, { account: "A", keyId: `k${i % 10}` });
  q.push("b0", { account: "B", keyId: "kb" });
  assert.equal(q.size, 21);
  const order = drain(q);
  // A FIFO queue would start b0 21st.
  assert.equal(order.indexOf("b0"), 1);
  // Within A, its keys take turns: k0's first run, k1's first, ... then each key's second run.
  assert.deepEqual(
    order.filter((id) => id !== "b0"),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19].map((i) => `a${i}`),
  );
  assert.equal(q.size, 0);
  assert.equal(q.shift(), undefined);
});

test("accounts take turns, keys within an account take turns, a key's runs keep their order", () => {
  const q = new FairQueue();
  q.push("a-k1-1", { account: "A", keyId: "k1" });
  q.push("a-k1-2", { account: "A", keyId: "k1" });
  q.push("a-k2-1", { account: "A", keyId: "k2" });
  q.push("b-k3-1", { account: "B", keyId: "k3" });
  q.push("b-k3-2", { account: "B", keyId: "k3" });
  q.push("c-k4-1", { account: "C", keyId: "k4" });
  assert.deepEqual(drain(q), ["a-k1-1", "b-k3-1", "c-k4-1", "a-k2-1", "b-k3-2", "a-k1-2"]);
});

test("a run queued while others start joins its account's turn", () => {
  const q = new FairQueue();
  q.push("a1", { account: "A", keyId: "k" });
  q.push("a2", { account: "A", keyId: "k" });
  assert.equal(q.shift(), "a1");
  q.push("b1", { account: "B", keyId: "kb" });
  assert.deepEqual(drain(q), ["a2", "b1"]);
});
