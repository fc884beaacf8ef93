import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { PageCache } from "../src/http/page-cache.ts";
import { makeTestApp } from "./helpers/app.ts";

const page = (bytes: number) => ({ body: Buffer.alloc(bytes), etag: `"${bytes}"` });

describe("page cache", () => {
  test("evicts least recently used pages to stay within its bytes", () => {
    const cache = new PageCache(1000);
    cache.set("a", page(200));
    cache.set("b", page(200));
    cache.set("c", page(200));
    cache.get("a"); // a is now the most recently used
    cache.set("d", page(250));
    cache.set("e", page(250));
    assert.ok(cache.totalBytes <= 1000);
    assert.equal(cache.get("b"), undefined, "the least recently used went first");
    assert.ok(cache.get("a"));
    assert.ok(cache.get("e"));
  });

  test("compressed bytes kept beside a page count in the budget, each encoding made once", async () => {
    const cache = new PageCache(100_000);
    const p = { body: Buffer.from(JSON.stringify({ text: "a".repeat(10_000) })), etag: '"x"' };
    cache.set("p", p);
    const first = cache.encoded("p", p, "br");
    assert.equal(cache.encoded("p", p, "br"), first, "a second request shares the first compression");
    const br = await first;
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(cache.totalBytes, p.body.length + br.length);
    const gz = await cache.encoded("p", p, "gzip");
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(cache.totalBytes, p.body.length + br.length + gz.length);
    // Filling the cache evicts the page with its encodings.
    cache.set("q", { body: Buffer.alloc(24_000), etag: '"q"' });
    cache.set("r", { body: Buffer.alloc(24_000), etag: '"r"' });
    cache.set("s", { body: Buffer.alloc(24_000), etag: '"s"' });
    cache.set("t", { body: Buffer.alloc(24_000), etag: '"t"' });
    assert.equal(cache.get("p"), undefined);
    assert.equal(cache.totalBytes, 4 * 24_000);
  });

  test("a page larger than a quarter of the budget is not cached, so 0 bytes disables caching", () => {
    const cache = new PageCache(1000);
    cache.set("big", page(251));
    assert.equal(cache.size, 0);
    const off = new PageCache(0);
    off.set("x", page(1));
    assert.equal(off.size, 0);
  });

  test("PAGE_CACHE_MB=0 serves the same bytes and ETag, rendering every time", async () => {
    const t = await makeTestApp();
    const { buildApp } = await import("../src/http/app.ts");
    const uncached = await buildApp({ store: t.store, clock: t.clock, config: { pageCacheBytes: 0 } });
    try {
      const url = "/v1/markets/btc-updown-5m-1784851800/snapshots?include_orderbook=true&limit=20";
      const a = await t.get(url);
      const b = await uncached.inject({ method: "GET", url, headers: { "x-api-key": t.key } });
      assert.equal(b.body, a.body);
      assert.equal(b.headers.etag, a.headers.etag);
      assert.equal(a.headers["cache-control"], "private, max-age=86400");
    } finally {
      await uncached.close();
      await t.close();
    }
  });
});
