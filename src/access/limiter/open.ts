import type { Config } from "../../config.ts";
import { errorMessage, type Logger } from "../../log.ts";
import type { RateLimiter } from "./limiter.ts";
import { MemoryLimiter } from "./memory.ts";
import { RedisLimiter } from "./redis.ts";

/**
 * The limiter `REDIS_URL` selects: Redis when set, else this process's memory. An unreachable Redis
 * at start is logged, not fatal: the limiter runs on its fallback until Redis answers.
 */
export async function openLimiter(
  config: Pick<Config, "redisUrl" | "redisCommandTimeoutMs" | "redisBreakerOpenMs">,
  log: Logger,
): Promise<RateLimiter> {
  if (!config.redisUrl) return new MemoryLimiter();
  const limiter = new RedisLimiter({
    url: config.redisUrl,
    commandTimeoutMs: config.redisCommandTimeoutMs,
    breakerOpenMs: config.redisBreakerOpenMs,
    onStateChange: (state, err) =>
      state === "degraded"
        ? log.warn(
            { err: err?.message },
            `rate limiter: Redis unreachable (${err?.message}); limiting in this process until it returns`,
          )
        : log.info({}, "rate limiter: Redis reachable again; limits shared across replicas"),
  });
  try {
    await limiter.connect();
  } catch (err) {
    log.warn(
      { err: errorMessage(err) },
      `rate limiter: cannot reach Redis at start (${errorMessage(err)}); limiting in this process`,
    );
  }
  return limiter;
}
