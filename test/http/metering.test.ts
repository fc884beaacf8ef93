import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { ManualClock } from "../../src/domain/time.ts";
import { ANCHOR, LIMIT_HEADERS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { openRedisLimiter, SKIP_WITHOUT_REDIS } from "../helpers/redis.ts";

const MARKET = "/v1/markets/btc-updown-5m-1784851800";
/** 2026-07-25T00:00:00Z, the midnight after ANCHOR. */
const NEXT_MIDNIGHT = 1784937600;

function limitHeaders(res: LightMyRequestResponse): Record<string, string | undefined> {
  return Object.fromEntries(LIMIT_HEADERS.map((h) => [h, res.headers[h] as string | undefined]));
}

function get(t: TestApp, url: string, key: string, remoteAddress = "127.0.0.1") {
  return t.app.inject({ method: "GET", url, headers: { "x-api-key": key }, remoteAddress });
}

async function dayUsed(t: TestApp, key: string): Promise<number> {
  const res = await get(t, "/v1/account", key);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().usage.day.used;
}

/**
 * A starter key's whole day, its requests spread round-robin over `apps` (which share one store, one
 * clock and, when there are several, one Redis): 1000 admitted across minutes, each full minute refused
 * without spending the day, then 429 until 00:00 UTC, when the day resets and Reset moves on.
 */
async function checkADayOfRequests(apps: TestApp[], clock: ManualClock): Promise<void> {
  const key = await apps[0].keyFor("starter");
  let sent = 0;
  const next = () => get(apps[sent++ % apps.length], MARKET, key);
  let admitted = 0;
  let refusedByMinute = 0;
  while (admitted < 1000) {
    const res = await next();
    if (res.statusCode === 200) admitted++;
    else {
      assert.equal(res.json().error.details.window, "minute");
      refusedByMinute++;
      clock.advance(60e6);
    }
  }
  assert.equal(refusedByMinute, 16);
  for (const app of apps) assert.equal(await dayUsed(app, key), 1000);
  clock.advance(60e6);
  const refused = await next();
  assert.equal(refused.statusCode, 429);
  const body = refused.json();
  assert.equal(body.error.details.window, "day");
  assert.equal(
    body.error.message,
    "Daily request limit exceeded: the starter plan allows 1000 requests per day. It resets at 2026-07-25T00:00:00Z (00:00 UTC); upgrade to pro for 50000 requests per day.",
  );
  assert.equal(refused.headers["x-ratelimit-remaining"], "0");
  const secondsLeft = NEXT_MIDNIGHT - Math.floor(clock.nowMicros() / 1e6);
  assert.equal(refused.headers["retry-after"], String(secondsLeft));

  clock.set((NEXT_MIDNIGHT - 1) * 1e6 + 999_000); // 23:59:59.999Z
  for (const app of apps) {
    const last = await get(app, MARKET, key);
    assert.equal(last.statusCode, 429);
    assert.equal(last.headers["retry-after"], "1");
    assert.equal(last.headers["x-ratelimit-reset"], String(NEXT_MIDNIGHT));
  }

  clock.set(NEXT_MIDNIGHT * 1e6); // 00:00:00Z
  const fresh = await next();
  assert.equal(fresh.statusCode, 200);
  assert.equal(fresh.headers["x-ratelimit-remaining"], "999");
  assert.equal(fresh.headers["x-ratelimit-reset"], String(NEXT_MIDNIGHT + 86_400));
}

describe("limit headers on every answer to a valid key", () => {
  let t: TestApp;
  let starter: string;
  before(async () => {
    t = await makeTestApp();
    starter = await t.keyFor("starter");
  });
  after(() => t.close());

  test("200, 400, 404 (slug and route) and 403 each carry them by value, and each counted once", async () => {
    // ANCHOR is 34.123456 s into its minute and 1234.123456 s into its day.
    const expected = (remaining: number) => ({
      "x-ratelimit-limit": "1000",
      "x-ratelimit-remaining": String(remaining),
      "x-ratelimit-reset": String(NEXT_MIDNIGHT),
      "x-tier": "starter",
      "ratelimit-policy": '"minute";q=60;w=60, "day";q=1000;w=86400',
      ratelimit: `"minute";r=${60 - (1000 - remaining)};t=26, "day";r=${remaining};t=85166`,
    });
    const answers: [string, number][] = [
      [MARKET, 200],
      [`${MARKET}/snapshots?limit=0`, 400],
      ["/v1/markets/btc-updown-5m-1", 404],
      ["/v1/no-such-route", 404],
    ];
    let remaining = 1000;
    for (const [url, status] of answers) {
      const res = await get(t, url, starter);
      assert.equal(res.statusCode, status, url);
      assert.deepEqual(limitHeaders(res), expected(--remaining), url);
    }
    assert.equal(await dayUsed(t, starter), 4);
  });

  test("401 carries none of them, and counts nowhere", async () => {
    const res = await get(t, MARKET, "ud_nope");
    assert.equal(res.statusCode, 401);
    for (const h of LIMIT_HEADERS) assert.equal(res.headers[h], undefined, h);
    assert.ok(res.headers["x-request-id"]);
  });

  test("an enterprise key says unlimited, and the draft's fields give a window without a limit the largest quota", async () => {
    const unlimited = await t.keys.create({ plan: "enterprise", account: "big" });
    const res = await get(t, MARKET, unlimited.key);
    const noLimit = "999999999999999";
    assert.deepEqual(limitHeaders(res), {
      "x-ratelimit-limit": "unlimited",
      "x-ratelimit-remaining": "unlimited",
      "x-ratelimit-reset": String(NEXT_MIDNIGHT),
      "x-tier": "enterprise",
      "ratelimit-policy": `"minute";q=${noLimit};w=60, "day";q=${noLimit};w=86400`,
      ratelimit: `"minute";r=999999999999998;t=26, "day";r=999999999999998;t=85166`,
    });
    const capped = await t.keys.create({ plan: "enterprise", account: "big", perMinuteLimit: 1000 });
    const res2 = await get(t, MARKET, capped.key);
    assert.equal(res2.headers["ratelimit-policy"], `"minute";q=1000;w=60, "day";q=${noLimit};w=86400`);
    assert.equal(res2.headers.ratelimit, '"minute";r=999;t=26, "day";r=999999999999998;t=85166');
    assert.equal(res2.headers["x-ratelimit-limit"], "unlimited");
  });
});

describe("counting under concurrency and across windows", () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test("300 concurrent requests with one starter key: exactly 60 not 429, and the day shows 60", async () => {
    const key = await t.keyFor("starter");
    const answers = await Promise.all(Array.from({ length: 300 }, () => get(t, MARKET, key)));
    const statuses = answers.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s !== 429).length, 60);
    assert.equal(statuses.filter((s) => s === 200).length, 60);
    assert.equal(await dayUsed(t, key), 60);
    assert.equal(await dayUsed(t, key), 60, "/v1/account itself does not count");
  });

  test("a minute 429 has Retry-After, details.window minute, and spends nothing of the day", async () => {
    const key = await t.keyFor("starter");
    for (let i = 0; i < 60; i++) assert.equal((await get(t, MARKET, key)).statusCode, 200);
    const refused = await get(t, MARKET, key);
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers["retry-after"], "26");
    assert.equal(refused.headers["x-ratelimit-remaining"], "940");
    assert.equal(refused.headers.ratelimit, '"minute";r=0;t=26, "day";r=940;t=85166');
    const body = refused.json();
    assert.equal(body.error.code, "RATE_LIMIT_EXCEEDED");
    assert.deepEqual(body.error.details, {
      window: "minute",
      limit: 60,
      reset_at: "2026-07-24T00:21:00Z",
      retry_after: 26,
    });
    assert.equal(
      body.error.message,
      "Rate limit exceeded: the starter plan allows 60 requests per minute. Retry after 26 s, or upgrade to pro for 300 requests per minute.",
    );
    for (let i = 0; i < 100; i++) await get(t, MARKET, key);
    assert.equal(await dayUsed(t, key), 60);
  });

  test("1000 admitted across minutes, then 429 until 00:00 UTC; the next day resets and Reset moves", async () => {
    const clock = new ManualClock(ANCHOR * 1e6);
    const day = await makeTestApp({ clock });
    try {
      await checkADayOfRequests([day], clock);
    } finally {
      await day.close();
    }
  });

  test("/v1/account reports plan, both windows, quota and features without counting", async () => {
    const key = await t.keyFor("pro");
    await get(t, MARKET, key);
    const res = await get(t, "/v1/account", key);
    const body = res.json();
    assert.equal(res.headers["x-ratelimit-remaining"], "49999");
    assert.equal(body.plan, "pro");
    assert.deepEqual(body.usage, {
      minute: { used: 1, limit: 300, remaining: 299, resets_at: "2026-07-24T00:21:00Z" },
      day: { used: 1, limit: 50000, remaining: 49999, resets_at: "2026-07-25T00:00:00Z" },
    });
    assert.deepEqual(body.quota, {
      included: true,
      month: "2026-07",
      limit: 5,
      used: 0,
      remaining: 5,
      resets_at: "2026-08-01T00:00:00Z",
    });
    assert.deepEqual(body.features, { spot: true, futures: true, backtest: true });
    assert.equal(body.btc_history, null);
    assert.equal(body.keys_per_account, 10);
    assert.match(body.key.id, /^[0-9A-Za-z]{8}$/);
    assert.ok(!res.body.includes(key.slice(12)), "the secret is never echoed");
  });
});

