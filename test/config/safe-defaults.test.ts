import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DEFAULT_CONFIG, loadConfig } from "../../src/config.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

/** Defaults a service on the open internet needs from its first start (issue 11, point 4). */

let t: TestApp;
before(async () => {
  t = await makeTestApp();
});
after(() => t.close());

const RESOLVED = "btc-updown-5m-1784851800";

describe("X-Content-Type-Options", () => {
  test("nosniff on every answer: successes, errors, the document, the docs page, the web page", async () => {
    const etag = (await t.get(`/v1/markets/${RESOLVED}/snapshots`)).headers.etag as string;
    const answers = [
      await t.get("/v1/markets"),
      await t.get(`/v1/markets/${RESOLVED}/snapshots`, { "if-none-match": etag }),
      await t.get("/v1/markets?limit=0"),
      await t.get("/v1/markets", { "x-api-key": "ud_nope" }),
      await t.get("/v1/nothing"),
      await t.get("/healthz"),
      await t.get("/openapi.json"),
      await t.get("/docs"),
      await t.get("/"),
      await t.app.inject({ method: "DELETE", url: "/healthz" }),
    ];
    assert.deepEqual(
      answers.map((res) => res.statusCode),
      [200, 304, 400, 401, 404, 200, 200, 200, 200, 405],
    );
    for (const res of answers) assert.equal(res.headers["x-content-type-options"], "nosniff", res.body);
  });
});

describe("CORS", () => {
  const ORIGIN = { origin: "https://notebook.example" };

  test("any origin may read answers, errors included, and the headers a client needs", async () => {
    for (const res of [await t.get("/v1/markets", ORIGIN), await t.get("/v1/nothing", ORIGIN)]) {
      assert.equal(res.headers["access-control-allow-origin"], "*");
      assert.equal(res.headers["access-control-allow-credentials"], undefined);
      const exposed = String(res.headers["access-control-expose-headers"]).split(", ");
      for (const name of [
        "X-Request-Id",
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
        "RateLimit-Policy",
        "RateLimit",
        "Retry-After",
        "ETag",
      ]) {
        assert.ok(exposed.includes(name), name);
      }
    }
  });

  test("a preflight is 204 with the methods and headers allowed, needs no key and counts nothing", async () => {
    const usage = async () => (await t.get("/v1/account")).json().usage;
    const before = await usage();
    for (const url of ["/v1/markets", `/v1/markets/${RESOLVED}/snapshots?limit=5`, "/v1/btc/spot/latest"]) {
      const res = await t.app.inject({
        method: "OPTIONS",
        url,
        headers: {
          ...ORIGIN,
          "access-control-request-method": "GET",
          "access-control-request-headers": "x-api-key, x-request-id",
        },
      });
      assert.equal(res.statusCode, 204, url);
      assert.equal(res.body, "");
      assert.equal(res.headers["access-control-allow-origin"], "*");
      assert.equal(res.headers["access-control-allow-methods"], "GET, HEAD, POST, OPTIONS");
      const allowed = String(res.headers["access-control-allow-headers"]).split(", ");
      for (const name of ["X-API-Key", "X-Request-Id", "Content-Type", "Idempotency-Key"])
        assert.ok(allowed.includes(name), name);
      assert.equal(res.headers["access-control-max-age"], "86400");
      assert.equal(res.headers.allow, "GET, HEAD, OPTIONS");
      assert.ok(res.headers["x-request-id"]);
    }
    assert.deepEqual(await usage(), before);
  });

  test("/metrics, open to this machine without a token, is never readable by a page", async () => {
    const res = await t.app.inject({
      method: "GET",
      url: "/metrics",
      remoteAddress: "127.0.0.1",
      headers: ORIGIN,
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["access-control-allow-origin"], undefined);
    assert.equal(res.headers["x-content-type-options"], "nosniff");
  });
});

describe("limits on request size and time", () => {
  test("defaults: 256 KB of body, 10 s for headers, 30 s for a whole request; each from its variable", () => {
    assert.equal(DEFAULT_CONFIG.bodyLimitBytes, 256 * 1024);
    assert.equal(DEFAULT_CONFIG.headersTimeoutMs, 10_000);
    assert.equal(DEFAULT_CONFIG.requestTimeoutMs, 30_000);
    const config = loadConfig({ BODY_LIMIT_KB: "1", HEADERS_TIMEOUT_MS: "500" }, [
      "--request-timeout-ms",
      "900",
    ]);
    assert.equal(config.bodyLimitBytes, 1024);
    assert.equal(config.headersTimeoutMs, 500);
    assert.equal(config.requestTimeoutMs, 900);
  });

  test("a body over BODY_LIMIT_KB is 413 PAYLOAD_TOO_LARGE in the envelope", async () => {
    const small = await makeTestApp({ seed: false, config: { bodyLimitBytes: 1024 } });
    try {
      const res = await small.app.inject({
        method: "POST",
        url: "/healthz",
        headers: { "content-type": "application/json" },
        payload: JSON.stringify({ pad: "x".repeat(2048) }),
      });
      assert.equal(res.statusCode, 413);
      assert.equal(res.json().error.code, "PAYLOAD_TOO_LARGE");
      assert.equal(res.json().error.message, "The body exceeds the limit of 1024 bytes.");
      assert.ok(res.headers["x-request-id"]);
    } finally {
      await small.close();
    }
  });
});
