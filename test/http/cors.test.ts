import assert from "node:assert/strict";
import { test } from "node:test";
import { makeTestApp } from "../helpers/app.ts";

// /metrics never carries CORS headers, however its path is spelt (issue 21, finding 6): the exclusion
// is judged on the route the router matched from the decoded path, not on the raw URL.
test("/metrics spelt with percent-escapes is still /metrics: served to loopback, never with CORS headers", async () => {
  const t = await makeTestApp({ seed: false });
  try {
    for (const url of ["/metrics", "/%6detrics", "/%6D%65trics", "/metrics?x=1", "/%6detrics?x=1"]) {
      const res = await t.app.inject({ url, headers: { origin: "https://evil.example" } });
      assert.equal(res.statusCode, 200, url);
      assert.match(res.body, /updown_/, url);
      assert.equal(res.headers["access-control-allow-origin"], undefined, url);
      assert.equal(res.headers["access-control-expose-headers"], undefined, url);
      const preflight = await t.app.inject({
        method: "OPTIONS",
        url,
        headers: { origin: "https://evil.example", "access-control-request-method": "GET" },
      });
      assert.equal(preflight.headers["access-control-allow-origin"], undefined, url);
      assert.equal(preflight.headers["access-control-allow-methods"], undefined, url);
    }
    const api = await t.app.inject({ url: "/%6fpenapi.json" });
    assert.equal(api.headers["access-control-allow-origin"], "*");
  } finally {
    await t.close();
  }
});
