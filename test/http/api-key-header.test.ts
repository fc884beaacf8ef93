import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ANCHOR, LIMIT_HEADERS, makeTestApp, type TestApp } from "../helpers/app.ts";

// Authorization: Bearer <key> (PolyHistorical's way) wherever X-API-Key is taken (DESIGN 3.7): a
// sample of routes of every kind, counting, and the refusals. Answers are held against openapi.json.

const RESOLVED = `btc-updown-5m-${ANCHOR - (ANCHOR % 300) - 300}`;

describe("Authorization: Bearer", () => {
  let t: TestApp;
  const call = (method: "GET" | "POST", url: string, headers: Record<string, string>, payload?: unknown) =>
    t.app.inject({
      method,
      url,
      headers: payload === undefined ? headers : { ...headers, "content-type": "application/json" },
      payload: payload === undefined ? undefined : JSON.stringify(payload),
    });
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test("a sample of routes answers a bearer key as it answers X-API-Key, counted the same", async () => {
    const key = await t.keyFor("pro");
    const bearer = { authorization: `Bearer ${key}` };
    const routes: ["GET" | "POST", string, unknown?][] = [
      ["GET", "/v1/account"],
      ["GET", "/v1/markets?coin=btc&limit=2"],
      ["GET", `/v1/markets/${RESOLVED}/snapshots?limit=2`],
      ["GET", "/v1/backtest-ai/quota"],
      ["GET", "/v1/backtest-ai/strategies"],
      ["POST", "/v1/backtest-ai/generate", { preset: "dip_buying" }],
      [
        "POST",
        "/v1/replay",
        {
          marketSlug: RESOLVED,
          side: "UP",
          entryConditions: [{ field: "price_up", operator: "<", value: 0.5 }],
        },
      ],
    ];
    for (const [method, url, body] of routes) {
      const res = await call(method, url, bearer, body);
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      for (const name of LIMIT_HEADERS) assert.ok(res.headers[name] !== undefined, `${url} ${name}`);
    }
    const account = await call("GET", "/v1/account", { "x-api-key": key });
    // Five counted requests above (account and quota do not count), as with X-API-Key.
    assert.equal(account.json().usage.day.used, 5);
    assert.equal((await call("GET", "/v1/account", { authorization: `bearer   ${key}` })).statusCode, 200);
  });

  test("/mcp takes a bearer key too", async () => {
    const res = await call(
      "POST",
      "/mcp",
      { authorization: `Bearer ${t.key}`, accept: "application/json, text/event-stream" },
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_series", arguments: {} } },
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().result.isError, undefined, res.body);
  });

  test("both headers with one key are fine; with two different keys, 401 saying so, counted nowhere", async () => {
    const key = await t.keyFor("pro");
    const other = await t.keyFor("pro");
    const same = await call("GET", "/v1/markets?coin=btc&limit=1", {
      "x-api-key": key,
      authorization: `Bearer ${key}`,
    });
    assert.equal(same.statusCode, 200);
    const both = await call("GET", "/v1/markets?coin=btc&limit=1", {
      "x-api-key": key,
      authorization: `Bearer ${other}`,
    });
    assert.equal(both.statusCode, 401);
    assert.equal(both.json().error.code, "UNAUTHORIZED");
    assert.deepEqual(both.json().error.details, { reason: "two_keys" });
    assert.match(both.json().error.message, /two different keys/);
    assert.equal(both.headers["x-ratelimit-remaining"], undefined, "refused before authentication");
    for (const k of [key, other]) {
      const used = (await call("GET", "/v1/account", { "x-api-key": k })).json().usage.day.used;
      assert.equal(used, k === key ? 1 : 0);
    }
  });

  test("a wrong bearer key, or another scheme, is the one 401", async () => {
    for (const authorization of [
      "Bearer ud_wrong",
      `Basic ${Buffer.from("a:b").toString("base64")}`,
      "Bearer",
    ]) {
      const res = await call("GET", "/v1/account", { authorization });
      assert.equal(res.statusCode, 401, authorization);
      assert.equal(res.json().error.code, "UNAUTHORIZED");
    }
  });
});
