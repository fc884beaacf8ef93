import {
  checkCost,
  decisionOf,
  type LimitDecision,
  type RateLimiter,
  type RateWindow,
  refusingWindow,
  windowIndex,
} from "./limiter.ts";

/** How often counters of ended windows are forgotten. */
const SWEEP_EVERY_MS = 60_000;

/**
 * Counters in this process. Atomic because each call runs to completion on one thread; exact for one
 * process only (several replicas each count their own, which is what REDIS_URL is for).
 */
export class MemoryLimiter implements RateLimiter {
  readonly kind = "memory" as const;
  readonly degraded = false;
  /** Count per subject, window name and window index; with the Unix ms its window ends. */
  private readonly counters = new Map<string, { used: number; endsAt: number }>();
  private nextSweepAt = Number.NEGATIVE_INFINITY;

  private keyOf(subject: string, window: RateWindow, nowMs: number): string {
    return `${subject}\u0000${window.name}\u0000${windowIndex(window, nowMs)}`;
  }

  private usedIn(subject: string, windows: readonly RateWindow[], nowMs: number): number[] {
    return windows.map((w) => this.counters.get(this.keyOf(subject, w, nowMs))?.used ?? 0);
  }

  /** Forgets counters of windows that have ended, so memory follows the current windows' callers. */
  private sweep(nowMs: number): void {
    if (nowMs < this.nextSweepAt) return;
    for (const [key, c] of this.counters) if (c.endsAt <= nowMs) this.counters.delete(key);
    this.nextSweepAt = nowMs + SWEEP_EVERY_MS;
  }

  async limit(
    subject: string,
    windows: readonly RateWindow[],
    cost: number,
    nowMs: number,
  ): Promise<LimitDecision> {
    checkCost(cost);
    this.sweep(nowMs);
    const used = this.usedIn(subject, windows, nowMs);
    const refusing = refusingWindow(windows, used, cost);
    if (refusing === -1 && cost > 0) {
      windows.forEach((w, i) => {
        used[i] += cost;
        const endsAt = (windowIndex(w, nowMs) + 1) * w.durationMs;
        this.counters.set(this.keyOf(subject, w, nowMs), { used: used[i], endsAt });
      });
    }
    return decisionOf(windows, used, refusing, nowMs);
  }

  async peek(subject: string, windows: readonly RateWindow[], nowMs: number): Promise<LimitDecision> {
    const used = this.usedIn(subject, windows, nowMs);
    return decisionOf(windows, used, refusingWindow(windows, used, 1), nowMs);
  }

  async close(): Promise<void> {
    this.counters.clear();
  }
}
