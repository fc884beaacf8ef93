import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import type { RequestLimits } from "../../domain/plan.ts";
import {
  decisionOf,
  type LimitDecision,
  type RateLimiter,
  refusingWindow,
  type WindowName,
  windowsAt,
} from "./limiter.ts";
import { MemoryLimiter } from "./memory.ts";

/**
 * Checks both windows and counts in both, or refuses and counts nowhere, in one server-side step.
 * KEYS: minute counter, day counter. ARGV: minute limit, day limit (-1: none). Returns
 * {refused (0 none, 1 minute, 2 day), minute used, day used}. Counters expire a window after theirs.
 */
const CONSUME_SCRIPT = `
local m = tonumber(redis.call('GET', KEYS[1]) or '0')
local d = tonumber(redis.call('GET', KEYS[2]) or '0')
local ml = tonumber(ARGV[1])
local dl = tonumber(ARGV[2])
if dl >= 0 and d >= dl then return {2, m, d} end
if ml >= 0 and m >= ml then return {1, m, d} end
m = redis.call('INCR', KEYS[1])
if m == 1 then redis.call('EXPIRE', KEYS[1], 120) end
d = redis.call('INCR', KEYS[2])
if d == 1 then redis.call('EXPIRE', KEYS[2], 172800) end
return {0, m, d}
`;
const CONSUME_SHA = createHash("sha1").update(CONSUME_SCRIPT).digest("hex");

/**
 * Adds ARGV[2] units to the day counter, or refuses and counts nothing when that would pass the day
 * limit ARGV[1] (-1: none), in one server-side step. KEYS: minute counter, day counter. Returns
 * {refused (0 or 2), minute used, day used}.
 */
const CHARGE_SCRIPT = `
local m = tonumber(redis.call('GET', KEYS[1]) or '0')
local d = tonumber(redis.call('GET', KEYS[2]) or '0')
local dl = tonumber(ARGV[1])
local units = tonumber(ARGV[2])
if dl >= 0 and d + units > dl then return {2, m, d} end
d = redis.call('INCRBY', KEYS[2], units)
if d == units then redis.call('EXPIRE', KEYS[2], 172800) end
return {0, m, d}
`;
const CHARGE_SHA = createHash("sha1").update(CHARGE_SCRIPT).digest("hex");
const CONSUME = { text: CONSUME_SCRIPT, sha: CONSUME_SHA };
const CHARGE = { text: CHARGE_SCRIPT, sha: CHARGE_SHA };
const REFUSED_BY: (WindowName | null)[] = [null, "minute", "day"];

export interface RedisLimiterOptions {
  url: string;
  /** Told once when Redis fails and once when it is back; never given the subject (it holds key ids). */
  onStateChange?: (state: "degraded" | "restored", err?: Error) => void;
}

/**
 * Counters in Redis, shared by every replica. The keys of one subject share a hash tag, so the script
 * touches one slot (Redis Cluster). While Redis is unreachable, requests are limited by an in-process
 * fallback instead of failing: a replica then admits up to one plan's worth on its own.
 */
export class RedisLimiter implements RateLimiter {
  readonly kind = "redis" as const;
  readonly redis: Redis;
  private readonly fallback = new MemoryLimiter();
  private readonly onStateChange: RedisLimiterOptions["onStateChange"];
  private isDown = false;
  /** Decisions made by the fallback while Redis was away (for /metrics). */
  fallbackDecisions = 0;

  constructor(options: RedisLimiterOptions) {
    this.onStateChange = options.onStateChange;
    this.redis = new Redis(options.url, {
      lazyConnect: true,
      // Fail at once while disconnected rather than queue: the fallback answers instead.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      commandTimeout: 1000,
      retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    });
    this.redis.on("error", () => {}); // reported through onStateChange; ioredis reconnects by itself
    this.redis.on("ready", () => this.markRestored());
  }

  /** Connects; rejects when Redis cannot be reached now (the limiter still works, degraded). */
  async connect(): Promise<void> {
    await this.redis.connect();
  }

  private markDegraded(err: Error): void {
    if (this.isDown) return;
    this.isDown = true;
    this.onStateChange?.("degraded", err);
  }

  private markRestored(): void {
    if (!this.isDown) return;
    this.isDown = false;
    this.onStateChange?.("restored");
  }

  get degraded(): boolean {
    return this.isDown;
  }

  private keysOf(subject: string, nowMs: number): [string, string] {
    const { minute, day } = windowsAt(nowMs);
    return [`updown:rl:{${subject}}:m:${minute}`, `updown:rl:{${subject}}:d:${day}`];
  }

  private async run(
    script: { text: string; sha: string },
    keys: [string, string],
    args: string[],
  ): Promise<[number, number, number]> {
    try {
      return (await this.redis.evalsha(script.sha, 2, ...keys, ...args)) as [number, number, number];
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
      return (await this.redis.eval(script.text, 2, ...keys, ...args)) as [number, number, number];
    }
  }

  /** One script's decision, or the fallback's while Redis is away. */
  private async decide(
    script: { text: string; sha: string },
    subject: string,
    limits: RequestLimits,
    args: string[],
    nowMs: number,
    fallback: () => Promise<LimitDecision>,
  ): Promise<LimitDecision> {
    if (this.redis.status === "ready") {
      try {
        const [refused, minuteUsed, dayUsed] = await this.run(script, this.keysOf(subject, nowMs), args);
        this.markRestored();
        return decisionOf(limits, nowMs, minuteUsed, dayUsed, REFUSED_BY[refused]);
      } catch (err) {
        this.markDegraded(err as Error);
      }
    } else {
      this.markDegraded(new Error(`redis is ${this.redis.status}`));
    }
    this.fallbackDecisions++;
    return fallback();
  }

  consume(subject: string, limits: RequestLimits, nowMs: number): Promise<LimitDecision> {
    const args = [String(limits.perMinute ?? -1), String(limits.perDay ?? -1)];
    return this.decide(CONSUME, subject, limits, args, nowMs, () =>
      this.fallback.consume(subject, limits, nowMs),
    );
  }

  charge(subject: string, limits: RequestLimits, units: number, nowMs: number): Promise<LimitDecision> {
    const args = [String(limits.perDay ?? -1), String(units)];
    return this.decide(CHARGE, subject, limits, args, nowMs, () =>
      this.fallback.charge(subject, limits, units, nowMs),
    );
  }

  async peek(subject: string, limits: RequestLimits, nowMs: number): Promise<LimitDecision> {
    if (this.redis.status === "ready") {
      try {
        const [m, d] = await this.redis.mget(...this.keysOf(subject, nowMs));
        const minuteUsed = Number(m ?? 0);
        const dayUsed = Number(d ?? 0);
        return decisionOf(limits, nowMs, minuteUsed, dayUsed, refusingWindow(limits, minuteUsed, dayUsed));
      } catch (err) {
        this.markDegraded(err as Error);
      }
    }
    return this.fallback.peek(subject, limits, nowMs);
  }

  async close(): Promise<void> {
    await this.fallback.close();
    this.redis.disconnect();
  }
}
