import assert from "node:assert/strict";
import { brotliDecompressSync } from "node:zlib";
import { describe, test } from "node:test";
import { BodyBuffers } from "../../src/http/body-buffers.ts";
import { PageCache } from "../../src/http/page-cache.ts";
import { JsonBytes } from "../../src/wire/json-bytes.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { makeTestApp, openTestStore } from "../helpers/app.ts";

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
    assert.equal(cache.encoded("p", p, "br"), br, "once made, the bytes themselves");
    assert.equal(PageCache.madeIn(p, "br"), br);
    assert.equal(PageCache.madeIn(p, "zstd"), undefined, "not asked for yet");
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
    const { buildApp } = await import("../../src/http/app.ts");
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

  test("a page is admitted from its second request; a cache of 0 bytes admits none", () => {
    const cache = new PageCache(1000);
    assert.equal(cache.admits("a"), false, "first request");
    assert.equal(cache.admits("b"), false);
    assert.equal(cache.admits("a"), true, "second request");
    assert.equal(cache.admits("a"), false, "admitted once; a page evicted later starts over");
    const off = new PageCache(0);
    assert.equal(off.admits("a"), false);
    assert.equal(off.admits("a"), false);
  });

  test("request URLs remembered for direct answers are bounded in number and length", () => {
    const cache = new PageCache(1000);
    const request = { slug: "s", query: "q" };
    const remember = (c: PageCache, url: string) => c.rememberRequest(url, request.slug, request.query);
    remember(cache, "/v1/markets/s/snapshots");
    assert.deepEqual(cache.requestOf("/v1/markets/s/snapshots"), request);
    const long = `/v1/markets/s/snapshots?offset=${"0".repeat(1000)}`;
    remember(cache, long);
    assert.equal(cache.requestOf(long), undefined, "a URL over 1024 characters is never remembered");
    for (let i = 0; i < 8192; i++) remember(cache, `/v1/markets/s/snapshots?offset=${i}`);
    // The 8193rd found 8192 remembered: they were forgotten, and it is the one kept.
    assert.deepEqual(cache.requestOf("/v1/markets/s/snapshots?offset=8191"), request);
    assert.equal(cache.requestOf("/v1/markets/s/snapshots?offset=0"), undefined);
    assert.equal(cache.requestOf("/v1/markets/s/snapshots"), undefined);
    const off = new PageCache(0);
    remember(off, "/v1/markets/s/snapshots");
    assert.equal(off.requestOf("/v1/markets/s/snapshots"), undefined, "nothing remembered without a cache");
  });

  test("lent buffers: the written bytes sent without a copy, the writer going on in a free buffer", () => {
    const bodies = new BodyBuffers(1 << 20);
    const w = new JsonBytes(16);
    w.ascii('{"a":1}');
    const first = bodies.lend(w);
    assert.equal(first.body.toString(), '{"a":1}');
    assert.equal(w.pos, 0, "the writer starts over");
    w.ascii("[2]");
    const second = bodies.lend(w);
    assert.equal(second.body.toString(), "[2]");
    assert.equal(first.body.toString(), '{"a":1}', "a buffer still lent is not written over");
    assert.equal(bodies.allocated, 2);
    first.release();
    first.release();
    assert.equal(bodies.idleBytes, 16, "given back once, however often release is called");
    assert.equal(w.buf.length, 16, "pages filling an eighth of the writer keep its capacity");
    w.ascii("[3]");
    const third = bodies.lend(w);
    assert.equal(third.body.toString(), "[3]");
    assert.equal(bodies.allocated, 2, "the buffer given back is used again");
    assert.equal(w.buf.buffer, first.body.buffer);
    assert.equal(bodies.idleBytes, 0);
    // A page far smaller than the writer's buffer starts it over at twice its size, at least 64 KiB.
    const big = new JsonBytes(1 << 20);
    big.ascii("x".repeat(40_000));
    bodies.lend(big);
    assert.equal(big.buf.length, 131_072);
    // Free buffers are kept up to the budget only.
    const small = new BodyBuffers(16);
    const x = small.lend(w);
    const y = small.lend(w);
    x.release();
    y.release();
    assert.equal(small.idleBytes, 16);
  });

  test("a resolved page is read from the store on its first and second request, then from the cache", async () => {
    const store = await openTestStore();
    const reads = countPageReads(store);
    const t = await makeTestApp({ store });
    try {
      const url = "/v1/markets/btc-updown-5m-1784851800/snapshots?include_orderbook=true&limit=50&offset=10";
      const answers: Awaited<ReturnType<typeof t.get>>[] = [];
      for (let i = 0; i < 4; i++) answers.push(await t.get(url));
      assert.deepEqual(reads(), 2, "first (sent once), second (kept), then the cache");
      for (const a of answers) {
        assert.equal(a.statusCode, 200);
        assert.equal(a.body, answers[0].body);
        assert.equal(a.headers.etag, answers[0].headers.etag);
        assert.equal(a.headers["content-length"], String(answers[0].rawPayload.length));
      }
      // A conditional request for a page never rendered is answered from its key, without a read.
      const other = url.replace("offset=10", "offset=11");
      const fresh = await t.get(other);
      const before = reads();
      const notModified = await t.get(other, {
        "if-none-match": String(fresh.headers.etag),
      });
      assert.equal(notModified.statusCode, 304);
      assert.equal(reads(), before);
      // Compressed first answers are compressed from the lent bytes, and decode to the same JSON.
      const br = await t.get(url.replace("offset=10", "offset=12"), { "accept-encoding": "br" });
      assert.equal(br.headers["content-encoding"], "br");
      const plain = await t.get(url.replace("offset=10", "offset=12"));
      assert.equal(brotliDecompressSync(br.rawPayload).toString(), plain.body);
    } finally {
      await t.close();
    }
  });

  test("first answers sent at once over HTTP each carry their own page (lent buffers are not shared)", async () => {
    const t = await makeTestApp();
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    try {
      const address = t.app.server.address();
      assert.ok(address && typeof address === "object");
      const origin = `http://127.0.0.1:${address.port}`;
      const urls: string[] = [];
      for (let offset = 0; offset < 48; offset++) {
        urls.push(`/v1/markets/btc-updown-15m-1784851200/snapshots?offset=${offset}&limit=${200 + offset}`);
      }
      // A live market's pages are never kept: every answer is lent.
      for (let offset = 0; offset < 16; offset++) {
        urls.push(`/v1/markets/btc-updown-5m-1784852400/snapshots?include_orderbook=true&offset=${offset}`);
      }
      const key = await t.keyFor("enterprise");
      const get = async (url: string): Promise<string> => {
        const res = await fetch(origin + url, { headers: { "x-api-key": key } });
        assert.equal(res.status, 200, url);
        return res.text();
      };
      for (let round = 0; round < 2; round++) {
        const concurrent = await Promise.all(urls.map(get));
        // Each page again, one at a time: now rendered into a copy the cache keeps (or lent alone).
        for (let i = 0; i < urls.length; i++) {
          const alone = await get(urls[i]);
          assert.equal(concurrent[i], alone, urls[i]);
          const page = JSON.parse(alone) as { snapshots: unknown[]; offset: number };
          assert.equal(page.offset, i < 48 ? i : i - 48);
        }
      }
    } finally {
      await t.close();
    }
  });
});

/** Counts the store's page reads (both paths), as bench/run.ts does. */
function countPageReads(store: Store): () => number {
  let n = 0;
  const rendered = store.markets.renderedPage.bind(store.markets);
  store.markets.renderedPage = (key, q) => {
    n++;
    return rendered(key, q);
  };
  const rows = store.markets.snapshotPage.bind(store.markets);
  store.markets.snapshotPage = (key, q) => {
    n++;
    return rows(key, q);
  };
  return () => n;
}
