import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { Redis } from "ioredis";
import pg from "pg";
import { isStoreUnavailable } from "../../src/store/errors.ts";
import { PostgresStore } from "../../src/store/dialects/postgres/pg-store.ts";
import { inTransaction } from "../../src/store/dialects/postgres/pg-util.ts";
import { postgresTestUrl } from "../helpers/postgres.ts";
import {
  missingServerBinaries,
  type OwnServer,
  startOwnPostgres,
  startOwnRedis,
} from "../helpers/services.ts";
import {
  BIN,
  minuteLeft,
  minuteStartOffset,
  type ServeProcess,
  startServeProcess,
} from "../helpers/serve.ts";

// One `updown serve` process over a PostgreSQL and a Redis of this test's own, which it stops and starts
// again while requests flow, then stops the process itself with SIGTERM mid-request. Never CI's shared
// servers: those must not go away under other tests. Runs wherever those servers can be started; where
// CI names its services (DATABASE_URL=postgres://..., REDIS_URL), missing binaries fail it, not skip it.

const MISSING = missingServerBinaries();
const SERVICES_GIVEN = postgresTestUrl() !== null || Boolean(process.env.REDIS_URL);
const SKIP = MISSING !== null && !SERVICES_GIVEN ? MISSING : false;
/** A starter key's per-minute limit here, so that the in-process fallback is seen refusing. */
const STARTER_PER_MINUTE = 5;
const MARKETS = "/v1/markets?limit=1";

const run = promisify(execFile);

/** Polls `probe` until it gives a value (not null or false), failing after `ms`. */
async function until<T>(what: string, probe: () => Promise<T | null | false>, ms = 10_000): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== false) return value;
    if (performance.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(25);
  }
}

interface Answer {
  /** What the test was doing when the request was sent. */
  phase: string;
  /** 0: no HTTP answer at all. */
  status: number;
  body: string;
  retryAfter: string | null;
}

/** Requests sent back to back by a few concurrent workers until stopped, every answer recorded. */
class Traffic {
  phase = "start";
  readonly answers: Answer[] = [];
  private running = true;
  private readonly workers: Promise<void>[];

  constructor(url: string, key: string, workers = 3) {
    this.workers = Array.from({ length: workers }, () => this.loop(url, key));
  }

  private async loop(url: string, key: string): Promise<void> {
    while (this.running) {
      const phase = this.phase;
      try {
        const res = await fetch(url, { headers: { "x-api-key": key } });
        const body = await res.text();
        this.answers.push({ phase, status: res.status, body, retryAfter: res.headers.get("retry-after") });
      } catch (err) {
        this.answers.push({ phase, status: 0, body: String(err), retryAfter: null });
      }
    }
  }

  count(phase: string, status: number): number {
    return this.answers.filter((a) => a.phase === phase && a.status === status).length;
  }

  async stop(): Promise<Answer[]> {
    this.running = false;
    await Promise.all(this.workers);
    return this.answers;
  }
}

/** Statuses by phase, e.g. {"redis down": {"200": 812}}: what a failed assertion shows. */
function tally(answers: Answer[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const a of answers) {
    const byStatus = (out[a.phase] ??= {});
    byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
  }
  return out;
}