describe("the routes that do not count are capped per key", () => {
  test("UNCOUNTED_REQUESTS_PER_MINUTE of /v1/account and /quota together, then 429 until the minute ends; counted routes untouched", async () => {
    const t = await makeTestApp({ config: { uncountedRequestsPerMinute: 10 } });
    try {
      const key = await t.keyFor("starter");
      const other = await t.keyFor("starter");
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) => get(t, i % 2 ? "/v1/account" : "/v1/backtest-ai/quota", key)),
      );
      assert.equal(answers.filter((r) => r.statusCode === 200).length, 10);
      const refused = answers.filter((r) => r.statusCode === 429);
      assert.equal(refused.length, 20);
      assert.equal(refused[0].headers["retry-after"], "26");
      assert.equal(refused[0].headers["x-ratelimit-remaining"], "1000", "limit headers, nothing counted");
      assert.deepEqual(refused[0].json().error.details, {
        window: "minute",
        reason: "uncounted_requests",
        limit: 10,
        retry_after: 26,
      });
      // Still not counted: the day is untouched, counted routes answer, another key is not capped.
      assert.equal((await get(t, MARKET, key)).headers["x-ratelimit-remaining"], "999");
      assert.equal((await get(t, "/v1/account", other)).statusCode, 200);
      t.clock.advance(26e6);
      const next = await get(t, "/v1/account", key);
      assert.equal(next.statusCode, 200);
      assert.equal(next.json().usage.day.used, 1);
    } finally {
      await t.close();
    }
  });
});

