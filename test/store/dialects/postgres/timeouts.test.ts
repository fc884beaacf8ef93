import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { BIN, type ServeProcess, startServeProcess } from "../../../helpers/serve.ts";
import { missingServerBinaries, type OwnServer, startOwnPostgres } from "../../../helpers/services.ts";

// `updown serve` over a PostgreSQL of this test's own, frozen with SIGSTOP (the postmaster and every
// backend: a host that stopped answering, not one that refuses) and thawed with SIGCONT. With the
// statement and acquire timeouts, requests in flight end and new ones are answered 503 within them,
// and all recover after SIGCONT. Never CI's shared server. Where CI runs (CI=true), missing
// binaries fail the test rather than skip it.

const MISSING = missingServerBinaries();
const SKIP = MISSING !== null && process.env.CI !== "true" ? MISSING : false;
const STATEMENT_TIMEOUT_MS = 1500;
const ACQUIRE_TIMEOUT_MS = 1000;
/** What the timeouts allow a request against a frozen server, plus a second for a loaded machine. */
const BOUND_MS = STATEMENT_TIMEOUT_MS + ACQUIRE_TIMEOUT_MS + 1000;
const MARKETS = "/v1/markets?limit=1";

const run = promisify(execFile);

interface Timed {
  status: number;
  retryAfter: string | null;
  body: string;
  ms: number;
  /** performance.now() when the answer had been read. */
  end: number;
}

async function timed(url: string, key?: string): Promise<Timed> {
  const started = performance.now();
  const res = await fetch(url, { headers: key ? { "x-api-key": key } : {} });
  const body = await res.text();
  const end = performance.now();
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body, ms: end - started, end };
}

/** The postmaster's process id and its children's (backends, background workers), from /proc. */
function serverProcesses(postmaster: number): number[] {
  const children = readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        // The command name is in parentheses and may hold spaces: the fields after it are split.
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === postmaster;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

describe("serve over a frozen PostgreSQL", { skip: SKIP }, () => {
  let dir: string;
  let pgServer: OwnServer | undefined;
  let server: ServeProcess | undefined;
  let key: string;
  let postmaster: number;
  let frozen = false;

  const signal = (sig: "SIGSTOP" | "SIGCONT") => {
    frozen = sig === "SIGSTOP" || frozen; // thawed only once every process has had its SIGCONT
    for (const pid of serverProcesses(postmaster)) {
      try {
        process.kill(pid, sig);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err; // a backend that exited meanwhile
      }
    }
    frozen = sig === "SIGSTOP";
  };

  before(async () => {
    if (MISSING !== null)
      throw new Error(`CI=true, but this test cannot start its own PostgreSQL: ${MISSING}`);
    dir = mkdtempSync(join(tmpdir(), "updown-frozen-pg-"));
    pgServer = await startOwnPostgres();
    const env = { ...process.env, DATABASE_URL: pgServer.url };
    await run(process.execPath, [BIN, "seed", "--counts", "5m=1,15m=0,1h=0,4h=0,24h=0", "--coins", "btc"], {
      env,
    });
    key = (await run(process.execPath, [BIN, "keys", "create", "--plan", "pro"], { env })).stdout.trim();
    const client = new pg.Client({ connectionString: pgServer.url });
    await client.connect();
    const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    // Read while the backend lives: its parent is the postmaster.
    const stat = readFileSync(`/proc/${rows[0].pid}/stat`, "utf8");
    await client.end();
    postmaster = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    server = await startServeProcess({
      DATABASE_URL: pgServer.url,
      PG_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      PG_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_TIMEOUT_MS),
      REDIS_URL: "",
      LOG_LEVEL: "warn",
    });
  });

  after(async () => {
    if (frozen || postmaster) signal("SIGCONT");
    if (server && server.child.exitCode === null) server.child.kill("SIGKILL");
    await pgServer?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("in flight and new requests end within the timeouts with 503 and Retry-After; all recover on SIGCONT", async (t) => {
    const url = server!.url;
    for (let i = 0; i < 3; i++) assert.equal((await timed(`${url}${MARKETS}`, key)).status, 200);
    assert.equal((await timed(`${url}/readyz`)).status, 200);

    // A request held in flight by a lock, then the server frozen under it.
    const locker = new pg.Client({ connectionString: pgServer!.url });
    locker.on("error", () => {}); // its connection ends with the server's removal should a check fail
    await locker.connect();
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE markets IN ACCESS EXCLUSIVE MODE");
    const inFlight = timed(`${url}${MARKETS}&coin=btc`, key);
    // The request's statement waits for the lock: seen in pg_stat_activity before the freeze.
    const watcher = new pg.Client({ connectionString: pgServer!.url });
    await watcher.connect();
    for (;;) {
      const { rows } = await watcher.query(
        "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
      );
      if (rows.length > 0) break;
    }
    await watcher.end();
    const frozenAt = performance.now();
    signal("SIGSTOP");

    // New requests while it is frozen: more at once than the pool holds (10), then a few in turn.
    const burst = await Promise.all(Array.from({ length: 12 }, () => timed(`${url}${MARKETS}`, key)));
    const inTurn: Timed[] = [];
    for (let i = 0; i < 3; i++) inTurn.push(await timed(`${url}${MARKETS}`, key));
    const ready = await timed(`${url}/readyz`);
    const held = await inFlight;
    const heldMs = held.end - frozenAt;

    for (const answer of [...burst, ...inTurn, held]) {
      assert.equal(answer.status, 503, answer.body);
      assert.equal(answer.retryAfter, "5");
      assert.equal(
        (JSON.parse(answer.body) as { error: { code: string } }).error.code,
        "SERVICE_UNAVAILABLE",
      );
      assert.ok(answer.ms < BOUND_MS, `answered in ${Math.round(answer.ms)} ms, bound ${BOUND_MS} ms`);
    }
    assert.equal(ready.status, 503);
    assert.ok(ready.ms < BOUND_MS, `/readyz answered in ${Math.round(ready.ms)} ms`);
    assert.ok(heldMs < BOUND_MS, `the request in flight ended ${Math.round(heldMs)} ms after the freeze`);
    const worst = Math.max(...[...burst, ...inTurn].map((a) => a.ms));
    t.diagnostic(
      `frozen: in flight ended after ${Math.round(heldMs)} ms; new requests answered 503 in at most ` +
        `${Math.round(worst)} ms (median ${Math.round([...burst, ...inTurn].map((a) => a.ms).sort((a, b) => a - b)[7])} ms); /readyz ${Math.round(ready.ms)} ms`,
    );

    signal("SIGCONT");
    await locker.query("ROLLBACK");
    await locker.end();
    const thawedAt = performance.now();
    // Back: the first answer may still meet a connection the freeze broke; within the bound all are 200.
    let recovered: Timed;
    for (;;) {
      recovered = await timed(`${url}${MARKETS}`, key);
      if (recovered.status === 200 || performance.now() - thawedAt > BOUND_MS * 2) break;
    }
    assert.equal(recovered.status, 200, recovered.body);
    const after = await Promise.all(Array.from({ length: 12 }, () => timed(`${url}${MARKETS}`, key)));
    assert.deepEqual(
      after.map((a) => a.status),
      after.map(() => 200),
    );
    assert.equal((await timed(`${url}/readyz`)).status, 200);
    t.diagnostic(`recovered ${Math.round(performance.now() - thawedAt)} ms after SIGCONT`);
  });
});
