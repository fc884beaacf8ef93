import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { Redis } from "ioredis";
import { ScratchSchemas, postgresTestUrl } from "../helpers/postgres.ts";
import {
  BIN,
  minuteLeft,
  minuteStartOffset,
  type ServeProcess,
  startServeProcess,
} from "../helpers/serve.ts";

// Two `updown serve` processes over one PostgreSQL database and one Redis, talked to over real HTTP:
// what a deployment with replicas is. Runs when CI names both servers (DATABASE_URL=postgres://...,
// REDIS_URL); once they are named, an unreachable one fails these tests rather than skipping them.

const PG_URL = postgresTestUrl();
const REDIS_URL = process.env.REDIS_URL || null;
const SKIP =
  PG_URL === null ? "DATABASE_URL is not postgres" : REDIS_URL === null ? "REDIS_URL is not set" : false;

const run = promisify(execFile);

async function stopServer(server: ServeProcess): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once("exit", resolve));
  server.child.kill("SIGTERM");
  assert.equal(await exited, 0, server.output());
}

interface Answer {
  status: number;
  code: string | null;
}

async function get(base: string, path: string, key: string): Promise<Answer> {
  const res = await fetch(`${base}${path}`, { headers: { "x-api-key": key } });
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, code: body.error?.code ?? null };
}

interface Posted {
  status: number;
  code: string | null;
  body: { strategy: { id: string }; quota: { used: number } };
}

async function post(
  base: string,
  path: string,
  payload: object,
  key: string,
  headers: Record<string, string> = {},
): Promise<Posted> {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json", ...headers },
    body: JSON.stringify(payload),
  });
  const body = (await res.json()) as Posted["body"] & { error?: { code: string } };
  return { status: res.status, code: body.error?.code ?? null, body };
}

