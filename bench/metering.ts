/**
 * The cost of authentication and rate limiting (issue 3): the same small endpoint (one market
 * record) served by three apps over the same store: metered with the in-process limiter, metered
 * with Redis, and unmetered (no key check, no counting). Ratio = metered req/s / unmetered req/s, the
 * unmetered app measured right before and right after each metered one.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import type { FastifyInstance } from "fastify";
import { KeyService } from "../src/access/keys.ts";
import type { RateLimiter } from "../src/access/limiter/limiter.ts";
import { MemoryLimiter } from "../src/access/limiter/memory.ts";
import { RedisLimiter } from "../src/access/limiter/redis.ts";
import { loadPlans } from "../src/access/plans.ts";
import { systemClock } from "../src/domain/time.ts";
import { buildApp } from "../src/http/app.ts";
import type { Store } from "../src/store/ports/store.ts";
import type { LoadJob, LoadResult } from "./load.ts";

const METERING_TARGETS = { memory: 0.7, redis: 0.4 } as const;

export interface MeteringResult {
  limiter: "memory" | "redis";
  path: string;
  reqPerSec: number;
  p99Ms: number;
  unmeteredBefore: number;
  unmeteredAfter: number;
  ratio: number;
  target: number;
  pass: boolean;
  non2xx: number;
}

interface Load {
  run(job: LoadJob): Promise<LoadResult>;
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (!address || typeof address === "string") throw new Error("no server address");
  return `http://127.0.0.1:${address.port}`;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** REDIS_URL, else a redis-server of our own on a free port, else null (the Redis row is skipped). */
async function benchRedis(): Promise<{ url: string; stop: () => void } | null> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: () => {} };
  const port = await freePort();
  let child: ChildProcess;
  try {
    child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      {
        stdio: "ignore",
      },
    );
    await new Promise<void>((resolve, reject) => {
      child.once("error", reject);
      child.once("spawn", resolve);
    });
  } catch {
    return null;
  }
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    const probe = new RedisLimiter({ url });
    try {
      await probe.connect();
      await probe.close();
      return { url, stop: () => child.kill() };
    } catch {
      await probe.close();
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  child.kill();
  return null;
}

export async function measureMetering(options: {
  store: Store;
  slug: string;
  load: Load;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  log: (line: string) => void;
}): Promise<MeteringResult[]> {
  const { store, load, seconds, warmupSeconds, connections, log } = options;
  const path = `/v1/markets/${options.slug}`;
  // An enterprise key with limits far above what the run can reach: both windows are checked and
  // counted on every request, as for any plan, and none is refused.
  const { key } = await new KeyService(store.keys, systemClock, loadPlans()).create({
    plan: "enterprise",
    account: "bench-metering",
    perMinuteLimit: 1_000_000_000,
    perDayLimit: 1_000_000_000,
  });
  const headers = { "x-api-key": key };
  const job = (origin: string, secs: number): LoadJob => ({
    origin,
    headers,
    seconds: secs,
    connections,
    path,
  });
  const measure = async (origin: string) => {
    if (warmupSeconds > 0) await load.run(job(origin, warmupSeconds));
    return load.run(job(origin, seconds));
  };

  const unmetered = await buildApp({ store, logger: false, unmetered: true });
  const unmeteredOrigin = await listen(unmetered);
  const redis = await benchRedis();
  const limiters: [MeteringResult["limiter"], () => Promise<RateLimiter>][] = [
    ["memory", async () => new MemoryLimiter()],
  ];
  if (redis) {
    limiters.push([
      "redis",
      async () => {
        const limiter = new RedisLimiter({ url: redis.url });
        await limiter.connect();
        return limiter;
      },
    ]);
  } else {
    log("  metering, redis: skipped (no REDIS_URL and no redis-server on PATH)");
  }

  const results: MeteringResult[] = [];
  try {
    for (const [name, open] of limiters) {
      const limiter = await open();
      const app = await buildApp({ store, logger: false, limiter });
      try {
        const origin = await listen(app);
        const check = await fetch(origin + path, { headers });
        if (check.status !== 200) throw new Error(`${path}: ${check.status}`);
        const before = await measure(unmeteredOrigin);
        const main = await measure(origin);
        const after = await measure(unmeteredOrigin);
        const baseline = (before.reqPerSec + after.reqPerSec) / 2;
        const ratio = main.reqPerSec / baseline;
        const target = METERING_TARGETS[name];
        results.push({
          limiter: name,
          path,
          reqPerSec: main.reqPerSec,
          p99Ms: main.p99Ms,
          unmeteredBefore: before.reqPerSec,
          unmeteredAfter: after.reqPerSec,
          ratio,
          target,
          pass: ratio >= target,
          non2xx: main.non2xx + before.non2xx + after.non2xx,
        });
        log(
          `  metering, ${name}: ${Math.round(main.reqPerSec)} req/s vs ${Math.round(before.reqPerSec)} / ${Math.round(after.reqPerSec)} unmetered -> ${ratio.toFixed(3)} (target >= ${target})`,
        );
      } finally {
        await app.close();
        await limiter.close();
      }
    }
  } finally {
    await unmetered.close();
    redis?.stop();
  }
  return results;
}
