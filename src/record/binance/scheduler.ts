import { type Clock, type Micros, systemClock } from "../../domain/time.ts";

/**
 * Time for the Binance recorder and backfill: the clock, and timers that run on it. Injected, so
 * that tests drive reconnect backoff, silence detection and rate-limit waits on a fake clock without
 * sleeping.
 */
export interface Scheduler extends Clock {
  /** Runs `fn` after `ms` milliseconds; returns a function that cancels it. */
  setTimeout(fn: () => void, ms: number): () => void;
}

export const systemScheduler: Scheduler = {
  nowMicros: () => systemClock.nowMicros(),
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(handle);
  },
};

/** Resolves after `ms` on the scheduler's clock. */
export function sleep(scheduler: Scheduler, ms: number): Promise<void> {
  return new Promise((resolve) => scheduler.setTimeout(resolve, ms));
}

export function nowMillis(clock: Clock): number {
  return Math.floor(clock.nowMicros() / 1000);
}

export const msToMicros = (ms: number): Micros => ms * 1000;

/** Where messages about the recorder and backfill go (the app's logger, or stderr). */
export interface BinanceLog {
  info(message: string): void;
  warn(message: string): void;
}

export const silentLog: BinanceLog = { info: () => {}, warn: () => {} };
