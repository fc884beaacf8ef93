import { RedisLimiter } from "../../src/access/limiter/redis.ts";

/**
 * The Redis that CI starts (REDIS_URL), or null on a machine without one. When REDIS_URL is set the
 * Redis suites run and fail if it cannot be reached; they never skip then.
 */
export const TEST_REDIS_URL = process.env.REDIS_URL || null;

export const SKIP_WITHOUT_REDIS = TEST_REDIS_URL ? false : "REDIS_URL is not set";

/** A connected limiter; throws (failing the test) when the configured Redis is unreachable. */
export async function openRedisLimiter(url = TEST_REDIS_URL): Promise<RedisLimiter> {
  if (!url) throw new Error("REDIS_URL is not set");
  const limiter = new RedisLimiter({ url });
  await limiter.connect();
  return limiter;
}
