import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { makeTestApp } from "../helpers/app.ts";

// How a flood of keyless requests moves the latency of an authenticated one is measured by the bench
// (bench/keyless-flood.ts, `BENCH_ONLY=keyless-flood npm run bench`), not timed here.

describe("the per-address limit on what needs no key", () => {
  test("KEYLESS_REQUESTS_PER_MINUTE requests a minute from an address, then 429 with Retry-After until the minute ends", async () => {
    const t = await makeTestApp({ seed: false, config: { keylessRequestsPerMinute: 5 } });
    try {
      const from = (url: string, remoteAddress: string) => t.app.inject({ url, remoteAddress });
      for (const url of ["/openapi.json", "/llms.txt", "/docs/json", "/nothing-here", "/openapi.json"]) {
        assert.notEqual((await from(url, "192.0.2.1")).statusCode, 429, url);
      }
      const refused = await from("/llms.txt", "192.0.2.1");
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.headers["retry-after"], "26");
      assert.equal(refused.headers["access-control-allow-origin"], "*");
      assert.deepEqual(refused.json().error.details, {
        window: "minute",
        reason: "keyless_requests",
        limit: 5,
        retry_after: 26,
      });
      assert.equal((await from("/docs/static/swagger-ui.css", "192.0.2.1")).statusCode, 429);
      // The probes, the API with a key, and other addresses are not touched.
      assert.equal((await from("/healthz", "192.0.2.1")).statusCode, 200);
      assert.equal((await from("/readyz", "192.0.2.1")).statusCode, 200);
      const keyed = await t.app.inject({
        url: "/v1/account",
        headers: { "x-api-key": t.key },
        remoteAddress: "192.0.2.1",
      });
      assert.equal(keyed.statusCode, 200);
      assert.equal((await from("/openapi.json", "192.0.2.2")).statusCode, 200);
      // A preflight is answered before any limit.
      const preflight = await t.app.inject({
        method: "OPTIONS",
        url: "/openapi.json",
        headers: { origin: "https://a.example", "access-control-request-method": "GET" },
        remoteAddress: "192.0.2.1",
      });
      assert.equal(preflight.statusCode, 204);
      t.clock.advance(26e6);
      assert.equal((await from("/openapi.json", "192.0.2.1")).statusCode, 200);
    } finally {
      await t.close();
    }
  });
});

describe("a keyless flood", () => {
  test("of 400 requests at once from one address: exactly the limit answered, the rest 429, keyed requests and other addresses untouched", async () => {
    const t = await makeTestApp({ seed: false, config: { keylessRequestsPerMinute: 120 } });
    try {
      const flood = Array.from({ length: 400 }, (_, i) =>
        t.app.inject({
          url: ["/llms.txt", "/nothing-here"][i % 2],
          remoteAddress: "192.0.2.7",
        }),
      );
      const keyed = Array.from({ length: 40 }, () =>
        t.app.inject({ url: "/v1/account", headers: { "x-api-key": t.key }, remoteAddress: "192.0.2.7" }),
      );
      const other = t.app.inject({ url: "/llms.txt", remoteAddress: "192.0.2.8" });
      const statuses = (await Promise.all(flood)).map((r) => r.statusCode);
      assert.equal(statuses.filter((s) => s !== 429).length, 120);
      assert.equal(statuses.filter((s) => s === 429).length, 280);
      assert.deepEqual(new Set((await Promise.all(keyed)).map((r) => r.statusCode)), new Set([200]));
      assert.equal((await other).statusCode, 200);
    } finally {
      await t.close();
    }
  });
});
