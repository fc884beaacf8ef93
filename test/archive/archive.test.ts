import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import {
  ArchiveError,
  exportArchive,
  importArchive,
  openInput,
  openOutput,
} from "../../src/archive/archive.ts";
import { insertHandMarket, makeTestApp, openTestStore, type TestApp } from "../helpers/app.ts";

let source: TestApp;
let dir: string;
before(async () => {
  source = await makeTestApp();
  await insertHandMarket(source.store);
  dir = mkdtempSync(join(tmpdir(), "updown-archive-"));
});
after(async () => {
  await source.close();
  rmSync(dir, { recursive: true, force: true });
});

const PAGES = [
  "/v1/markets?limit=100",
  "/v1/markets/btc-updown-5m-1784851800/snapshots?include_orderbook=true",
  "/v1/markets/eth-updown-1h-1784851200/snapshots?include_orderbook=true&order=asc&limit=7&offset=3",
  "/v1/markets/sol-updown-15m-1784851200/snapshots?include_orderbook=true",
  "/v1/markets/btc-updown-4h-1784851200/snapshots/at?time=2026-07-24T00:05:00.5Z&include_orderbook=true",
  "/v1/markets/btc-updown-5m-1784851800/trades",
  "/v1/markets/eth-updown-1h-1784851200/trades?order=asc&limit=5&offset=2",
];

describe("our archive format", () => {
  test("export then import gives back the same API answers, byte for byte (gzipped file)", async () => {
    const path = join(dir, "all.ndjson.gz");
    const { out, done } = openOutput(path);
    const exported = await exportArchive({
      store: source.store.markets,
      trades: source.store.trades,
      out,
      format: "ndjson",
      books: true,
    });
    await done();
    assert.equal(exported.markets, 15);
    assert.ok((exported.trades ?? 0) > 100, "the demo markets' trades are exported too");

    const target = await makeTestApp({ seed: false });
    try {
      const imported = await importArchive(
        target.store.markets,
        openInput(path),
        undefined,
        target.store.trades,
      );
      assert.deepEqual(imported, {
        markets: 15,
        snapshots: exported.snapshots,
        added: exported.snapshots,
        trades: exported.trades,
      });
      for (const url of PAGES) {
        const a = await source.get(url);
        const b = await target.get(url);
        assert.equal(b.statusCode, 200, url);
        assert.equal(b.body, a.body, url);
      }
      const again = await importArchive(
        target.store.markets,
        openInput(path),
        undefined,
        target.store.trades,
      );
      assert.equal(again.added, 0, "importing twice changes nothing");
      assert.equal(
        (await target.get("/v1/markets/btc-updown-5m-1784851800/trades")).body,
        (await source.get("/v1/markets/btc-updown-5m-1784851800/trades")).body,
      );
    } finally {
      await target.close();
    }
  });

  test("a bad line is reported by number, and what came before it is kept", async () => {
    const path = join(dir, "one.ndjson");
    const { out, done } = openOutput(path);
    await exportArchive({
      store: source.store.markets,
      out,
      format: "ndjson",
      books: false,
      slugs: ["sol-updown-15m-1784851200"],
    });
    await done();
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    assert.equal(lines.length, 3);
    writeFileSync(
      path,
      `${lines.join("\n")}\n{"type":"snapshot","slug":"sol-updown-15m-1784851200","snapshot":{"time":"no"}}\n`,
    );
    const store = await openTestStore();
    await assert.rejects(importArchive(store.markets, openInput(path)), (err: Error) => {
      assert.ok(err instanceof ArchiveError);
      assert.match(err.message, /^line 4: time is not an ISO 8601 timestamp/);
      return true;
    });
    assert.equal((await store.markets.getMarket("sol-updown-15m-1784851200"))?.snapshotCount, 2);
    await assert.rejects(importArchive(store.markets, Readable.from(["not json\n"])), /line 1:/);
    await assert.rejects(
      importArchive(store.markets, Readable.from(['{"type":"snapshot","slug":"x","snapshot":{}}\n'])),
      /does not follow its market/,
    );
    await store.close();
  });

  test("CSV: one snapshot a row, books as JSON columns", async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on("data", (c: Buffer) => chunks.push(c));
    await exportArchive({
      store: source.store.markets,
      out,
      format: "csv",
      books: true,
      slugs: ["sol-updown-15m-1784851200"],
    });
    const text = Buffer.concat(chunks).toString();
    const lines = text.trimEnd().split("\n");
    assert.equal(lines[0], "slug,time,coin_price,price_up,price_down,orderbook_up,orderbook_down");
    assert.equal(
      lines[2],
      'sol-updown-15m-1784851200,2026-07-24T00:00:01.500000Z,150.13,0.525,0.475,"{""bids"":[],""asks"":[]}","{""bids"":[],""asks"":[]}"',
    );
    assert.ok(
      lines[1].startsWith(
        'sol-updown-15m-1784851200,2026-07-24T00:00:00.000000Z,150.125,0.52,0.48,"{""bids"":[{""price"":0.51,',
      ),
    );
  });
});

