import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import { OPTIONS } from "../../config/options.ts";
import {
  checkCost,
  decisionOf,
  type LimitDecision,
  type RateLimiter,
  type RateWindow,
  windowIndex,
} from "./limiter.ts";
import { MemoryLimiter } from "./memory.ts";

/**
 * `refusingWindow` and `MemoryLimiter.limit` (limiter.ts, memory.ts) as one server-side step over N
 * windows. KEYS: one counter per window. ARGV: cost, apply (1: add the cost when nothing refuses; 0:
 * only look), then per window its limit (-1: none) and its duration in ms. Returns {refusing window
 * (1-based, 0: none), used per window}. A counter lives two of its windows, then expires.
 */
const LIMIT_SCRIPT = `
local cost = tonumber(ARGV[1])
local apply = ARGV[2] == '1'
local used = {}
local refusing = 0
for i = 1, #KEYS do
  used[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  local limit = tonumber(ARGV[1 + 2 * i])
  local duration = tonumber(ARGV[2 + 2 * i])
  if limit >= 0 and used[i] + cost > limit then
    if refusing == 0 or duration > tonumber(ARGV[2 + 2 * refusing]) then refusing = i end
  end
end
if apply and refusing == 0 and cost > 0 then
  for i = 1, #KEYS do
    used[i] = redis.call('INCRBY', KEYS[i], cost)
    if used[i] == cost then redis.call('PEXPIRE', KEYS[i], 2 * tonumber(ARGV[2 + 2 * i])) end
  end
end
return {refusing, unpack(used)}
`;
const LIMIT_SHA = createHash("sha1").update(LIMIT_SCRIPT).digest("hex");

export interface RedisLimiterOptions {
  url: string;
  /** How long (ms) a command may go unanswered before the call is decided in this process (default: REDIS_COMMAND_TIMEOUT_MS's). */
  commandTimeoutMs?: number;
  /**
   * How long (ms, by the callers' clock) the breaker stays open after a failure before a probe asks
   * Redis again; calls meanwhile are decided in this process at once.
   */
  breakerOpenMs?: number;
  /** Told once when Redis fails and once when it is back; never given the subject (it holds key ids). */
  onStateChange?: (state: "degraded" | "restored", err?: Error) => void;
}

/**
 * Counters in Redis, shared by every replica. The keys of one subject share a hash tag, so the script
 * touches one slot (Redis Cluster). While Redis is unreachable, calls are decided by an in-process
 * fallback instead of failing: a replica then admits up to one plan's worth on its own.
 *
 * A circuit breaker keeps an outage from costing every request a timeout: a command that fails or
 * goes unanswered for `commandTimeoutMs` opens it; while open, calls go to the fallback without
 * touching Redis; `breakerOpenMs` later one call starts a probe (PING) in the background, and the
 * breaker closes when Redis answers it (or reconnects). Only calls in flight when Redis stops wait.
 */
export class RedisLimiter implements RateLimiter {
  readonly kind = "redis" as const;
  readonly redis: Redis;
  private readonly fallback = new MemoryLimiter();
  private readonly onStateChange: RedisLimiterOptions["onStateChange"];
  private readonly breakerOpenMs: number;
  private readonly commandTimeoutMs: number;
  /** The callers' time (ms) the breaker opened at, or null while closed. */
  private openedAt: number | null = null;
  /** The PING asking a failed Redis again, while one is out. */
  private probe: Promise<void> | null = null;
  /** Decisions made by the fallback while Redis was away (for /metrics). */
  fallbackDecisions = 0;

  constructor(options: RedisLimiterOptions) {
    this.onStateChange = options.onStateChange;
    this.breakerOpenMs = options.breakerOpenMs ?? OPTIONS.redisBreakerOpenMs.default;
    this.commandTimeoutMs = options.commandTimeoutMs ?? OPTIONS.redisCommandTimeoutMs.default;
    this.redis = new Redis(options.url, {
      lazyConnect: true,
      // Fail at once while disconnected rather than queue: the fallback answers instead.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      // ioredis's own timeout only drops commands a frozen Redis never answers; the breaker trips on
      // this.commandTimeoutMs, judged by answered() below.
      commandTimeout: Math.max(2000, 4 * this.commandTimeoutMs),
      retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    });
    this.redis.on("error", () => {}); // reported through onStateChange; ioredis reconnects by itself
    this.redis.on("ready", () => this.closeBreaker());
  }

