import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { KeyService } from "../../../src/access/keys.ts";
import { loadPlans } from "../../../src/access/plans.ts";
import { seedDemo } from "../../../src/demo/seed.ts";
import { systemClock } from "../../../src/domain/time.ts";
import { SqliteStore } from "../../../src/store/dialects/sqlite/sqlite-store.ts";
import { ANCHOR } from "../../helpers/app.ts";
import { type ServeProcess, startServeProcess } from "../../helpers/serve.ts";

// BACKTEST_PRIORITY: a real `updown serve` runs a backtest, and the nice value of its threads is read
// from /proc once the run has finished (the worker thread stays for the next run).

const NO_MARKETS = { "5m": 0, "15m": 0, "1h": 0, "4h": 0, "24h": 0 };

/** The nice value of each thread of a process (field 19 of /proc/<pid>/task/<tid>/stat). */
function niceOfThreads(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    // The command name, in parentheses, may hold spaces: the fields are counted after its end.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[16]);
  });
}

describe("BACKTEST_PRIORITY", { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "updown-priority-"));
  const path = join(dir, "db.sqlite");
  const env = { DATABASE_URL: `sqlite:${path}`, LOG_LEVEL: "warn", BACKTEST_WORKERS: "1" };
  let key: string;

  before(async () => {
    // Seeded here rather than by `updown seed` and `updown keys`: two processes fewer.
    const store = new SqliteStore(path);
    await store.migrate();
    await seedDemo(store, { seed: 1, anchor: ANCHOR, counts: { ...NO_MARKETS, "5m": 2 }, coins: ["btc"] });
    key = (await new KeyService(store.keys, systemClock, loadPlans()).create({ plan: "enterprise" })).key;
    await store.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The nice values of a server's threads after it has run a backtest to its end. */
  async function niceAfterRun(priority: string | undefined): Promise<number[]> {
    const server: ServeProcess = await startServeProcess({ ...env, BACKTEST_PRIORITY: priority });
    try {
      const res = await fetch(`${server.url}/v1/backtest-ai/run`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({
          definition: { side: "UP", entry: [{ feature: "price_up", op: "<", value: 0.6 }] },
          coin: "btc",
          market_type: "5m",
          market_count: 1,
          wait: 0,
        }),
      });
      const posted = await res.text();
      assert.equal(res.status, 202, posted);
      const { id } = (JSON.parse(posted) as { run: { id: string } }).run;
      // At low priority on a busy machine the run takes what CPU is left: its end is waited for, not timed.
      for (;;) {
        const answer = await fetch(`${server.url}/v1/backtest-ai/runs/${id}`, {
          headers: { "x-api-key": key },
        });
        const { status } = ((await answer.json()) as { run: { status: string } }).run;
        if (status === "complete") break;
        assert.ok(status === "queued" || status === "running", status);
        await sleep(10);
      }
      return niceOfThreads(server.child.pid as number);
    } finally {
      const exited = new Promise((resolve) => server.child.once("exit", resolve));
      server.child.kill("SIGTERM");
      await exited;
    }
  }

  test("low (the default): the worker thread runs at nice 19, the rest of the process as started", async () => {
    // startServeProcess sets normal for the suite; unset, the server takes its default.
    const nice = await niceAfterRun(undefined);
    assert.equal(nice.filter((n) => n === 19).length, 1, nice.join(","));
    assert.ok(nice.filter((n) => n !== 19).length > 1);
  });

  test("normal: no thread lowers its priority", async () => {
    const nice = await niceAfterRun("normal");
    assert.equal(nice.filter((n) => n === 19).length, 0, nice.join(","));
  });
});