describe("failed authentication is throttled per client address", () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test("30 failures a minute get 401, then 429 for the rest of the minute; a valid key is still served", async () => {
    const good = await t.keyFor("pro");
    for (let i = 0; i < 30; i++) assert.equal((await get(t, MARKET, "ud_guess", "10.0.0.1")).statusCode, 401);
    const throttled = await get(t, MARKET, "ud_guess", "10.0.0.1");
    assert.equal(throttled.statusCode, 429);
    assert.equal(throttled.headers["retry-after"], "26");
    assert.deepEqual(throttled.json().error.details, {
      window: "minute",
      reason: "authentication_failures",
      retry_after: 26,
    });
    // Only failures are throttled: a valid key from the same address (a NAT, a proxy) is served.
    assert.equal((await get(t, MARKET, good, "10.0.0.1")).statusCode, 200);
    assert.equal((await get(t, MARKET, good, "10.0.0.2")).statusCode, 200, "other addresses are unaffected");
    t.clock.advance(26e6);
    assert.equal((await get(t, MARKET, "ud_guess", "10.0.0.1")).statusCode, 401);
    assert.equal((await get(t, MARKET, good, "10.0.0.1")).statusCode, 200);
  });

  test("a valid key from an address that failed 100 times is served, and counted as usual", async () => {
    const good = await t.keyFor("pro");
    const answers = [];
    for (let i = 0; i < 100; i++) answers.push((await get(t, MARKET, `ud_guess${i}`, "10.0.0.9")).statusCode);
    assert.deepEqual(new Set(answers.slice(0, 30)), new Set([401]));
    assert.deepEqual(new Set(answers.slice(30)), new Set([429]));
    const served = await get(t, MARKET, good, "10.0.0.9");
    assert.equal(served.statusCode, 200);
    assert.equal(served.headers["x-ratelimit-remaining"], "49999");
    // And a request without a key from that address is still a failure, throttled.
    const keyless = await t.app.inject({ url: MARKET, remoteAddress: "10.0.0.9" });
    assert.equal(keyless.statusCode, 429);
  });
});

