import assert from "node:assert/strict";
import { encodeBooks } from "../../src/wire/book-codec.ts";
import type { SnapshotRow } from "../../src/domain/snapshot.ts";
import { MARKET_SOURCES } from "../../src/domain/market.ts";
import { JsonBytes } from "../../src/wire/json-bytes.ts";
import type { MarketStore, SnapshotQuery } from "../../src/store/ports/market-store.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { RENDER_VERSION, writeSnapshotJson } from "../../src/wire/wire.ts";
import { type StoreTests, describeStoreTests } from "./store-tests.ts";
import { HAND_MARKET } from "../helpers/app.ts";

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
 * Seconds with holes and books that differ second to second (every fifth without). Most books have
 * sizes of two decimals, as Polymarket's, which the WebAssembly book writer takes; every thirteenth
 * has whole sizes, which it leaves to the JavaScript, so a rendered page goes both ways within a block.
 */
function longRows(fromSecond: number, count: number): SnapshotRow[] {
  return Array.from({ length: count }, (_, i) => ({
    time: (fromSecond + i + Math.floor(i / 97) * 2) * 1e6 + (i % 3) * 1000,
    coinPrice: 3000 + i / 7,
    priceUp: 0.5 + (i % 40) / 100,
    priceDown: 0.5 - (i % 40) / 100,
    books:
      i % 5 === 4
        ? null
        : encodeBooks(
            { bids: [{ price: 0.5, size: i + 1 }], asks: [{ price: 0.52, size: (i % 9) + 1 }] },
            { bids: [{ price: 0.48, size: i % 13 === 6 ? 2 : 2.25 }], asks: [{ price: 0.5, size: i + 1 }] },
          ),
  }));
}

/** What a store must answer for a market holding exactly `rows` (in time order). */
/**
 * snapshotPage, after checking that renderedPage writes exactly the JSON of the same rows when the
 * market is in blocks (and is null when `blocked` says it is not, if said).
 */
async function pageChecked(store: MarketStore, key: number, q: SnapshotQuery, blocked?: boolean) {
  const rows = await store.snapshotPage(key, q);
  const writer = await store.renderedPage(key, q);
  if (blocked !== undefined) assert.equal(writer !== null, blocked, "renderedPage only for blocks");
  if (writer) {
    const expected = new JsonBytes();
    rows.forEach((r, i) => {
      if (i > 0) expected.byte(44);
      writeSnapshotJson(expected, r, q.books);
    });
    const got = new JsonBytes();
    writer(got);
    assert.equal(got.text(), expected.text(), `rendered page ${JSON.stringify(q)}`);
  }
  return rows;
}

async function expectedOf(rows: SnapshotRow[]) {
  const asc = rows;
  const desc = [...rows].reverse();
  const mid = rows[Math.floor(rows.length / 2)];
  const from = rows[100].time;
  const to = rows[rows.length - 100].time;
  const inRange = asc.filter((r) => r.time >= from && r.time <= to);
  const step = 1.5e6;
  const holes: { after: number; before: number }[] = [];
  for (let i = 1; i < asc.length; i++) {
    if (asc[i].time - asc[i - 1].time > step) holes.push({ after: asc[i - 1].time, before: asc[i].time });
  }
  return {
    pages: [
      asc.slice(0, 1000),
      asc.slice(1000, 2000),
      desc.slice(0, 1000),
      desc.slice(300, 1300),
      desc.slice(1250, 1260),
    ],
    bare: desc.slice(7, 17).map((r) => ({ ...r, books: null })),
    ranged: [inRange.slice(5, 505), [...inRange].reverse().slice(0, 1000)],
    counts: [rows.length, inRange.length],
    at: [mid, null, asc.at(-1)],
    span: { first: asc[0].time, last: asc.at(-1)!.time, holes },
  };
}

