/**
 * How numbers and times read on the page. Numbers follow the one rule the CLI's and the MCP tools'
 * text follow too (client/src/format.ts, re-exported here); times are the API's ISO strings, in UTC.
 */

import { MISSING } from "../../client/src/format.ts";

export {
  bps,
  coinPrice,
  count,
  fixed,
  limit,
  MISSING,
  percent,
  percentOf,
  price,
  ratio,
  remainingOf,
  seconds,
  shares,
  UNLIMITED,
  usdc,
  usdcText,
} from "../../client/src/format.ts";

/** Seconds since the epoch, with the fraction (the API's times carry microseconds). */
export function epochSeconds(iso: string): number {
  const match = /^(.*T\d\d:\d\d:\d\d)(\.\d+)?Z$/.exec(iso);
  if (!match) return Date.parse(iso) / 1000;
  return Date.parse(`${match[1]}Z`) / 1000 + Number(match[2] ?? 0);
}

/** `2026-07-24 00:20:34 UTC` (with the fraction when the time has one and `precise` is asked). */
export function utc(iso: string | null | undefined, precise = false): string {
  if (!iso) return MISSING;
  const [date, rest = ""] = iso.split("T");
  const time = precise ? rest.replace("Z", "") : rest.slice(0, 8);
  return `${date} ${time} UTC`;
}

/** An ISO time from epoch seconds, to the millisecond. */
export function isoOf(seconds: number): string {
  return new Date(Math.round(seconds * 1000)).toISOString();
}

/** The value of a `datetime-local` input (read as UTC) as ISO, or undefined when empty. */
export function isoFromLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  return new Date(`${value.length === 16 ? `${value}:00` : value}Z`).toISOString();
}

/** "in 26 s", "in 3 min 5 s", "in 2 d 4 h": how long a wait is, for a person. */
export function waitText(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}
