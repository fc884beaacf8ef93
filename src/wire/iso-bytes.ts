import { isoMicros, MICROS_PER_SECOND, type Micros } from "../domain/time.ts";
import type { JsonBytes } from "./json-bytes.ts";

const DAY_SECONDS = 86_400;

/**
 * Recent days' `YYYY-MM-DDT` as bytes. A page walks one day (sometimes two), but its market record
 * names others (created the day before), so a few days are kept, not just the last one.
 */
const recentDays = new Map<number, Uint8Array>();
let cachedDay = Number.NaN;
let cachedDayBytes: Uint8Array = new Uint8Array(0);

function dayBytes(day: number): Uint8Array {
  if (day === cachedDay) return cachedDayBytes;
  let bytes = recentDays.get(day);
  if (bytes === undefined) {
    const text = new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 11);
    bytes = Uint8Array.from(text, (c) => c.charCodeAt(0));
    if (recentDays.size >= 64) recentDays.clear();
    recentDays.set(day, bytes);
  }
  cachedDay = day;
  cachedDayBytes = bytes;
  return bytes;
}

/** Writes isoMicros(us) as bytes, without making the string. */
export function writeIsoMicros(w: JsonBytes, us: Micros): void {
  const sec = Math.floor(us / MICROS_PER_SECOND);
  let frac = us - sec * MICROS_PER_SECOND;
  if (!Number.isInteger(frac)) {
    w.ascii(isoMicros(us));
    return;
  }
  const day = Math.floor(sec / DAY_SECONDS);
  const prefix = dayBytes(day);
  const inDay = sec - day * DAY_SECONDS;
  const h = Math.floor(inDay / 3600);
  const m = Math.floor((inDay % 3600) / 60);
  const s = inDay % 60;
  w.reserve(prefix.length + 16);
  const buf = w.buf;
  let p = w.pos;
  for (let i = 0; i < prefix.length; i++) buf[p++] = prefix[i];
  buf[p++] = 48 + Math.floor(h / 10);
  buf[p++] = 48 + (h % 10);
  buf[p++] = 58; // :
  buf[p++] = 48 + Math.floor(m / 10);
  buf[p++] = 48 + (m % 10);
  buf[p++] = 58;
  buf[p++] = 48 + Math.floor(s / 10);
  buf[p++] = 48 + (s % 10);
  buf[p++] = 46; // .
  for (let i = 5; i >= 0; i--) {
    const q = Math.floor(frac / 10);
    buf[p + i] = 48 + (frac - q * 10);
    frac = q;
  }
  buf[p + 6] = 90; // Z
  w.pos = p + 7;
}