/** The same questions asked of a store. */
async function readEverything(store: MarketStore, key: number, rows: SnapshotRow[]) {
  const page = (order: "asc" | "desc", offset: number, limit: number, extra: object = {}) =>
    pageChecked(store, key, { order, offset, limit, books: true, ...extra });
  const mid = rows[Math.floor(rows.length / 2)];
  const from = rows[100].time;
  const to = rows[rows.length - 100].time;
  return {
    pages: [
      await page("asc", 0, 1000),
      await page("asc", 1000, 1000),
      await page("desc", 0, 1000, { total: rows.length }),
      await page("desc", 300, 1000),
      await page("desc", 1250, 10),
    ],
    bare: await pageChecked(store, key, { order: "desc", offset: 7, limit: 10, books: false }),
    ranged: [await page("asc", 5, 500, { from, to }), await page("desc", 0, 1000, { from, to })],
    counts: [await store.countSnapshots(key), await store.countSnapshots(key, from, to)],
    at: [
      await store.snapshotAtOrBefore(key, mid.time + 1, true),
      await store.snapshotAtOrBefore(key, rows[0].time - 1, true),
      await store.snapshotAtOrBefore(key, rows.at(-1)!.time + 1e9, true),
    ],
    span: await store.snapshotSpan(key, 1.5e6),
  };
}