describe("the client address behind a proxy (TRUST_PROXY)", () => {
  const fail = (t: TestApp, forwardedFor: string, remoteAddress = "127.0.0.1") =>
    t.app.inject({
      url: MARKET,
      headers: { "x-api-key": "ud_guess", "x-forwarded-for": forwardedFor },
      remoteAddress,
    });

  test("X-Forwarded-For rotated by a peer that is not a trusted proxy does not escape the throttle", async () => {
    const t = await makeTestApp({ config: { trustProxy: "10.20.0.0/16" } });
    try {
      for (let i = 0; i < 30; i++) assert.equal((await fail(t, `198.51.100.${i}`)).statusCode, 401);
      assert.equal((await fail(t, "198.51.100.99")).statusCode, 429);
      assert.equal((await fail(t, "198.51.100.100, 10.20.0.1")).statusCode, 429);
    } finally {
      await t.close();
    }
  });

  test("an untrusted peer naming a victim's address in X-Forwarded-For does not lock the victim out", async () => {
    const t = await makeTestApp({ config: { trustProxy: "10.20.0.0/16" } });
    try {
      for (let i = 0; i < 40; i++) await fail(t, "203.0.113.7", "192.0.2.66");
      assert.equal((await fail(t, "203.0.113.7", "192.0.2.66")).statusCode, 429, "the attacker is throttled");
      // The victim, directly and through the trusted proxy, is not.
      assert.equal((await get(t, MARKET, "ud_guess", "203.0.113.7")).statusCode, 401);
      assert.equal((await fail(t, "203.0.113.7", "10.20.0.5")).statusCode, 401);
      assert.equal((await get(t, MARKET, t.key, "203.0.113.7")).statusCode, 200);
    } finally {
      await t.close();
    }
  });

  test("a hop count believes that many proxies nearest the server, and no more", async () => {
    const t = await makeTestApp({ config: { trustProxy: 1 } });
    try {
      // The one proxy appends the address it saw: entries a client wrote before it are not believed.
      for (let i = 0; i < 30; i++) {
        assert.equal((await fail(t, `198.51.100.${i}, 203.0.113.9`, "10.20.0.1")).statusCode, 401);
      }
      assert.equal((await fail(t, "198.51.100.200, 203.0.113.9", "10.20.0.1")).statusCode, 429);
      assert.equal(
        (await fail(t, "203.0.113.10", "10.20.0.1")).statusCode,
        401,
        "another client of the proxy",
      );
    } finally {
      await t.close();
    }
  });

  test("X-Forwarded-For names the address only when the proxy is trusted", async () => {
    const behindProxy = await makeTestApp({ config: { trustProxy: "127.0.0.1" } });
    const direct = await makeTestApp();
    try {
      const fail = (t: TestApp, client: string) =>
        t.app.inject({ url: MARKET, headers: { "x-api-key": "ud_guess", "x-forwarded-for": client } });
      for (let i = 0; i < 30; i++) assert.equal((await fail(behindProxy, "203.0.113.5")).statusCode, 401);
      assert.equal((await fail(behindProxy, "203.0.113.5")).statusCode, 429);
      assert.equal((await fail(behindProxy, "203.0.113.6")).statusCode, 401, "another client of the proxy");
      // Untrusted, the header is the caller's own word: a forged one does not escape the throttle.
      for (let i = 0; i < 30; i++) assert.equal((await fail(direct, `198.51.100.${i}`)).statusCode, 401);
      assert.equal((await fail(direct, "198.51.100.99")).statusCode, 429);
    } finally {
      await behindProxy.close();
      await direct.close();
    }
  });
});

/**
 * Two apps over one store, each with its own connection to the one Redis, as two replicas would be;
 * `work` gets both, and everything is closed after it.
 */
async function withTwoReplicas(clock: ManualClock, work: (apps: [TestApp, TestApp]) => Promise<void>) {
  const limiters = [await openRedisLimiter(), await openRedisLimiter()];
  const first = await makeTestApp({ limiter: limiters[0], clock });
  const second = await makeTestApp({ store: first.store, seed: false, limiter: limiters[1], clock });
  try {
    await work([first, second]);
  } finally {
    await first.app.close();
    await second.app.close();
    for (const limiter of limiters) await limiter.close();
    await first.store.close();
  }
}

describe("limits shared by two app instances through one Redis", { skip: SKIP_WITHOUT_REDIS }, () => {
  test("300 concurrent requests spread over both: exactly 60 admitted; the day shows 60 on each", async () => {
    await withTwoReplicas(new ManualClock(ANCHOR * 1e6), async ([first, second]) => {
      // A new key has counters of its own, whatever earlier runs left in this Redis.
      const key = await first.keyFor("starter");
      const answers = await Promise.all(
        Array.from({ length: 300 }, (_, i) => get(i % 2 ? first : second, MARKET, key)),
      );
      assert.equal(answers.filter((r) => r.statusCode === 200).length, 60);
      assert.equal(answers.filter((r) => r.statusCode === 429).length, 240);
      assert.equal(await dayUsed(first, key), 60);
      assert.equal(await dayUsed(second, key), 60);
    });
  });

  test("a whole day over both: 1000 admitted across minutes, then 429 until 00:00 UTC", async () => {
    const clock = new ManualClock(ANCHOR * 1e6);
    await withTwoReplicas(clock, (apps) => checkADayOfRequests(apps, clock));
  });
});
