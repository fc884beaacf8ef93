import assert from "node:assert/strict";
import { after, test } from "node:test";
import pg from "pg";
import type { ApiKeyRecord } from "../../src/domain/api-key.ts";
import type { SnapshotRow } from "../../src/domain/snapshot.ts";
import { openStore } from "../../src/store/open.ts";
import { PostgresStore } from "../../src/store/dialects/postgres/pg-store.ts";
import { HAND_MARKET } from "../helpers/app.ts";
import { ScratchSchemas, postgresTestUrl } from "../helpers/postgres.ts";
import { POSTGRES_MIGRATIONS } from "../../src/store/dialects/postgres/migrations.ts";
import { storeContracts } from "../contracts/all.ts";
import { depthRow } from "../contracts/exchange-store.ts";
import { renderedUpgradeCheck, renderVersionCheck } from "../contracts/market-store.ts";
import { type StoreTests, describeStoreTests } from "../contracts/store-tests.ts";

// Runs only against a server named by DATABASE_URL; once one is named, an unreachable server fails
// these tests rather than skipping them.
const url = postgresTestUrl();
const schemas = url === null ? null : new ScratchSchemas(url);

/** Where the tests make schemas of their own; only called once DATABASE_URL names a server. */
function scratchSchemas(): ScratchSchemas {
  if (schemas === null) throw new Error("DATABASE_URL is not postgres");
  return schemas;
}