  /** Connects; rejects when Redis cannot be reached now (the limiter still works, degraded). */
  async connect(): Promise<void> {
    await this.redis.connect();
  }

  /** Settles when the probe out now (if any) has its answer or its timeout. */
  async probeSettled(): Promise<void> {
    await this.probe;
  }

  get degraded(): boolean {
    return this.openedAt !== null;
  }

  private open(err: Error, nowMs: number): void {
    const wasClosed = this.openedAt === null;
    this.openedAt = nowMs;
    if (wasClosed) this.onStateChange?.("degraded", err);
  }

  private closeBreaker(): void {
    if (this.openedAt === null) return;
    this.openedAt = null;
    this.onStateChange?.("restored");
  }

  /** Whether this call may use Redis; starts a probe when the breaker has been open long enough. */
  private mayUseRedis(nowMs: number): boolean {
    if (this.redis.status !== "ready") {
      this.open(new Error(`redis is ${this.redis.status}`), nowMs);
      return false;
    }
    if (this.openedAt === null) return true;
    if (this.probe === null && nowMs - this.openedAt >= this.breakerOpenMs) {
      this.probe = this.answered(this.redis.ping())
        .then(
          () => this.closeBreaker(),
          (err: Error) => this.open(err, nowMs),
        )
        .finally(() => {
          this.probe = null;
        });
    }
    return false;
  }

  /**
   * The command's answer, or a rejection once `commandTimeoutMs` has passed without one. The timer's
   * verdict waits for the event loop's next poll: after a busy stretch of this process (event-loop lag,
   * not Redis) the timer and the answer are ready together, timers run first, and without that turn a
   * loaded server would trip the breaker on answers already in its socket.
   */
  private answered<T>(command: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(
        () =>
          setImmediate(() => {
            if (settled) return;
            settled = true;
            reject(new Error(`Redis did not answer within ${this.commandTimeoutMs} ms`));
          }),
        this.commandTimeoutMs,
      );
      command.then(
        (value) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  private keysOf(subject: string, windows: readonly RateWindow[], nowMs: number): string[] {
    return windows.map((w) => `updown:rl:{${subject}}:${w.name}:${windowIndex(w, nowMs)}`);
  }

  private async run(keys: string[], args: (string | number)[]): Promise<number[]> {
    try {
      return (await this.answered(this.redis.evalsha(LIMIT_SHA, keys.length, ...keys, ...args))) as number[];
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
      return (await this.answered(this.redis.eval(LIMIT_SCRIPT, keys.length, ...keys, ...args))) as number[];
    }
  }

  /** The script's decision, or the fallback's while Redis is away. */
  private async decide(
    subject: string,
    windows: readonly RateWindow[],
    cost: number,
    apply: boolean,
    nowMs: number,
    fallback: () => Promise<LimitDecision>,
  ): Promise<LimitDecision> {
    if (this.mayUseRedis(nowMs)) {
      const args: (string | number)[] = [cost, apply ? 1 : 0];
      for (const w of windows) args.push(w.limit ?? -1, w.durationMs);
      try {
        const [refusing, ...used] = await this.run(this.keysOf(subject, windows, nowMs), args);
        return decisionOf(windows, used, refusing - 1, nowMs);
      } catch (err) {
        this.open(err as Error, nowMs);
      }
    }
    this.fallbackDecisions++;
    return fallback();
  }

  async limit(
    subject: string,
    windows: readonly RateWindow[],
    cost: number,
    nowMs: number,
  ): Promise<LimitDecision> {
    checkCost(cost);
    return this.decide(subject, windows, cost, true, nowMs, () =>
      this.fallback.limit(subject, windows, cost, nowMs),
    );
  }

  peek(subject: string, windows: readonly RateWindow[], nowMs: number): Promise<LimitDecision> {
    return this.decide(subject, windows, 1, false, nowMs, () => this.fallback.peek(subject, windows, nowMs));
  }

  async close(): Promise<void> {
    await this.fallback.close();
    this.redis.disconnect();
  }
}
