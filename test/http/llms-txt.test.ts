import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

// /llms.txt (https://llmstxt.org): served without a key, plain text, and generated from the OpenAPI
// document, so every operation of the committed openapi.json must appear in it with its parameters.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the document read field by field

const DOCUMENT = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8")) as Json;

interface Operation {
  method: string;
  path: string;
  op: Json;
}

const OPERATIONS: Operation[] = Object.entries(DOCUMENT.paths as Json).flatMap(([path, methods]) =>
  Object.entries(methods as Json).map(([method, op]) => ({
    method: method.toUpperCase(),
    path,
    op: op as Json,
  })),
);

describe("GET /llms.txt", () => {
  let t: TestApp;
  let text: string;
  before(async () => {
    t = await makeTestApp({ seed: false, config: { publicBaseUrl: "http://updown.example:8080" } });
    const res = await t.app.inject({ url: "/llms.txt", headers: { host: "evil.example" } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "text/plain; charset=utf-8");
    text = res.body;
  });
  after(() => t.close());

  test("is llmstxt.org markdown: one H1, a blockquote summary, then H2 sections of list lines", () => {
    const lines = text.split("\n");
    assert.equal(lines[0], "# Up or Down history API");
    assert.equal(lines.filter((l) => l.startsWith("# ")).length, 1);
    assert.ok(lines[2].startsWith("> Recorded history of Polymarket"), lines[2]);
    const sections = lines.filter((l) => l.startsWith("## "));
    for (const name of [
      "## Authentication",
      "## MCP (for AI agents)",
      "## Reference",
      "## Endpoints: markets",
    ]) {
      assert.ok(sections.includes(name), name);
    }
    assert.ok(text.endsWith("\n") && !text.includes("\n\n\n"));
  });

  test("lists every operation of openapi.json with its summary, parameters and link", () => {
    assert.ok(OPERATIONS.length > 25);
    const entries = text.split("\n- [").slice(1);
    for (const { method, path, op } of OPERATIONS) {
      const entry = entries.find((e) => e.startsWith(`${method} ${path}](`));
      assert.ok(entry, `${method} ${path} is missing`);
      assert.ok(
        entry.includes(`(http://updown.example:8080/docs#/${op.tags[0]}/${op.operationId})`),
        op.operationId,
      );
      assert.ok(entry.includes(op.summary), `${op.operationId}: its summary`);
      for (const p of op.parameters ?? []) {
        assert.ok(
          entry.includes(`- \`${p.name}\` (${p.in}, ${p.required ? "required" : "optional"}`),
          `${op.operationId}: ${p.name}`,
        );
      }
      const body = op.requestBody?.content?.["application/json"]?.schema;
      for (const field of Object.keys(body?.properties ?? {})) {
        if (String(body.properties[field].description ?? "").startsWith("Alias of")) continue;
        assert.ok(entry.includes(`- \`${field}\` (`), `${op.operationId}: body field ${field}`);
      }
    }
    assert.match(text, /`size` \(query, required, number, above 0, up to 1000000\)/);
    assert.match(text, /`definition` \(a StrategyDefinition object\)/);
  });

  test("says how to authenticate, the plans' limits, where demo keys are, and both MCP doors", () => {
    for (const needle of [
      "X-API-Key",
      "`starter`: 60 requests per minute, 1000 requests per day",
      "`pro`: 300 requests per minute, 50000 requests per day, 5 backtest generations a month",
      "data/demo-keys.json",
      "[POST http://updown.example:8080/mcp](http://updown.example:8080/mcp)",
      "`updown mcp`",
      "UPDOWN_API_KEY",
      "UPDOWN_URL",
      "[OpenAPI document](http://updown.example:8080/openapi.json)",
    ]) {
      assert.ok(text.includes(needle), needle);
    }
  });

  test("needs no key, counts nothing, and is left out of the OpenAPI document like /mcp", async () => {
    const usage = async () => (await t.get("/v1/account")).json().usage;
    const before = await usage();
    const res = await t.app.inject({ url: "/llms.txt", headers: { "x-api-key": t.key } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await usage(), before);
    assert.equal(res.headers["x-ratelimit-remaining"], undefined);
    const served = (await t.app.inject({ url: "/openapi.json" })).json();
    assert.equal(served.paths["/llms.txt"], undefined);
    assert.equal(served.paths["/mcp"], undefined);
    assert.equal(DOCUMENT.paths["/llms.txt"], undefined);
  });

  test("names only PUBLIC_BASE_URL, whatever Host, X-Forwarded-Host or -Proto the request wrote", async () => {
    const hostile = await t.app.inject({
      url: "/llms.txt",
      headers: {
        host: "evil.example",
        "x-forwarded-host": "evil.example",
        "x-forwarded-proto": "javascript",
      },
    });
    assert.equal(hostile.body, text);
    assert.doesNotMatch(hostile.body, /evil|javascript:/);
    const addresses = hostile.body.match(/[a-z][a-z0-9+.-]*:\/\/[^\s)\]]+/g) ?? [];
    assert.ok(addresses.length > 10);
    // Besides the service: the default UPDOWN_URL of `updown mcp`, which runs on the agent's machine.
    const foreign = addresses.filter((a) => !/^http:\/\/updown\.example:8080\b/.test(a));
    assert.deepEqual(foreign, ["http://127.0.0.1:8080"]);
  });

  test("is cached: a strong ETag, Cache-Control, 304 on If-None-Match, the same bytes in each encoding", async () => {
    const plain = await t.app.inject({ url: "/llms.txt" });
    assert.match(String(plain.headers.etag), /^"[A-Za-z0-9_-]+"$/);
    assert.equal(plain.headers["cache-control"], "public, max-age=300");
    const again = await t.app.inject({
      url: "/llms.txt",
      headers: { "if-none-match": String(plain.headers.etag) },
    });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, "");
    for (const encoding of ["gzip", "br"]) {
      const res = await t.app.inject({ url: "/llms.txt", headers: { "accept-encoding": encoding } });
      assert.equal(res.headers["content-encoding"], encoding);
      assert.equal(res.headers.etag, plain.headers.etag);
      const body = encoding === "br" ? brotliDecompressSync(res.rawPayload) : gunzipSync(res.rawPayload);
      assert.equal(body.toString(), plain.body);
    }
  });
});

test("without PUBLIC_BASE_URL, /llms.txt gives addresses relative to where it was read, never the Host", async () => {
  const t = await makeTestApp({ seed: false });
  try {
    const res = await t.app.inject({ url: "/llms.txt", headers: { host: "evil.example" } });
    assert.equal(res.statusCode, 200);
    assert.doesNotMatch(res.body, /evil|:\/\/(?!llmstxt\.org|127\.0\.0\.1:8080)/);
    assert.ok(res.body.includes("[OpenAPI document](/openapi.json)"));
    assert.ok(res.body.includes("[POST /mcp](/mcp)"));
  } finally {
    await t.close();
  }
});
