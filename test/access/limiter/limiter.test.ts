import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MemoryLimiter } from "../../../src/access/limiter/memory.ts";
import { RedisLimiter } from "../../../src/access/limiter/redis.ts";
import { openRedisLimiter, SKIP_WITHOUT_REDIS } from "../../helpers/redis.ts";
import { limiterContract } from "./contract.ts";

limiterContract("memory", async () => new MemoryLimiter());
limiterContract("redis", () => openRedisLimiter(), SKIP_WITHOUT_REDIS);

describe("Redis limiter without Redis", () => {
  test("limits in this process instead of failing, and says so once", async () => {
    const states: string[] = [];
    // Nothing listens on port 1: every attempt is refused at once.
    const limiter = new RedisLimiter({ url: "redis://127.0.0.1:1", onStateChange: (s) => states.push(s) });
    await assert.rejects(limiter.connect());
    const limits = [{ name: "minute", durationMs: 60_000, limit: 2 }];
    const now = Date.UTC(2026, 6, 24);
    const admitted = [];
    for (let i = 0; i < 3; i++) admitted.push((await limiter.limit("k", limits, 1, now)).admitted);
    assert.deepEqual(admitted, [true, true, false]);
    assert.equal(limiter.degraded, true);
    assert.equal(limiter.fallbackDecisions, 3);
    assert.deepEqual(states, ["degraded"]);
    await limiter.close();
  });
});
