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

/** A subject's count in one window: its name, which window of its duration, and the Unix ms it ends. */
interface Counter {
  name: string;
  index: number;
  used: number;
  endsAt: number;
}

/**
 * Counters in this process. Atomic because each call runs to completion on one thread; exact for one
 * process only (several replicas each count their own, which is what REDIS_URL is for).
 */
export class MemoryLimiter implements RateLimiter {
  readonly kind = "memory" as const;
  readonly degraded = false;
  /**
   * Counters per subject, a short list each (a window per name and index not yet swept): found by the
   * subject alone, without building a string per window and call.
   */
  private readonly counters = new Map<string, Counter[]>();
  private nextSweepAt = Number.NEGATIVE_INFINITY;

  private counterOf(counters: Counter[] | undefined, window: RateWindow, nowMs: number): Counter | undefined {
    if (counters === undefined) return undefined;
    const index = windowIndex(window, nowMs);
    for (const c of counters) if (c.index === index && c.name === window.name) return c;
    return undefined;
  }

  private usedIn(subject: string, windows: readonly RateWindow[], nowMs: number): number[] {
    const counters = this.counters.get(subject);
    return windows.map((w) => this.counterOf(counters, w, nowMs)?.used ?? 0);
  }

  /** Forgets counters of windows that have ended, so memory follows the current windows' callers. */
  private sweep(nowMs: number): void {
    if (nowMs < this.nextSweepAt) return;
    for (const [subject, counters] of this.counters) {
      const current = counters.filter((c) => c.endsAt > nowMs);
      if (current.length === 0) this.counters.delete(subject);
      else if (current.length < counters.length) this.counters.set(subject, current);
    }
    this.nextSweepAt = nowMs + SWEEP_EVERY_MS;
  }

  async limit(
    subject: string,
    windows: readonly RateWindow[],
    cost: number,
    nowMs: number,
  ): Promise<LimitDecision> {
    return this.limitNow(subject, windows, cost, nowMs);
  }

  limitNow(subject: string, windows: readonly RateWindow[], cost: number, nowMs: number): LimitDecision {
    checkCost(cost);
    this.sweep(nowMs);
    const used = this.usedIn(subject, windows, nowMs);
    const refusing = refusingWindow(windows, used, cost);
    if (refusing === -1 && cost > 0) {
      let counters = this.counters.get(subject);
      if (counters === undefined) {
        counters = [];
        this.counters.set(subject, counters);
      }
      for (let i = 0; i < windows.length; i++) {
        const w = windows[i];
        used[i] += cost;
        const counter = this.counterOf(counters, w, nowMs);
        if (counter) {
          counter.used = used[i];
        } else {
          const index = windowIndex(w, nowMs);
          counters.push({ name: w.name, index, used: used[i], endsAt: (index + 1) * w.durationMs });
        }
      }
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
