import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { RateLimiter } from "../../../src/access/limiter/limiter.ts";

/** 2026-07-24T23:59:30Z: thirty seconds before a UTC midnight. */
const LATE = Date.UTC(2026, 6, 24, 23, 59, 30);
const MIDNIGHT = Date.UTC(2026, 6, 25);
const STARTER = { perMinute: 60, perDay: 1000 };

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
        const d = await limiter.consume(s, STARTER, LATE - 60_000);
        assert.equal(d.admitted, true);
        assert.equal(d.minute.used, i);
        assert.equal(d.day.used, i);
      }
      for (let i = 0; i < 5; i++) {
        const d = await limiter.consume(s, STARTER, LATE - 60_000 + 1000);
        assert.deepEqual(
          { admitted: d.admitted, rejectedBy: d.rejectedBy, minute: d.minute.used, day: d.day.used },
          { admitted: false, rejectedBy: "minute", minute: 60, day: 60 },
        );
      }
      const next = await limiter.consume(s, STARTER, LATE - 60_000 + 30_000);
      assert.equal(next.admitted, true);
      assert.equal(next.minute.used, 1);
      assert.equal(next.day.used, 61);
    });

    test("windows are the calendar UTC minute and day; resets are their ends in Unix seconds", async () => {
      const s = subject();
      const d = await limiter.consume(s, STARTER, LATE);
      assert.equal(d.minute.resetAt, MIDNIGHT / 1000);
      assert.equal(d.day.resetAt, MIDNIGHT / 1000);
      const lastMs = await limiter.consume(s, STARTER, MIDNIGHT - 1);
      assert.equal(lastMs.day.used, 2);
      const nextDay = await limiter.consume(s, STARTER, MIDNIGHT);
      assert.equal(nextDay.day.used, 1);
      assert.equal(nextDay.minute.used, 1);
      assert.equal(nextDay.day.resetAt, MIDNIGHT / 1000 + 86_400);
      assert.equal(nextDay.minute.resetAt, MIDNIGHT / 1000 + 60);
    });

    test("the day refuses before the minute, and its refusals count nowhere", async () => {
      const s = subject();
      const limits = { perMinute: 3, perDay: 5 };
      const at = (minute: number) => MIDNIGHT + minute * 60_000;
      for (let i = 0; i < 3; i++) assert.equal((await limiter.consume(s, limits, at(0))).admitted, true);
      assert.equal((await limiter.consume(s, limits, at(0))).rejectedBy, "minute");
      for (let i = 0; i < 2; i++) assert.equal((await limiter.consume(s, limits, at(1))).admitted, true);
      const refused = await limiter.consume(s, limits, at(1));
      assert.equal(refused.rejectedBy, "day");
      const later = await limiter.consume(s, limits, at(2));
      assert.deepEqual([later.rejectedBy, later.minute.used, later.day.used], ["day", 0, 5]);
    });

    test("a null limit never refuses but still counts; peek counts nothing", async () => {
      const s = subject();
      const unlimited = { perMinute: null, perDay: null };
      for (let i = 0; i < 100; i++) await limiter.consume(s, unlimited, LATE);
      const d = await limiter.peek(s, unlimited, LATE);
      assert.deepEqual([d.admitted, d.minute.used, d.day.used, d.day.limit], [true, 100, 100, null]);
      assert.equal((await limiter.peek(s, unlimited, LATE)).day.used, 100);
      const full = await limiter.peek(s, { perMinute: 100, perDay: null }, LATE);
      assert.deepEqual([full.admitted, full.rejectedBy], [false, "minute"]);
      assert.equal((await limiter.peek(subject(), STARTER, LATE)).day.used, 0);
    });

    test("300 concurrent requests of one subject: exactly 60 admitted, and the day shows 60", async () => {
      const s = subject();
      const decisions = await Promise.all(
        Array.from({ length: 300 }, (_, i) => limiter.consume(s, STARTER, LATE + i)),
      );
      assert.equal(decisions.filter((d) => d.admitted).length, 60);
      assert.equal((await limiter.peek(s, STARTER, LATE)).day.used, 60);
    });

    test("charge adds units to the day alone, all or none; its refusal counts nothing", async () => {
      const s = subject();
      await limiter.consume(s, STARTER, LATE);
      const charged = await limiter.charge(s, STARTER, 899, LATE);
      assert.deepEqual([charged.admitted, charged.minute.used, charged.day.used], [true, 1, 900]);
      const refused = await limiter.charge(s, STARTER, 101, LATE);
      assert.deepEqual([refused.admitted, refused.rejectedBy, refused.day.used], [false, "day", 900]);
      assert.equal((await limiter.charge(s, STARTER, 100, LATE)).day.used, 1000);
      assert.equal((await limiter.consume(s, STARTER, LATE)).rejectedBy, "day");
      const unlimited = await limiter.charge(s, { perMinute: null, perDay: null }, 5000, LATE);
      assert.deepEqual([unlimited.admitted, unlimited.day.used], [true, 6000]);
    });

    test("concurrent charges never pass the day limit together", async () => {
      const s = subject();
      const decisions = await Promise.all(
        Array.from({ length: 20 }, () => limiter.charge(s, STARTER, 120, LATE)),
      );
      assert.equal(decisions.filter((d) => d.admitted).length, 8);
      assert.equal((await limiter.peek(s, STARTER, LATE)).day.used, 960);
    });

    test("subjects are counted apart", async () => {
      const [a, b] = [subject(), subject()];
      for (let i = 0; i < 60; i++) await limiter.consume(a, STARTER, LATE);
      assert.equal((await limiter.consume(a, STARTER, LATE)).admitted, false);
      assert.equal((await limiter.consume(b, STARTER, LATE)).admitted, true);
    });
  });
}
