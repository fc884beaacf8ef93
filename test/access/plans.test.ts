import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { KeyService } from "../../src/access/keys.ts";
import { DEFAULT_PLANS_FILE, loadPlans } from "../../src/access/plans.ts";
import { QuotaService } from "../../src/access/quota.ts";
import type { Market } from "../../src/domain/market.ts";
import { parsePlans, PlanConfigError } from "../../src/domain/plan.ts";
import type { PlanName } from "../../src/domain/api-key.ts";
import { formatSlug } from "../../src/domain/slug.ts";
import type { AppContext } from "../../src/http/context.ts";
import type { ApiError } from "../../src/http/errors.ts";
import { requireFeature } from "../../src/http/params.ts";
import type { FastifyRequest } from "fastify";
import { ManualClock, systemClock } from "../../src/domain/time.ts";
import { buildApp } from "../../src/http/app.ts";
import { HAND_MARKET, LIMIT_HEADERS, makeTestApp, openTestStore, type TestApp } from "../helpers/app.ts";

/** A BTC 5m market with no snapshots: enough to count in a plan's window. */
function btc5m(startTime: number): Market {
  return {
    ...HAND_MARKET,
    coin: "btc",
    marketType: "5m",
    slug: formatSlug("btc", "5m", startTime),
    startTime,
    endTime: startTime + 300,
  };
}

const FIRST_START = 1784000100;
const START_OF = (i: number) => FIRST_START + i * 300;

describe("BTC history windows of the free plan (DESIGN 3.3)", () => {
  let t: TestApp;
  let starter: string;
  let pro: string;
  before(async () => {
    t = await makeTestApp({ seed: false });
    // 52 BTC 5m markets: the starter plan opens the latest 50 of them.
    for (let i = 0; i < 52; i++) await t.store.markets.upsertMarket(btc5m(START_OF(i)));
    await t.store.markets.upsertMarket({ ...HAND_MARKET, coin: "eth", slug: "eth-updown-15m-1784851200" });
    starter = await t.keyFor("starter");
    pro = await t.keyFor("pro");
  });
  after(() => t.close());
  const get = (url: string, key: string) =>
    t.app.inject({ method: "GET", url, headers: { "x-api-key": key } });

  test("detail, snapshots, /at and export of an older market: 403 with details.required_plan", async () => {
    const oldest = formatSlug("btc", "5m", START_OF(1));
    let remaining = 1000;
    for (const path of ["", "/snapshots", "/snapshots/at?time=2026-07-24T00:00:00Z", "/snapshots/export"]) {
      const res = await get(`/v1/markets/${oldest}${path}`, starter);
      assert.equal(res.statusCode, 403, path);
      const body = res.json();
      assert.equal(body.error.code, "TIER_ACCESS_DENIED");
      assert.deepEqual(body.error.details, { required_plan: "pro" });
      assert.equal(
        body.error.message,
        `The starter plan opens the latest 50 BTC 5m markets; ${oldest} is older. Upgrade to pro for the full history.`,
      );
      // Counted like any request, and carrying every limit header (ANCHOR's clock: 26 s left in the minute).
      remaining--;
      assert.deepEqual(
        LIMIT_HEADERS.map((h) => res.headers[h]),
        [
          "1000",
          String(remaining),
          "1784937600",
          "starter",
          '"minute";q=60;w=60, "day";q=1000;w=86400',
          `"minute";r=${remaining - 940};t=26, "day";r=${remaining};t=85166`,
        ],
      );
    }
    const inside = formatSlug("btc", "5m", START_OF(2));
    assert.equal((await get(`/v1/markets/${inside}`, starter)).statusCode, 200);
    assert.equal((await get(`/v1/markets/${oldest}`, pro)).statusCode, 200);
  });

  test("the list leaves older markets out of markets and total, and says so in warning", async () => {
    const listed = (await get("/v1/markets?coin=btc&limit=100", starter)).json();
    assert.equal(listed.total, 50);
    assert.equal(listed.markets.length, 50);
    assert.equal(listed.markets.at(-1).slug, formatSlug("btc", "5m", START_OF(2)));
    assert.equal(
      listed.warning,
      "The starter plan opens only the latest BTC markets of each type: 50 (5m), 50 (15m), 24 (1h), 24 (4h), 5 (24h). Older BTC markets are left out of this list and of total; upgrade to pro for the full history.",
    );
    const all = (await get("/v1/markets", starter)).json();
    assert.equal(all.total, 51);
    assert.equal((await get("/v1/markets?coin=eth", starter)).json().warning, null);
    const forPro = (await get("/v1/markets?coin=btc", pro)).json();
    assert.deepEqual([forPro.total, forPro.warning], [52, null]);
  });

  test("a window not yet full hides nothing and warns of nothing", async () => {
    const small = await makeTestApp({ seed: false });
    try {
      for (let i = 0; i < 50; i++) await small.store.markets.upsertMarket(btc5m(START_OF(i)));
      const key = await small.keyFor("starter");
      const res = await small.app.inject({ url: "/v1/markets?coin=btc", headers: { "x-api-key": key } });
      assert.deepEqual([res.json().total, res.json().warning], [50, null]);
    } finally {
      await small.close();
    }
  });
});

