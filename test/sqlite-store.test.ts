import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { openStore } from "../src/store/open.ts";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.ts";
import { HAND_MARKET } from "./helpers/app.ts";
import { storeContract } from "./store-contract.ts";

storeContract("sqlite", async () => {
  const store = new SqliteStore(":memory:");
  await store.migrate();
  return store;
});

test("a SQLite file keeps everything across a reopen", async () => {
  const dir = mkdtempSync(join(tmpdir(), "updown-"));
  try {
    const url = `sqlite:${join(dir, "nested", "db.sqlite")}`;
    const first = await openStore(url);
    const m = await first.upsertMarket(HAND_MARKET);
    await first.insertSnapshots(m.key, [
      { time: 1e15, coinPrice: 1, priceUp: 0.5, priceDown: 0.5, books: null },
    ]);
    await first.close();
    const second = await openStore(url);
    assert.equal((await second.getMarket(HAND_MARKET.slug))?.snapshotCount, 1);
    await second.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an unsupported DATABASE_URL is refused with a clear message", async () => {
  await assert.rejects(openStore("mysql://x"), /DATABASE_URL must start with sqlite:/);
});
