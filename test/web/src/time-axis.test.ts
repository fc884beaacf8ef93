import assert from "node:assert/strict";
import { test } from "node:test";
import { regularTimes } from "../../../web/src/time-axis.ts";

test("regular times: whole multiples of a round step, strictly between the ends, at most about the number asked", () => {
  // 23:51:02 to 00:17:40 (1598 s): 5 s steps give 319 points, under 600.
  const from = 1784850662;
  const to = 1784852260;
  const times = regularTimes(from, to);
  assert.equal(times[0], 1784850665);
  assert.ok(times.every((t, i) => t % 5 === 0 && (i === 0 || t - times[i - 1] === 5)));
  assert.ok(times[0] > from && times[times.length - 1] < to);
  assert.equal(times.length, 319);
  // A day at most 600 points: 5-minute steps (288), on the clock's minutes.
  const day = regularTimes(0, 86400);
  assert.equal(day[1] - day[0], 300);
  assert.equal(day.length, 287);
  // Nothing to fill in an empty or reversed span; a long span still has round steps.
  assert.deepEqual(regularTimes(10, 10), []);
  assert.deepEqual(regularTimes(10, 5), []);
  const year = regularTimes(0, 365 * 86400, 100);
  assert.equal(year[1] - year[0], 4 * 86400);
});
