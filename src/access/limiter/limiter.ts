/**
 * Rate limiting over windows given as data (DESIGN 3.2), as unkey's limiter does: a call names its
 * windows (each a name, a calendar-aligned duration and a limit or none) and a cost. Implementations
 * side by side: memory.ts (one process) and redis.ts (shared by replicas, its Lua script mirroring
 * `refusingWindow` below).
 *
 * Invariants every implementation keeps:
 * - `limit` checks every window and adds the cost to every one, or to none, as one atomic step;
 * - a refused call counts nowhere, so a minute's refusal never spends the day's allowance;
 * - a window with a null limit never refuses but still counts, so usage can be reported;
 * - time comes from the caller (the app's injected clock), never from the limiter's own machine.
 */
export interface RateLimiter {
  readonly kind: "memory" | "redis";
  /** True while a shared limiter cannot reach its backend and decides in this process instead. */
  readonly degraded: boolean;
  /** Adds `cost` to every window of `subject`, or refuses and adds nothing when one has less left. */
  limit(subject: string, windows: readonly RateWindow[], cost: number, nowMs: number): Promise<LimitDecision>;
  /**
   * limit() decided at once, for a limiter that needs no round trip (memory.ts); absent on one that
   * does. A cached page's answer (cached-page-answers.ts) takes it to skip a promise.
   */
  limitNow?(subject: string, windows: readonly RateWindow[], cost: number, nowMs: number): LimitDecision;
  /** The windows as they stand, counting nothing; `admitted` tells whether a cost of one would be. */
  peek(subject: string, windows: readonly RateWindow[], nowMs: number): Promise<LimitDecision>;
  close(): Promise<void>;
}

/** A window a call is counted in. */
export interface RateWindow {
  /** What the window is called in answers (`minute`, `day`); one name, one duration. */
  readonly name: string;
  /** Windows are aligned to the epoch: a minute is `12:34:00.000` to `12:34:59.999` UTC. */
  readonly durationMs: number;
  /** null: never refuses (the window still counts). */
  readonly limit: number | null;
}

export interface WindowState {
  name: string;
  durationMs: number;
  used: number;
  limit: number | null;
  /** Unix seconds at which the window resets. */
  resetAt: number;
}

export interface LimitDecision {
  admitted: boolean;
  /** The window that refused, when not admitted. */
  rejectedBy: string | null;
  /** One per window asked about, in the order asked. */
  windows: WindowState[];
}

/** Which window of its duration (counted from the epoch) an instant falls in. */
export function windowIndex(window: RateWindow, nowMs: number): number {
  return Math.floor(nowMs / window.durationMs);
}

/**
 * The rule: the index of the window that refuses a call of `cost` given what each has used, or -1. A
 * window refuses when its limit is set and `used + cost` passes it; of several, the longest reports
 * (its wait is the longer one), the first listed among equals. redis.ts's script mirrors this.
 */
export function refusingWindow(
  windows: readonly RateWindow[],
  used: readonly number[],
  cost: number,
): number {
  let refusing = -1;
  for (let i = 0; i < windows.length; i++) {
    const { limit, durationMs } = windows[i];
    if (limit === null || used[i] + cost <= limit) continue;
    if (refusing === -1 || durationMs > windows[refusing].durationMs) refusing = i;
  }
  return refusing;
}

/** The decision for counts read (or just written) in the windows of `nowMs`. */
export function decisionOf(
  windows: readonly RateWindow[],
  used: readonly number[],
  refusing: number,
  nowMs: number,
): LimitDecision {
  return {
    admitted: refusing === -1,
    rejectedBy: refusing === -1 ? null : windows[refusing].name,
    windows: windows.map((w, i) => ({
      name: w.name,
      durationMs: w.durationMs,
      used: used[i],
      limit: w.limit,
      resetAt: ((windowIndex(w, nowMs) + 1) * w.durationMs) / 1000,
    })),
  };
}

/** A window's state in a decision, by name; throws when the call did not ask about it (a bug). */
export function stateOf(decision: LimitDecision, name: string): WindowState {
  const state = decision.windows.find((w) => w.name === name);
  if (!state) throw new Error(`the limiter was not asked about a ${name} window`);
  return state;
}

/** Checks what every implementation refuses to take: a cost that is not a whole number of units. */
export function checkCost(cost: number): void {
  if (!Number.isSafeInteger(cost) || cost < 0)
    throw new RangeError(`a cost is a whole number >= 0, not ${cost}`);
}
