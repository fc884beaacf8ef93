import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { negotiate } from "../../src/http/compression.ts";
import { makeTestApp } from "../helpers/app.ts";
import { decoded } from "../helpers/contract.ts";

const RESOLVED_PAGE = "/v1/markets/btc-updown-5m-1784851800/snapshots?include_orderbook=true&limit=200";
const LIVE_PAGE = "/v1/markets/btc-updown-5m-1784852400/snapshots?include_orderbook=true";

describe("compression (DESIGN 3.8)", () => {
  test("negotiation honours q-values and prefers br, then zstd, then gzip", () => {
    assert.equal(negotiate(undefined), null);
    assert.equal(negotiate("identity"), null);
    assert.equal(negotiate("gzip, deflate, br, zstd"), "br");
    assert.equal(negotiate("gzip, zstd"), "zstd");
    assert.equal(negotiate("gzip"), "gzip");
    assert.equal(negotiate("br;q=0, gzip;q=0.5, zstd;q=0.4"), "gzip");
    assert.equal(negotiate("*"), "br");
    assert.equal(negotiate("*;q=0.1, br;q=0"), "zstd");
  });

  test("every encoding round-trips to the identical JSON, on cached, live, list and error answers", async () => {
    const t = await makeTestApp();
    try {
      for (const url of [RESOLVED_PAGE, LIVE_PAGE, "/v1/markets?limit=50", "/v1/markets/nope-nope"]) {
        const plain = await t.get(url);
        assert.equal(plain.headers["content-encoding"], undefined);
        assert.match(String(plain.headers.vary), /accept-encoding/i);
        for (const encoding of ["br", "zstd", "gzip"]) {
          // Twice: the second answer of a resolved page comes from the page cache's compressed bytes.
          for (let i = 0; i < 2; i++) {
            const res = await t.get(url, { "accept-encoding": encoding });
            assert.equal(res.headers["content-encoding"], encoding, `${url} ${encoding}`);
            assert.match(String(res.headers.vary), /accept-encoding/i);
            assert.equal(res.statusCode, plain.statusCode);
            const body = decoded(res.rawPayload, encoding).toString("utf8");
            if (url === "/v1/markets/nope-nope") {
              assert.equal(JSON.parse(body).error.code, "RESOURCE_NOT_FOUND");
            } else {
              assert.equal(body, plain.body, `${url} in ${encoding}`);
            }
          }
        }
      }
    } finally {
      await t.close();
    }
  });

  test("a cached page is compressed once per encoding and keeps its ETag; 304 varies too", async () => {
    const t = await makeTestApp();
    try {
      const plain = await t.get(RESOLVED_PAGE);
      const br1 = await t.get(RESOLVED_PAGE, { "accept-encoding": "br" });
      const br2 = await t.get(RESOLVED_PAGE, { "accept-encoding": "br" });
      assert.deepEqual(br2.rawPayload, br1.rawPayload, "the same compressed bytes, not compressed again");
      assert.ok(br1.rawPayload.length * 8 < plain.rawPayload.length, "br: at most 1/8 of the JSON");
      assert.equal(br1.headers.etag, plain.headers.etag);
      const notModified = await t.get(RESOLVED_PAGE, {
        "accept-encoding": "br",
        "if-none-match": String(plain.headers.etag),
      });
      assert.equal(notModified.statusCode, 304);
      assert.match(String(notModified.headers.vary), /accept-encoding/i);
    } finally {
      await t.close();
    }
  });
});
