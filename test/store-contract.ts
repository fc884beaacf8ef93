import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { encodeBooks } from "../src/domain/book-codec.ts";
import type { SnapshotRow } from "../src/domain/snapshot.ts";
import type { QuotaChargeRecord, Store } from "../src/store/store.ts";
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

    test("API keys: an account holds at most maxActive active keys of a plan; revoked keys do not count", async () => {
      const key = (id: string, account: string, plan: "starter" | "pro") => ({
        id,
        hash: "b".repeat(64),
        plan,
        account,
        name: null,
        createdAt: 10,
        revokedAt: null,
        perMinuteLimit: 60,
        perDayLimit: 86_400_000_000,
      });
      assert.equal(await store.insertApiKey(key("lim00001", "limited", "starter"), 2), true);
      assert.equal(await store.insertApiKey(key("lim00002", "limited", "starter"), 2), true);
      assert.equal(
        await store.insertApiKey(key("lim00003", "limited", "starter"), 2),
        false,
        "a third is refused",
      );
      assert.equal(await store.findApiKey("lim00003"), null, "a refused key is not stored");
      assert.equal(await store.countActiveKeys("limited", "starter"), 2);
      assert.equal(await store.insertApiKey(key("lim00004", "limited", "pro"), 2), true, "another plan");
      assert.equal(await store.insertApiKey(key("lim00005", "other", "starter"), 2), true, "another account");
      assert.equal(await store.insertApiKey(key("lim00006", "limited", "starter"), null), true, "no limit");
      assert.equal(await store.countActiveKeys("limited", "starter"), 3);
      assert.equal(await store.revokeApiKey("lim00001", 11), true);
      assert.equal(await store.revokeApiKey("lim00006", 11), true);
      assert.equal(await store.countActiveKeys("limited", "starter"), 1);
      assert.equal(await store.insertApiKey(key("lim00007", "limited", "starter"), 2), true, "room again");
      assert.equal(await store.countActiveKeys("limited", "starter"), 2);
      assert.equal(await store.countActiveKeys("nobody", "starter"), 0);
      assert.deepEqual(await store.findApiKey("lim00007"), key("lim00007", "limited", "starter"));
    });

    test("API keys: put stores a record as given, a repeat changes nothing, a revocation on either side stays", async () => {
      const record = {
        id: "put00001",
        hash: "c".repeat(64),
        plan: "enterprise" as const,
        account: "copied",
        name: null,
        createdAt: 20,
        revokedAt: null,
        perMinuteLimit: 5000,
        perDayLimit: 1_000_000,
      };
      await store.putApiKey(record);
      await store.putApiKey(record);
      assert.deepEqual(await store.findApiKey("put00001"), record);
      await store.putApiKey({ ...record, plan: "pro", name: "renamed", perMinuteLimit: null });
      assert.deepEqual(await store.findApiKey("put00001"), {
        ...record,
        plan: "pro",
        name: "renamed",
        perMinuteLimit: null,
      });
      await store.putApiKey({ ...record, revokedAt: 30 });
      assert.equal((await store.findApiKey("put00001"))?.revokedAt, 30);
      await store.putApiKey(record);
      assert.equal((await store.findApiKey("put00001"))?.revokedAt, 30, "not revived");
      await store.putApiKey({ ...record, revokedAt: 25 });
      assert.equal((await store.findApiKey("put00001"))?.revokedAt, 25, "the earlier revocation");
      await store.putApiKey({ ...record, revokedAt: 40 });
      assert.equal((await store.findApiKey("put00001"))?.revokedAt, 25);
      const limited = { ...record, id: "put00002", plan: "starter" as const, account: "full" };
      await store.insertApiKey({ ...limited, id: "put00003" }, 1);
      await store.putApiKey(limited);
      assert.equal(await store.countActiveKeys("full", "starter"), 2, "put is not limited per account");
    });

    test("quota ledger: listed by id in pages; put stores charges as given and sets used to the live ones", async () => {
      const charge = (id: string, over: Partial<QuotaChargeRecord> = {}): QuotaChargeRecord => ({
        id,
        keyId: "qc",
        month: "2026-07",
        idempotencyKey: null,
        chargedAt: 100,
        refundedAt: null,
        result: null,
        ...over,
      });
      const ledger = [
        charge("qc-1", { idempotencyKey: "i-1", result: '{"a":1}' }),
        charge("qc-2", { refundedAt: 150 }),
        charge("qc-3", { month: "2026-08", chargedAt: 200 }),
        charge("qc-4", { idempotencyKey: "i-2" }),
      ];
      // A charge of the destination holding an idempotency key the ledger gives to another charge.
      assert.equal(
        (
          await store.chargeQuota({
            keyId: "qc",
            month: "2026-07",
            limit: null,
            chargeId: "qc-0",
            idempotencyKey: "i-2",
            at: 90,
          })
        ).status,
        "charged",
      );
      await store.putQuotaCharges(ledger);
      await store.putQuotaCharges(ledger);
      assert.equal(await store.quotaUsed("qc", "2026-07"), 2);
      assert.equal(await store.quotaUsed("qc", "2026-08"), 1);
      const mine = async (after: string | null, limit: number) =>
        (await store.listQuotaCharges(after, limit)).filter((c) => c.keyId === "qc");
      assert.deepEqual(await mine("qc-", 100), ledger, "the one holding i-2 gave way");
      assert.deepEqual(await mine("qc-1", 2), ledger.slice(1, 3));
      const all: QuotaChargeRecord[] = [];
      for (let page = await store.listQuotaCharges(null, 3); page.length;) {
        all.push(...page);
        page = await store.listQuotaCharges(page[page.length - 1].id, 3);
      }
      assert.deepEqual(
        all.filter((c) => c.keyId === "qc"),
        ledger,
      );
      assert.deepEqual(
        all.map((c) => c.id),
        all.map((c) => c.id).toSorted(),
      );
      // What happened at the destination since is kept: a refund and a recorded result.
      assert.equal(await store.refundQuota("qc", "qc-4", 300), true);
      await store.recordChargeResult("qc", "qc-3", '{"b":2}');
      await store.putQuotaCharges(ledger);
      assert.equal((await mine("qc-3", 1))[0].refundedAt, 300);
      assert.equal((await mine("qc-2", 1))[0].result, '{"b":2}');
      assert.equal(await store.quotaUsed("qc", "2026-07"), 1);
      const replay = await store.chargeQuota({
        keyId: "qc",
        month: "2026-07",
        limit: null,
        chargeId: "qc-9",
        idempotencyKey: "i-1",
        at: 400,
      });
      assert.deepEqual(replay, { status: "replayed", chargeId: "qc-1", used: 1, result: '{"a":1}' });
      await store.putQuotaCharges([]);
    });

    test("prices read back as the same doubles, and a second given twice in a batch keeps the first", async () => {
      const doubles = [0.1 + 0.2, 1 / 3, 5e-324, 1.7976931348623157e308, -2.5e-7, 123456.789012345];
      const m = await store.upsertMarket({
        ...HAND_MARKET,
        slug: "eth-updown-5m-1700000000",
        coin: "eth",
        marketType: "5m",
        startTime: 1700000000,
        coinPriceStart: doubles[0],
        coinPriceEnd: doubles[1],
        finalVolume: doubles[2],
        finalLiquidity: doubles[3],
      });
      const again = (await store.getMarket(m.slug))!;
      assert.deepEqual(
        [again.coinPriceStart, again.coinPriceEnd, again.finalVolume, again.finalLiquidity],
        doubles.slice(0, 4),
      );
      const written = doubles.map((d, i) => ({
        time: (1700000000 + i) * 1e6,
        coinPrice: d,
        priceUp: doubles[(i + 1) % doubles.length],
        priceDown: doubles[(i + 2) % doubles.length],
        books: i % 2 ? BOOKS : null,
      }));
      const twice = { ...written[0], time: written[1].time, coinPrice: 7, books: BOOKS };
      assert.equal(
        await store.insertSnapshots(m.key, [...written.slice(0, 2), twice, ...written.slice(2)]),
        6,
      );
      assert.equal((await store.getMarket(m.slug))!.snapshotCount, 6);
      const page = await store.snapshotPage(m.key, { order: "asc", limit: 10, offset: 0, books: true });
      assert.deepEqual(page, written);
    });

    test("listing breaks ties of start time by slug, in byte order", async () => {
      const slugs = ["tie-b", "tie_a", "tie-a-2", "tie-A", "tieb"];
      for (const slug of slugs) {
        await store.upsertMarket({
          ...HAND_MARKET,
          slug,
          coin: "btc",
          marketType: "24h",
          startTime: 1600000000,
        });
      }
      const { markets, total } = await store.listMarkets({
        coin: "btc",
        marketType: "24h",
        startTo: 1600000000,
        limit: 10,
        offset: 1,
      });
      assert.equal(total, 5);
      assert.deepEqual(
        markets.map((x) => x.slug),
        ["tie-a-2", "tie-b", "tie_a", "tieb"],
      );
    });

    test("quota: charges up to the limit, then refuses; each month counts apart", async () => {
      const charge = (chargeId: string, month: string, limit: number | null) =>
        store.chargeQuota({ keyId: "q1", month, limit, chargeId, idempotencyKey: null, at: 100 });
      assert.equal(await store.quotaUsed("q1", "2026-07"), 0);
      assert.deepEqual(await charge("c1", "2026-07", 2), { status: "charged", chargeId: "c1", used: 1 });
      assert.deepEqual(await charge("c2", "2026-07", 2), { status: "charged", chargeId: "c2", used: 2 });
      assert.deepEqual(await charge("c3", "2026-07", 2), { status: "exhausted", used: 2 });
      assert.deepEqual(await charge("c4", "2026-08", 2), { status: "charged", chargeId: "c4", used: 1 });
      assert.deepEqual(await charge("c5", "2026-08", null), { status: "charged", chargeId: "c5", used: 2 });
      assert.equal(await store.quotaUsed("q1", "2026-07"), 2);
      assert.equal(await store.quotaUsed("q1", "2026-08"), 2);
      assert.equal(await store.quotaUsed("q2", "2026-07"), 0, "another key's quota is untouched");
    });

    test("quota: a live charge's idempotency key replays it, with its result once recorded", async () => {
      const charge = (chargeId: string, limit: number | null) =>
        store.chargeQuota({
          keyId: "q3",
          month: "2026-07",
          limit,
          chargeId,
          idempotencyKey: "idem-1",
          at: 100,
        });
      assert.deepEqual(await charge("d1", 5), { status: "charged", chargeId: "d1", used: 1 });
      assert.deepEqual(await charge("d2", 5), { status: "replayed", chargeId: "d1", used: 1, result: null });
      await store.recordChargeResult("q3", "d1", '{"ok":true}');
      assert.deepEqual(await charge("d3", 1), {
        status: "replayed",
        chargeId: "d1",
        used: 1,
        result: '{"ok":true}',
      });
      assert.deepEqual(
        await store.chargeQuota({
          keyId: "q3",
          month: "2026-08",
          limit: 5,
          chargeId: "d4",
          idempotencyKey: "idem-1",
          at: 200,
        }),
        { status: "replayed", chargeId: "d1", used: 1, result: '{"ok":true}' },
        "a replay in a later month answers with the charge's own month",
      );
      assert.deepEqual(
        await store.chargeQuota({
          keyId: "q4",
          month: "2026-07",
          limit: 5,
          chargeId: "d5",
          idempotencyKey: "idem-1",
          at: 200,
        }),
        { status: "charged", chargeId: "d5", used: 1 },
        "idempotency keys are per API key",
      );
      assert.equal(await store.quotaUsed("q3", "2026-07"), 1);
      assert.equal(await store.quotaUsed("q3", "2026-08"), 0);
    });

    test("quota: a charge is refunded once; its idempotency key may then be charged again", async () => {
      const charge = (chargeId: string, idempotencyKey: string | null) =>
        store.chargeQuota({ keyId: "q5", month: "2026-07", limit: 2, chargeId, idempotencyKey, at: 100 });
      assert.deepEqual(await charge("e1", "idem-2"), { status: "charged", chargeId: "e1", used: 1 });
      assert.deepEqual(await charge("e2", null), { status: "charged", chargeId: "e2", used: 2 });
      assert.equal(await store.refundQuota("q5", "e1", 150), true);
      assert.equal(await store.refundQuota("q5", "e1", 160), false, "only once");
      assert.equal(await store.refundQuota("q6", "e2", 160), false, "not another key's charge");
      assert.equal(await store.refundQuota("q5", "nope", 160), false);
      assert.equal(await store.quotaUsed("q5", "2026-07"), 1);
      assert.deepEqual(await charge("e3", "idem-2"), { status: "charged", chargeId: "e3", used: 2 });
      assert.deepEqual(await charge("e4", "idem-2"), {
        status: "replayed",
        chargeId: "e3",
        used: 2,
        result: null,
      });
      assert.deepEqual(await charge("e5", "idem-3"), { status: "exhausted", used: 2 });
      assert.equal(await store.refundQuota("q5", "e2", 170), true);
      assert.equal(await store.refundQuota("q5", "e3", 170), true);
      assert.equal(await store.quotaUsed("q5", "2026-07"), 0);
      assert.deepEqual(await charge("e6", "idem-3"), { status: "charged", chargeId: "e6", used: 1 });
    });

    test("a batch writes several markets' rows at once, idempotently, counting each market's", async () => {
      const a = await store.upsertMarket({ ...HAND_MARKET, slug: "eth-updown-5m-1784851500", coin: "eth" });
      const b = await store.upsertMarket({ ...HAND_MARKET, slug: "sol-updown-5m-1784851500", coin: "sol" });
      const batch = [
        { marketKey: a.key, rows: rows(1784851500, 3, true) },
        { marketKey: b.key, rows: rows(1784851500, 2, false) },
      ];
      assert.equal(await store.insertSnapshotBatch(batch), 5);
      assert.equal(await store.insertSnapshotBatch(batch), 0, "replayed: nothing new");
      assert.equal(await store.insertSnapshotBatch([]), 0);
      assert.equal((await store.getMarket(a.slug))?.snapshotCount, 3);
      assert.equal((await store.getMarket(b.slug))?.snapshotCount, 2);
      const page = await store.snapshotPage(a.key, { order: "asc", limit: 10, offset: 0, books: true });
      assert.deepEqual(page, rows(1784851500, 3, true));
    });

    test("every page of a long market is the same whichever end it is read from", async () => {
      const m = await store.upsertMarket({
        ...HAND_MARKET,
        slug: "sol-updown-4h-1784851200",
        coin: "sol",
        marketType: "4h",
      });
      // 700 seconds with holes; each second's books differ in length and bytes (every third Down book
      // is not the Up book's mirror, so its blob starts with a zero byte), and every seventh has none.
      const written: SnapshotRow[] = Array.from({ length: 700 }, (_, i) => ({
        time: (1784851200 + i + Math.floor(i / 50) * 3) * 1e6,
        coinPrice: 60000 + i / 100,
        priceUp: 0.5,
        priceDown: 0.5,
        books:
          i % 7 === 3
            ? null
            : encodeBooks(
                { bids: [{ price: 0.5, size: i + 1 }], asks: [{ price: 0.52, size: 2 }] },
                { bids: [{ price: 0.48, size: i % 3 ? 2 : 3 }], asks: [{ price: 0.5, size: i + 1 }] },
              ),
      }));
      assert.equal(await store.insertSnapshots(m.key, written), 700);
      const newestFirst = [...written].reverse();
      for (const order of ["asc", "desc"] as const) {
        const all = order === "asc" ? written : newestFirst;
        for (const offset of [0, 1, 255, 256, 299, 300, 350, 400, 599, 600, 650, 699, 700, 701]) {
          for (const limit of [1, 7, 100, 350, 1000]) {
            // With the count given, a store may read from the nearer end; without, it must not need to.
            const total = offset % 2 === 0 ? written.length : undefined;
            const page = await store.snapshotPage(m.key, { order, limit, offset, books: true, total });
            const expected = all.slice(offset, offset + limit);
            assert.deepEqual(page, expected, `${order} offset ${offset} limit ${limit}`);
            const bare = await store.snapshotPage(m.key, { order, limit, offset, books: false, total });
            assert.deepEqual(
              bare,
              expected.map((r) => ({ ...r, books: null })),
              `${order} offset ${offset} limit ${limit} without books`,
            );
          }
        }
        const from = written[100].time;
        const to = written[650].time;
        const ranged = await store.snapshotPage(m.key, {
          order,
          limit: 100,
          offset: 500,
          books: true,
          from,
          to,
          total: all.filter((r) => r.time >= from && r.time <= to).length,
        });
        assert.deepEqual(
          ranged,
          all.filter((r) => r.time >= from && r.time <= to).slice(500, 600),
          `${order} within a range`,
        );
      }
    });

    test("gaps are kept per market and start, a longer record of the same gap extending it", async () => {
      const m = await store.upsertMarket({
        ...HAND_MARKET,
        slug: "btc-updown-15m-1784851200",
        marketType: "15m",
      });
      await store.recordGap(m.key, {
        from: 5e6,
        to: 7e6,
        cause: "upstream_silent",
        detail: "no message for 30 s",
      });
      await store.recordGap(m.key, { from: 1e6, to: 2e6, cause: "not_recording", detail: null });
      await store.recordGap(m.key, {
        from: 5e6,
        to: 9e6,
        cause: "upstream_silent",
        detail: "no message for 30 s",
      });
      await store.recordGap(m.key, {
        from: 5e6,
        to: 8e6,
        cause: "upstream_silent",
        detail: "no message for 30 s",
      });
      assert.deepEqual(await store.listGaps(m.key), [
        { from: 1e6, to: 2e6, cause: "not_recording", detail: null },
        { from: 5e6, to: 9e6, cause: "upstream_silent", detail: "no message for 30 s" },
      ]);
      assert.deepEqual(await store.listGaps(m.key + 1000), []);
    });

    test("the span of a market's snapshots names the holes wider than the step", async () => {
      const m = await store.upsertMarket({
        ...HAND_MARKET,
        slug: "btc-updown-4h-1784851200",
        marketType: "4h",
      });
      assert.deepEqual(await store.snapshotSpan(m.key, 1.5e6), { first: null, last: null, holes: [] });
      const times = [10, 11, 12, 15, 16, 30].map((s) => s * 1e6 + 250_000);
      await store.insertSnapshots(
        m.key,
        times.map((time) => ({ time, coinPrice: 1, priceUp: 0.5, priceDown: 0.5, books: null })),
      );
      assert.deepEqual(await store.snapshotSpan(m.key, 1.5e6), {
        first: 10_250_000,
        last: 30_250_000,
        holes: [
          { after: 12_250_000, before: 15_250_000 },
          { after: 16_250_000, before: 30_250_000 },
        ],
      });
    });
  });
}
