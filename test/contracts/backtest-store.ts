import assert from "node:assert/strict";
import type { BacktestStore, NewRun, StrategyRecord } from "../../src/store/ports/backtest-store.ts";
import type { QuotaCharge } from "../../src/store/ports/quota-ledger.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { type StoreTests, describeStoreTests } from "./store-tests.ts";

const strategy = (keyId: string, id: string, over: Partial<StrategyRecord> = {}): StrategyRecord => ({
  id,
  keyId,
  name: `strategy ${id}`,
  definition: '{"version":1}',
  source: "prompt",
  prompt: "buy up below 0.4",
  preset: null,
  generator: "offline",
  model: null,
  notes: "[]",
  createdAt: 1_000,
  chargeId: null,
  idempotencyKey: null,
  requestHash: "h",
  ...over,
});

const charge = (
  keyId: string,
  chargeId: string,
  limit: number | null,
  idempotencyKey: string | null = null,
): QuotaCharge => ({
  keyId,
  month: "2026-07",
  limit,
  chargeId,
  idempotencyKey,
  at: 1_000,
});

/** Two runs a key, six an account: the defaults. */
const LIMITS = { perKey: 2, perAccount: 6 };

const run = (keyId: string, id: string, over: Partial<NewRun> = {}): NewRun => ({
  id,
  keyId,
  account: `account of ${keyId}`,
  strategyId: null,
  definition: '{"version":1}',
  selection: '{"coin":"btc"}',
  createdAt: 2_000,
  runner: "runner-a",
  leaseUntil: 10_000,
  idempotencyKey: null,
  requestHash: "h",
  ...over,
});