describe("two serve processes over one PostgreSQL and one Redis", { skip: SKIP, timeout: 60_000 }, () => {
  const schemas = new ScratchSchemas(PG_URL ?? "");
  let databaseUrl: string;
  let redis: Redis;
  const servers: ServeProcess[] = [];
  /** Both servers' clocks start at the start of a minute, so that the burst below falls in one. */
  let clockOffset: number;

  /** The CLI against the replicas' database, as an operator would run it beside them. */
  async function updown(...args: string[]): Promise<string> {
    const { stdout } = await run(process.execPath, [BIN, ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
    });
    return stdout;
  }

  before(async () => {
    // No retries: an unreachable Redis fails this suite at once, with the reason.
    redis = new Redis(REDIS_URL ?? "", {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    const errors: Error[] = [];
    redis.on("error", (err: Error) => errors.push(err));
    await redis.connect().catch((err: Error) => {
      throw new Error(`REDIS_URL cannot be reached: ${(errors[0] ?? err).message}`);
    });
    databaseUrl = await schemas.create();
    await updown("seed", "--counts", "5m=2,15m=1,1h=0,4h=0,24h=0", "--coins", "btc");
    clockOffset = minuteStartOffset();
    const env = {
      CLOCK_OFFSET_MS: String(clockOffset),
      DATABASE_URL: databaseUrl,
      REDIS_URL: REDIS_URL ?? "",
      LOG_LEVEL: "warn",
      // Polling a revoked key makes failed authentications; they must not be throttled here, whatever
      // other tests left in the shared Redis for this address this minute.
      AUTH_FAILURES_PER_MINUTE: "1000000",
      // The burst of charges below queues on one key's quota row, one transaction after another; with
      // the suite's other files sharing two cores that queue can outlast the default 2 s wait for a
      // pooled connection, which answers 503 by design. This suite counts charges, not that wait.
      PG_ACQUIRE_TIMEOUT_MS: "30000",
    };
    // One after the other, so that a failed start leaves no process unstopped.
    for (let i = 0; i < 2; i++) servers.push(await startServeProcess(env));
  });

  after(async () => {
    await Promise.all(servers.map(stopServer));
    redis?.disconnect();
    await schemas.dropAll();
  });

  test("300 concurrent requests over both: exactly 60 answered 200 and 240 answered 429", async () => {
    const key = (await updown("keys", "create", "--plan", "starter")).trim();
    assert.ok(minuteLeft(clockOffset) > 5000, "the servers' minute has room for the burst");
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) => get(servers[i % 2].url, "/v1/markets?limit=1", key)),
    );
    const tally = new Map<string, number>();
    for (const a of answers)
      tally.set(`${a.status} ${a.code}`, (tally.get(`${a.status} ${a.code}`) ?? 0) + 1);
    assert.deepEqual(
      Object.fromEntries(tally),
      { "200 null": 60, "429 RATE_LIMIT_EXCEEDED": 240 },
      "both replicas admitted from one shared count",
    );
    const id = key.slice(3, 11);
    const [minute] = await redis.keys(`updown:rl:{key:${id}}:minute:*`);
    const [day] = await redis.keys(`updown:rl:{key:${id}}:day:*`);
    assert.equal(await redis.get(minute), "60");
    assert.equal(await redis.get(day), "60", "refusals count nowhere");
  });

  test("a key created while both run is accepted by both at once; revoked, refused by both within a second", async () => {
    const [a, b] = servers;
    // Enterprise: no per-minute limit, so that polling as fast as answers come is never refused for it.
    const key = (await updown("keys", "create", "--plan", "enterprise")).trim();
    assert.equal((await get(a.url, "/v1/markets?limit=1", key)).status, 200);
    assert.equal((await get(b.url, "/v1/markets?limit=1", key)).status, 200);

    // B keeps reading the key while it is revoked, so that it holds as fresh a record as can be when the
    // revocation lands, and may keep it for up to a second after.
    assert.equal((await get(b.url, "/v1/markets?limit=1", key)).status, 200);
    let revoking = true;
    const during: number[] = [];
    const polling = (async () => {
      while (revoking) during.push((await get(b.url, "/v1/markets?limit=1", key)).status);
    })();
    await updown("keys", "revoke", key.slice(3, 11));
    const revokedAt = performance.now();
    revoking = false;
    await polling;
    assert.ok(during.length > 0 && during.every((s) => s === 200 || s === 401), String(during));
    const refusedWithin = async (base: string): Promise<number> => {
      for (;;) {
        const answer = await get(base, "/v1/markets?limit=1", key);
        const elapsed = performance.now() - revokedAt;
        if (answer.status === 401) {
          assert.equal(answer.code, "UNAUTHORIZED");
          return elapsed;
        }
        assert.equal(answer.status, 200, "a revoked key is either still cached or refused");
        assert.ok(elapsed < 1500, `still accepted ${Math.round(elapsed)} ms after the revocation`);
      }
    };
    const [elapsedA, elapsedB] = await Promise.all([refusedWithin(a.url), refusedWithin(b.url)]);
    assert.ok(elapsedA < 1500 && elapsedB < 1500);
    // Once refused, refused for good: the record read again from the store says revoked.
    for (const s of servers) assert.equal((await get(s.url, "/v1/markets?limit=1", key)).status, 401);
  });

  test("50 concurrent generate calls over both on a fresh pro key: exactly 5 succeed, 45 are 429 BACKTEST_AI_QUOTA_EXCEEDED", async () => {
    const key = (await updown("keys", "create", "--plan", "pro")).trim();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        post(servers[i % 2].url, "/v1/backtest-ai/generate", { preset: "dip_buying" }, key),
      ),
    );
    const tally = new Map<string, number>();
    for (const a of answers)
      tally.set(`${a.status} ${a.code}`, (tally.get(`${a.status} ${a.code}`) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(tally), { "200 null": 5, "429 BACKTEST_AI_QUOTA_EXCEEDED": 45 });
    for (const s of servers) {
      const quota = await fetch(`${s.url}/v1/backtest-ai/quota`, { headers: { "x-api-key": key } });
      assert.equal(((await quota.json()) as { used: number }).used, 5);
    }
  });

  test("a retry at the other replica with the same Idempotency-Key gets the first strategy, charged once", async () => {
    const key = (await updown("keys", "create", "--plan", "pro")).trim();
    const idem = { "idempotency-key": "across-replicas" };
    const [a, b] = servers;
    const first = await post(a.url, "/v1/backtest-ai/generate", { prompt: "buy up below 40c" }, key, idem);
    const again = await post(b.url, "/v1/backtest-ai/generate", { prompt: "buy up below 40c" }, key, idem);
    assert.deepEqual([first.status, again.status], [200, 200]);
    assert.equal(again.body.strategy.id, first.body.strategy.id);
    assert.equal(again.body.quota.used, 1);
  });
});
