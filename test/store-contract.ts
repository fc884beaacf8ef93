import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { encodeBooks } from "../src/domain/book-codec.ts";
import type { SnapshotRow } from "../src/domain/snapshot.ts";
import type { Store } from "../src/store/store.ts";
import { HAND_MARKET } from "./helpers/app.ts";

const BOOKS = encodeBooks(
  { bids: [{ price: 0.5, size: 10 }], asks: [{ price: 0.52, size: 4.5 }] },
  { bids: [{ price: 0.48, size: 4.5 }], asks: [{ price: 0.5, size: 10 }] },
);

function rows(fromSecond: number, count: number, books: boolean): SnapshotRow[] {
  return Array.from({ length: count }, (_, i) => ({
    time: (fromSecond + i) * 1e6,
    coinPrice: 150 + i / 100,
    priceUp: 0.51,
    priceDown: 0.49,
    books: books ? BOOKS : null,
  }));
}

/**
 * The behaviour every Store implementation must share. Each backend's test file calls this with a
 * factory for an empty, migrated store.
 */
export function storeContract(name: string, open: () => Promise<Store>): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());

    test("migrating again is a no-op", async () => {
      await store.migrate();
      assert.equal(await store.countMarkets(), 0);
    });

    test("upserting a slug twice updates one market in place", async () => {
      const first = await store.upsertMarket({ ...HAND_MARKET, winner: null, resolvedAt: null });
      const second = await store.upsertMarket(HAND_MARKET);
      assert.equal(first.key, second.key);
      assert.equal(second.winner, "Up");
      assert.equal(await store.countMarkets(), 1);
      const { key: _k, snapshotCount, ...record } = second;
      assert.deepEqual(record, HAND_MARKET);
      assert.equal(snapshotCount, 0);
    });

    test("markets are found by slug or by Polymarket's alias", async () => {
      await store.upsertMarket({
        ...HAND_MARKET,
        slug: "btc-updown-1h-1784851200",
        marketType: "1h",
        coin: "btc",
        polymarketSlug: "bitcoin-up-or-down-july-23-2026-8pm-et",
      });
      assert.equal(
        (await store.getMarket("bitcoin-up-or-down-july-23-2026-8pm-et"))?.slug,
        "btc-updown-1h-1784851200",
      );
      assert.equal(await store.getMarket("nope"), null);
    });

    test("two markets may share a Polymarket alias (the repeated autumn hour); the earlier one answers it", async () => {
      const alias = "bitcoin-up-or-down-november-1-2026-1am-et";
      const base = { ...HAND_MARKET, coin: "btc" as const, marketType: "1h" as const, polymarketSlug: alias };
      const edt = await store.upsertMarket({
        ...base,
        slug: "btc-updown-1h-1793512800",
        startTime: 1793512800,
      });
      await store.upsertMarket({ ...base, slug: "btc-updown-1h-1793516400", startTime: 1793516400 });
      assert.equal((await store.getMarket(alias))?.key, edt.key);
      assert.equal((await store.getMarket("btc-updown-1h-1793516400"))?.startTime, 1793516400);
    });

    test("snapshot writes are idempotent on (market, time) and keep the count", async () => {
      const m = (await store.getMarket(HAND_MARKET.slug))!;
      assert.equal(await store.insertSnapshots(m.key, rows(1784851200, 100, true)), 100);
      assert.equal(await store.insertSnapshots(m.key, rows(1784851250, 100, true)), 50, "overlap is skipped");
      assert.equal(
        await store.insertSnapshots(m.key, rows(1784851200, 150, true)),
        0,
        "a replay adds nothing",
      );
      assert.equal(await store.insertSnapshots(m.key, []), 0);
      assert.equal((await store.getMarket(HAND_MARKET.slug))!.snapshotCount, 150);
      assert.equal(await store.countSnapshots(m.key), 150);
      assert.equal(await store.countSnapshots(m.key, 1784851210e6, 1784851219e6), 10);
    });

    test("pages are ordered, offset, bounded, and carry books only when asked", async () => {
      const m = (await store.getMarket(HAND_MARKET.slug))!;
      const desc = await store.snapshotPage(m.key, { order: "desc", limit: 3, offset: 1, books: false });
      assert.deepEqual(
        desc.map((r) => r.time),
        [1784851348e6, 1784851347e6, 1784851346e6],
      );
      assert.equal(desc[0].books, null);
      const asc = await store.snapshotPage(m.key, {
        order: "asc",
        limit: 2,
        offset: 0,
        books: true,
        from: 1784851300e6,
        to: 1784851301e6,
      });
      assert.deepEqual(
        asc.map((r) => r.time),
        [1784851300e6, 1784851301e6],
      );
      assert.deepEqual(asc[0].books, BOOKS);
      assert.equal(asc[0].coinPrice, 150.5, "the first write of a second wins");
      const past = await store.snapshotPage(m.key, { order: "desc", limit: 10, offset: 150, books: true });
      assert.deepEqual(past, []);
    });

    test("a snapshot without books reads back with books null", async () => {
      const m = (await store.getMarket("btc-updown-1h-1784851200"))!;
      await store.insertSnapshots(m.key, rows(1784851200, 2, false));
      const page = await store.snapshotPage(m.key, { order: "asc", limit: 10, offset: 0, books: true });
      assert.deepEqual(
        page.map((r) => r.books),
        [null, null],
      );
    });

    test("the snapshot at or before a time", async () => {
      const m = (await store.getMarket(HAND_MARKET.slug))!;
      assert.equal((await store.snapshotAtOrBefore(m.key, 1784851260_500000, false))?.time, 1784851260e6);
      assert.equal(await store.snapshotAtOrBefore(m.key, 1784851199e6, false), null);
      assert.deepEqual((await store.snapshotAtOrBefore(m.key, 1784851260e6, true))?.books, BOOKS);
    });

    test("listing filters, orders newest first and counts the total", async () => {
      const { markets, total } = await store.listMarkets({ limit: 1, offset: 0 });
      assert.equal(total, 4);
      assert.equal(markets.length, 1);
      const sol = await store.listMarkets({ coin: "sol", resolved: true, limit: 10, offset: 0 });
      assert.deepEqual(
        sol.markets.map((x) => x.slug),
        [HAND_MARKET.slug],
      );
      const hidden = await store.listMarkets({
        limit: 10,
        offset: 0,
        hiddenBefore: [{ coin: "sol", marketType: "15m", startTime: 1784851201 }],
      });
      assert.ok(!hidden.markets.some((x) => x.slug === HAND_MARKET.slug));
      assert.equal(hidden.total, 3);
      assert.deepEqual(await store.latestStartTimes("sol", "15m", 5), [1784851200]);
    });

    test("API keys: stored, found, listed and revoked once", async () => {
      const record = {
        id: "AbCdEf12",
        hash: "a".repeat(64),
        plan: "pro" as const,
        account: "acme",
        name: "n",
        createdAt: 1,
        revokedAt: null,
        perMinuteLimit: null,
        perDayLimit: null,
      };
      await store.insertApiKey(record);
      assert.deepEqual(await store.findApiKey("AbCdEf12"), record);
      assert.equal(await store.findApiKey("zzzzzzzz"), null);
      assert.equal((await store.listApiKeys()).length, 1);
      assert.equal(await store.revokeApiKey("AbCdEf12", 5), true);
      assert.equal(await store.revokeApiKey("AbCdEf12", 6), false);
      assert.equal((await store.findApiKey("AbCdEf12"))?.revokedAt, 5);
    });
  });
}