describe("feature flags", () => {
  test("a plan without a feature gets 403 naming the cheapest plan with it", async () => {
    const plans = parsePlans(defaultsJson(), { starter: { features: { spot: false } } });
    const ctx = { plans } as AppContext;
    const caller = (plan: PlanName) => ({ apiKey: { plan } }) as FastifyRequest;
    assert.doesNotThrow(() => requireFeature(ctx, caller("pro"), "backtest"));
    assert.doesNotThrow(() => requireFeature(ctx, caller("starter"), "futures"));
    for (const [feature, message] of [
      ["spot", "The starter plan does not include spot exchange data. Upgrade to pro to use it."],
      ["backtest", "The starter plan does not include Backtest AI. Upgrade to pro to use it."],
    ] as const) {
      assert.throws(
        () => requireFeature(ctx, caller("starter"), feature),
        (err: ApiError) => {
          assert.deepEqual(
            [err.status, err.code, err.message, err.details],
            [403, "TIER_ACCESS_DENIED", message, { required_plan: "pro" }],
          );
          return true;
        },
      );
    }
  });
});

describe("the plans file", () => {
  test("defaults are DESIGN 3.3; an override replaces only what it names", () => {
    const plans = loadPlans();
    assert.deepEqual(
      [plans.starter.requestsPerMinute, plans.starter.requestsPerDay, plans.pro.requestsPerMinute],
      [60, 1000, 300],
    );
    assert.equal(plans.pro.requestsPerDay, 50000);
    assert.equal(plans.enterprise.requestsPerDay, null);
    assert.deepEqual(plans.starter.history, { btc: { "5m": 50, "15m": 50, "1h": 24, "4h": 24, "24h": 5 } });
    assert.equal(plans.pro.backtestGenerationsPerMonth, 5);
    const raw = { starter: { requests_per_minute: 10, features: { spot: false } } };
    const changed = parsePlans(defaultsJson(), raw);
    assert.equal(changed.starter.requestsPerMinute, 10);
    assert.equal(changed.starter.requestsPerDay, 1000);
    assert.deepEqual(changed.starter.features, { spot: false, futures: true, backtest: false });
  });

  test("the app reads PLANS_FILE over the defaults", async () => {
    const dir = mkdtempSync(join(tmpdir(), "updown-plans-"));
    const store = await openTestStore();
    try {
      const plansFile = join(dir, "plans.json");
      writeFileSync(plansFile, JSON.stringify({ starter: { requests_per_minute: 2, requests_per_day: 7 } }));
      const app = await buildApp({ store, config: { plansFile } });
      const { key } = await new KeyService(store.keys, systemClock, loadPlans(plansFile)).create({
        plan: "starter",
      });
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        const res = await app.inject({ url: "/v1/markets", headers: { "x-api-key": key } });
        statuses.push(res.statusCode);
        if (i === 0) assert.equal(res.headers["ratelimit-policy"], '"minute";q=2;w=60, "day";q=7;w=86400');
      }
      assert.deepEqual(statuses, [200, 200, 429]);
      await app.close();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("mistakes are named", () => {
    const cases: [unknown, RegExp][] = [
      [{ gold: {} }, /"gold" is not a plan/],
      [
        { pro: { requests_per_minute: -1 } },
        /plans\.pro\.requests_per_minute must be a whole number >= 0 or null/,
      ],
      [{ pro: { btc_history: { "5m": 3 } } }, /plans\.pro\.history\.btc\.15m is required/],
      [{ pro: { features: { spot: "yes" } } }, /plans\.pro\.features\.spot must be true or false/],
    ];
    for (const [override, message] of cases) {
      assert.throws(
        () => parsePlans(defaultsJson(), override),
        (err: Error) => {
          assert.ok(err instanceof PlanConfigError);
          assert.match(err.message, message);
          return true;
        },
      );
    }
  });
});

function defaultsJson(): unknown {
  return JSON.parse(readFileSync(DEFAULT_PLANS_FILE, "utf8"));
}

describe("the monthly backtest quota", () => {
  let t: TestApp;
  let quota: QuotaService;
  before(async () => {
    t = await makeTestApp({ seed: false });
    quota = new QuotaService(t.store.quota, t.clock, loadPlans());
  });
  after(() => t.close());

  test("50 concurrent charges on a pro key: exactly 5 succeed, and the quota endpoint shows it", async () => {
    const { key, record } = await t.keys.create({ plan: "pro", account: "quota" });
    const spends = await Promise.all(Array.from({ length: 50 }, () => quota.spend(record)));
    assert.equal(spends.filter((s) => s.status === "charged").length, 5);
    assert.equal(spends.filter((s) => s.status === "exhausted").length, 45);
    const res = await t.app.inject({ url: "/v1/backtest-ai/quota", headers: { "x-api-key": key } });
    assert.equal(
      res.body,
      '{"plan":"pro","included":true,"month":"2026-07","limit":5,"used":5,"remaining":0,"resets_at":"2026-08-01T00:00:00Z"}',
    );
    assert.equal(res.headers["x-ratelimit-remaining"], "50000", "the quota endpoint does not count");
  });

  test("a refund gives the unit back; an idempotency key replays instead of charging again", async () => {
    const { record } = await t.keys.create({ plan: "pro", account: "idem" });
    const first = await quota.spend(record, "req-1");
    assert.equal(first.status, "charged");
    if (first.status !== "charged") return;
    await quota.recordResult(record, first.chargeId, '{"strategy":1}');
    const retry = await quota.spend(record, "req-1");
    assert.deepEqual(retry, {
      status: "replayed",
      chargeId: first.chargeId,
      result: '{"strategy":1}',
      quota: { ...first.quota },
    });
    assert.equal((await quota.status(record)).used, 1);
    assert.equal(await quota.refund(record, first.chargeId), true);
    assert.equal(await quota.refund(record, first.chargeId), false, "refunded once only");
    assert.equal((await quota.status(record)).used, 0);
    const again = await quota.spend(record, "req-1");
    assert.equal(again.status, "charged", "a refunded charge's idempotency key may be spent anew");
  });

  test("the month boundary resets the quota; starter has none and enterprise no limit", async () => {
    const clock = new ManualClock(Date.UTC(2026, 6, 31, 23, 59, 59, 999) * 1000);
    const monthly = new QuotaService(t.store.quota, clock, loadPlans());
    const { record } = await t.keys.create({ plan: "pro", account: "month" });
    for (let i = 0; i < 5; i++) assert.equal((await monthly.spend(record)).status, "charged");
    assert.equal((await monthly.spend(record)).status, "exhausted");
    clock.set(Date.UTC(2026, 7, 1) * 1000);
    const august = await monthly.status(record);
    assert.deepEqual([august.month, august.used, august.remaining], ["2026-08", 0, 5]);
    assert.equal((await monthly.spend(record)).status, "charged");

    const starter = await t.keys.create({ plan: "starter", account: "month" });
    assert.deepEqual(await monthly.spend(starter.record), { status: "not_included" });
    const free = await t.app.inject({ url: "/v1/backtest-ai/quota", headers: { "x-api-key": starter.key } });
    assert.deepEqual([free.json().included, free.json().limit, free.json().remaining], [false, 0, 0]);
    const enterprise = await t.keys.create({ plan: "enterprise", account: "month" });
    for (let i = 0; i < 20; i++) assert.equal((await monthly.spend(enterprise.record)).status, "charged");
    assert.equal((await monthly.status(enterprise.record)).remaining, null);
  });
});
