import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

/**
 * Files answered from memory (src/http/documents.ts): the documents and Swagger UI's assets, made once
 * and compressed once per encoding, with a strong ETag, Cache-Control and 304 (issue 21, finding 1).
 */

const COMMITTED = readFileSync(new URL("../../openapi.json", import.meta.url), "utf8");
const SWAGGER_STATIC = join(
  dirname(createRequire(import.meta.url).resolve("@fastify/swagger-ui/package.json")),
  "static",
);

function decode(body: Buffer, encoding: string | undefined): Buffer {
  if (encoding === "br") return brotliDecompressSync(body);
  if (encoding === "gzip") return gunzipSync(body);
  assert.equal(encoding, undefined);
  return body;
}

describe("documents served from memory", () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ seed: false });
  });
  after(() => t.close());

  for (const path of ["/openapi.json", "/docs/json"]) {
    test(`${path}: the committed document in each encoding, one strong ETag, Cache-Control, 304`, async () => {
      const plain = await t.app.inject({ url: path });
      assert.equal(plain.statusCode, 200);
      assert.equal(plain.headers["content-type"], "application/json; charset=utf-8");
      assert.equal(plain.headers["cache-control"], "public, max-age=300");
      assert.match(String(plain.headers.etag), /^"[A-Za-z0-9_-]{27}"$/);
      assert.equal(plain.headers.vary, "Accept-Encoding");
      assert.deepEqual(JSON.parse(plain.body), JSON.parse(COMMITTED));
      for (const encoding of ["identity", "gzip", "br"]) {
        const res = await t.app.inject({ url: path, headers: { "accept-encoding": encoding } });
        assert.equal(res.headers.etag, plain.headers.etag);
        assert.equal(
          decode(res.rawPayload, res.headers["content-encoding"] as string | undefined).toString(),
          plain.body,
        );
      }
      for (const ifNoneMatch of [
        String(plain.headers.etag),
        `"other", W/${String(plain.headers.etag)}`,
        "*",
      ]) {
        const res = await t.app.inject({ url: path, headers: { "if-none-match": ifNoneMatch } });
        assert.equal(res.statusCode, 304, ifNoneMatch);
        assert.equal(res.rawPayload.length, 0);
        assert.equal(res.headers.etag, plain.headers.etag);
      }
      const stale = await t.app.inject({ url: path, headers: { "if-none-match": '"stale"' } });
      assert.equal(stale.statusCode, 200);
      const head = await t.app.inject({ method: "HEAD", url: path });
      assert.equal(head.statusCode, 200);
      assert.equal(head.headers.etag, plain.headers.etag);
      assert.equal(head.rawPayload.length, 0);
    });
  }

  test("the same bytes object answers every request: rendered and compressed once", async () => {
    const a = await t.app.inject({ url: "/openapi.json", headers: { "accept-encoding": "br" } });
    const b = await t.app.inject({ url: "/openapi.json", headers: { "accept-encoding": "br" } });
    assert.deepEqual(a.rawPayload, b.rawPayload);
    assert.ok(a.rawPayload.length < COMMITTED.length / 8, `br: ${a.rawPayload.length} bytes`);
  });

  test("Swagger UI's assets: the package's files, compressed, with an ETag and a day's Cache-Control", async () => {
    for (const name of ["swagger-ui-bundle.js", "swagger-ui.css", "index.css", "favicon-32x32.png"]) {
      const file = readFileSync(join(SWAGGER_STATIC, name));
      const res = await t.app.inject({ url: `/docs/static/${name}`, headers: { "accept-encoding": "gzip" } });
      assert.equal(res.statusCode, 200, name);
      assert.equal(res.headers["cache-control"], "public, max-age=86400");
      const png = name.endsWith(".png");
      assert.equal(res.headers["content-encoding"], png ? undefined : "gzip", name);
      assert.ok(
        decode(res.rawPayload, res.headers["content-encoding"] as string | undefined).equals(file),
        name,
      );
      const again = await t.app.inject({
        url: `/docs/static/${name}`,
        headers: { "if-none-match": String(res.headers.etag) },
      });
      assert.equal(again.statusCode, 304, name);
    }
    // A path spelt otherwise reaches the same file from memory, not the plugin's handler.
    const encoded = await t.app.inject({ url: "/docs/%6Ason" });
    assert.equal(encoded.headers.etag, (await t.app.inject({ url: "/docs/json" })).headers.etag);
    // The UI's page and its script still work: they name the document.
    const page = await t.app.inject({ url: "/docs/" });
    assert.equal(page.statusCode, 200);
    const initializer = await t.app.inject({ url: "/docs/static/swagger-initializer.js" });
    assert.match(initializer.body, /json/);
    assert.notEqual((await t.app.inject({ url: "/docs/static/nothing.js" })).statusCode, 200);
  });

  test("/docs/yaml: the document as YAML, from memory", async () => {
    const res = await t.app.inject({ url: "/docs/yaml" });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "application/x-yaml");
    assert.match(res.body, /^openapi: 3\.1\.0/m);
    assert.ok(res.headers.etag);
  });
});
