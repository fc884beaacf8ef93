import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  type LimitDecision,
  type RateLimiter,
  type RateWindow,
  stateOf,
} from "../../../src/access/limiter/limiter.ts";

/** 2026-07-24T23:59:30Z: thirty seconds before a UTC midnight. */
const LATE = Date.UTC(2026, 6, 24, 23, 59, 30);
const MIDNIGHT = Date.UTC(2026, 6, 25);
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

function windows(perMinute: number | null, perDay: number | null): RateWindow[] {
  return [
    { name: "minute", durationMs: MINUTE_MS, limit: perMinute },
    { name: "day", durationMs: DAY_MS, limit: perDay },
  ];
}
const STARTER = windows(60, 1000);
const UNLIMITED = windows(null, null);

const used = (d: LimitDecision, name: string) => stateOf(d, name).used;

/** The limiter contract (src/access/limiter/limiter.ts), run against each implementation. */
export function limiterContract(
  name: string,
  open: () => Promise<RateLimiter>,
  skip: string | false = false,
) {
  describe(`rate limiter contract: ${name}`, { skip }, () => {
    let limiter: RateLimiter;
    before(async () => {
      limiter = await open();
    });
    after(() => limiter.close());
    // Every test counts for subjects of its own, so that a shared Redis carries nothing between tests.
    const subject = () => `test:${randomUUID()}`;

    test("admits up to the minute limit, then refuses without counting", async () => {
      const s = subject();
      // 23:58:30 to 23:59:00: the next minute starts, the same day goes on.
      for (let i = 1; i <= 60; i++) {
        const d = await limiter.limit(s, STARTER, 1, LATE - 60_000);
        assert.equal(d.admitted, true);
        assert.equal(used(d, "minute"), i);
        assert.equal(used(d, "day"), i);
      }
      for (let i = 0; i < 5; i++) {
        const d = await limiter.limit(s, STARTER, 1, LATE - 60_000 + 1000);
        assert.deepEqual(
          { admitted: d.admitted, rejectedBy: d.rejectedBy, minute: used(d, "minute"), day: used(d, "day") },
          { admitted: false, rejectedBy: "minute", minute: 60, day: 60 },
        );
      }
      const next = await limiter.limit(s, STARTER, 1, LATE - 60_000 + 30_000);
      assert.equal(next.admitted, true);
      assert.equal(used(next, "minute"), 1);
      assert.equal(used(next, "day"), 61);
    });

    test("windows are calendar-aligned; resets are their ends in Unix seconds; states come in the order asked", async () => {
      const s = subject();
      const d = await limiter.limit(s, STARTER, 1, LATE);
      assert.deepEqual(
        d.windows.map((w) => [w.name, w.durationMs, w.limit, w.resetAt]),
        [
          ["minute", MINUTE_MS, 60, MIDNIGHT / 1000],
          ["day", DAY_MS, 1000, MIDNIGHT / 1000],
        ],
      );
      const lastMs = await limiter.limit(s, STARTER, 1, MIDNIGHT - 1);
      assert.equal(used(lastMs, "day"), 2);
      const nextDay = await limiter.limit(s, STARTER, 1, MIDNIGHT);
      assert.equal(used(nextDay, "day"), 1);
      assert.equal(used(nextDay, "minute"), 1);
      assert.equal(stateOf(nextDay, "day").resetAt, MIDNIGHT / 1000 + 86_400);
      assert.equal(stateOf(nextDay, "minute").resetAt, MIDNIGHT / 1000 + 60);
    });

    test("an hour window is aligned to the hour, not to the first call", async () => {
      const s = subject();
      const hour = [{ name: "hour", durationMs: 3_600_000, limit: 2 }];
      const at = (h: number, m: number) => Date.UTC(2026, 6, 24, h, m);
      assert.equal((await limiter.limit(s, hour, 1, at(10, 59))).admitted, true);
      const top = await limiter.limit(s, hour, 1, at(11, 0));
      assert.deepEqual([top.admitted, used(top, "hour")], [true, 1], "a new hour at 11:00, not 11:59");
      assert.equal((await limiter.limit(s, hour, 1, at(11, 58))).admitted, true);
      const full = await limiter.limit(s, hour, 1, at(11, 59));
      assert.deepEqual([full.rejectedBy, stateOf(full, "hour").resetAt], ["hour", at(12, 0) / 1000]);
    });

    test("the day refuses before the minute, and its refusals count nowhere", async () => {
      const s = subject();
      const limits = windows(3, 5);
      const at = (minute: number) => MIDNIGHT + minute * 60_000;
      for (let i = 0; i < 3; i++) assert.equal((await limiter.limit(s, limits, 1, at(0))).admitted, true);
      assert.equal((await limiter.limit(s, limits, 1, at(0))).rejectedBy, "minute");
      for (let i = 0; i < 2; i++) assert.equal((await limiter.limit(s, limits, 1, at(1))).admitted, true);
      const refused = await limiter.limit(s, limits, 1, at(1));
      assert.equal(refused.rejectedBy, "day");
      const later = await limiter.limit(s, limits, 1, at(2));
      assert.deepEqual([later.rejectedBy, used(later, "minute"), used(later, "day")], ["day", 0, 5]);
    });

    test("three windows: each checked and counted together; the one violated is named, the longest of several", async () => {
      const s = subject();
      const three: RateWindow[] = [
        { name: "second", durationMs: 1000, limit: 2 },
        { name: "minute", durationMs: MINUTE_MS, limit: 5 },
        { name: "hour", durationMs: 3_600_000, limit: 100 },
      ];
      const start = Date.UTC(2026, 6, 24, 12, 0, 0);
      const at = (second: number) => start + second * 1000;
      const seen: (string | null)[] = [];
      for (const second of [0, 0, 0, 1, 1, 2, 2, 3])
        seen.push((await limiter.limit(s, three, 1, at(second))).rejectedBy);
      assert.deepEqual(seen, [null, null, "second", null, null, null, "minute", "minute"]);
      const d = await limiter.peek(s, three, at(3));
      assert.deepEqual(
        d.windows.map((w) => [w.name, w.used]),
        [
          ["second", 0],
          ["minute", 5],
          ["hour", 5],
        ],
        "refused calls counted in no window",
      );
      // Second and minute both full: the minute (the longer wait) is named.
      const both = await limiter.limit(s, three, 3, at(3));
      assert.equal(both.rejectedBy, "minute");
    });

    test("a cost above one is added to every window, all or none", async () => {
      const s = subject();
      const limits = windows(10, 12);
      const noon = Date.UTC(2026, 6, 24, 12, 0, 30);
      const first = await limiter.limit(s, limits, 4, noon);
      assert.deepEqual([first.admitted, used(first, "minute"), used(first, "day")], [true, 4, 4]);
      const second = await limiter.limit(s, limits, 6, noon);
      assert.deepEqual([second.admitted, used(second, "minute"), used(second, "day")], [true, 10, 10]);
      const over = await limiter.limit(s, limits, 1, noon);
      assert.deepEqual([over.rejectedBy, used(over, "minute"), used(over, "day")], ["minute", 10, 10]);
      // 12:01: room for 10 in the minute but 2 in the day, so a cost of 3 is refused by the day.
      const day = await limiter.limit(s, limits, 3, noon + 30_000);
      assert.deepEqual([day.rejectedBy, used(day, "minute"), used(day, "day")], ["day", 0, 10]);
      const fits = await limiter.limit(s, limits, 2, noon + 30_000);
      assert.deepEqual([fits.admitted, used(fits, "minute"), used(fits, "day")], [true, 2, 12]);
    });

    test("a null limit never refuses but still counts; peek counts nothing", async () => {
      const s = subject();
      for (let i = 0; i < 100; i++) await limiter.limit(s, UNLIMITED, 1, LATE);
      const d = await limiter.peek(s, UNLIMITED, LATE);
      assert.deepEqual(
        [d.admitted, used(d, "minute"), used(d, "day"), stateOf(d, "day").limit],
        [true, 100, 100, null],
      );
      assert.equal(used(await limiter.peek(s, UNLIMITED, LATE), "day"), 100);
      const full = await limiter.peek(s, windows(100, null), LATE);
      assert.deepEqual([full.admitted, full.rejectedBy], [false, "minute"]);
      assert.equal(used(await limiter.peek(subject(), STARTER, LATE), "day"), 0);
      const big = await limiter.limit(s, UNLIMITED, 1_000_000, LATE);
      assert.deepEqual([big.admitted, used(big, "day")], [true, 1_000_100]);
    });

    test("300 concurrent requests of one subject: exactly 60 admitted, and the day shows 60", async () => {
      const s = subject();
      const decisions = await Promise.all(
        Array.from({ length: 300 }, (_, i) => limiter.limit(s, STARTER, 1, LATE + i)),
      );
      assert.equal(decisions.filter((d) => d.admitted).length, 60);
      assert.equal(used(await limiter.peek(s, STARTER, LATE), "day"), 60);
    });

    test("a charge to the day window alone leaves the minute be; its refusal counts nothing", async () => {
      const s = subject();
      const day = (limit: number | null) => windows(null, limit).slice(1);
      await limiter.limit(s, STARTER, 1, LATE);
      const charged = await limiter.limit(s, day(1000), 899, LATE);
      assert.deepEqual([charged.admitted, charged.windows.length, used(charged, "day")], [true, 1, 900]);
      assert.equal(used(await limiter.peek(s, STARTER, LATE), "minute"), 1);
      const refused = await limiter.limit(s, day(1000), 101, LATE);
      assert.deepEqual([refused.admitted, refused.rejectedBy, used(refused, "day")], [false, "day", 900]);
      assert.equal(used(await limiter.limit(s, day(1000), 100, LATE), "day"), 1000);
      assert.equal((await limiter.limit(s, STARTER, 1, LATE)).rejectedBy, "day");
      const unlimited = await limiter.limit(s, day(null), 5000, LATE);
      assert.deepEqual([unlimited.admitted, used(unlimited, "day")], [true, 6000]);
    });

    test("concurrent charges never pass the day limit together", async () => {
      const s = subject();
      const day = windows(null, 1000).slice(1);
      const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter.limit(s, day, 120, LATE)));
      assert.equal(decisions.filter((d) => d.admitted).length, 8);
      assert.equal(used(await limiter.peek(s, STARTER, LATE), "day"), 960);
    });

    test("subjects are counted apart", async () => {
      const [a, b] = [subject(), subject()];
      for (let i = 0; i < 60; i++) await limiter.limit(a, STARTER, 1, LATE);
      assert.equal((await limiter.limit(a, STARTER, 1, LATE)).admitted, false);
      assert.equal((await limiter.limit(b, STARTER, 1, LATE)).admitted, true);
    });

    test("a cost that is not a whole number of units is refused as a bug, counting nothing", async () => {
      const s = subject();
      await assert.rejects(limiter.limit(s, STARTER, 1.5, LATE), RangeError);
      await assert.rejects(limiter.limit(s, STARTER, -1, LATE), RangeError);
      assert.equal(used(await limiter.peek(s, STARTER, LATE), "day"), 0);
    });
  });
}
