import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { RunScheduler } from "../../../src/backtest/jobs/scheduler.ts";
import { ManualClock } from "../../../src/domain/time.ts";
import { SqliteStore } from "../../../src/store/dialects/sqlite/sqlite-store.ts";
import type { Store } from "../../../src/store/ports/store.ts";

// How long a request waits for a run (`wait`): on the scheduler's clock, until the run ends.

/** The store, its runs claimed only once `open` is called: a run held by the scheduler that stays queued. */
function gatedClaims(store: Store): { store: Store; open: () => void } {
  let open = () => {};
  const claims = new Promise<void>((resolve) => (open = resolve));
  const bound = <T extends object>(target: T, p: string | symbol) => {
    const value = Reflect.get(target, p, target) as unknown;
    return typeof value === "function" ? value.bind(target) : value;
  };
  const backtests = new Proxy(store.backtests, {
    get(target, p) {
      if (p !== "claimRun") return bound(target, p);
      return async (...args: Parameters<typeof target.claimRun>) => {
        await claims;
        return target.claimRun(...args);
      };
    },
  });
  return {
    store: new Proxy(store, { get: (target, p) => (p === "backtests" ? backtests : bound(target, p)) }),
    open,
  };
}

/** A scheduler of one worker thread over `store`, on `clock`. */
function oneWorker(store: Store, clock: ManualClock): RunScheduler {
  return new RunScheduler({ store, clock, workers: 1, priority: "normal", leaseMs: 60_000 });
}

describe("RunScheduler.waitFor", () => {
  let sqlite: SqliteStore;
  before(async () => {
    sqlite = new SqliteStore(":memory:");
    await sqlite.migrate();
  });
  after(() => sqlite.close());

  test("ends when the scheduler's clock passes the deadline, the run still queued", async () => {
    const clock = new ManualClock(1_784_852_434_000_000);
    const gate = gatedClaims(sqlite);
    const scheduler = oneWorker(gate.store, clock);
    try {
      scheduler.submit("run-1", { account: "a", keyId: "k" });
      let ended = false;
      const waited = scheduler.waitFor("run-1", 20).then(() => (ended = true));
      // A timer due after the scheduler's first one: when it fires, that one has fired too (timers fire
      // in the order they are due, however late), and 20 ms of real time have passed.
      await sleep(60);
      assert.equal(ended, false, "20 ms of real time are not 20 ms on a clock that stands still");
      clock.advance(20_000);
      await waited;
      assert.ok(ended);
      assert.equal(scheduler.inFlight, 1, "the run is still held: the wait ended on the clock, not the run");
    } finally {
      gate.open();
      await scheduler.close();
    }
  });

  test("on a clock that stands still, ends when the run ends", async () => {
    const clock = new ManualClock(1_784_852_434_000_000);
    const gate = gatedClaims(sqlite);
    const scheduler = oneWorker(gate.store, clock);
    try {
      scheduler.submit("run-2", { account: "a", keyId: "k" });
      const waited = scheduler.waitFor("run-2", 60_000);
      // No such run in the store: its claim fails, which ends it for this scheduler.
      gate.open();
      await waited;
      assert.equal(scheduler.inFlight, 0);
    } finally {
      await scheduler.close();
    }
  });
});
