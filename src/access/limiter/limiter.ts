import type { RequestLimits } from "../../domain/plan.ts";

/**
 * Rate limiting in two calendar-aligned windows: the UTC minute and the UTC day (DESIGN 3.2).
 * Implementations side by side: memory.ts (one process) and redis.ts (shared by replicas).
 *
 * Invariants every implementation keeps:
 * - `consume` checks both windows and counts the request in both, or in neither, as one atomic step;
 * - a rejected request counts nowhere, so a minute rejection never spends the day's allowance;
 * - a window with a null limit never rejects but still counts, so usage can be reported;
 * - `charge` adds several units to the day window alone, all or none, in one atomic step;
 * - time comes from the caller (the app's injected clock), never from the limiter's own machine.
 */
export interface RateLimiter {
  readonly kind: "memory" | "redis";
  /** True while a shared limiter cannot reach its backend and decides in this process instead. */
  readonly degraded: boolean;
  consume(subject: string, limits: RequestLimits, nowMs: number): Promise<LimitDecision>;
  /**
   * Counts `units` more in the day window (not the minute's), or refuses and counts nothing when the
   * day has fewer than `units` left: what a request that costs more than one (a bulk export, DESIGN
   * 3.8) pays beyond its own count, before its first byte.
   */
  charge(subject: string, limits: RequestLimits, units: number, nowMs: number): Promise<LimitDecision>;
  /** The windows as they stand, counting nothing; `admitted` tells whether one more would be. */
  peek(subject: string, limits: RequestLimits, nowMs: number): Promise<LimitDecision>;
  close(): Promise<void>;
}

export type WindowName = "minute" | "day";

export interface WindowState {
  used: number;
  limit: number | null;
  /** Unix seconds at which the window resets. */
  resetAt: number;
}

export interface LimitDecision {
  admitted: boolean;
  /** The window that refused, when not admitted. */
  rejectedBy: WindowName | null;
  minute: WindowState;
  day: WindowState;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** Which minute and which day (counted from the epoch) an instant falls in. */
export function windowsAt(nowMs: number): { minute: number; day: number } {
  return { minute: Math.floor(nowMs / MINUTE_MS), day: Math.floor(nowMs / DAY_MS) };
}

/** The decision for counts read (or just written) in the windows of `nowMs`. */
export function decisionOf(
  limits: RequestLimits,
  nowMs: number,
  minuteUsed: number,
  dayUsed: number,
  rejectedBy: WindowName | null,
): LimitDecision {
  const { minute, day } = windowsAt(nowMs);
  return {
    admitted: rejectedBy === null,
    rejectedBy,
    minute: { used: minuteUsed, limit: limits.perMinute, resetAt: ((minute + 1) * MINUTE_MS) / 1000 },
    day: { used: dayUsed, limit: limits.perDay, resetAt: ((day + 1) * DAY_MS) / 1000 },
  };
}

/** The window that refuses one more request, the day first: its wait is the longer one to report. */
export function refusingWindow(
  limits: RequestLimits,
  minuteUsed: number,
  dayUsed: number,
): WindowName | null {
  if (limits.perDay !== null && dayUsed >= limits.perDay) return "day";
  if (limits.perMinute !== null && minuteUsed >= limits.perMinute) return "minute";
  return null;
}
