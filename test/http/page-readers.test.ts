import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync } from "node:zlib";
import { after, before, describe, test } from "node:test";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { KeyService } from "../../src/access/keys.ts";
import { loadPlans } from "../../src/access/plans.ts";
import { ManualClock } from "../../src/domain/time.ts";
import { isResolved } from "../../src/domain/market.ts";
import { serverOver } from "../../src/http/app.ts";
import { type AppContext, buildContext } from "../../src/http/context.ts";
import { PageReaders } from "../../src/http/page-readers.ts";
import { readSnapshotPage } from "../../src/http/snapshot-page.ts";
import { SqliteStore } from "../../src/store/dialects/sqlite/sqlite-store.ts";
import type { StoredMarket } from "../../src/store/ports/market-store.ts";
import { JsonBytes } from "../../src/wire/json-bytes.ts";
import { ANCHOR, openSeededTestStore } from "../helpers/app.ts";

// Pages of resolved markets are read on page reader threads (src/http/page-readers.ts) over their own
// connection to the same SQLite file. A page read there must be the bytes the request thread reads,
// and a thread that fails a read, dies or cannot open the store must cost nothing but the thread.

const FIXTURES = new URL("../fixtures/page-reader-threads/", import.meta.url);

interface Served {
  app: FastifyInstance;
  ctx: AppContext;
  get(url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** Reads the page reader threads answered, of a kind (default snapshots). */
  threadReads(kind?: "snapshots" | "run"): number;
}

describe("page reader threads", () => {
  let dir: string;
  let file: string;
  let key: string;
  const opened: { app: FastifyInstance; store: SqliteStore }[] = [];
  let resolved: StoredMarket[];
  let live: StoredMarket;

  /** An app over its own connection to the test file, its page readers given or as configured. */
  async function serve(pageReaders: number, readers?: (url: string) => PageReaders): Promise<Served> {
    const store = new SqliteStore(file);
    const ctx = buildContext({
      store,
      clock: new ManualClock(ANCHOR * 1e6 + 123_456),
      config: { pageReaders },
    });
    if (readers) ctx.pageReaders = readers(`sqlite:${file}`);
    const app = await serverOver(ctx, {});
    opened.push({ app, store });
    await app.ready();
    await ctx.pageReaders.start();
    return {
      app,
      ctx,
      get: (url, headers = {}) =>
        app.inject({ method: "GET", url, headers: { "x-api-key": key, ...headers } }),
      threadReads: (kind = "snapshots") => {
        const series = new RegExp(`^updown_page_reader_thread_reads_total\\{kind="${kind}"\\} (\\d+)$`, "m");
        const line = ctx.metrics.render().match(series);
        return line ? Number(line[1]) : 0;
      },
    };
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "updown-page-readers-"));
    file = join(dir, "pages.db");
    const seeded = (await openSeededTestStore()) as SqliteStore;
    writeFileSync(file, seeded.db.serialize());
    await seeded.close();
    const store = new SqliteStore(file);
    await store.migrate();
    const clock = new ManualClock(ANCHOR * 1e6);
    key = (await new KeyService(store.keys, clock, loadPlans()).create({ plan: "pro", account: "t" })).key;
    const markets = (await store.markets.listMarkets({ limit: 1000, offset: 0 })).markets;
    await store.close();
    const nowS = ANCHOR;
    resolved = markets
      .filter((m) => m.winner !== null && m.snapshotCount > 300)
      .sort((a, b) => b.snapshotCount - a.snapshotCount);
    const open = markets.find((m) => m.winner === null && m.startTime <= nowS && m.snapshotCount > 0);
    assert.ok(resolved.length >= 2, "the test data has resolved markets");
    assert.ok(open, "the test data has a live market");
    live = open;
  });

  after(async () => {
    for (const { app, store } of opened) {
      await app.close();
      await store.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** A run of two markets posted to `served`, waited for; it must be complete. */
  async function postRun(served: Served): Promise<{ id: string; status: string }> {
    const posted = await served.app.inject({
      method: "POST",
      url: "/v1/backtest-ai/run",
      payload: {
        coin: "btc",
        market_type: "5m",
        market_count: 2,
        definition: { side: "UP", entry: [{ feature: "price_up", op: "<", value: 0.6 }] },
        wait: 60,
      },
      headers: { "x-api-key": key },
    });
    assert.equal(posted.statusCode, 200, posted.body);
    const { run } = posted.json() as { run: { id: string; status: string } };
    assert.equal(run.status, "complete");
    return run;
  }

  /** The warnings `readers` logs, as they come. */
  function warningsOf(readers: PageReaders): string[] {
    const warnings: string[] = [];
    const ignore = () => {};
    readers.useLogger({
      debug: ignore,
      info: ignore,
      error: ignore,
      warn: (_f, message) => warnings.push(message),
    });
    return warnings;
  }

  /** The first ten snapshots of the biggest resolved market, its JSON a stand-in. */
  const smallPage = () => ({
    key: resolved[0].key,
    snapshotCount: 10,
    resolved: true,
    json: new Uint8Array([110, 117, 108, 108]),
  });

  /** Pages across block edges, both orders, with and without books, ranged and past the end. */
  function pageUrls(): string[] {
    const [big, other] = resolved;
    const start = new Date((big.startTime + 100) * 1000).toISOString();
    const end = new Date((big.startTime + 700) * 1000).toISOString();
    return [
      `/v1/markets/${big.slug}/snapshots`,
      `/v1/markets/${big.slug}/snapshots?order=asc&offset=300&limit=700`,
      `/v1/markets/${big.slug}/snapshots?offset=255&limit=258`,
      `/v1/markets/${big.slug}/snapshots?include_orderbook=true&limit=40&offset=250`,
      `/v1/markets/${big.slug}/snapshots?order=asc&include_orderbook=true&limit=3`,
      `/v1/markets/${big.slug}/snapshots?start_time=${start}&end_time=${end}&limit=500`,
      `/v1/markets/${big.slug}/snapshots?offset=${big.snapshotCount}`,
      `/v1/markets/${other.slug}/snapshots?limit=1&offset=17`,
    ];
  }

  test("a page read on a thread is the page read on the request thread, byte for byte", async () => {
    const threaded = await serve(1);
    const here = await serve(0);
    assert.equal(threaded.ctx.pageReaders.size, 1);
    assert.equal(here.ctx.pageReaders.size, 0);
    const urls = pageUrls();
    for (const url of urls) {
      // First request: sent once; second: kept in the cache; third: from the cache.
      for (let round = 0; round < 3; round++) {
        const a = await threaded.get(url);
        const b = await here.get(url);
        assert.equal(a.statusCode, 200, `${url}: ${a.body}`);
        assert.equal(a.statusCode, b.statusCode, url);
        assert.equal(a.headers["content-type"], b.headers["content-type"], url);
        assert.equal(a.headers.etag, b.headers.etag, url);
        assert.ok(a.rawPayload.equals(b.rawPayload), `${url} (request ${round + 1})`);
      }
    }
    // Each page read twice (its first and second requests), on the thread every time.
    assert.equal(threaded.threadReads(), 2 * urls.length);
    assert.equal(here.threadReads(), 0);

    // Compressed answers are made from the same bytes.
    const url = `/v1/markets/${resolved[0].slug}/snapshots?offset=7&limit=900`;
    const a = await threaded.get(url, { "accept-encoding": "br" });
    const b = await here.get(url);
    assert.equal(a.headers["content-encoding"], "br");
    assert.ok(brotliDecompressSync(a.rawPayload).equals(b.rawPayload));
    assert.equal(threaded.threadReads(), 2 * urls.length + 1);
  });

  test("a run's answer read on a thread is the answer rendered on the request thread", async () => {
    const threaded = await serve(1);
    const here = await serve(0);
    const run = await postRun(threaded);
    for (const query of ["", "?results_limit=1", "?results_limit=1&results_offset=1", "?results_offset=5"]) {
      const url = `/v1/backtest-ai/runs/${run.id}${query}`;
      const a = await threaded.get(url);
      const b = await here.get(url);
      assert.equal(a.statusCode, 200, a.body);
      assert.equal(a.headers["content-type"], b.headers["content-type"]);
      assert.ok(a.rawPayload.equals(b.rawPayload), url);
    }
    // The POST's own answer was read on the thread too, then the four GETs.
    assert.equal(threaded.threadReads("run"), 5);
    assert.equal(here.threadReads("run"), 0);
  });

  test("a live market's page is read on the request thread", async () => {
    const threaded = await serve(1);
    const here = await serve(0);
    const url = `/v1/markets/${live.slug}/snapshots?limit=50`;
    assert.equal(isResolved(live), false);
    const a = await threaded.get(url);
    const b = await here.get(url);
    assert.equal(a.statusCode, 200);
    assert.ok(a.rawPayload.equals(b.rawPayload));
    assert.equal(threaded.threadReads(), 0);
  });

  test("a read the thread fails, or a thread that dies, is read on the request thread (pages and run answers)", async () => {
    const here = await serve(0);
    for (const script of ["failing.ts", "exiting.ts"]) {
      const threaded = await serve(
        1,
        (url) => new PageReaders(url, 1, { script: new URL(script, FIXTURES) }),
      );
      for (const url of pageUrls().slice(0, 3)) {
        const a = await threaded.get(url);
        const b = await here.get(url);
        assert.equal(a.statusCode, 200, `${script} ${url}: ${a.body}`);
        assert.ok(a.rawPayload.equals(b.rawPayload), `${script} ${url}`);
      }
      const run = await postRun(threaded);
      const url = `/v1/backtest-ai/runs/${run.id}`;
      const a = await threaded.get(url);
      assert.equal(a.statusCode, 200, `${script} ${url}: ${a.body}`);
      assert.ok(a.rawPayload.equals((await here.get(url)).rawPayload), `${script} ${url}`);
      assert.equal(threaded.threadReads(), 0, script);
      assert.equal(threaded.threadReads("run"), 0, script);
    }
  });

  test("a thread that dies is started again at the next read, and says so in the log", async () => {
    const readers = new PageReaders(`sqlite:${file}`, 1, { script: new URL("exiting.ts", FIXTURES) });
    const warnings = warningsOf(readers);
    const market = smallPage();
    const ask = { order: "desc" as const, limit: 10, offset: 0, books: false };
    for (let death = 1; death <= 2; death++) {
      // Resolves once a thread is ready: after the first death, that is a thread started again.
      await readers.start();
      const reading = readers.read(market, ask);
      assert.ok(reading, `a ready thread takes the read (${death})`);
      await assert.rejects(reading, /exited \(3\)/);
      assert.equal(warnings.length, death);
      assert.match(warnings[death - 1], /starts again on the next page/);
    }
    await readers.close();
  });

  test("a thread that cannot open the store leaves every page to the request thread", async () => {
    // A folder that cannot be made: its parent is a file.
    const readers = new PageReaders(`sqlite:${join(file, "x.db")}`, 1);
    assert.equal(readers.size, 1);
    const warnings = warningsOf(readers);
    await readers.start();
    assert.deepEqual(warnings, [
      "a page reader thread could not open the store; pages are read on the request thread",
    ]);
    const market = smallPage();
    assert.equal(readers.read(market, { order: "desc", limit: 10, offset: 0, books: false }), null);
    // And it is not tried again.
    await readers.start();
    assert.equal(warnings.length, 1);
    await readers.close();
  });

  test("threads only where the store's reads hold the thread, and none once closed", async () => {
    assert.equal(new PageReaders(null, 2).size, 0);
    assert.equal(new PageReaders("postgres://127.0.0.1:1/none", 2).size, 0);
    const readers = new PageReaders(`sqlite:${file}`, 2);
    assert.equal(readers.size, 2);
    await readers.start();
    const m = resolved[0];
    const market = {
      key: m.key,
      snapshotCount: m.snapshotCount,
      resolved: true,
      json: new Uint8Array([110, 117, 108, 108]),
    };
    const ask = { order: "asc" as const, limit: 400, offset: 200, books: true };
    const reading = readers.read(market, ask);
    assert.ok(reading);
    const page = await reading;
    const store = new SqliteStore(file);
    const w = new JsonBytes();
    (await readSnapshotPage(store.markets, market, ask))(w);
    await store.close();
    assert.ok(page.body.equals(w.toBuffer()));
    page.release();
    await readers.close();
    assert.equal(readers.read(market, ask), null);
  });
});
