import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildApp } from "../../../src/http/app.ts";
import { makeTestApp, openTestStore, type TestApp } from "../../helpers/app.ts";

describe("operations endpoints", () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test("/healthz and /readyz need no key; /readyz names the store and limiter", async () => {
    const health = await t.app.inject({ url: "/healthz" });
    assert.deepEqual([health.statusCode, health.body], [200, '{"status":"ok"}']);
    const ready = await t.app.inject({ url: "/readyz" });
    assert.deepEqual(
      [ready.statusCode, ready.body],
      [200, `{"status":"ready","store":"${t.store.kind}","limiter":"memory"}`],
    );
  });

  test("/metrics counts requests by route and status, limiter decisions and latency", async () => {
    const starter = await t.keyFor("starter");
    for (let i = 0; i < 3; i++) await t.get("/v1/markets/btc-updown-5m-1784851800");
    await t.app.inject({ url: "/v1/markets/btc-updown-5m-1", headers: { "x-api-key": starter } });
    await t.app.inject({ url: "/v1/markets", headers: { "x-api-key": "ud_wrong" } });
    const res = await t.app.inject({ url: "/metrics" });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    const lines = res.body.split("\n");
    for (const expected of [
      'updown_http_requests_total{route="/v1/markets/:slug",method="GET",status="200"} 3',
      'updown_http_requests_total{route="/v1/markets/:slug",method="GET",status="404"} 1',
      'updown_http_requests_total{route="/v1/markets",method="GET",status="401"} 1',
      'updown_rate_limit_decisions_total{result="admitted",limiter="memory"} 4',
      'updown_rate_limit_decisions_total{result="auth_failure",limiter="memory"} 1',
      'updown_http_request_duration_seconds_count{route="/v1/markets/:slug"} 4',
      "updown_rate_limiter_degraded 0",
    ]) {
      assert.ok(lines.includes(expected), `missing: ${expected}\n${res.body}`);
    }
  });

  test("/metrics answers loopback only, or a bearer of METRICS_TOKEN", async () => {
    const remote = await t.app.inject({ url: "/metrics", remoteAddress: "10.1.2.3" });
    assert.equal(remote.statusCode, 404);
    const store = await openTestStore();
    const app = await buildApp({ store, config: { metricsToken: "s3cret" } });
    try {
      assert.equal((await app.inject({ url: "/metrics" })).statusCode, 401);
      const wrong = await app.inject({ url: "/metrics", headers: { authorization: "Bearer s3cres" } });
      assert.equal(wrong.statusCode, 401);
      const right = await app.inject({
        url: "/metrics",
        remoteAddress: "10.1.2.3",
        headers: { authorization: "Bearer s3cret" },
      });
      assert.equal(right.statusCode, 200);
    } finally {
      await app.close();
      await store.close();
    }
  });
});

describe("a store that cannot be reached", () => {
  test("answers 503 SERVICE_UNAVAILABLE with Retry-After, counted in /metrics; /readyz says 503", async () => {
    const t = await makeTestApp();
    try {
      // What pg throws when the server refuses connections.
      const refused = () =>
        Promise.reject(
          Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
        );
      const markets = t.store.markets as unknown as Record<string, unknown>;
      markets.getMarket = refused;
      markets.countMarkets = refused;
      const res = await t.get("/v1/markets/btc-updown-5m-1784851800");
      assert.equal(res.statusCode, 503);
      assert.equal(res.headers["retry-after"], "5");
      assert.equal(res.json().error.code, "SERVICE_UNAVAILABLE");
      assert.ok(!res.body.includes("ECONNREFUSED"), "nothing internal leaks");
      assert.equal(res.headers["x-tier"], "pro", "limit headers still on the answer");
      const ready = await t.app.inject({ url: "/readyz" });
      assert.equal(ready.statusCode, 503);
      const metrics = (await t.app.inject({ url: "/metrics" })).body;
      assert.ok(metrics.includes('updown_store_errors_total{kind="unavailable"} 1'));
    } finally {
      await t.close();
    }
  });
});
