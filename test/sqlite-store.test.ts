import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { openStore } from "../src/store/open.ts";
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