const MARKET_STORE_TESTS: StoreTests<MarketStore> = {
  "migrating again is a no-op": async (marketStore, store) => {
    await store.migrate();
    assert.equal(await marketStore.countMarkets(), 0);
  },
  "upserting a slug twice updates one market in place": async (marketStore) => {
    const first = await marketStore.upsertMarket({ ...HAND_MARKET, winner: null, resolvedAt: null });
    const second = await marketStore.upsertMarket(HAND_MARKET);
    assert.equal(first.key, second.key);
    assert.equal(second.winner, "Up");
    assert.equal(await marketStore.countMarkets(), 1);
    const { key: _k, snapshotCount, sources, ...record } = second;
    assert.deepEqual(record, HAND_MARKET);
    assert.equal(snapshotCount, 0);
    assert.deepEqual(sources, [], "a new market has no source until one is marked");
  },
  "markets are found by slug or by Polymarket's alias": async (marketStore) => {
    await marketStore.upsertMarket({
      ...HAND_MARKET,
      slug: "btc-updown-1h-1784851200",
      marketType: "1h",
      coin: "btc",
      polymarketSlug: "bitcoin-up-or-down-july-23-2026-8pm-et",
    });
    assert.equal(
      (await marketStore.getMarket("bitcoin-up-or-down-july-23-2026-8pm-et"))?.slug,
      "btc-updown-1h-1784851200",
    );
    assert.equal(await marketStore.getMarket("nope"), null);
  },
  "two markets may share a Polymarket alias (the repeated autumn hour); the earlier one answers it": async (
    marketStore,
  ) => {
    const alias = "bitcoin-up-or-down-november-1-2026-1am-et";
    const base = { ...HAND_MARKET, coin: "btc" as const, marketType: "1h" as const, polymarketSlug: alias };
    const edt = await marketStore.upsertMarket({
      ...base,
      slug: "btc-updown-1h-1793512800",
      startTime: 1793512800,
    });
    await marketStore.upsertMarket({ ...base, slug: "btc-updown-1h-1793516400", startTime: 1793516400 });
    assert.equal((await marketStore.getMarket(alias))?.key, edt.key);
    assert.equal((await marketStore.getMarket("btc-updown-1h-1793516400"))?.startTime, 1793516400);
  },
  "snapshot writes are idempotent on (market, time) and keep the count": async (marketStore) => {
    const m = (await marketStore.getMarket(HAND_MARKET.slug))!;
    assert.equal(await marketStore.insertSnapshots(m.key, rows(1784851200, 100, true)), 100);
    assert.equal(
      await marketStore.insertSnapshots(m.key, rows(1784851250, 100, true)),
      50,
      "overlap is skipped",
    );
    assert.equal(
      await marketStore.insertSnapshots(m.key, rows(1784851200, 150, true)),
      0,
      "a replay adds nothing",
    );
    assert.equal(await marketStore.insertSnapshots(m.key, []), 0);
    assert.equal((await marketStore.getMarket(HAND_MARKET.slug))!.snapshotCount, 150);
    assert.equal(await marketStore.countSnapshots(m.key), 150);
    assert.equal(await marketStore.countSnapshots(m.key, 1784851210e6, 1784851219e6), 10);
  },
  "pages are ordered, offset, bounded, and carry books only when asked": async (marketStore) => {
    const m = (await marketStore.getMarket(HAND_MARKET.slug))!;
    const desc = await marketStore.snapshotPage(m.key, {
      order: "desc",
      limit: 3,
      offset: 1,
      books: false,
    });
    assert.deepEqual(
      desc.map((r) => r.time),
      [1784851348e6, 1784851347e6, 1784851346e6],
    );
    assert.equal(desc[0].books, null);
    const asc = await marketStore.snapshotPage(m.key, {
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
    const past = await marketStore.snapshotPage(m.key, {
      order: "desc",
      limit: 10,
      offset: 150,
      books: true,
    });
    assert.deepEqual(past, []);
  },
  "a snapshot without books reads back with books null": async (marketStore) => {
    const m = (await marketStore.getMarket("btc-updown-1h-1784851200"))!;
    await marketStore.insertSnapshots(m.key, rows(1784851200, 2, false));
    const page = await marketStore.snapshotPage(m.key, { order: "asc", limit: 10, offset: 0, books: true });
    assert.deepEqual(
      page.map((r) => r.books),
      [null, null],
    );
  },
  "the snapshot at or before a time": async (marketStore) => {
    const m = (await marketStore.getMarket(HAND_MARKET.slug))!;
    assert.equal((await marketStore.snapshotAtOrBefore(m.key, 1784851260_500000, false))?.time, 1784851260e6);
    assert.equal(await marketStore.snapshotAtOrBefore(m.key, 1784851199e6, false), null);
    assert.deepEqual((await marketStore.snapshotAtOrBefore(m.key, 1784851260e6, true))?.books, BOOKS);
  },
  "listing filters, orders newest first and counts the total": async (marketStore) => {
    const { markets, total } = await marketStore.listMarkets({ limit: 1, offset: 0 });
    assert.equal(total, 4);
    assert.equal(markets.length, 1);
    const sol = await marketStore.listMarkets({ coin: "sol", resolved: true, limit: 10, offset: 0 });
    assert.deepEqual(
      sol.markets.map((x) => x.slug),
      [HAND_MARKET.slug],
    );
    const hidden = await marketStore.listMarkets({
      limit: 10,
      offset: 0,
      hiddenBefore: [{ coin: "sol", marketType: "15m", startTime: 1784851201 }],
    });
    assert.ok(!hidden.markets.some((x) => x.slug === HAND_MARKET.slug));
    assert.equal(hidden.total, 3);
    assert.deepEqual(await marketStore.latestStartTimes("sol", "15m", 5), [1784851200]);
  },
  "prices read back as the same doubles, and a second given twice in a batch keeps the first": async (
    marketStore,
  ) => {
    const doubles = [0.1 + 0.2, 1 / 3, 5e-324, 1.7976931348623157e308, -2.5e-7, 123456.789012345];
    const m = await marketStore.upsertMarket({
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
    const again = (await marketStore.getMarket(m.slug))!;
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
      await marketStore.insertSnapshots(m.key, [...written.slice(0, 2), twice, ...written.slice(2)]),
      6,
    );
    assert.equal((await marketStore.getMarket(m.slug))!.snapshotCount, 6);
    const page = await marketStore.snapshotPage(m.key, { order: "asc", limit: 10, offset: 0, books: true });
    assert.deepEqual(page, written);
  },
  "listing breaks ties of start time by slug, in byte order": async (marketStore) => {
    const slugs = ["tie-b", "tie_a", "tie-a-2", "tie-A", "tieb"];
    for (const slug of slugs) {
      await marketStore.upsertMarket({
        ...HAND_MARKET,
        slug,
        coin: "btc",
        marketType: "24h",
        startTime: 1600000000,
      });
    }
    const { markets, total } = await marketStore.listMarkets({
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
  },
  "a batch writes several markets' rows at once, idempotently, counting each market's": async (
    marketStore,
  ) => {
    const a = await marketStore.upsertMarket({
      ...HAND_MARKET,
      slug: "eth-updown-5m-1784851500",
      coin: "eth",
    });
    const b = await marketStore.upsertMarket({
      ...HAND_MARKET,
      slug: "sol-updown-5m-1784851500",
      coin: "sol",
    });
    const batch = [
      { marketKey: a.key, rows: rows(1784851500, 3, true) },
      { marketKey: b.key, rows: rows(1784851500, 2, false) },
    ];
    assert.equal(await marketStore.insertSnapshotBatch(batch), 5);
    assert.equal(await marketStore.insertSnapshotBatch(batch), 0, "replayed: nothing new");
    assert.equal(await marketStore.insertSnapshotBatch([]), 0);
    assert.equal((await marketStore.getMarket(a.slug))?.snapshotCount, 3);
    assert.equal((await marketStore.getMarket(b.slug))?.snapshotCount, 2);
    const page = await marketStore.snapshotPage(a.key, { order: "asc", limit: 10, offset: 0, books: true });
    assert.deepEqual(page, rows(1784851500, 3, true));
  },
  "every page of a long market is the same whichever end it is read from": async (marketStore) => {
    const m = await marketStore.upsertMarket({
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
    assert.equal(await marketStore.insertSnapshots(m.key, written), 700);
    const newestFirst = [...written].reverse();
    for (const order of ["asc", "desc"] as const) {
      const all = order === "asc" ? written : newestFirst;
      for (const offset of [0, 1, 255, 256, 299, 300, 350, 400, 599, 600, 650, 699, 700, 701]) {
        for (const limit of [1, 7, 100, 350, 1000]) {
          // With the count given, a deep page is read from the nearer end; without, it must not need to be.
          const total = offset % 2 === 0 ? written.length : undefined;
          const page = await pageChecked(
            marketStore,
            m.key,
            { order, limit, offset, books: true, total },
            true,
          );
          const expected = all.slice(offset, offset + limit);
          assert.deepEqual(page, expected, `${order} offset ${offset} limit ${limit}`);
          const bare = await pageChecked(
            marketStore,
            m.key,
            { order, limit, offset, books: false, total },
            true,
          );
          assert.deepEqual(
            bare,
            expected.map((r) => ({ ...r, books: null })),
            `${order} offset ${offset} limit ${limit} without books`,
          );
        }
      }
      const from = written[100].time;
      const to = written[650].time;
      const ranged = await pageChecked(marketStore, m.key, {
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
  },
  "a live market's snapshots read the same after it resolves and they move into blocks": async (
    marketStore,
  ) => {
    const live = {
      ...HAND_MARKET,
      slug: "eth-updown-1h-1784851200",
      coin: "eth" as const,
      marketType: "1h" as const,
    };
    const m = await marketStore.upsertMarket({ ...live, winner: null, resolvedAt: null });
    const written = longRows(1784851200, 1300);
    // In several inserts, as the collector writes: a second at a time, then batches.
    for (const r of written.slice(0, 20)) await marketStore.insertSnapshots(m.key, [r]);
    assert.equal(await marketStore.insertSnapshots(m.key, written.slice(20)), 1280);
    const before = await readEverything(marketStore, m.key, written);
    assert.deepEqual(before, await expectedOf(written));
    const resolved = await marketStore.upsertMarket(live);
    assert.equal(resolved.snapshotCount, 1300);
    assert.deepEqual(await readEverything(marketStore, m.key, written), before);
    // Inserts after the move land in the blocks: before the first, between, after the last; replays add nothing.
    const extra = [
      { ...written[0], time: written[0].time - 5e6 },
      { ...written[700], time: written[700].time + 500_000 },
      { ...written[1299], time: written[1299].time + 9e6, books: null },
    ];
    assert.equal(await marketStore.insertSnapshots(m.key, [...extra, written[5]]), 3);
    assert.equal(await marketStore.insertSnapshots(m.key, extra), 0);
    const all = [...written, ...extra].sort((a, b) => a.time - b.time);
    assert.equal((await marketStore.getMarket(live.slug))!.snapshotCount, 1303);
    assert.deepEqual(await readEverything(marketStore, m.key, all), await expectedOf(all));
    // Marked live again (an older record imported), it keeps its blocks and takes inserts into them.
    await marketStore.upsertMarket({ ...live, winner: null, resolvedAt: null });
    const later = { ...written[1299], time: written[1299].time + 20e6 };
    assert.equal(await marketStore.insertSnapshots(m.key, [later]), 1);
    assert.deepEqual(
      await readEverything(marketStore, m.key, [...all, later]),
      await expectedOf([...all, later]),
    );
  },
  "snapshots from a time on are removed, live or in blocks, the count kept, and others take their place":
    async (marketStore) => {
      const live = {
        ...HAND_MARKET,
        slug: "btc-updown-1h-1784937600",
        coin: "btc" as const,
        marketType: "1h" as const,
      };
      const m = await marketStore.upsertMarket({ ...live, winner: null, resolvedAt: null });
      const written = longRows(1784937600, 1300);
      assert.equal(await marketStore.insertSnapshots(m.key, written), 1300);
      // Derived again from more events: the seconds from 901 on differ (an earlier hour imported later).
      const redone = (from: number) => written.slice(from).map((r) => ({ ...r, priceUp: r.priceUp / 2 }));
      assert.equal(await marketStore.deleteSnapshotsFrom(m.key, written[901].time), 399);
      assert.equal((await marketStore.getMarket(live.slug))!.snapshotCount, 901);
      assert.deepEqual(
        await readEverything(marketStore, m.key, written.slice(0, 901)),
        await expectedOf(written.slice(0, 901)),
      );
      assert.equal(await marketStore.insertSnapshots(m.key, redone(901)), 399);
      const once = [...written.slice(0, 901), ...redone(901)];
      assert.deepEqual(await readEverything(marketStore, m.key, once), await expectedOf(once));
      // Resolved, its snapshots are in blocks: a removal from within a block rewrites it and drops the rest.
      await marketStore.upsertMarket(live);
      assert.equal(await marketStore.deleteSnapshotsFrom(m.key, written[500].time + 1), 799);
      assert.equal((await marketStore.getMarket(live.slug))!.snapshotCount, 501);
      assert.deepEqual(
        await readEverything(marketStore, m.key, once.slice(0, 501)),
        await expectedOf(once.slice(0, 501)),
      );
      assert.equal(await marketStore.insertSnapshots(m.key, redone(501)), 799);
      const twice = [...written.slice(0, 501), ...redone(501)];
      assert.equal((await marketStore.getMarket(live.slug))!.snapshotCount, 1300);
      assert.deepEqual(await readEverything(marketStore, m.key, twice), await expectedOf(twice));
      // Nothing at or after the time: nothing removed.
      assert.equal(await marketStore.deleteSnapshotsFrom(m.key, written[1299].time + 1), 0);
      assert.equal(await marketStore.deleteSnapshotsFrom(m.key + 1000, 0), 0);
    },
  "gaps are kept per market and start, a longer record of the same gap extending it": async (marketStore) => {
    const m = await marketStore.upsertMarket({
      ...HAND_MARKET,
      slug: "btc-updown-15m-1784851200",
      marketType: "15m",
    });
    await marketStore.recordGap(m.key, {
      from: 5e6,
      to: 7e6,
      cause: "upstream_silent",
      detail: "no message for 30 s",
    });
    await marketStore.recordGap(m.key, { from: 1e6, to: 2e6, cause: "not_recording", detail: null });
    await marketStore.recordGap(m.key, {
      from: 5e6,
      to: 9e6,
      cause: "upstream_silent",
      detail: "no message for 30 s",
    });
    await marketStore.recordGap(m.key, {
      from: 5e6,
      to: 8e6,
      cause: "upstream_silent",
      detail: "no message for 30 s",
    });
    assert.deepEqual(await marketStore.listGaps(m.key), [
      { from: 1e6, to: 2e6, cause: "not_recording", detail: null },
      { from: 5e6, to: 9e6, cause: "upstream_silent", detail: "no message for 30 s" },
    ]);
    assert.deepEqual(await marketStore.listGaps(m.key + 1000), []);
  },
  "the span of a market's snapshots names the holes wider than the step": async (marketStore) => {
    const m = await marketStore.upsertMarket({
      ...HAND_MARKET,
      slug: "btc-updown-4h-1784851200",
      marketType: "4h",
    });
    assert.deepEqual(await marketStore.snapshotSpan(m.key, 1.5e6), { first: null, last: null, holes: [] });
    const times = [10, 11, 12, 15, 16, 30].map((s) => s * 1e6 + 250_000);
    await marketStore.insertSnapshots(
      m.key,
      times.map((time) => ({ time, coinPrice: 1, priceUp: 0.5, priceDown: 0.5, books: null })),
    );
    assert.deepEqual(await marketStore.snapshotSpan(m.key, 1.5e6), {
      first: 10_250_000,
      last: 30_250_000,
      holes: [
        { after: 12_250_000, before: 15_250_000 },
        { after: 16_250_000, before: 30_250_000 },
      ],
    });
  },
  "a 50-50 winner, a TWAP settlement and fees are kept as they are": async (marketStore) => {
    const split = {
      ...HAND_MARKET,
      slug: "btc-updown-24h-1787414400",
      coin: "btc",
      marketType: "24h" as const,
      winner: "50-50" as const,
      settlement: { source: "binance" as const, lookbackS: null },
      feeSchedule: null,
    };
    const twap = {
      ...HAND_MARKET,
      slug: "xrp-updown-5m-1787414400",
      coin: "xrp",
      marketType: "5m" as const,
      settlement: { source: "chainlink_twap" as const, lookbackS: 60 },
    };
    for (const market of [split, twap]) {
      const { key: _k, snapshotCount: _c, sources: _s, ...record } = await marketStore.upsertMarket(market);
      assert.deepEqual(record, market);
      const {
        key: _k2,
        snapshotCount: _c2,
        sources: _s2,
        ...read
      } = (await marketStore.getMarket(market.slug))!;
      assert.deepEqual(read, market);
    }
  },
  "the series summary counts what the store holds, and what came since a time": async (marketStore) => {
    const { markets } = await marketStore.listMarkets({ limit: 1000, offset: 0 });
    const summary = await marketStore.seriesSummary(0);
    const names = [...new Set(markets.map((m) => `${m.coin} ${m.marketType}`))].sort();
    assert.deepEqual(
      summary.map((s) => `${s.coin} ${s.marketType}`),
      names,
    );
    for (const s of summary) {
      const own = markets.filter((m) => m.coin === s.coin && m.marketType === s.marketType);
      assert.equal(s.markets, own.length);
      assert.equal(
        s.snapshots,
        own.reduce((n, m) => n + m.snapshotCount, 0),
      );
      assert.equal(s.snapshotsSince, s.snapshots, "everything is after second 0");
      assert.equal(s.firstStart, Math.min(...own.map((m) => m.startTime)));
      assert.equal(s.lastStart, Math.max(...own.map((m) => m.startTime)));
    }
    // HAND_MARKET's snapshots are at 1784851200 and 1784851201.5: a second in between splits them.
    const since = 1784851201;
    for (const s of await marketStore.seriesSummary(since)) {
      let expected = 0;
      for (const m of markets.filter((m) => m.coin === s.coin && m.marketType === s.marketType)) {
        expected += await marketStore.countSnapshots(m.key, since * 1e6);
      }
      assert.equal(s.snapshotsSince, expected, `${s.coin} ${s.marketType}`);
    }
  },
  "a market's sources combine by one rule, and upserting its record keeps them": async (marketStore) => {
    const slug = "sol-updown-15m-1784853000";
    const market = await marketStore.upsertMarket({
      ...HAND_MARKET,
      slug,
      coin: "sol",
      startTime: 1784851500,
    });
    const sourcesOf = async () => (await marketStore.getMarket(slug))!.sources;
    await marketStore.markSource(market.key, "gamma");
    assert.deepEqual(await sourcesOf(), ["gamma"], "a record alone is Gamma only");
    await marketStore.markSource(market.key, "pmxt");
    assert.deepEqual(await sourcesOf(), ["pmxt"], "book data takes Gamma only out");
    await marketStore.markSource(market.key, "gamma");
    assert.deepEqual(await sourcesOf(), ["pmxt"], "a Gamma record again changes nothing");
    await marketStore.markSource(market.key, "recorded");
    assert.deepEqual(await marketStore.markSource(market.key, "recorded"), ["recorded", "pmxt"]);
    assert.deepEqual(await sourcesOf(), ["recorded", "pmxt"], "recorded live and from PMXT, in that order");
    await marketStore.upsertMarket({
      ...HAND_MARKET,
      slug,
      coin: "sol",
      startTime: 1784851500,
      winner: null,
    });
    assert.deepEqual(await sourcesOf(), ["recorded", "pmxt"], "an upsert keeps them");
    const listed = (await marketStore.listMarkets({ coin: "sol", limit: 10, offset: 0 })).markets;
    assert.deepEqual(
      listed.find((m) => m.slug === slug)?.sources,
      ["recorded", "pmxt"],
      "a listing reads them too",
    );
    assert.deepEqual(await marketStore.markSource(987654321, "pmxt"), [], "an unknown key: nothing");
    const { markets } = await marketStore.listMarkets({ limit: 1000, offset: 0 });
    const summary = await marketStore.seriesSummary(0);
    assert.equal(summary.find((s) => s.coin === "sol" && s.marketType === "15m")?.marketsBySource.pmxt, 1);
    for (const s of summary) {
      const own = markets.filter((m) => m.coin === s.coin && m.marketType === s.marketType);
      for (const source of MARKET_SOURCES) {
        const holding = own.filter((m) => m.sources.includes(source)).length;
        assert.equal(s.marketsBySource[source], holding, `${s.coin} ${s.marketType} ${source}`);
      }
    }
  },
  "the demo seed's mark: none, then begun with its anchor (kept by a second begin), then complete": async (
    marketStore,
  ) => {
    assert.equal(await marketStore.demoSeed(), null);
    await marketStore.beginDemoSeed(1784852434);
    assert.deepEqual(await marketStore.demoSeed(), { anchor: 1784852434, completedAt: null });
    await marketStore.beginDemoSeed(1784860000);
    assert.deepEqual(await marketStore.demoSeed(), { anchor: 1784852434, completedAt: null });
    await marketStore.completeDemoSeed(1784852500_123456);
    assert.deepEqual(await marketStore.demoSeed(), { anchor: 1784852434, completedAt: 1784852500_123456 });
  },
};

/**
 * The behaviour every MarketStore must share. Each backend's test file calls this with a factory for an
 * empty, migrated store; the tests build on each other's markets, in order.
 */
export function marketStoreContract(name: string, open: () => Promise<Store>): void {
  describeStoreTests(`MarketStore contract: ${name}`, open, (store) => store.markets, MARKET_STORE_TESTS);
}

/**
 * Version 8's upgrade, for either dialect (`sql` runs a statement, answering its `n` column): blocks
 * without their rendered form answer the same pages, rendered on read, and migrate renders them.
 */
export async function renderedUpgradeCheck(store: Store, sql: (text: string) => Promise<number>) {
  const market = {
    ...HAND_MARKET,
    slug: "xrp-updown-1h-1784851200",
    coin: "xrp" as const,
    marketType: "1h" as const,
  };
  const m = await store.markets.upsertMarket(market);
  await store.markets.insertSnapshots(m.key, longRows(market.startTime, 700));
  const pages = async () => {
    const out: string[] = [];
    for (const order of ["asc", "desc"] as const) {
      for (const books of [false, true]) {
        const q = { order, limit: 300, offset: 200, books };
        await pageChecked(store.markets, m.key, q, true);
        const w = new JsonBytes();
        (await store.markets.renderedPage(m.key, q))!(w);
        out.push(w.text());
      }
    }
    return out;
  };
  const rendered = await pages();
  const unrendered = `SELECT count(*) AS n FROM snapshot_blocks WHERE market = ${m.key} AND rendered IS NULL`;
  assert.equal(await sql(unrendered), 0);
  await sql(`UPDATE snapshot_blocks SET rendered = NULL WHERE market = ${m.key}`);
  assert.equal(await sql(unrendered), 3, "700 seconds in 3 blocks");
  assert.deepEqual(await pages(), rendered, "rendered on read from the prices");
  assert.deepEqual((await store.migrate()).applied, []);
  assert.equal(await sql(unrendered), 0);
  assert.deepEqual(await pages(), rendered, "rendered by migrate");
}

/**
 * The rendered seconds are a cache stamped with the render version, for either dialect. `open` opens
 * (without migrating) a second store on the same database reading `renderVersion` as current; `sql`
 * runs a statement answering its `n` column. After a version bump, pages are byte for byte what a
 * fresh render gives, the blocks they read are re-stamped on the way, and migrate re-renders the rest.
 */
export async function renderVersionCheck(
  store: Store,
  open: (renderVersion: number) => Promise<Store>,
  sql: (text: string) => Promise<number>,
) {
  const market = {
    ...HAND_MARKET,
    slug: "doge-updown-1h-1784851200",
    coin: "doge" as const,
    marketType: "1h" as const,
  };
  const m = await store.markets.upsertMarket(market);
  await store.markets.insertSnapshots(m.key, longRows(market.startTime, 700));
  const stamped = (v: number) =>
    sql(`SELECT count(*) AS n FROM snapshot_blocks WHERE market = ${m.key} AND render_version = ${v}`);
  const queries = (["asc", "desc"] as const).flatMap((order) =>
    [false, true].map((books) => ({ order, limit: 300, offset: 200, books })),
  );
  const pages = async (s: Store) => {
    const out: string[] = [];
    for (const q of queries) {
      // pageChecked holds the rendered page to the JSON of the rows, written fresh.
      await pageChecked(s.markets, m.key, q, true);
      const w = new JsonBytes();
      (await s.markets.renderedPage(m.key, q))!(w);
      out.push(w.text());
    }
    return out;
  };
  const before = await pages(store);
  assert.equal(await stamped(RENDER_VERSION), 3, "700 seconds in 3 blocks, stamped when written");

  const bumped = await open(RENDER_VERSION + 1);
  try {
    // Seconds 200 to 499 of the market lie in its first two blocks: those are read, and re-stamped.
    assert.deepEqual(await pages(bumped), before, "the same bytes, rendered on read");
    assert.equal(await stamped(RENDER_VERSION + 1), 2, "the blocks read re-stamped");
    assert.equal(await stamped(RENDER_VERSION), 1, "the block not read left as it was");
    assert.deepEqual(await pages(bumped), before, "the same bytes from the re-stamped blocks");
    // Blocks of an older version, as a store that never read them has them: migrate renders them all.
    await sql(`UPDATE snapshot_blocks SET render_version = ${RENDER_VERSION} WHERE market = ${m.key}`);
    assert.deepEqual((await bumped.migrate()).applied, []);
    assert.equal(await stamped(RENDER_VERSION + 1), 3, "migrate re-renders every stale block");
    assert.deepEqual(await pages(bumped), before);
    // A block written by the bumped store carries its stamp (10 seconds merged into the last block).
    await sql(`UPDATE snapshot_blocks SET render_version = ${RENDER_VERSION} WHERE market = ${m.key}`);
    await bumped.markets.insertSnapshots(m.key, longRows(market.startTime + 5000, 10));
    assert.equal(await stamped(RENDER_VERSION + 1), 1);
  } finally {
    await bumped.close();
  }
}