const BACKTEST_TESTS: StoreTests<BacktestStore, Store> = {
  "a strategy is stored in the transaction that charges for it, and listed newest first": async (
    bt,
    store,
  ) => {
    const made = await bt.createStrategy(strategy("k1", "s1"), charge("k1", "c1", 5), null, LIMITS);
    assert.equal(made.status, "created");
    assert.equal(made.status === "created" && made.used, 1);
    assert.equal(await store.quota.quotaUsed("k1", "2026-07"), 1);
    await bt.createStrategy(strategy("k1", "s2", { createdAt: 2_000 }), charge("k1", "c2", 5), null, LIMITS);
    const { strategies, total } = await bt.listStrategies("k1", 10, 0);
    assert.deepEqual(
      strategies.map((s) => [s.id, s.chargeId]),
      [
        ["s2", "c2"],
        ["s1", "c1"],
      ],
    );
    assert.equal(total, 2);
    assert.equal((await bt.getStrategy("k1", "s1"))?.name, "strategy s1");
    assert.equal(await bt.getStrategy("another key", "s1"), null, "a key sees only its own");
    const ledger = (await store.quota.listQuotaCharges(null, 100)).find((c) => c.id === "c1");
    assert.deepEqual(JSON.parse(ledger?.result ?? "null"), { strategy_id: "s1", run_id: null });
  },
  "at the limit nothing is charged and nothing stored": async (bt, store) => {
    await bt.createStrategy(strategy("k2", "s3"), charge("k2", "c3", 1), null, LIMITS);
    const refused = await bt.createStrategy(strategy("k2", "s4"), charge("k2", "c4", 1), null, LIMITS);
    assert.deepEqual(refused, { status: "exhausted", used: 1 });
    assert.equal(await bt.getStrategy("k2", "s4"), null);
    assert.equal(await store.quota.quotaUsed("k2", "2026-07"), 1);
  },
  "20 concurrent strategies on a limit of 5: exactly 5 stored and charged": async (bt, store) => {
    const made = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        bt.createStrategy(strategy("k9", `s9-${i}`), charge("k9", `c9-${i}`, 5), null, LIMITS),
      ),
    );
    assert.equal(made.filter((m) => m.status === "created").length, 5);
    assert.equal(made.filter((m) => m.status === "exhausted").length, 15);
    assert.equal((await bt.listStrategies("k9", 100, 0)).total, 5);
    assert.equal(await store.quota.quotaUsed("k9", "2026-07"), 5);
  },
  "an idempotency key replays what its charge bought, strategy and run, without a second charge": async (
    bt,
    store,
  ) => {
    const first = await bt.createStrategy(
      strategy("k3", "s5", { idempotencyKey: "idem" }),
      charge("k3", "c5", 5, "idem"),
      run("k3", "r5", { strategyId: "s5" }),
      LIMITS,
    );
    assert.equal(first.status, "created");
    const again = await bt.createStrategy(
      strategy("k3", "s6", { idempotencyKey: "idem" }),
      charge("k3", "c6", 5, "idem"),
      run("k3", "r6", { strategyId: "s6" }),
      LIMITS,
    );
    assert.equal(again.status, "replayed");
    assert.deepEqual(again.status === "replayed" && [again.strategy?.id, again.run?.id, again.used], [
      "s5",
      "r5",
      1,
    ]);
    assert.equal(await store.quota.quotaUsed("k3", "2026-07"), 1);
    assert.equal(await bt.getRun("r6"), null);
    const bought = await bt.boughtWith("k3", "idem");
    assert.deepEqual([bought?.strategy.id, bought?.run?.id], ["s5", "r5"]);
    assert.equal(await bt.boughtWith("k3", "other"), null);
  },
  "runs in flight are limited per key, whatever the concurrency; nothing is charged when refused": async (
    bt,
    store,
  ) => {
    const made = await Promise.all(
      Array.from({ length: 10 }, (_, i) => bt.createRun(run("k4", `r4-${i}`), LIMITS)),
    );
    assert.equal(made.filter((m) => m.status === "created").length, 2);
    assert.equal(made.filter((m) => m.status === "busy").length, 8);
    const busy = await bt.createStrategy(
      strategy("k4", "s7"),
      charge("k4", "c7", 5),
      run("k4", "r7"),
      LIMITS,
    );
    assert.deepEqual(busy, { status: "busy", inFlight: 2, limit: 2, scope: "key" });
    assert.equal(await store.quota.quotaUsed("k4", "2026-07"), 0);
    // Another key is not held up by this one's runs.
    assert.equal((await bt.createRun(run("k5", "r5-0"), LIMITS)).status, "created");
  },
  "runs in flight are limited per account across its keys, whatever the concurrency": async (bt) => {
    // Ten keys of one account, two runs each at once: the account's six are all that are stored.
    const made = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        bt.createRun(run(`acct-k${i % 10}`, `ra-${i}`, { account: "one account" }), LIMITS),
      ),
    );
    assert.equal(made.filter((m) => m.status === "created").length, 6);
    const refused = made.filter((m) => m.status === "busy");
    assert.equal(refused.length, 14);
    assert.ok(refused.every((m) => m.status === "busy" && m.scope === "account" && m.limit === 6));
    // Another account is not held up by this one's runs.
    const other = await bt.createRun(run("acct-other", "ra-other", { account: "another" }), LIMITS);
    assert.equal(other.status, "created");
    assert.equal((await bt.getRun("ra-other"))?.account, "another");
  },
  "a run's idempotency key replays the run it first made": async (bt) => {
    const first = await bt.createRun(run("k6", "r6-a", { idempotencyKey: "again" }), LIMITS);
    const second = await bt.createRun(run("k6", "r6-b", { idempotencyKey: "again" }), LIMITS);
    assert.deepEqual([first.status, second.status], ["created", "replayed"]);
    assert.equal(second.status === "replayed" && second.run.id, "r6-a");
    assert.equal((await bt.runByIdempotencyKey("k6", "again"))?.id, "r6-a");
  },
  "only the runner holding a run starts it, records its progress and finishes it": async (bt) => {
    await bt.createRun(run("k7", "r7-a"), LIMITS);
    assert.equal(await bt.claimRun("r7-a", "runner-b", 3_000, 20_000), false, "not runner-b's");
    assert.equal(await bt.claimRun("r7-a", "runner-a", 3_000, 20_000), true);
    assert.equal(await bt.claimRun("r7-a", "runner-a", 3_000, 20_000), false, "started once");
    assert.equal(await bt.setSelected("r7-a", "runner-a", 2, "[]"), true);
    assert.equal(await bt.putResult("r7-a", "runner-a", 0, "m-0", '{"n":0}', '{"t":1}\n{"t":2}'), true);
    assert.equal(await bt.putResult("r7-a", "runner-b", 1, "m-1", '{"n":1}', ""), false);
    assert.equal(await bt.putResult("r7-a", "runner-a", 1, "m-1", '{"n":1}', ""), true);
    assert.equal(
      await bt.finishRun("r7-a", "runner-b", { status: "complete", aggregate: "{}" }, 4_000),
      false,
    );
    assert.equal(
      await bt.finishRun("r7-a", "runner-a", { status: "complete", aggregate: '{"a":1}' }, 4_000),
      true,
    );
    const done = await bt.getRun("r7-a");
    assert.deepEqual(
      [
        done?.status,
        done?.marketsDone,
        done?.marketsTotal,
        done?.aggregate,
        done?.attempts,
        done?.finishedAt,
      ],
      ["complete", 2, 2, '{"a":1}', 1, 4_000],
    );
    assert.deepEqual(await bt.listResults("r7-a"), ['{"n":0}', '{"n":1}']);
    assert.deepEqual(await bt.listResults("r7-a", 1, 1), ['{"n":1}'], "a page");
    assert.equal(await bt.marketTrades("r7-a", "m-0"), '{"t":1}\n{"t":2}', "the trade lines as stored");
    assert.equal(await bt.marketTrades("r7-a", "m-1"), "");
    assert.equal(await bt.marketTrades("r7-a", "m-9"), null);
    assert.equal(
      await bt.finishRun("r7-a", "runner-a", { status: "failed", error: "x" }, 5_000),
      false,
      "once",
    );
  },
  "a run whose lease ran out is taken over from the start, or failed once started too often": async (bt) => {
    await bt.createRun(run("k8", "r8-a", { leaseUntil: 5_000 }), LIMITS);
    await bt.createRun(run("k8", "r8-b", { leaseUntil: 50_000 }), LIMITS);
    await bt.claimRun("r8-a", "runner-a", 3_000, 5_000);
    await bt.setSelected("r8-a", "runner-a", 3, "[]");
    await bt.putResult("r8-a", "runner-a", 0, "m", "{}", "");
    await bt.renewLeases("runner-a", ["r8-b"], 60_000);
    const first = await bt.reclaimExpired("runner-c", 6_000, 16_000, 2);
    assert.deepEqual(first, { requeued: ["r8-a"], failed: [] });
    const taken = await bt.getRun("r8-a");
    assert.deepEqual(
      [taken?.status, taken?.runner, taken?.leaseUntil, taken?.marketsDone, taken?.marketsTotal],
      ["queued", "runner-c", 16_000, 0, null],
    );
    assert.deepEqual(await bt.listResults("r8-a"), [], "results cleared for the rerun");
    assert.equal(await bt.putResult("r8-a", "runner-a", 1, "m", "{}", ""), false, "the old runner lost it");
    assert.equal(await bt.claimRun("r8-a", "runner-c", 7_000, 8_000), true);
    // The runner holding it, asking itself (alive, its lease lapsed by a stall), leaves it.
    assert.deepEqual(await bt.reclaimExpired("runner-c", 9_000, 19_000, 2), { requeued: [], failed: [] });
    assert.equal((await bt.getRun("r8-a"))?.status, "running");
    const second = await bt.reclaimExpired("runner-d", 9_000, 19_000, 2);
    assert.deepEqual(second, { requeued: [], failed: ["r8-a"] });
    const failed = await bt.getRun("r8-a");
    assert.equal(failed?.status, "failed");
    assert.match(failed?.error ?? "", /stopped 2 times/);
    assert.equal((await bt.getRun("r8-b"))?.status, "queued", "a renewed lease is kept");
  },
};

/** The behaviour every BacktestStore must share, over an empty, migrated store from `open`. */
export function backtestStoreContract(name: string, open: () => Promise<Store>): void {
  describeStoreTests(`BacktestStore contract: ${name}`, open, (store) => store.backtests, BACKTEST_TESTS);
}
