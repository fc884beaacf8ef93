/**
 * Counts of requests per subject (a client address, a key) in the current UTC minute, in this
 * process's memory, for the small limits that protect the server itself rather than sell a plan: what
 * needs no key, per address, and the routes a key calls without counting (docs/plans-and-limits.md).
 * A replica counts on its own. Time comes from the caller (the app's injected clock).
 */

export interface MinuteCount {
  admitted: boolean;
  /** Requests of the subject this minute, this one included (refused ones too). */
  used: number;
  /** Unix ms when the minute ends and the count starts over. */
  resetAtMs: number;
}

/**
 * Subjects seen in one minute beyond this many are counted together, as one: a flood from many
 * addresses cannot grow the map without bound, and is limited as a single client once it is that wide.
 */
const MAX_SUBJECTS = 100_000;
const OVERFLOW = "\u0000overflow";

export class MinuteCounts {
  private minute = -1;
  private readonly counts = new Map<string, number>();
  private readonly maxSubjects: number;

  constructor(maxSubjects = MAX_SUBJECTS) {
    this.maxSubjects = maxSubjects;
  }

  /** Counts one request of `subject` at `nowMs`; admitted while the minute's count is within `limit`. */
  take(subject: string, limit: number, nowMs: number): MinuteCount {
    const minute = Math.floor(nowMs / 60_000);
    if (minute !== this.minute) {
      this.minute = minute;
      this.counts.clear();
    }
    const counted = this.counts.has(subject) || this.counts.size < this.maxSubjects ? subject : OVERFLOW;
    const used = (this.counts.get(counted) ?? 0) + 1;
    this.counts.set(counted, used);
    return { admitted: used <= limit, used, resetAtMs: (minute + 1) * 60_000 };
  }
}
