/**
 * lightweight-charts spaces points by their index, not their time: a series with few, unevenly
 * spaced points (an equity curve: one point per closed trade) gets its time labels at uneven steps.
 * Empty points at a regular step between the first and last time make index and time proportional,
 * so the axis' labels fall at regular steps.
 */

/** Steps a time axis may use, in seconds: round ones, so that labels read well. */
const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 21600, 43200, 86400];

/** Whole multiples of a round step between `from` and `to` (exclusive), at most about `most` of them. */
export function regularTimes(from: number, to: number, most = 600): number[] {
  const span = to - from;
  if (!(span > 0)) return [];
  const step = STEPS.find((s) => span / s <= most) ?? Math.ceil(span / most / 86400) * 86400;
  const times: number[] = [];
  for (let t = Math.floor(from / step) * step + step; t < to; t += step) times.push(t);
  return times;
}
