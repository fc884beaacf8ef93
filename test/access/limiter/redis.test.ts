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

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

describe("Redis limiter when Redis freezes or dies", { skip: SKIP, timeout: 60_000 }, () => {
  let redis: OwnRedis;
  let limiter: RedisLimiter;
  let t: TestApp;
  const states: string[] = [];

  before(async () => {
    redis = await startOwnRedis();
    limiter = new RedisLimiter({ url: redis.url, onStateChange: (s) => states.push(s) });
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

  test("frozen: p50 under 20 ms, answered from this process; thawed: counted in Redis again", async () => {
    await sequence(5);
    assert.equal(limiter.degraded, false);

    redis.signal("SIGSTOP");
    const frozen = await sequence(REQUESTS);
    const p50 = percentile(frozen, 50);
    console.log(
      `frozen Redis: ${REQUESTS} requests, p50 ${p50.toFixed(1)} ms, p90 ${percentile(frozen, 90).toFixed(1)} ms, max ${Math.max(...frozen).toFixed(1)} ms`,
    );
    assert.ok(p50 < 20, `p50 ${p50.toFixed(1)} ms with Redis frozen`);
    assert.equal(limiter.degraded, true);
    assert.deepEqual(states, ["degraded"]);

    redis.signal("SIGCONT");
    // A fresh key, so that what lands in Redis was counted after the thaw.
    const key = await t.keyFor("starter");
    t.clock.advance(60_000_000);
    for (let i = 0; limiter.degraded; i++) {
      assert.ok(i < 200, "still degraded after 200 requests since the thaw");
      t.clock.advance(1_000_000);
      assert.equal((await t.get(MARKETS, { "x-api-key": key })).statusCode, 200);
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.deepEqual(states, ["degraded", "restored"]);
    const res = await t.get(MARKETS, { "x-api-key": key });
    assert.equal(res.statusCode, 200);
    const counters = await limiter.redis.keys(`updown:rl:{key:${key.slice(3, 11)}}:*`);
    assert.ok(counters.length >= 2, `counters in Redis after the thaw: ${counters.join(", ")}`);
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

    await redis.start();
    await new Promise((resolve) => limiter.redis.once("ready", resolve));
    const key = await t.keyFor("starter");
    t.clock.advance(60_000_000);
    assert.equal((await t.get(MARKETS, { "x-api-key": key })).statusCode, 200);
    assert.equal(limiter.degraded, false);
    assert.deepEqual(states.slice(before), ["degraded", "restored"]);
    const counters = await limiter.redis.keys(`updown:rl:{key:${key.slice(3, 11)}}:*`);
    assert.ok(counters.length >= 2, `counters in Redis after the restart: ${counters.join(", ")}`);
  });
});
