import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.ts";
import { ScratchSchemas, postgresTestUrl } from "./helpers/postgres.ts";
import { depthRow, exchangeStoreContract } from "./exchange-store-contract.ts";

exchangeStoreContract("sqlite", async () => {
  const store = new SqliteStore(":memory:");
  await store.migrate();
  return store;
});

// PostgreSQL runs when DATABASE_URL names a server; once one is named, an unreachable server fails
// these tests rather than skipping them.
const url = postgresTestUrl();
if (url === null) {
  test("ExchangeStore contract: postgres", { skip: "DATABASE_URL is not postgres" }, () => {});
} else {
  const schemas = new ScratchSchemas(url);
  after(() => schemas.dropAll());
  exchangeStoreContract("postgres", () => schemas.openStore());

  describe("PostgreSQL exchange tables", () => {
    test("depth in different monthly partitions reads back in order; a dropped month is made again", async () => {
      const store = await schemas.openStore();
      try {
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
      } finally {
        await store.close();
      }
    });
  });
}
