import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { openStore } from "../src/store/open.ts";
import { SQLITE_MIGRATIONS } from "../src/store/sqlite/migrations.ts";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.ts";
import { HAND_MARKET } from "./helpers/app.ts";
import { exchangeStoreContract } from "./contracts/exchange-store.ts";
import { keyStoreContract } from "./contracts/key-store.ts";
import { marketStoreContract } from "./contracts/market-store.ts";
import { tradeStoreContract } from "./contracts/trade-store.ts";
import { quotaLedgerContract } from "./contracts/quota-ledger.ts";
import { backtestStoreContract } from "./contracts/backtest-store.ts";

async function openMemoryStore(): Promise<SqliteStore> {
  const store = new SqliteStore(":memory:");
  await store.migrate();
  return store;
}

marketStoreContract("sqlite", openMemoryStore);
tradeStoreContract("sqlite", openMemoryStore);
keyStoreContract("sqlite", openMemoryStore);
quotaLedgerContract("sqlite", openMemoryStore);
exchangeStoreContract("sqlite", openMemoryStore);
backtestStoreContract("sqlite", openMemoryStore);

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

test("version 5 keeps a version 4 database's markets, ids and snapshots, and gives them their type's feed", async () => {
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
