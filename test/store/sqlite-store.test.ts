import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { JsonBytes } from "../../src/wire/json-bytes.ts";
import { openStore } from "../../src/store/open.ts";
import { SQLITE_MIGRATIONS } from "../../src/store/dialects/sqlite/migrations.ts";
import { SqliteStore } from "../../src/store/dialects/sqlite/sqlite-store.ts";
import { HAND_MARKET } from "../helpers/app.ts";
import { storeContracts } from "../contracts/all.ts";
import { renderedUpgradeCheck, renderVersionCheck } from "../contracts/market-store.ts";

async function openMemoryStore(): Promise<SqliteStore> {
  const store = new SqliteStore(":memory:");
  await store.migrate();
  return store;
}

storeContracts("sqlite", openMemoryStore);

test("a SQLite file keeps everything across a reopen", async () => {
  const dir = mkdtempSync(join(tmpdir(), "updown-"));
  try {
    const url = `sqlite:${join(dir, "nested", "db.sqlite")}`;
    const first = await openStore(url);
    const m = await first.markets.upsertMarket(HAND_MARKET);
    await first.markets.insertSnapshots(m.key, [
      { time: 1e15, coinPrice: 1, priceUp: 0.5, priceDown: 0.5, books: null },
    ]);
    await first.close();
    const second = await openStore(url);
    assert.equal((await second.markets.getMarket(HAND_MARKET.slug))?.snapshotCount, 1);
    await second.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an unsupported DATABASE_URL is refused with a clear message", async () => {
  await assert.rejects(openStore("mysql://x"), /DATABASE_URL must start with sqlite:/);
});

test("an existing database upgrades: resolved markets' rows move into blocks and read the same", async () => {
  const { DatabaseSync } = await import("node:sqlite");
  const { SQLITE_MIGRATIONS } = await import("../../src/store/dialects/sqlite/migrations.ts");
  const { marketValues } = await import("../../src/store/sql/rows.ts");
  const { encodeBooks } = await import("../../src/wire/book-codec.ts");
  const dir = mkdtempSync(join(tmpdir(), "updown-v4-"));
  try {
    // A database as version 4 left it, with a resolved market of 1300 seconds in the row tables.
    const path = join(dir, "v4.db");
    const old = new DatabaseSync(path);
    old.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER)");
    for (const m of SQLITE_MIGRATIONS.filter((x) => x.version <= 4)) {
      old.exec(m.sql);
      old.prepare("INSERT INTO schema_migrations VALUES (?, 0)").run(m.version);
    }
    old
      .prepare(
        `INSERT INTO markets (slug, polymarket_slug, coin, market_type, market_id, event_id, start_time, end_time,
          coin_price_start, coin_price_end, condition_id, clob_token_up, clob_token_down, winner, final_volume,
          final_liquidity, resolved_at, created_at, updated_at, snapshot_count)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1300)`,
      )
      .run(...marketValues(HAND_MARKET).slice(0, 19));
    const rows = Array.from({ length: 1300 }, (_, i) => ({
      time: (HAND_MARKET.startTime + i) * 1e6,
      coinPrice: 150 + i / 8,
      priceUp: 0.5,
      priceDown: 0.5,
      books:
        i % 4 === 0
          ? null
          : encodeBooks(
              { bids: [{ price: 0.5, size: i + 1 }], asks: [{ price: 0.52, size: 2 }] },
              { bids: [{ price: 0.48, size: 2 }], asks: [{ price: 0.5, size: i + 1 }] },
            ),
    }));
    for (const r of rows) {
      old
        .prepare("INSERT INTO snapshots VALUES (1, ?, ?, ?, ?)")
        .run(r.time, r.coinPrice, r.priceUp, r.priceDown);
      if (r.books) old.prepare("INSERT INTO snapshot_books VALUES (1, ?, ?)").run(r.time, r.books);
    }
    old.close();

    const store = await openStore(`sqlite:${path}`);
    try {
      const count = (sql: string) => (store as SqliteStore).db.prepare(sql).get() as { n: number };
      assert.equal(count("SELECT count(*) AS n FROM snapshots").n, 0, "the rows moved");
      assert.equal(count("SELECT count(*) AS n FROM snapshot_books").n, 0);
      assert.equal(
        count("SELECT count(*) AS n FROM snapshot_blocks").n,
        6,
        "1300 seconds in 6 blocks of 256",
      );
      const m = (await store.markets.getMarket(HAND_MARKET.slug))!;
      assert.equal(m.snapshotCount, 1300);
      const page = await store.markets.snapshotPage(m.key, {
        order: "desc",
        limit: 1000,
        offset: 150,
        books: true,
      });
      assert.deepEqual(page, [...rows].reverse().slice(150, 1150));
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("versions 5 to 7 keep a version 4 database's markets, ids and snapshots, and gives them their type's feed", async () => {
  const store = new SqliteStore(":memory:");
  try {
    const db = store.db;
    db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER)");
    for (const m of SQLITE_MIGRATIONS.filter((m) => m.version <= 4)) {
      db.exec(m.sql);
      db.prepare("INSERT INTO schema_migrations VALUES (?, 0)").run(m.version);
    }
    const insert =
      db.prepare(`INSERT INTO markets (id, slug, coin, market_type, market_id, event_id, start_time,
      end_time, condition_id, clob_token_up, clob_token_down, winner, created_at, updated_at, snapshot_count)
      VALUES (?, ?, 'btc', ?, '1', '1', 1784851200, 1784854800, '0x', 'u', 'd', 'Up', 0, 0, 1)`);
    insert.run(7, "btc-updown-1h-1784851200", "1h");
    insert.run(9, "btc-updown-5m-1784851200", "5m");
    db.prepare("INSERT INTO snapshots VALUES (9, 1784851200000000, 65000, 0.5, 0.5)").run();
    await store.migrate();
    const hourly = await store.markets.getMarket("btc-updown-1h-1784851200");
    const fiveMinute = await store.markets.getMarket("btc-updown-5m-1784851200");
    assert.equal(hourly?.key, 7);
    assert.deepEqual(hourly?.settlement, { source: "binance", lookbackS: null });
    assert.equal(fiveMinute?.key, 9);
    assert.deepEqual(fiveMinute?.settlement, { source: "chainlink", lookbackS: null });
    assert.equal(fiveMinute?.feeSchedule, null);
    assert.equal(await store.markets.countSnapshots(9), 1);
    // The new CHECK takes a 50-50 winner.
    await store.markets.upsertMarket({ ...HAND_MARKET, winner: "50-50" });
  } finally {
    await store.close();
  }
});

test("blocks written before version 8 are rendered on read, and by migrate to the same bytes", async () => {
  const store = await openMemoryStore();
  try {
    await renderedUpgradeCheck(store, async (sql) => {
      const row = store.db.prepare(sql).get() as { n: number } | undefined;
      return row?.n ?? 0;
    });
  } finally {
    await store.close();
  }
});

test("rendered blocks are a cache of the render version: a bump renders on read and by migrate, to the same bytes", async () => {
  const dir = mkdtempSync(join(tmpdir(), "updown-render-"));
  const path = join(dir, "updown.db");
  const store = new SqliteStore(path);
  try {
    await store.migrate();
    await renderVersionCheck(
      store,
      async (renderVersion) => new SqliteStore(path, { renderVersion }),
      async (sql) => {
        const row = store.db.prepare(sql).get() as { n: number } | undefined;
        return row?.n ?? 0;
      },
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("pages planned from remembered block headers follow another process's import into the market", async () => {
  const dir = mkdtempSync(join(tmpdir(), "updown-headers-"));
  const path = join(dir, "updown.db");
  const serving = new SqliteStore(path);
  const importing = new SqliteStore(path);
  try {
    await serving.migrate();
    const m = await serving.markets.upsertMarket(HAND_MARKET);
    const second = (i: number) => ({
      time: (HAND_MARKET.startTime + i) * 1e6,
      coinPrice: 150 + i,
      priceUp: 0.5,
      priceDown: 0.5,
      books: null,
    });
    // Even seconds 0..1198, in blocks of 256, 256 and 88.
    await serving.markets.insertSnapshots(
      m.key,
      Array.from({ length: 600 }, (_, i) => second(i * 2)),
    );
    const page = async (total: number) => {
      const q = { order: "desc" as const, limit: 3, offset: 400, books: false, total };
      const rows = await serving.markets.snapshotPage(m.key, q);
      const w = new JsonBytes();
      (await serving.markets.renderedPage(m.key, q))!(w);
      return { seconds: rows.map((r) => r.time / 1e6 - HAND_MARKET.startTime), text: w.text() };
    };
    // Read once: the serving store now plans this market's pages from headers it remembers. The page
    // lies in the first block.
    assert.deepEqual((await page(600)).seconds, [398, 396, 394]);
    // Another connection (as another process would) adds a second to the middle block only: the first
    // block is unchanged, but every newest-first position before it moves by one.
    assert.equal(await importing.markets.insertSnapshots(m.key, [second(701)]), 1);
    const count = (await serving.markets.getMarket(HAND_MARKET.slug))!.snapshotCount;
    assert.equal(count, 601);
    const after = await page(count);
    assert.deepEqual(after.seconds, [400, 398, 396]);
    assert.match(after.text, /^\{"time":"2026-07-24T00:06:40\.000000Z"/, "the rendered page too");
  } finally {
    await serving.close();
    await importing.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("version 13 gives a version 12 database's markets their source: snapshots recorded, a record alone Gamma", async () => {
  const { marketValues } = await import("../../src/store/sql/rows.ts");
  const store = new SqliteStore(":memory:");
  try {
    const db = store.db;
    db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER)");
    for (const m of SQLITE_MIGRATIONS.filter((m) => m.version <= 12)) {
      db.exec(m.sql);
      db.prepare("INSERT INTO schema_migrations VALUES (?, 0)").run(m.version);
    }
    const insert = db.prepare(`INSERT INTO markets (slug, polymarket_slug, coin, market_type, market_id,
      event_id, start_time, end_time, coin_price_start, coin_price_end, condition_id, clob_token_up,
      clob_token_down, winner, final_volume, final_liquidity, resolved_at, created_at, updated_at,
      settlement_source, settlement_lookback_s, fee_schedule, snapshot_count)
      VALUES (${Array.from({ length: 23 }, () => "?").join(", ")})`);
    insert.run(...marketValues({ ...HAND_MARKET, winner: null }), 3);
    insert.run(...marketValues({ ...HAND_MARKET, slug: "sol-updown-15m-1784852100", winner: null }), 0);
    await store.migrate();
    assert.deepEqual((await store.markets.getMarket(HAND_MARKET.slug))?.sources, ["recorded"]);
    assert.deepEqual((await store.markets.getMarket("sol-updown-15m-1784852100"))?.sources, ["gamma"]);
  } finally {
    await store.close();
  }
});
