import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { RedisLimiter } from "../../../src/access/limiter/redis.ts";
import { LIMIT_HEADERS, makeTestApp, type TestApp } from "../../helpers/app.ts";
import { missingServerBinaries, type OwnRedis, startOwnRedis } from "../../helpers/services.ts";

// The limiter over a Redis of this test's own, frozen (SIGSTOP: the connection stays open and nothing
// answers) and killed while requests go through the app: each answer must come within a few ms, limited
// in this process (docs/plans-and-limits.md), and the shared counters must take over again once Redis
// answers. Never CI's shared Redis: it must not freeze under other tests.

const MISSING = missingServerBinaries();
const SKIP = MISSING !== null && !process.env.REDIS_URL ? MISSING : false;
const MARKETS = "/v1/markets?limit=1";
const REQUESTS = 40;
const COMMAND_TIMEOUT_MS = 50;
const BREAKER_OPEN_MS = 5000;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

describe("Redis limiter when Redis freezes or dies", { skip: SKIP, timeout: 60_000 }, () => {
  let redis: OwnRedis;
  let limiter: RedisLimiter;
  let t: TestApp;
  const states: string[] = [];
  const waiting: ((state: string) => void)[] = [];
  /** Settles at the limiter's next change of state. */
  const nextState = () => new Promise<string>((resolve) => waiting.push(resolve));

  before(async () => {
    redis = await startOwnRedis();
    limiter = new RedisLimiter({
      url: redis.url,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      breakerOpenMs: BREAKER_OPEN_MS,
      onStateChange: (s) => {
        states.push(s);
        for (const resolve of waiting.splice(0)) resolve(s);
      },
    });
    await limiter.connect();
    t = await makeTestApp({ limiter });
  });

  after(async () => {
    await t?.close();
    await limiter?.close();
    await redis?.remove();
  });

  /** `n` requests one after the other: their latencies (ms), every answer a 200 with the limit headers. */
  async function sequence(n: number): Promise<number[]> {
    const latencies: number[] = [];
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      const res = await t.get(MARKETS);
      latencies.push(performance.now() - started);
      assert.equal(res.statusCode, 200, res.body);
      for (const h of LIMIT_HEADERS) assert.ok(res.headers[h] !== undefined, `${h} missing`);
    }
    return latencies;
  }

  test("frozen: p50 under 20 ms, limited in this process; the breaker asks again after its interval; thawed: counted in Redis again", async () => {
    await sequence(5);
    assert.equal(limiter.degraded, false);

    redis.signal("SIGSTOP");
    const frozen = await sequence(REQUESTS);
    const p50 = percentile(frozen, 50);
    console.log(
      `frozen Redis: ${REQUESTS} requests, p50 ${p50.toFixed(1)} ms, p90 ${percentile(frozen, 90).toFixed(1)} ms, max ${Math.max(...frozen).toFixed(1)} ms`,
    );
    assert.ok(p50 < 20, `p50 ${p50.toFixed(1)} ms with Redis frozen`);
    // Only the first waits for the command timeout; a generous bound for a loaded machine.
    assert.ok(Math.max(...frozen) < COMMAND_TIMEOUT_MS + 1000, `max ${Math.max(...frozen).toFixed(1)} ms`);
    assert.equal(limiter.degraded, true);
    assert.deepEqual(states, ["degraded"]);

    // The fallback limits as documented: a starter key's minute, then 429 naming the minute.
    const starter = await t.keyFor("starter");
    for (let i = 0; i < 60; i++)
      assert.equal((await t.get(MARKETS, { "x-api-key": starter })).statusCode, 200);
    const refused = await t.get(MARKETS, { "x-api-key": starter });
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().error.details.window, "minute");
    assert.ok(Number(refused.headers["retry-after"]) >= 1);

    // Past the interval, still frozen: one request starts a probe and is answered at once, like those
    // after it while the probe waits; the probe times out and the breaker stays open.
    t.clock.advance(BREAKER_OPEN_MS * 1000);
    const probing = await sequence(REQUESTS);
    assert.ok(percentile(probing, 50) < 20, `p50 ${percentile(probing, 50).toFixed(1)} ms while probing`);
    assert.equal(limiter.degraded, true);

    await limiter.probeSettled();
    assert.equal(limiter.degraded, true, "the probe timed out");
    redis.signal("SIGCONT");
    // Thawed, but the interval since the failed probe has not passed: Redis is not asked yet.
    const key = await t.keyFor("starter");
    assert.equal((await t.get(MARKETS, { "x-api-key": key })).statusCode, 200);
    assert.equal(limiter.degraded, true);
    assert.deepEqual(await limiter.redis.keys(`updown:rl:{key:${key.slice(3, 11)}}:*`), []);

    t.clock.advance(BREAKER_OPEN_MS * 1000);
    const restored = nextState();
    assert.equal((await t.get(MARKETS, { "x-api-key": key })).statusCode, 200);
    assert.equal(await restored, "restored");
    assert.deepEqual(states, ["degraded", "restored"]);
    assert.equal((await t.get(MARKETS, { "x-api-key": key })).statusCode, 200);
    const counters = await limiter.redis.keys(`updown:rl:{key:${key.slice(3, 11)}}:*`);
    assert.equal(counters.length, 2, `counters in Redis after the thaw: ${counters.join(", ")}`);
  });

  test("killed: p50 under 20 ms, answered from this process; started again: counted in Redis again", async () => {
    await sequence(5);
    assert.equal(limiter.degraded, false);
    const before = states.length;

    await redis.stop();
    const down = await sequence(REQUESTS);
    const p50 = percentile(down, 50);
    console.log(
      `killed Redis: ${REQUESTS} requests, p50 ${p50.toFixed(1)} ms, p90 ${percentile(down, 90).toFixed(1)} ms, max ${Math.max(...down).toFixed(1)} ms`,
    );
    assert.ok(p50 < 20, `p50 ${p50.toFixed(1)} ms with Redis killed`);
    assert.equal(limiter.degraded, true);
    assert.deepEqual(states.slice(before), ["degraded"]);

    const restored = nextState();
    await redis.start();
    // ioredis reconnects by itself; the breaker closes when it does, whatever the clock says.
    assert.equal(await restored, "restored");
    const key = await t.keyFor("starter");
    t.clock.advance(60_000_000);
    assert.equal((await t.get(MARKETS, { "x-api-key": key })).statusCode, 200);
    assert.equal(limiter.degraded, false);
    assert.deepEqual(states.slice(before), ["degraded", "restored"]);
    const counters = await limiter.redis.keys(`updown:rl:{key:${key.slice(3, 11)}}:*`);
    assert.ok(counters.length >= 2, `counters in Redis after the restart: ${counters.join(", ")}`);
  });
});
