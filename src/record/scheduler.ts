import { type Clock, systemClock } from "../domain/time.ts";

/**
 * Time for everything that records: a clock, and timers that run on it. Injected, so that tests drive
 * reconnect backoff, silence detection, the connection handover and rate-limit waits on a fake clock
 * without sleeping (test/helpers/fake-scheduler.ts).
 */
export interface Scheduler extends Clock {
  /** Runs `fn` after `ms` milliseconds; returns a function that cancels it. */
  setTimeout(fn: () => void, ms: number): () => void;
}

/**
 * Time read from `clock`, timers on the event loop's real time: for the system clock, and for a test
 * that sets its clock by hand and only needs the short real waits of a reconnect.
 */
export function schedulerOn(clock: Clock): Scheduler {
  return {
    nowMicros: () => clock.nowMicros(),
    setTimeout(fn, ms) {
      const handle = setTimeout(fn, Math.max(0, ms));
      return () => clearTimeout(handle);
    },
  };
}

export const systemScheduler: Scheduler = schedulerOn(systemClock);

/** Resolves after `ms` on the scheduler's clock. */
export function sleep(scheduler: Scheduler, ms: number): Promise<void> {
  return new Promise((resolve) => scheduler.setTimeout(resolve, ms));
}

export function nowMillis(clock: Clock): number {
  return Math.floor(clock.nowMicros() / 1000);
}
