/**
 * Time in this service is an integer count of microseconds since the Unix epoch, held in a JS number.
 * A double holds integers exactly up to 2^53 µs (year 2255), so no precision is lost; a `Date` would
 * drop everything below the millisecond.
 */
export type Micros = number;

export const MICROS_PER_SECOND = 1_000_000;

export interface Clock {
  nowMicros(): Micros;
}

/** The process's time origin, read once: the getter checks its receiver on every call. */
const TIME_ORIGIN_MS = performance.timeOrigin;

export const systemClock: Clock = {
  nowMicros: () => Math.round((TIME_ORIGIN_MS + performance.now()) * 1000),
};

/** The system clock moved by `offsetMs`: a process told to live at another time (tests and drills). */
export function shiftedClock(offsetMs: number): Clock {
  if (offsetMs === 0) return systemClock;
  return { nowMicros: () => systemClock.nowMicros() + offsetMs * 1000 };
}

/** A clock that only moves when told to; for tests and deterministic generation. */
export class ManualClock implements Clock {
  private now: Micros;
  constructor(start: Micros) {
    this.now = start;
  }
  nowMicros(): Micros {
    return this.now;
  }
  set(micros: Micros): void {
    this.now = micros;
  }
  advance(micros: Micros): void {
    this.now += micros;
  }
}

const DAY_SECONDS = 86_400;
let cachedDay = Number.NaN;
let cachedDayPrefix = "";

function pad2(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

/**
 * Recent days' `YYYY-MM-DDT`. A page walks one day (sometimes two), but its market
 * record names others (created the day before), so a few days are kept, not just the last one.
 */
const recentDays = new Map<number, string>();

/** Makes `day` the cached one; pages walk one day, so it rarely changes. */
function cacheDay(day: number): void {
  let text = recentDays.get(day);
  if (text === undefined) {
    text = new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 11);
    if (recentDays.size >= 64) recentDays.clear();
    recentDays.set(day, text);
  }
  cachedDay = day;
  cachedDayPrefix = text;
}

/** `YYYY-MM-DDTHH:MM:SS` for a Unix second; the date part is cached because pages walk one day. */
function isoSecondsBody(sec: number): string {
  const { h, m, s } = timeOfDay(sec);
  return `${cachedDayPrefix}${pad2(h)}:${pad2(m)}:${pad2(s)}`;
}

/** Hours, minutes and seconds of a Unix second in its UTC day, after making that day the cached one. */
function timeOfDay(sec: number): { h: number; m: number; s: number } {
  const day = Math.floor(sec / DAY_SECONDS);
  if (day !== cachedDay) cacheDay(day);
  const inDay = sec - day * DAY_SECONDS;
  return { h: Math.floor(inDay / 3600), m: Math.floor((inDay % 3600) / 60), s: inDay % 60 };
}

/**
 * Whether something kept at `at` is still good at `now` for `ttl`: not older than that, and not from
 * the future (a clock set back must not keep it forever).
 */
export function keptWithin(at: Micros, now: Micros, ttl: Micros): boolean {
  return now >= at && now - at < ttl;
}

/** ISO 8601 UTC at second precision: `2026-07-24T00:00:00Z`. */
export function isoSeconds(sec: number): string {
  return `${isoSecondsBody(sec)}Z`;
}

/** ISO 8601 UTC at microsecond precision: `2026-07-24T00:00:00.943587Z`. */
export function isoMicros(us: Micros): string {
  const sec = Math.floor(us / MICROS_PER_SECOND);
  const frac = us - sec * MICROS_PER_SECOND;
  return `${isoSecondsBody(sec)}.${String(frac).padStart(6, "0")}Z`;
}

const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Parses an ISO 8601 timestamp to microseconds, keeping up to six fractional digits (more are
 * truncated). A missing zone means UTC. Returns null for anything that is not a valid timestamp.
 */
export function parseIsoMicros(text: string): Micros | null {
  const m = ISO_RE.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "", zone = "Z"] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  // Not Date.UTC(year, ...): it reads the years 0 to 99 as 1900 to 1999.
  const check = new Date(0);
  check.setUTCFullYear(year, month - 1, day);
  check.setUTCHours(hour, minute, second, 0);
  const ms = check.getTime();
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return null;
  let offsetMinutes = 0;
  if (zone !== "Z") {
    const sign = zone[0] === "-" ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    const zh = Number(digits.slice(0, 2));
    const zm = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (zh > 23 || zm > 59) return null;
    offsetMinutes = sign * (zh * 60 + zm);
  }
  const micros = Number(frac.padEnd(6, "0").slice(0, 6));
  return (ms / 1000 - offsetMinutes * 60) * MICROS_PER_SECOND + micros;
}

/**
 * The instants a user may name: from the epoch to the last microsecond a double counts exactly
 * (2^53 - 1 µs, in June 2255). Outside it, times would lose microseconds or fail to format.
 */
export const USER_TIME_RANGE = { min: 0, max: Number.MAX_SAFE_INTEGER } as const;

/** What a user's time text reads as: the instant, or why it is none (not a time, or out of range). */
export type UserTimeReading = { micros: Micros } | { problem: "format" | "range" };

/**
 * A time given by a user: ISO 8601, or an integer count of epoch milliseconds (as Binance and most
 * trading APIs use), inside USER_TIME_RANGE.
 */
export function readUserTime(text: string): UserTimeReading {
  const micros = /^\d+$/.test(text) ? Number(text) * 1000 : parseIsoMicros(text);
  if (micros === null) return { problem: "format" };
  if (!(micros >= USER_TIME_RANGE.min && micros <= USER_TIME_RANGE.max)) return { problem: "range" };
  return { micros };
}

/** readUserTime's instant, or null when the text is not a time the service can hold. */
export function parseUserTime(text: string): Micros | null {
  const reading = readUserTime(text);
  return "micros" in reading ? reading.micros : null;
}

/** The UTC month an instant falls in, as `YYYY-MM` (the quota ledger's period). */
export function utcMonthOf(us: Micros): string {
  return new Date(Math.floor(us / 1000)).toISOString().slice(0, 7);
}

/** Unix seconds of the first instant of the next UTC month. */
export function nextUtcMonthStart(us: Micros): number {
  const d = new Date(Math.floor(us / 1000));
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
}
