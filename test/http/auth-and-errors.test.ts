import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { KEY_RECORD_TTL } from "../../src/access/keys.ts";
import { hashKey, KEY_PREFIX } from "../../src/domain/api-key.ts";
import { isoMicros } from "../../src/domain/time.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
before(async () => {
  t = await makeTestApp();
});
after(() => t.close());

const URL = "/v1/markets/btc-updown-5m-1784851800";
const UNAUTHORIZED_MESSAGE = "A valid API key is required in the X-API-Key header.";

describe("API keys", () => {
  test("a missing, malformed, unknown or revoked key gets one identical 401", async () => {
    const revoked = await t.keys.create({ plan: "pro", account: "revoked" });
    assert.equal(await t.keys.revoke(revoked.record.id), true);
    const unknown = `${KEY_PREFIX}AAAAAAAA_${"b".repeat(32)}`;
    const sameIdWrongSecret = `${revoked.key.slice(0, 12)}${"c".repeat(32)}`;
    const answers = [];
    for (const headers of [
      {},
      { "x-api-key": "" },
      { "x-api-key": "nope" },
      { "x-api-key": unknown },
      { "x-api-key": sameIdWrongSecret },
      { "x-api-key": revoked.key },
    ]) {
      const res = await t.app.inject({
        method: "GET",
        url: URL,
        headers: { ...headers, "x-request-id": "req-1" },
      });
      assert.equal(res.statusCode, 401);
      answers.push(res.body);
    }
    const expected = `{"success":false,"error":{"code":"UNAUTHORIZED","message":"${UNAUTHORIZED_MESSAGE}"},"request_id":"req-1","timestamp":"2026-07-24T00:20:34.123456Z"}`;
    for (const a of answers) assert.equal(a, expected);
  });

  test("a valid key is accepted; revoked elsewhere (the CLI, a replica) it is refused within a second", async () => {
    const created = await t.keys.create({ plan: "starter", account: "revocation", name: "test" });
    const ask = () => t.app.inject({ method: "GET", url: URL, headers: { "x-api-key": created.key } });
    assert.equal((await ask()).statusCode, 200);
    // t.keys is not the app's own KeyService: like `updown keys revoke`, it only writes the store.
    await t.keys.revoke(created.record.id);
    t.clock.advance(KEY_RECORD_TTL);
    assert.equal((await ask()).statusCode, 401);
  });

  test("keys are stored only as SHA-256 hashes and look like ud_<id>_<secret>", async () => {
    const created = await t.keys.create({ plan: "enterprise" });
    assert.match(created.key, /^ud_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}$/);
    const stored = await t.store.keys.findApiKey(created.record.id);
    assert.ok(stored);
    assert.equal(stored.hash, hashKey(created.key));
    assert.ok(!JSON.stringify(stored).includes(created.key.slice(12)));
  });
});

describe("every response", () => {
  test("carries X-Request-Id: a valid incoming one is echoed, otherwise one is made", async () => {
    const echoed = await t.get(URL, { "x-request-id": "abc-123" });
    assert.equal(echoed.headers["x-request-id"], "abc-123");
    const made = await t.get(URL, { "x-request-id": "bad id with spaces" });
    assert.match(made.headers["x-request-id"] as string, /^[0-9a-f-]{36}$/);
    const none = await t.get(URL);
    assert.match(none.headers["x-request-id"] as string, /^[0-9a-f-]{36}$/);
    const err = await t.get("/v1/markets/none", { "x-request-id": "e-1" });
    assert.equal(err.headers["x-request-id"], "e-1");
    assert.equal(err.json().request_id, "e-1");
  });

  test("unknown routes and versions are 404 in the envelope", async () => {
    for (const url of ["/v1/nothing", "/v2/markets", "/nothing"]) {
      const res = await t.get(url, { "x-request-id": "r" });
      assert.equal(res.statusCode, 404, url);
      const body = res.json();
      assert.deepEqual(Object.keys(body), ["success", "error", "request_id", "timestamp"]);
      assert.equal(body.error.code, "RESOURCE_NOT_FOUND");
      assert.equal(body.timestamp, isoMicros(t.clock.nowMicros()));
    }
  });

  test("an internal failure is a 500 that leaks nothing", async () => {
    const original = t.store.markets.getMarket.bind(t.store);
    t.store.markets.getMarket = async () => {
      throw new Error("disk on fire at /var/secret/path");
    };
    try {
      // The live market: resolved ones may be answered from the app's record cache.
      const res = await t.get("/v1/markets/btc-updown-5m-1784852400");
      assert.equal(res.statusCode, 500);
      assert.equal(res.json().error.code, "INTERNAL_ERROR");
      assert.ok(!res.body.includes("secret"));
    } finally {
      t.store.markets.getMarket = original;
    }
  });
});

describe("documentation", () => {
  test("/openapi.json is OpenAPI 3.1 generated from the routes, without a key", async () => {
    const res = await t.app.inject({ method: "GET", url: "/openapi.json" });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, "3.1.0");
    for (const path of [
      "/v1/markets",
      "/v1/markets/{slug}",
      "/v1/markets/{slug}/snapshots",
      "/v1/markets/{slug}/snapshots/at",
    ]) {
      assert.ok(doc.paths[path]?.get, path);
    }
    const limit = doc.paths["/v1/markets/{slug}/snapshots"].get.parameters.find(
      (p: { name: string }) => p.name === "limit",
    );
    assert.deepEqual([limit.schema.minimum, limit.schema.maximum, limit.schema.default], [1, 1000, 1000]);
    assert.equal(doc.components.securitySchemes.apiKey.name, "X-API-Key");
  });

  test("/docs serves the documentation page without a key", async () => {
    const res = await t.app.inject({ method: "GET", url: "/docs" });
    const page =
      res.statusCode === 302
        ? await t.app.inject({ method: "GET", url: res.headers.location as string })
        : res;
    assert.equal(page.statusCode, 200);
    assert.match(page.headers["content-type"] as string, /text\/html/);
  });
});
