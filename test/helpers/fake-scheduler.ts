import type { Scheduler } from "../../src/record/scheduler.ts";

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** Lets pending I/O callbacks and promise chains run (a turn of the event loop, not a wait on time). */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A clock and timers that move only when told: `advance(ms)` runs every timer due within it, in
 * order, with the clock set to each one's time. With `auto`, a timer fires as soon as the event loop
 * is free, the clock jumping to its time: waits take no real time and are recorded in `delays`.
 */
export class FakeScheduler implements Scheduler {
  private nowMs: number;
  private seq = 0;
  private timers: Timer[] = [];
  readonly auto: boolean;
  /** Every delay asked for, in order. */
  readonly delays: number[] = [];

  constructor(startMs: number, options: { auto?: boolean } = {}) {
    this.nowMs = startMs;
    this.auto = options.auto ?? false;
  }

  nowMicros(): number {
    return this.nowMs * 1000;
  }

  setTimeout(fn: () => void, ms: number): () => void {
    const timer: Timer = { at: this.nowMs + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    this.delays.push(ms);
    if (this.auto) {
      setImmediate(() => {
        if (timer.cancelled) return;
        this.timers = this.timers.filter((t) => t !== timer);
        this.nowMs = Math.max(this.nowMs, timer.at);
        timer.fn();
      });
    }
    return () => {
      timer.cancelled = true;
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Moves the clock forward by `ms`, running the timers that come due, each after I/O settles. */
  async advance(ms: number): Promise<void> {
    const target = this.nowMs + ms;
    for (;;) {
      await settle();
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.nowMs = Math.max(this.nowMs, due.at);
      due.fn();
    }
    this.nowMs = target;
    await settle();
  }

  /** Timers waiting, for assertions. */
  get pending(): number {
    return this.timers.length;
  }
}