/** What only PostgreSQL has to show: concurrency across connections, partitions, migrations, BIGINT. */
const POSTGRES_TESTS: StoreTests<PostgresStore, PostgresStore> = {
  "50 concurrent charges against a limit of 5 charge exactly 5": async (store) => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        store.quota.chargeQuota({
          keyId: "race-1",
          month: "2026-07",
          limit: 5,
          chargeId: `race-1-${i}`,
          idempotencyKey: null,
          at: i,
        }),
      ),
    );
    assert.equal(results.filter((r) => r.status === "charged").length, 5);
    assert.equal(results.filter((r) => r.status === "exhausted").length, 45);
    assert.deepEqual(
      results.flatMap((r) => (r.status === "charged" ? [r.used] : [])).sort((a, b) => a - b),
      [1, 2, 3, 4, 5],
    );
    assert.equal(await store.quota.quotaUsed("race-1", "2026-07"), 5);
  },
  "20 concurrent charges with one idempotency key charge once and replay that charge": async (store) => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.quota.chargeQuota({
          keyId: "race-2",
          month: "2026-07",
          limit: 100,
          chargeId: `race-2-${i}`,
          idempotencyKey: "same",
          at: i,
        }),
      ),
    );
    const charged = results.filter((r) => r.status === "charged");
    assert.equal(charged.length, 1);
    const replayed = results.filter((r) => r.status === "replayed");
    assert.equal(replayed.length, 19);
    assert.ok(replayed.every((r) => r.chargeId === charged[0].chargeId && r.used === 1));
    assert.equal(await store.quota.quotaUsed("race-2", "2026-07"), 1);
  },
  "concurrent refunds of one charge give one unit back": async (store) => {
    await store.quota.chargeQuota({
      keyId: "race-3",
      month: "2026-07",
      limit: null,
      chargeId: "keep",
      idempotencyKey: null,
      at: 1,
    });
    await store.quota.chargeQuota({
      keyId: "race-3",
      month: "2026-07",
      limit: null,
      chargeId: "refund-me",
      idempotencyKey: null,
      at: 2,
    });
    const refunds = await Promise.all(
      Array.from({ length: 10 }, () => store.quota.refundQuota("race-3", "refund-me", 3)),
    );
    assert.equal(refunds.filter(Boolean).length, 1);
    assert.equal(await store.quota.quotaUsed("race-3", "2026-07"), 1);
  },
  "concurrent key inserts for one account store exactly maxActive": async (store) => {
    const key = (i: number): ApiKeyRecord => ({
      id: `race${String(i).padStart(4, "0")}`,
      hash: "c".repeat(64),
      plan: "starter",
      account: "racing",
      name: null,
      createdAt: i,
      revokedAt: null,
      perMinuteLimit: null,
      perDayLimit: null,
    });
    const stored = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.keys.insertApiKey(key(i), 2)),
    );
    assert.equal(stored.filter(Boolean).length, 2);
    assert.equal(await store.keys.countActiveKeys("racing", "starter"), 2);
    assert.equal((await store.keys.listApiKeys()).filter((k) => k.account === "racing").length, 2);
  },
  "snapshots in different monthly partitions read back in order": async (store) => {
    const m = await store.markets.upsertMarket({ ...HAND_MARKET, slug: "months" });
    // 2026-01-31T23:59:58Z to 2026-02-01T00:00:01Z, and 2026-03-01T00:00:00Z; inserted out of order.
    const seconds = [1772323200, 1769903998, 1769904001, 1769903999, 1769904000];
    const row = (s: number): SnapshotRow => ({
      time: s * 1e6,
      coinPrice: s / 1e6,
      priceUp: 0.5,
      priceDown: 0.5,
      books: null,
    });
    assert.equal(await store.markets.insertSnapshots(m.key, seconds.map(row)), 5);
    const sorted = [...seconds].sort((a, b) => a - b);
    const asc = await store.markets.snapshotPage(m.key, {
      order: "asc",
      limit: 10,
      offset: 0,
      books: true,
    });
    assert.deepEqual(asc, sorted.map(row));
    const desc = await store.markets.snapshotPage(m.key, {
      order: "desc",
      limit: 2,
      offset: 1,
      books: false,
    });
    assert.deepEqual(
      desc.map((r) => r.time / 1e6),
      [1769904001, 1769904000],
    );
    assert.equal(await store.markets.countSnapshots(m.key, 1769904000e6, 1772323200e6), 3);
    assert.equal((await store.markets.snapshotAtOrBefore(m.key, 1772323199e6, false))?.time, 1769904001e6);
    assert.deepEqual(await partitionsOf(store, "snapshots"), [
      "snapshots_2026_01",
      "snapshots_2026_02",
      "snapshots_2026_03",
    ]);
    assert.deepEqual(await partitionsOf(store, "snapshot_books"), [
      "snapshot_books_2026_01",
      "snapshot_books_2026_02",
      "snapshot_books_2026_03",
    ]);
  },
  "re-inserting stored rows adds none; concurrent overlapping inserts keep the count exact": async (
    store,
  ) => {
    const m = await store.markets.upsertMarket({ ...HAND_MARKET, slug: "overlap" });
    const rows = Array.from({ length: 200 }, (_, i): SnapshotRow => ({
      time: (1769903900 + i) * 1e6,
      coinPrice: i,
      priceUp: 0.5,
      priceDown: 0.5,
      books: new Uint8Array([1, 0, 0, 0]),
    }));
    assert.equal(await store.markets.insertSnapshots(m.key, rows.slice(0, 50)), 50);
    assert.equal(await store.markets.insertSnapshots(m.key, rows.slice(0, 50)), 0);
    const added = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store.markets.insertSnapshots(m.key, rows.slice(i * 20, 100 + i * 10)),
      ),
    );
    assert.equal(
      added.reduce((a, b) => a + b, 0),
      120,
    );
    assert.equal((await store.markets.getMarket("overlap"))!.snapshotCount, 170);
    assert.equal(await store.markets.countSnapshots(m.key), 170);
  },
  "a batch larger than one statement's chunk is inserted whole": async (store) => {
    const m = await store.markets.upsertMarket({ ...HAND_MARKET, slug: "large" });
    const rows = Array.from({ length: 12_000 }, (_, i): SnapshotRow => ({
      time: 1769900000e6 + i * 1e6,
      coinPrice: i,
      priceUp: 0.5,
      priceDown: 0.5,
      books: null,
    }));
    // Newest first, and the first second given again at the end with another price: the first wins.
    const batch = [...rows].reverse();
    batch.push({ ...rows[0], coinPrice: -1 });
    assert.equal(await store.markets.insertSnapshots(m.key, batch), 12_000);
    assert.equal(await store.markets.insertSnapshots(m.key, rows), 0);
    assert.equal((await store.markets.getMarket("large"))!.snapshotCount, 12_000);
    const page = await store.markets.snapshotPage(m.key, {
      order: "asc",
      limit: 1000,
      offset: 0,
      books: false,
    });
    assert.deepEqual(page, rows.slice(0, 1000));
  },
  "a month's partition dropped behind the store's back is made again": async (store) => {
    // A live market: its seconds go to the partitioned row tables (a resolved one's go to blocks).
    const m = await store.markets.upsertMarket({
      ...HAND_MARKET,
      slug: "dropped",
      winner: null,
      resolvedAt: null,
    });
    const row: SnapshotRow = {
      time: 1810000000e6,
      coinPrice: 1,
      priceUp: 0.5,
      priceDown: 0.5,
      books: null,
    };
    assert.equal(await store.markets.insertSnapshots(m.key, [row]), 1);
    await store.pool.query("DROP TABLE snapshots_2027_05, snapshot_books_2027_05");
    assert.equal(await store.markets.insertSnapshots(m.key, [row]), 1);
  },
  "migrating moves the rows of markets resolved before version 5 into blocks, reading the same": async (
    store,
  ) => {
    const live = { ...HAND_MARKET, slug: "resolved-before-v5", winner: null, resolvedAt: null };
    const m = await store.markets.upsertMarket(live);
    const rows: SnapshotRow[] = Array.from({ length: 600 }, (_, i) => ({
      time: (1784851200 + i) * 1e6,
      coinPrice: 150 + i / 8,
      priceUp: 0.5,
      priceDown: 0.5,
      books: i % 3 === 0 ? null : new Uint8Array([1, 2, 0, 1, 50, (i % 100) + 1, 0]),
    }));
    assert.equal(await store.markets.insertSnapshots(m.key, rows), 600);
    // Resolved as a version-4 database would have it: the record changed, the rows left in place.
    await store.pool.query("UPDATE markets SET winner = 'Up' WHERE id = $1", [m.key]);
    await store.migrate();
    const left = await store.pool.query("SELECT count(*)::int AS n FROM snapshots WHERE market = $1", [
      m.key,
    ]);
    assert.equal(left.rows[0].n, 0);
    const blocks = await store.pool.query(
      "SELECT count(*)::int AS n FROM snapshot_blocks WHERE market = $1",
      [m.key],
    );
    assert.equal(blocks.rows[0].n, 3);
    const page = await store.markets.snapshotPage(m.key, {
      order: "asc",
      limit: 1000,
      offset: 0,
      books: true,
    });
    assert.deepEqual(page, rows);
    assert.equal((await store.markets.getMarket(live.slug))!.snapshotCount, 600);
  },
  "two stores migrating one empty schema at once both succeed, each version applied once": async () => {
    const scratch = await scratchSchemas().create();
    const stores = [new PostgresStore(scratch), new PostgresStore(scratch)];
    try {
      await Promise.all(stores.map((s) => s.migrate()));
      const { rows } = await stores[0].pool.query("SELECT version FROM schema_migrations ORDER BY version");
      assert.deepEqual(
        rows.map((r: { version: number }) => r.version),
        POSTGRES_MIGRATIONS.map((m) => m.version),
      );
      assert.equal(await stores[1].markets.countMarkets(), 0);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  },
  "version 13 gives a version 12 database's markets their source: snapshots recorded, a record alone Gamma":
    async () => {
      const store = new PostgresStore(await scratchSchemas().create());
      try {
        await store.migrate();
        const other = "sol-updown-15m-1784852100";
        await store.markets.upsertMarket({ ...HAND_MARKET, winner: null });
        await store.markets.upsertMarket({ ...HAND_MARKET, slug: other, winner: null });
        // The database as version 12 left it: no sources column, one market with snapshots counted.
        await store.pool.query("ALTER TABLE markets DROP COLUMN sources");
        await store.pool.query("DELETE FROM schema_migrations WHERE version = 13");
        await store.pool.query("UPDATE markets SET snapshot_count = 3 WHERE slug = $1", [HAND_MARKET.slug]);
        await store.migrate();
        assert.deepEqual((await store.markets.getMarket(HAND_MARKET.slug))?.sources, ["recorded"]);
        assert.deepEqual((await store.markets.getMarket(other))?.sources, ["gamma"]);
      } finally {
        await store.close();
      }
    },
  "openStore takes postgres:// and postgresql:// URLs and migrates": async () => {
    for (const scheme of ["postgres:", "postgresql:"]) {
      const scratch = new URL(await scratchSchemas().create());
      scratch.protocol = scheme;
      const opened = await openStore(scratch.toString());
      try {
        assert.equal(opened.kind, "postgres");
        assert.equal(await opened.markets.countMarkets(), 0);
      } finally {
        await opened.close();
      }
    }
  },
  "BIGINT beyond JavaScript's exact integers is an error, not a rounded number": async (store) => {
    await assert.rejects(store.pool.query("SELECT 9007199254740993::bigint AS n"), /beyond/);
  },
  "rendered blocks are a cache of the render version: a bump renders on read and by migrate, to the same bytes":
    async (store) => {
      await renderVersionCheck(
        store,
        async (renderVersion) => new PostgresStore(store.url, { renderVersion }),
        async (sql) => {
          const { rows } = await store.pool.query<{ n: number }>(sql);
          return Number(rows[0]?.n ?? 0);
        },
      );
    },
  // Last: its market makes the monthly partitions other tests count.
  "blocks written before version 8 are rendered on read, and by migrate to the same bytes": async (store) => {
    await renderedUpgradeCheck(store, async (sql) => {
      const { rows } = await store.pool.query<{ n: number }>(sql);
      return Number(rows[0]?.n ?? 0);
    });
  },
};

