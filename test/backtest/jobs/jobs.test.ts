import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { SqliteStore } from "../../../src/store/dialects/sqlite/sqlite-store.ts";
import { BIN, type ServeProcess, startServeProcess } from "../../helpers/serve.ts";

// Runs are jobs held under a lease (DESIGN 3.7): a real `updown serve` is killed (SIGKILL) in the
// middle of one, and a new one over the same database takes the run over and finishes it.

const run = promisify(execFile);

/** Every snapshot's book is read (an imbalance that never holds): a run long enough to be cut short. */
const SLOW = { side: "UP", entry: [{ feature: "book_imbalance_up", op: ">", value: 2 }] };

describe("a server killed during a run", { timeout: 600_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "updown-jobs-"));
  const path = join(dir, "db.sqlite");
  const env = {
    DATABASE_URL: `sqlite:${path}`,
    LOG_LEVEL: "warn",
    BACKTEST_WORKERS: "1",
    // Short, so that the restarted server finds the dead one's lease run out soon after it starts.
    BACKTEST_LEASE_S: "1",
  };
  const servers: ServeProcess[] = [];
  let key: string;

  const updown = async (...args: string[]) =>
    (await run(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } })).stdout.trim();

  before(async () => {
    await updown(
      "seed",
      "--counts",
      "5m=0,15m=100,1h=0,4h=0,24h=0",
      "--coins",
      "btc",
      "--anchor",
      "2026-07-24T00:20:34Z",
    );
    // Enterprise (no minute window): the polls below are many when the machine is busy.
    key = await updown("keys", "create", "--plan", "enterprise");
  });

  after(async () => {
    for (const s of servers)
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (server: ServeProcess, method: string, path: string, body?: object) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as {
        run: { id: string; status: string; progress: { markets_done: number } };
        aggregate: unknown;
        results: unknown[];
      },
    };
  };

  /** Polls the run until `done` says so; runs end on events in another process, not at a known time. */
  const until = async (server: ServeProcess, id: string, done: (status: string) => boolean) => {
    const deadline = performance.now() + 240_000;
    while (performance.now() < deadline) {
      const answer = await call(server, "GET", `/v1/backtest-ai/runs/${id}`);
      if (done(answer.body.run.status)) return answer;
      await sleep(10);
    }
    throw new Error(`run ${id} never reached the state waited for`);
  };

  test("the run is left running by the dead server, and the next one takes it over and finishes it", async () => {
    const first = await startServeProcess(env);
    servers.push(first);
    const body = { definition: SLOW, coin: "btc", market_type: "15m", market_count: 100 };
    const posted = await call(first, "POST", "/v1/backtest-ai/run", { ...body, wait: 0 });
    assert.equal(posted.status, 202);
    const id = posted.body.run.id;
    await until(first, id, (status) => status === "running");
    const exited = new Promise((resolve) => first.child.once("exit", resolve));
    first.child.kill("SIGKILL");
    await exited;

    const store = new SqliteStore(path);
    const left = await store.backtests.getRun(id);
    await store.close();
    assert.equal(left?.status, "running", "killed in the middle of the run");
    assert.ok(
      (left?.marketsDone ?? 0) < (left?.marketsTotal ?? 100),
      `${left?.marketsDone} of ${left?.marketsTotal}`,
    );

    const second = await startServeProcess(env);
    servers.push(second);
    const finished = await until(second, id, (status) => status === "complete" || status === "failed");
    assert.equal(finished.body.run.status, "complete");
    assert.equal(finished.body.results.length, 99);

    // Run again from the start, it gives what an uninterrupted run gives.
    // Waited for by polling, not by `wait`: on a loaded machine the run may outlast any fixed wait.
    const posted2 = await call(second, "POST", "/v1/backtest-ai/run", { ...body, wait: 0 });
    assert.equal(posted2.status, 202);
    const fresh = await until(second, posted2.body.run.id, (status) => status === "complete");
    assert.equal(JSON.stringify(fresh.body.results), JSON.stringify(finished.body.results));
    assert.equal(JSON.stringify(fresh.body.aggregate), JSON.stringify(finished.body.aggregate));

    const reopened = new SqliteStore(path);
    assert.equal((await reopened.backtests.getRun(id))?.attempts, 2);
    await reopened.close();
  });
});