describe("GET /v1/markets/{slug}/snapshots/export", () => {
  test("streams the market as an importable archive, compressed when asked", async () => {
    const { brotliDecompressSync, gunzipSync } = await import("node:zlib");
    const plain = await source.get(
      "/v1/markets/btc-updown-5m-1784851800/snapshots/export?include_orderbook=true",
    );
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers["content-type"], "application/x-ndjson; charset=utf-8");
    assert.equal(
      plain.headers["content-disposition"],
      'attachment; filename="btc-updown-5m-1784851800.ndjson"',
    );
    const lines = plain.body.trimEnd().split("\n");
    assert.equal(lines.length, 301);
    assert.equal(JSON.parse(lines[0]).market.slug, "btc-updown-5m-1784851800");
    assert.equal(JSON.parse(lines[1]).snapshot.time, "2026-07-24T00:10:00.000000Z");

    const zipped = await source.get(
      "/v1/markets/btc-updown-5m-1784851800/snapshots/export?include_orderbook=true",
      { "accept-encoding": "gzip" },
    );
    assert.equal(zipped.headers["content-encoding"], "gzip");
    assert.equal(gunzipSync(zipped.rawPayload).toString(), plain.body);
    const brotli = await source.get(
      "/v1/markets/btc-updown-5m-1784851800/snapshots/export?include_orderbook=true",
      { "accept-encoding": "gzip, br" },
    );
    assert.equal(brotli.headers["content-encoding"], "br");
    assert.equal(brotliDecompressSync(brotli.rawPayload).toString(), plain.body);

    const target = await makeTestApp({ seed: false });
    try {
      await importArchive(target.store.markets, Readable.from([plain.body]));
      const url = "/v1/markets/btc-updown-5m-1784851800/snapshots?include_orderbook=true";
      assert.equal((await target.get(url)).body, (await source.get(url)).body);
    } finally {
      await target.close();
    }
  });

  test("CSV within a time range; bad format is a 400, unknown slug a 404", async () => {
    const res = await source.get(
      "/v1/markets/btc-updown-5m-1784851800/snapshots/export?format=csv&start_time=2026-07-24T00:10:05Z&end_time=2026-07-24T00:10:06Z",
    );
    assert.equal(res.headers["content-type"], "text/csv; charset=utf-8");
    const lines = res.body.trimEnd().split("\n");
    assert.deepEqual(
      lines.map((l) => l.split(",").slice(0, 2).join(",")),
      [
        "slug,time",
        "btc-updown-5m-1784851800,2026-07-24T00:10:05.000000Z",
        "btc-updown-5m-1784851800,2026-07-24T00:10:06.000000Z",
      ],
    );
    assert.equal(
      (await source.get("/v1/markets/btc-updown-5m-1784851800/snapshots/export?format=xml")).statusCode,
      400,
    );
    assert.equal((await source.get("/v1/markets/nope/snapshots/export")).statusCode, 404);
  });
});