/** A 503 as the README promises it: the error envelope, Retry-After: 5. */
function assertUnavailable(status: number, body: string, retryAfter: string | null): void {
  assert.equal(status, 503);
  assert.equal(retryAfter, "5");
  const parsed = JSON.parse(body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(parsed), ["success", "error", "request_id", "timestamp"]);
  assert.equal(parsed.success, false);
  assert.deepEqual(parsed.error, {
    code: "SERVICE_UNAVAILABLE",
    message: "The service cannot reach its database right now; retry shortly.",
    details: { retry_after: 5 },
  });
  assert.equal(typeof parsed.request_id, "string");
  assert.match(String(parsed.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
}

describe("one serve process while its Redis and PostgreSQL go away and come back", { skip: SKIP }, () => {
  let dir: string;
  let pgServer: OwnServer | undefined;
  let redisServer: OwnServer | undefined;
  let server: ServeProcess;
  /** The server's clock starts at the start of a minute, so that the fallback's minute below has room. */
  let clockOffset: number;
  let proKey: string;
  let starterKey: string;

  /** The CLI against the server's database, as an operator would run it beside it. */
  async function updown(...args: string[]): Promise<string> {
    const env = { ...process.env, DATABASE_URL: pgServer?.url, PLANS_FILE: join(dir, "plans.json") };
    return (await run(process.execPath, [BIN, ...args], { env })).stdout;
  }

  async function metrics(): Promise<string> {
    const res = await fetch(`${server.url}/metrics`);
    assert.equal(res.status, 200);
    return res.text();
  }

  /** A sample's value in /metrics, 0 when it has none yet; `series` is the name with its labels. */
  async function sample(series: string): Promise<number> {
    const line = (await metrics()).split("\n").find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  }

  async function withRedis<T>(work: (redis: Redis) => Promise<T>): Promise<T> {
    const redis = new Redis(redisServer?.url ?? "", { lazyConnect: true, maxRetriesPerRequest: 0 });
    await redis.connect();
    try {
      return await work(redis);
    } finally {
      redis.disconnect();
    }
  }

  /** The counter values of a key's minute windows in Redis. */
  const minuteCounters = (key: string) =>
    withRedis(async (redis) => {
      const names = await redis.keys(`updown:rl:{key:${key.slice(3, 11)}}:minute:*`);
      return Promise.all(names.map(async (n) => Number(await redis.get(n))));
    });

  function logLines(text: string): number {
    return server.output().split(text).length - 1;
  }

  before(async () => {
    if (MISSING !== null)
      throw new Error(`CI names its services, but this test cannot start its own: ${MISSING}`);
    dir = mkdtempSync(join(tmpdir(), "updown-outages-"));
    writeFileSync(
      join(dir, "plans.json"),
      JSON.stringify({
        starter: { requests_per_minute: STARTER_PER_MINUTE },
        pro: { requests_per_minute: 1_000_000, requests_per_day: 100_000_000 },
      }),
    );
    // Both started, or neither left running: a server started beside one that failed would keep this
    // process alive after its tests (after() stops only what the assignment below names).
    const [pg, redis] = await Promise.allSettled([startOwnPostgres(), startOwnRedis()]);
    if (pg.status === "fulfilled") pgServer = pg.value;
    if (redis.status === "fulfilled") redisServer = redis.value;
    if (pg.status === "rejected") throw pg.reason as Error;
    if (redis.status === "rejected") throw redis.reason as Error;
    const [ownPg, ownRedis] = [pg.value, redis.value];
    await updown("seed", "--counts", "5m=1,15m=0,1h=2,4h=0,24h=0", "--coins", "btc");
    proKey = (await updown("keys", "create", "--plan", "pro")).trim();
    starterKey = (await updown("keys", "create", "--plan", "starter")).trim();
    clockOffset = minuteStartOffset();
    server = await startServeProcess({
      CLOCK_OFFSET_MS: String(clockOffset),
      DATABASE_URL: ownPg.url,
      REDIS_URL: ownRedis.url,
      PLANS_FILE: join(dir, "plans.json"),
      LOG_LEVEL: "info",
    });
  });

  after(async () => {
    if (server && server.child.exitCode === null) server.child.kill("SIGKILL");
    await pgServer?.remove();
    await redisServer?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("Redis stopped: answers go on, limited in the process; Redis back: counters land in it again", async () => {
    const traffic = new Traffic(`${server.url}${MARKETS}`, proKey);
    try {
      await until("answers with Redis up", async () => traffic.count("start", 200) >= 20);
      assert.equal(await sample("updown_rate_limiter_degraded"), 0);
      assert.ok(
        (await minuteCounters(proKey)).some((n) => n > 0),
        "counted in Redis",
      );

      traffic.phase = "redis down";
      await redisServer!.stop();
      await until("degraded gauge 1", async () => (await sample("updown_rate_limiter_degraded")) === 1);
      await until("warning logged", async () => logLines("rate limiter: Redis unreachable") === 1);

      // The fallback still limits: a starter key gets its plan's minute and then 429, from this process.
      assert.ok(minuteLeft(clockOffset) > 3000, "the server's minute has room for the starter's requests");
      const starter: number[] = [];
      for (let i = 0; i < STARTER_PER_MINUTE + 2; i++) {
        const res = await fetch(`${server.url}${MARKETS}`, { headers: { "x-api-key": starterKey } });
        starter.push(res.status);
        if (res.status === 429) {
          const body = (await res.json()) as { error: { code: string; details: { window: string } } };
          assert.equal(body.error.code, "RATE_LIMIT_EXCEEDED");
          assert.equal(body.error.details.window, "minute");
        } else await res.arrayBuffer();
      }
      assert.deepEqual(starter, [200, 200, 200, 200, 200, 429, 429]);
      const fallback = (result: string) =>
        sample(`updown_rate_limit_decisions_total{result="${result}",limiter="fallback"}`);
      assert.ok((await fallback("refused_minute")) >= 2);
      await until("answers with Redis down", async () => traffic.count("redis down", 200) >= 20);

      traffic.phase = "redis restarting";
      await redisServer!.start();
      await until("degraded gauge 0", async () => (await sample("updown_rate_limiter_degraded")) === 0);
      traffic.phase = "redis back";
      await until("info logged", async () => logLines("rate limiter: Redis reachable again") === 1);
      // The restarted Redis kept nothing, so a counter in it was written since it came back.
      await until("pro key counted in the new Redis", async () =>
        (await minuteCounters(proKey)).some((n) => n > 0),
      );
      const res = await fetch(`${server.url}${MARKETS}`, { headers: { "x-api-key": starterKey } });
      assert.equal(res.status, 200, "the starter key is counted in Redis again, not in the full fallback");
      assert.deepEqual(await minuteCounters(starterKey), [1]);
      await until("answers with Redis back", async () => traffic.count("redis back", 200) >= 20);
    } finally {
      await traffic.stop();
    }
    const answers = traffic.answers;
    assert.ok(
      answers.every((a) => a.status === 200),
      `only 200s for a key far below its limit: ${JSON.stringify(tally(answers))}`,
    );
    assert.equal(logLines("rate limiter: Redis unreachable"), 1, "one warning for the whole outage");
    assert.equal(logLines("rate limiter: Redis reachable again"), 1);
    assert.ok((await sample('updown_rate_limit_decisions_total{result="admitted",limiter="fallback"}')) > 0);
  });

  test("PostgreSQL stopped: 503 with Retry-After, /readyz 503, /healthz 200; started again: served again", async () => {
    const traffic = new Traffic(`${server.url}${MARKETS}`, proKey);
    let recoveredIn: number;
    try {
      await until("answers with PostgreSQL up", async () => traffic.count("start", 200) >= 20);

      traffic.phase = "pg down";
      await pgServer!.stop();
      // Past the key record's second in memory, every request needs the database.
      await until("503s while PostgreSQL is down", async () => traffic.count("pg down", 503) >= 20);
      const health = await fetch(`${server.url}/healthz`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: "ok" });
      const ready = await fetch(`${server.url}/readyz`);
      assertUnavailable(ready.status, await ready.text(), ready.headers.get("retry-after"));
      assert.equal(server.child.exitCode, null, "the process is still running");

      traffic.phase = "pg restarting";
      await pgServer!.start();
      const restarted = performance.now();
      await until("/readyz 200", async () => (await fetch(`${server.url}/readyz`)).status === 200);
      traffic.phase = "pg back";
      await until("answers with PostgreSQL back", async () => traffic.count("pg back", 200) >= 20);
      recoveredIn = performance.now() - restarted;
    } finally {
      await traffic.stop();
    }
    const answers = traffic.answers;
    const shown = JSON.stringify(tally(answers));
    assert.ok(
      answers.every((a) => a.status === 200 || a.status === 503),
      `only 200 and 503: ${shown}`,
    );
    for (const a of answers.filter((x) => x.status === 503))
      assertUnavailable(a.status, a.body, a.retryAfter);
    assert.ok(
      answers.filter((a) => a.phase === "pg back").every((a) => a.status === 200),
      `served normally once back: ${shown}`,
    );
    assert.ok(recoveredIn < 5000, `recovered ${Math.round(recoveredIn)} ms after PostgreSQL started`);
    assert.ok((await sample('updown_store_errors_total{kind="unavailable"}')) > 0);
    assert.doesNotMatch(server.output(), /"level":(50|60)/, "nothing logged as an error");
  });

  // Not over HTTP: no route runs a transaction yet (the quota's charges will). A client checked out of
  // the pool has no listener of the pool's, so its lost connection must be heard by the transaction.
  test("a transaction whose connection is lost rejects as unavailable (503), and the process lives on", async () => {
    const store = new PostgresStore(pgServer!.url);
    try {
      const failed = inTransaction(store.pool, async (client) => {
        await client.query("SELECT 1");
        // Not events.once: it would listen for 'error' too, and hide what this test is about.
        const ended = new Promise((resolve) => client.once("end", resolve));
        await pgServer!.stop();
        await ended;
        await client.query("SELECT 1");
      });
      await assert.rejects(failed, (err) => isStoreUnavailable(err));
    } finally {
      if (pgServer) await pgServer.start();
      await store.close();
    }
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
  });

  test("SIGTERM: new connections refused, requests in flight finished, store and Redis closed, exit 0", async () => {
    const get = (path: string) => fetch(`${server.url}${path}`, { headers: { "x-api-key": proKey } });
    const listed = (await (await get("/v1/markets?coin=btc&market_type=1h")).json()) as {
      markets: { slug: string; winner: string | null }[];
    };
    const slug = listed.markets.find((m) => m.winner !== null)!.slug;
    const { total } = (await (await get(`/v1/markets/${slug}/snapshots?limit=1`)).json()) as {
      total: number;
    };

    // Exports read only up to their first chunk stay in flight: the server cannot finish them until read.
    // Two: as many as one key may stream at once (EXPORTS_PER_KEY's default).
    const exportPath = `/v1/markets/${slug}/snapshots/export?include_orderbook=true`;
    const exports = await Promise.all(
      Array.from({ length: 2 }, async () => {
        const res = await fetch(`${server.url}${exportPath}`, {
          headers: { "x-api-key": proKey, "accept-encoding": "identity" },
        });
        const reader = res.body!.getReader();
        const first = await reader.read();
        return { status: res.status, reader, first: Buffer.from(first.value ?? []) };
      }),
    );
    const pgAdmin = new pg.Client({ connectionString: pgServer!.url });
    await pgAdmin.connect();
    const pgConnections = async () =>
      Number(
        (
          await pgAdmin.query(
            `SELECT count(*) AS n FROM pg_stat_activity
             WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
          )
        ).rows[0].n,
      );
    const redisClients = () =>
      withRedis(async (redis) => {
        const list = (await redis.client("LIST")) as string;
        return list.trim().split("\n").length - 1; // all but this one
      });
    try {
      assert.ok((await pgConnections()) > 0, "the server holds database connections");
      assert.ok((await redisClients()) > 0, "the server holds a Redis connection");

      const exited = new Promise<[number | null, string | null]>((resolve) =>
        server.child.once("exit", (code, signal) => resolve([code, signal])),
      );
      server.child.kill("SIGTERM");
      const refused = () =>
        new Promise<boolean>((resolve) => {
          const socket = connect(server.port, "127.0.0.1");
          socket.once("connect", () => {
            socket.destroy();
            resolve(false);
          });
          socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED"));
        });
      await until("new connections refused", refused, 5000);
      assert.equal(server.child.exitCode, null, "still running: the exports are in flight");

      for (const e of exports) {
        assert.equal(e.status, 200);
        const chunks = [e.first];
        for (let c = await e.reader.read(); !c.done; c = await e.reader.read())
          chunks.push(Buffer.from(c.value));
        const lines = Buffer.concat(chunks).toString().trimEnd().split("\n");
        assert.equal(lines.length, 1 + total, "the market line and every snapshot");
        assert.match(lines.at(-1)!, /^\{"type":"snapshot"/);
      }
      // At once, not after the keep-alive timeout of the connections those exports came over.
      await until("exit once the exports are done", async () => server.child.exitCode !== null, 5000);
      assert.deepEqual(await exited, [0, null]);
      await until("no database connection left", async () => (await pgConnections()) === 0, 3000);
      await until("no Redis connection left", async () => (await redisClients()) === 0, 3000);
    } finally {
      await pgAdmin.end();
    }
  });
});
