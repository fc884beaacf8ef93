import type { RequestLimits } from "../../domain/plan.ts";
import { decisionOf, type LimitDecision, type RateLimiter, refusingWindow, windowsAt } from "./limiter.ts";

interface Counters {
  minute: number;
  minuteUsed: number;
  day: number;
  dayUsed: number;
}

/**
 * Counters in this process. Atomic because each call runs to completion on one thread; exact for one
 * process only (several replicas each count their own, which is what REDIS_URL is for).
 */
export class MemoryLimiter implements RateLimiter {
  readonly kind = "memory" as const;
  readonly degraded = false;
  private readonly counters = new Map<string, Counters>();
  private sweptDay = -1;

  private countersOf(subject: string, nowMs: number): Counters {
    const { minute, day } = windowsAt(nowMs);
    if (day > this.sweptDay) this.sweep(day);
    let c = this.counters.get(subject);
    if (!c) {
      c = { minute, minuteUsed: 0, day, dayUsed: 0 };
      this.counters.set(subject, c);
    }
    if (c.minute !== minute) {
      c.minute = minute;
      c.minuteUsed = 0;
    }
    if (c.day !== day) {
      c.day = day;
      c.dayUsed = 0;
    }
    return c;
  }

  /** Forgets subjects not seen today, so memory follows the day's callers, not all callers ever. */
  private sweep(today: number): void {
    for (const [subject, c] of this.counters) if (c.day < today) this.counters.delete(subject);
    this.sweptDay = today;
  }

  async consume(subject: string, limits: RequestLimits, nowMs: number): Promise<LimitDecision> {
    const c = this.countersOf(subject, nowMs);
    const refused = refusingWindow(limits, c.minuteUsed, c.dayUsed);
    if (refused === null) {
      c.minuteUsed++;
      c.dayUsed++;
    }
    return decisionOf(limits, nowMs, c.minuteUsed, c.dayUsed, refused);
  }

  async charge(subject: string, limits: RequestLimits, units: number, nowMs: number): Promise<LimitDecision> {
    const c = this.countersOf(subject, nowMs);
    const refused = limits.perDay !== null && c.dayUsed + units > limits.perDay;
    if (!refused) c.dayUsed += units;
    return decisionOf(limits, nowMs, c.minuteUsed, c.dayUsed, refused ? "day" : null);
  }

  async peek(subject: string, limits: RequestLimits, nowMs: number): Promise<LimitDecision> {
    const c = this.counters.get(subject);
    const { minute, day } = windowsAt(nowMs);
    const minuteUsed = c && c.minute === minute ? c.minuteUsed : 0;
    const dayUsed = c && c.day === day ? c.dayUsed : 0;
    return decisionOf(limits, nowMs, minuteUsed, dayUsed, refusingWindow(limits, minuteUsed, dayUsed));
  }

  async close(): Promise<void> {
    this.counters.clear();
  }
}
