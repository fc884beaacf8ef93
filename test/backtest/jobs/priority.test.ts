import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { DEFAULT_CONFIG, type RunPriority } from "../../../src/config.ts";
import { seedDemo } from "../../../src/demo/seed.ts";
import { SqliteStore } from "../../../src/store/dialects/sqlite/sqlite-store.ts";
import { ANCHOR, makeTestApp, TEST_CONFIG } from "../../helpers/app.ts";

// BACKTEST_PRIORITY: the app runs a backtest on a worker thread (a store in a file, which a worker
// can open), and the nice value of this process's threads is read from /proc once the run has
// finished (the worker thread stays for the next run until the app closes).

/** The nice value of each thread of this process (field 19 of /proc/self/task/<tid>/stat). */
function niceOfThreads(): number[] {
  return readdirSync("/proc/self/task").map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    // The command name, in parentheses, may hold spaces: the fields are counted after its end.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[16]);
  });
}

describe("BACKTEST_PRIORITY", () => {
  const dir = mkdtempSync(join(tmpdir(), "updown-priority-"));
  const path = join(dir, "db.sqlite");

  before(async () => {
    const store = new SqliteStore(path);
    await store.migrate();
    const counts = { "5m": 2, "15m": 0, "1h": 0, "4h": 0, "24h": 0 };
    await seedDemo(store, { seed: 1, anchor: ANCHOR, counts, coins: ["btc"] });
    await store.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The nice values of this process's threads after an app at `priority` has run a backtest to its end. */
  async function niceAfterRun(priority: RunPriority): Promise<number[]> {
    const t = await makeTestApp({
      seed: false,
      store: new SqliteStore(path),
      config: { backtest: { ...TEST_CONFIG.backtest, workers: 1, priority } },
    });
    try {
      const res = await t.app.inject({
        method: "POST",
        url: "/v1/backtest-ai/run",
        headers: { "x-api-key": t.key, "content-type": "application/json" },
        payload: JSON.stringify({
          definition: { side: "UP", entry: [{ feature: "price_up", op: "<", value: 0.6 }] },
          coin: "btc",
          market_type: "5m",
          market_count: 1,
          wait: 0,
        }),
      });
      assert.equal(res.statusCode, 202, res.body);
      const { id } = res.json().run;
      // At low priority on a busy machine the run takes what CPU is left: its end is waited for, not timed.
      while ((await t.store.backtests.getRun(id))?.status !== "complete") await sleep(10);
      return niceOfThreads();
    } finally {
      await t.close();
    }
  }

  test("low (the default): the worker thread runs at nice 19, the rest of the process as started", async () => {
    assert.equal(DEFAULT_CONFIG.backtest.priority, "low");
    const nice = await niceAfterRun("low");
    assert.equal(nice.filter((n) => n === 19).length, 1, nice.join(","));
    assert.ok(nice.filter((n) => n !== 19).length > 1);
  });

  test("normal: no thread lowers its priority", async () => {
    const nice = await niceAfterRun("normal");
    assert.equal(nice.filter((n) => n === 19).length, 0, nice.join(","));
  });
});
