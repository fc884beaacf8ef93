/**
 * Waiting, backoff and signals, written for browsers and every Node from 20.0 on: no Node imports,
 * and no `AbortSignal.any` (missing before Node 20.3), so signals are combined by hand.
 */

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/**
 * Runs an injected sleep but stops the moment `signal` aborts, whether or not the sleep itself
 * listens to it: an abort must never wait out a backoff.
 */
export function abortableSleep(sleep: Sleep, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return sleep(ms);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    sleep(ms, signal).then(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/** One attempt's signal: aborts when the caller's does, or with TIMED_OUT after `timeoutMs`. */
export interface AttemptSignal {
  signal: AbortSignal;
  timedOut(): boolean;
  /** Stops the timer and forgets the caller's signal (no listener leaks across many requests). */
  release(): void;
}

export function attemptSignal(caller: AbortSignal | undefined, timeoutMs: number): AttemptSignal {
  const controller = new AbortController();
  let timedOut = false;
  const onCallerAbort = () => controller.abort(caller?.reason);
  if (caller?.aborted) controller.abort(caller.reason);
  else caller?.addEventListener("abort", onCallerAbort, { once: true });
  const onTimeout = () => {
    timedOut = true;
    controller.abort(new DOMException("The attempt timed out", "TimeoutError"));
  };
  const timer = timeoutMs > 0 && Number.isFinite(timeoutMs) ? setTimeout(onTimeout, timeoutMs) : undefined;
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    release() {
      if (timer !== undefined) clearTimeout(timer);
      caller?.removeEventListener("abort", onCallerAbort);
    },
  };
}

/**
 * Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 10.2.3), null when absent or
 * unreadable. A date in the past is 0.
 */
export function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (header === null) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

/** Full jitter (AWS architecture blog, "Exponential Backoff And Jitter"): uniform in [0, min(cap, base * 2^n)). */
export function backoffMs(retry: number, baseMs: number, capMs: number, random: () => number): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** (retry - 1));
  return Math.floor(random() * ceiling);
}

/**
 * An Idempotency-Key: crypto.randomUUID where it exists; else a v4 UUID from getRandomValues, which
 * browsers also offer on plain-HTTP pages where randomUUID is withheld (not a secure context).
 */
export function newIdempotencyKey(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