const POSTGRES_EXCHANGE_TESTS: StoreTests<PostgresStore, PostgresStore> = {
  "depth in different monthly partitions reads back in order; a dropped month is made again": async (
    store,
  ) => {
    const month = 31 * 86400;
    const rows = [depthRow(2 * month), depthRow(0), depthRow(month)];
    assert.equal((await store.exchange.insertBatch({ depth: rows })).depth, 3);
    const page = await store.exchange.depthPage("btc", "spot", { order: "asc", limit: 10, offset: 0 });
    assert.deepEqual(page, [depthRow(0), depthRow(month), depthRow(2 * month)]);
    const { rows: parts } = await store.pool.query(
      `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = 'exchange_depth'::regclass ORDER BY c.relname`,
    );
    assert.deepEqual(
      parts.map((r: { relname: string }) => r.relname),
      ["exchange_depth_2026_07", "exchange_depth_2026_08", "exchange_depth_2026_09"],
    );
    await store.pool.query("DROP TABLE exchange_depth_2026_08");
    assert.equal((await store.exchange.insertBatch({ depth: [depthRow(month)] })).depth, 1);
  },
};

if (url === null) {
  test("PostgreSQL store", { skip: "DATABASE_URL is not postgres" }, () => {});
} else {
  after(() => scratchSchemas().dropAll());

  test("the server DATABASE_URL names answers", async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.end();
  });

  const openScratch = () => scratchSchemas().openStore();
  storeContracts("postgres", openScratch);
  describeStoreTests("PostgreSQL store", openScratch, (store) => store, POSTGRES_TESTS);
  describeStoreTests("PostgreSQL exchange tables", openScratch, (store) => store, POSTGRES_EXCHANGE_TESTS);
}

async function partitionsOf(store: PostgresStore, table: string): Promise<string[]> {
  const { rows } = await store.pool.query(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = $1::regclass ORDER BY c.relname`,
    [table],
  );
  return rows.map((r: { relname: string }) => r.relname);
}
