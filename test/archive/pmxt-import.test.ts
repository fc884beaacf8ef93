import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { BINANCE_1S, CoinPrices, readBinanceKlines } from "../../src/archive/coin-prices.ts";
import { importPmxt, type PmxtReport } from "../../src/archive/pmxt-import.ts";
import { PmxtFileError } from "../../src/archive/pmxt-file.ts";
import { hourFileName, hourInputs, inputsOf } from "../../src/archive/pmxt-sources.ts";
import type { Market } from "../../src/domain/market.ts";
import type { SnapshotRow } from "../../src/domain/snapshot.ts";
import { ManualClock } from "../../src/domain/time.ts";
import type { StoredMarket } from "../../src/store/ports/market-store.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { PriceFeed } from "../../src/upstream/price-feed.ts";
import { decodeBooks } from "../../src/wire/book-codec.ts";
import { HAND_MARKET, makeTestApp, openTestStore } from "../helpers/app.ts";
import { writePmxtFile } from "../helpers/pmxt-parquet.ts";
import {
  archiveOrder,
  conditionIdOf,
  marketStream,
  rowOf,
  type StreamMessage,
} from "../helpers/pmxt-stream.ts";

/**
 * `import pmxt` over PMXT v2 files written in the test (test/helpers/pmxt-parquet.ts): a BTC 5-minute
 * market crossing an hour boundary, an ETH 15-minute one, an XRP market (a coin not configured) and
 * markets not in the store mixed in; hour files imported out of order, an empty hour, a missing hour,
 * an overlapping file, receive times out of order within a file, several row groups.
 */

const H = 1_784_851_200; // an hour's first second (2026-07-24T00:00Z)
const A_START = H + 3_600 - 150; // crosses into hour H+1
const B_START = H + 900;

function market(slug: string, coin: string, type: "5m" | "15m", start: number, n: number): Market {
  return {
    ...HAND_MARKET,
    slug,
    polymarketSlug: null,
    coin,
    marketType: type,
    marketId: String(n),
    eventId: String(n),
    startTime: start,
    endTime: start + (type === "5m" ? 300 : 900),
    conditionId: conditionIdOf(n),
    clobTokenUp: `${n}1`,
    clobTokenDown: `${n}2`,
    winner: null,
    coinPriceStart: null,
    coinPriceEnd: null,
    finalVolume: null,
    finalLiquidity: null,
    resolvedAt: null,
  };
}

/** Resolved Down upstream; its feed (60,000 + second % 97) says Up: a disagreement to count. */
const A = { ...market(`btc-updown-5m-${A_START}`, "btc", "5m", A_START, 101), winner: "Down" as const };
const B = market(`eth-updown-15m-${B_START}`, "eth", "15m", B_START, 202);
const X = market(`xrp-updown-5m-${B_START}`, "xrp", "5m", B_START, 303);

/** Every message of the kept markets, and of markets the import must leave out. */
const streamA = marketStream(A, 1, (A_START - 400) * 1000, (A_START + 330) * 1000);
const streamB = marketStream(B, 2, (B_START - 60) * 1000, (B_START + 900) * 1000, 900);
const streamX = marketStream(X, 3, (B_START - 60) * 1000, (B_START + 300) * 1000);
const strangers = [4, 5, 6].flatMap((n) =>
  marketStream(
    { conditionId: conditionIdOf(n), clobTokenUp: `${n}1`, clobTokenDown: `${n}2` },
    n,
    H * 1000,
    (H + 7_000) * 1000,
    2_000,
  ),
);

function feedOf(coin: number, from = H - 600, to = H + 3 * 3600): PriceFeed {
  const f = new PriceFeed();
  for (let s = from; s < to; s++) f.addTick(s, coin + (s % 97), s * 1000);
  return f;
}

/** The coin prices of the seconds [from, to) (all the tests' hours by default). */
function pricesFor(from?: number, to?: number): CoinPrices {
  const prices = new CoinPrices(10);
  prices.add("btc", "chainlink", feedOf(60_000, from, to));
  prices.add("eth", BINANCE_1S, feedOf(3_000, from, to));
  return prices;
}

const inHour = (m: StreamMessage, hour: number) =>
  m.receivedMs >= hour * 1000 && m.receivedMs < (hour + 3600) * 1000;

async function all<T>(blocks: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const b of blocks) out.push(...b);
  return out;
}

async function storeState(store: Store, m: StoredMarket) {
  return {
    events: (await all(store.events.streamMarketEvents(m.key))).map((e) => JSON.stringify(e)),
    snapshots: (
      await store.markets.snapshotPage(m.key, { order: "asc", limit: 100_000, offset: 0, books: true })
    ).map((r) => JSON.stringify({ ...r, books: Buffer.from(r.books ?? []).toString("hex") })),
    trades: await store.trades.tradePage(m.key, { order: "asc", limit: 100_000, offset: 0 }),
    integrity: await store.events.bookIntegrity(m.key),
  };
}

/** A naive rebuild: the messages received at or before `t` applied to plain maps, best first. */
function referenceAt(messages: StreamMessage[], token: string, tMs: number) {
  const bids = new Map<number, number>();
  const asks = new Map<number, number>();
  let last: number | null = null;
  for (const { receivedMs, message: m } of messages) {
    if (receivedMs > tMs) continue;
    if (m.event_type === "book" && m.asset_id === token) {
      bids.clear();
      asks.clear();
      for (const l of m.bids as { price: string; size: string }[]) bids.set(Number(l.price), Number(l.size));
      for (const l of m.asks as { price: string; size: string }[]) asks.set(Number(l.price), Number(l.size));
    }
    if (m.event_type === "price_change") {
      for (const e of m.price_changes as Record<string, string>[]) {
        if (e.asset_id !== token) continue;
        const side = e.side === "BUY" ? bids : asks;
        if (Number(e.size) === 0) side.delete(Number(e.price));
        else side.set(Number(e.price), Number(e.size));
      }
    }
    if (m.event_type === "last_trade_price" && m.asset_id === token) last = Number(m.price);
  }
  const b = [...bids].sort((x, y) => y[0] - x[0]).map(([price, size]) => ({ price, size }));
  const a = [...asks].sort((x, y) => x[0] - y[0]).map(([price, size]) => ({ price, size }));
  // In ten-thousandths, as prices are written (0.1 is 1000 of them): no floating-point spread.
  const [bid, ask] = [b[0]?.price, a[0]?.price].map((p) => (p === undefined ? null : Math.round(p * 1e4)));
  const mid = bid !== null && ask !== null && ask - bid <= 1000 ? (bid + ask) / 2e4 : null;
  return { book: { bids: b, asks: a }, price: mid ?? last ?? b[0]?.price ?? a[0]?.price ?? null };
}

describe("import pmxt: PMXT v2 hour files into events, snapshots and trades", () => {
  let dir: string;
  let store: Store;
  let a: StoredMarket;
  let b: StoredMarket;
  let x: StoredMarket;
  let first: PmxtReport;
  let files: { h0: string; h1: string; h2: string; overlap: string };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "pmxt-test-"));
    store = await openTestStore();
    a = await store.markets.upsertMarket(A);
    b = await store.markets.upsertMarket(B);
    x = await store.markets.upsertMarket(X);
    const everything = [...streamA, ...streamB, ...streamX, ...strangers];
    const h0Rows = archiveOrder(everything.filter((m) => inHour(m, H)).map(rowOf));
    // Receive times out of order within the file: two rows of one token's run swapped.
    const i = h0Rows.findIndex((r) => r.assetId === A.clobTokenUp) + 5;
    [h0Rows[i], h0Rows[i + 1]] = [h0Rows[i + 1], h0Rows[i]];
    files = {
      h0: join(dir, hourFileName(H)),
      h1: join(dir, hourFileName(H + 3600)),
      h2: join(dir, hourFileName(H + 7200)),
      overlap: join(dir, "overlap.parquet"),
    };
    writePmxtFile(files.h0, h0Rows, 700);
    writePmxtFile(files.h1, archiveOrder(everything.filter((m) => inHour(m, H + 3600)).map(rowOf)), 300);
    writePmxtFile(files.h2, []);
    const around = everything.filter((m) => Math.abs(m.receivedMs - (H + 3600) * 1000) < 120_000);
    writePmxtFile(files.overlap, archiveOrder(around.map(rowOf)), 250);
    const range = hourInputs(dir, H, H + 3 * 3600);
    first = await importPmxt({
      store,
      coins: ["btc", "eth"],
      // The later hour first; the range adds the hour files again, the empty one and a missing one.
      inputs: [...inputsOf([files.h1, files.overlap]), ...range.inputs],
      missingHours: range.missing,
      prices: pricesFor(),
    });
  });

  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the kept markets' events are the messages sent, in receive order, each once", async () => {
    for (const [m, stream] of [
      [a, streamA],
      [b, streamB],
    ] as const) {
      const stored = await all(store.events.streamMarketEvents(m.key));
      const expected = [...stream].sort((p, q) => p.receivedMs - q.receivedMs);
      assert.equal(stored.length, expected.length, m.slug);
      // Among equal receive times the order is the file's (by token); compare as multisets per time.
      const key = (receivedUs: number, message: unknown) => `${receivedUs} ${JSON.stringify(message)}`;
      const got = stored.map((e) => key(e.receivedUs, e.message)).sort();
      const want = expected.map((s) => key(s.receivedMs * 1000, s.message)).sort();
      const differing = got.filter((g, k) => g !== want[k]);
      assert.deepEqual(differing.slice(0, 3), [], `${differing.length} events differ`);
      for (let k = 1; k < stored.length; k++) assert.ok(stored[k].receivedUs >= stored[k - 1].receivedUs);
      for (const e of stored) assert.equal(e.timestampMs, Number(e.message.timestamp));
    }
    assert.equal(await store.events.countMarketEvents(x.key), 0, "a coin not configured is left out");
    assert.equal(first.events, streamA.length + streamB.length);
  });

  test("the report counts files, rows, markets, events, snapshots, trades, integrity and missing hours", () => {
    assert.equal(first.files, 5, "h1, overlap, h0, h1 again, the empty h2");
    assert.deepEqual(first.hoursMissing, [hourFileName(H + 3 * 3600)]);
    assert.equal(first.markets, 2);
    assert.ok(first.rowGroups > 6, `${first.rowGroups} row groups`);
    assert.ok(first.rowsKept >= streamA.length + streamB.length);
    assert.ok(first.rowsRead > first.rowsKept);
    assert.ok(first.integrity.bestMismatches > 0 && first.integrity.bestMatches > 0);
    assert.ok(first.integrity.bookMatches > 0);
    assert.deepEqual(first.coinPriceSources, { chainlink: 1, [BINANCE_1S]: 1 });
    const trades = streamA.filter((s) => s.message.event_type === "last_trade_price").length;
    assert.ok(first.trades >= trades, `${first.trades} trades`);
    assert.equal(first.snapshots, 300 + 900);
  });

  test("the source of each market's snapshot coin prices is kept (served on its coverage)", async () => {
    assert.equal(await store.imports.coinPriceSource(a.key), "chainlink");
    assert.equal(await store.imports.coinPriceSource(b.key), BINANCE_1S);
    assert.equal(await store.imports.coinPriceSource(x.key), null);
    // Where the data came from (docs/archives.md): the derived markets are marked pmxt.
    assert.ok((await store.markets.getMarket(A.slug))?.sources.includes("pmxt"));
    assert.ok((await store.markets.getMarket(B.slug))?.sources.includes("pmxt"));
    assert.ok(!(await store.markets.getMarket(X.slug))?.sources.includes("pmxt"));
  });

  test("start and end prices from the market's own settlement feed; the upstream winner stays, disagreements counted", async () => {
    const start = 60_000 + (A_START % 97);
    const end = 60_000 + ((A_START + 300) % 97);
    assert.ok(end > start, "the feed says Up");
    const stored = await store.markets.getMarket(A.slug);
    assert.equal(stored?.coinPriceStart, start);
    assert.equal(stored?.coinPriceEnd, end);
    assert.equal(stored?.winner, "Down");
    // B's coin prices are Binance's, not its settlement stream: its record is left as it was.
    assert.equal((await store.markets.getMarket(B.slug))?.coinPriceStart, null);
    assert.deepEqual(first.settlement, {
      pricesFilled: 1,
      agreements: 0,
      disagreements: [{ slug: A.slug, upstream: "Down", feed: "Up", start, end }],
    });
  });

  test("snapshots at chosen seconds equal a naive rebuild of the messages received up to them", async () => {
    for (const [m, stream, coin] of [
      [a, streamA, 60_000],
      [b, streamB, 3_000],
    ] as const) {
      const rows = await store.markets.snapshotPage(m.key, {
        order: "asc",
        limit: 1000,
        offset: 0,
        books: true,
      });
      assert.equal(rows.length, m.endTime - m.startTime);
      for (const second of [
        m.startTime,
        m.startTime + 1,
        m.startTime + 149,
        m.startTime + 150,
        m.endTime - 1,
      ]) {
        const row = rows.find((r) => r.time === second * 1e6) as SnapshotRow;
        const up = referenceAt(stream, m.clobTokenUp, second * 1000);
        const down = referenceAt(stream, m.clobTokenDown, second * 1000);
        const books = decodeBooks(row.books as Uint8Array);
        assert.deepEqual(books.up, up.book, `${m.slug} up book at ${second}`);
        assert.deepEqual(books.down, down.book, `${m.slug} down book at ${second}`);
        assert.equal(row.priceUp, up.price);
        assert.equal(row.priceDown, down.price);
        assert.equal(row.coinPrice, coin + (second % 97));
      }
    }
  });

  test("trades come from last_trade_price, each with its transaction hash, served by the trades route", async () => {
    const trades = await store.trades.tradePage(a.key, { order: "asc", limit: 1000, offset: 0 });
    const sent = streamA.filter((s) => s.message.event_type === "last_trade_price");
    assert.ok(trades.length > 0 && trades.length <= sent.length);
    const t = sent[0].message;
    assert.ok(trades.some((r) => r.time === Number(t.timestamp) * 1000 && r.price === Number(t.price)));
    const events = await all(store.events.streamMarketEvents(a.key, { types: ["last_trade_price"] }));
    assert.ok(events.some((e) => typeof e.message.transaction_hash === "string"));
    // Each trade's hash is its message's (null where the row had none), and the API serves it.
    const hashOf = new Map(
      sent.map(({ message: m }) => [
        `${Number(m.timestamp) * 1000} ${m.asset_id} ${m.side} ${Number(m.price)} ${Number(m.size)}`,
        (m.transaction_hash as string | undefined) ?? null,
      ]),
    );
    const tokenOf = (r: { outcome: string }) => (r.outcome === "Up" ? a.clobTokenUp : a.clobTokenDown);
    const expected = trades.map((r) => hashOf.get(`${r.time} ${tokenOf(r)} ${r.side} ${r.price} ${r.size}`));
    assert.deepEqual(
      trades.map((r) => r.transactionHash),
      expected,
    );
    assert.ok(expected.some((h) => h !== null) && expected.some((h) => h === null), "both kinds present");
    const api = await makeTestApp({ store, seed: false });
    try {
      const res = await api.get(`/v1/markets/${a.slug}/trades?order=asc&limit=1000`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(
        res.json().trades.map((w: { transaction_hash: string | null }) => w.transaction_hash),
        expected,
      );
      assert.deepEqual(api.contractMismatches, []);
    } finally {
      await api.app.close();
    }
  });

  test("a second import of the same files changes nothing", async () => {
    const before = [await storeState(store, a), await storeState(store, b)];
    const again = await importPmxt({
      store,
      coins: ["btc", "eth"],
      inputs: inputsOf([files.h0, files.h1, files.overlap, dir]),
      prices: pricesFor(),
    });
    assert.equal(again.events, 0);
    assert.equal(again.snapshots, 0);
    assert.equal(again.trades, 0);
    assert.equal(again.rowGroupsResumed, again.rowGroups, "every row group was marked");
    assert.deepEqual([await storeState(store, a), await storeState(store, b)], before);
  });

  test("a truncated file is a clear error naming it, and nothing of it is written", async () => {
    const cut = join(dir, "truncated.parquet");
    const bytes = readFileSync(files.h0);
    writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    const fresh = await openTestStore();
    try {
      const m = await fresh.markets.upsertMarket(A);
      await assert.rejects(
        importPmxt({ store: fresh, coins: ["btc"], inputs: inputsOf([cut]), prices: pricesFor() }),
        (err: Error) => err instanceof PmxtFileError && err.message.includes(cut),
      );
      assert.equal(await fresh.events.countMarketEvents(m.key), 0);
      assert.deepEqual(await fresh.imports.pendingMarkets("pmxt"), []);
    } finally {
      await fresh.close();
    }
  });
});

/**
 * A market whose books are wider than 0.10 all along, so that its displayed prices are its last trades:
 * traded in hour H, its books sent again in hour H+1. Hour H+1 alone gives it other prices (no trade).
 */
const W = {
  ...market(`btc-updown-5m-${A_START + 300}`, "btc", "5m", A_START, 404),
  slug: `btc-updown-5m-w${A_START}`,
};
const streamW: StreamMessage[] = (() => {
  const out: StreamMessage[] = [];
  const at = (second: number, message: Record<string, unknown>) =>
    out.push({
      receivedMs: second * 1000 + 7,
      message: { market: W.conditionId, timestamp: String(second * 1000), ...message },
    });
  const book = (token: string) => ({
    event_type: "book",
    asset_id: token,
    bids: [{ price: "0.3", size: "100" }],
    asks: [{ price: "0.6", size: "100" }],
  });
  const trade = (token: string, price: string) => ({
    event_type: "last_trade_price",
    asset_id: token,
    fee_rate_bps: "0",
    price,
    side: "BUY",
    size: "10",
  });
  at(A_START - 100, book(W.clobTokenUp));
  at(A_START - 100, book(W.clobTokenDown));
  at(A_START - 50, trade(W.clobTokenUp, "0.45"));
  at(A_START - 50, trade(W.clobTokenDown, "0.55"));
  at(H + 3_600 + 10, book(W.clobTokenUp));
  at(H + 3_600 + 10, book(W.clobTokenDown));
  return out;
})();

describe("import pmxt: the end state does not depend on the order hours are imported in", () => {
  const IMPORT_CLOCK = new ManualClock(1_790_000_000_000_000);
  let dir: string;
  let files: { h0: string; h1: string };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "pmxt-order-"));
    const everything = [...streamA, ...streamB, ...streamW];
    files = { h0: join(dir, hourFileName(H)), h1: join(dir, hourFileName(H + 3600)) };
    writePmxtFile(files.h0, archiveOrder(everything.filter((m) => inHour(m, H)).map(rowOf)), 700);
    writePmxtFile(files.h1, archiveOrder(everything.filter((m) => inHour(m, H + 3600)).map(rowOf)), 300);
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * A fresh store after one import run per list of files (each given the coin prices of `feeds`, or of
   * every hour); the state of A, B and W and the last report.
   */
  async function importedInRuns(runs: string[][], feeds?: (() => CoinPrices)[], heldEvents?: number) {
    const store = await openTestStore();
    try {
      for (const m of [A, B, W]) await store.markets.upsertMarket(m);
      let report: PmxtReport | null = null;
      for (const [i, run] of runs.entries())
        report = await importPmxt({
          store,
          coins: ["btc", "eth"],
          inputs: inputsOf(run),
          prices: feeds?.[i]() ?? pricesFor(),
          clock: IMPORT_CLOCK,
          heldEvents,
        });
      const markets = await Promise.all([A, B, W].map(async (m) => (await store.markets.getMarket(m.slug))!));
      const state = [];
      for (const m of markets) {
        const { key: _key, updatedAt: _updated, ...record } = m;
        state.push({ record, ...(await storeState(store, m)) });
      }
      return { state, report: report!, updatedAt: markets.map((m) => m.updatedAt) };
    } finally {
      await store.close();
    }
  }

  test("hour H+1 and then, in a later run, hour H ends equal to both in order, in one run or two", async () => {
    const oneRun = await importedInRuns([[files.h0, files.h1]]);
    const inOrder = await importedInRuns([[files.h0], [files.h1]]);
    const reversed = await importedInRuns([[files.h1], [files.h0]]);
    assert.deepEqual(
      oneRun.state.map((m) => m.snapshots.length),
      [300, 900, 300],
    );
    assert.deepEqual(inOrder.state, oneRun.state);
    // The later hour alone gave A snapshots without hour H's events: the later run replaced them.
    assert.ok(reversed.report.snapshotsReplaced > 0, "stored snapshots were derived again");
    assert.deepEqual(reversed.state, oneRun.state);
    assert.equal(inOrder.report.snapshotsReplaced, 0, "in order, nothing derived before is replaced");
    // A market whose snapshots were replaced (W; A's only gained the earlier hour's) was updated:
    // its cached pages and their ETags name its updatedAt.
    assert.deepEqual(
      oneRun.updatedAt,
      [A, B, W].map((m) => m.updatedAt),
    );
    assert.deepEqual(reversed.updatedAt, [A.updatedAt, B.updatedAt, IMPORT_CLOCK.nowMicros()]);
  });

  test("a run's events held in memory for the derivation, or read back from the store, end the same", async () => {
    const held = await importedInRuns([[files.h0, files.h1]]);
    const readBack = await importedInRuns([[files.h0, files.h1]], undefined, 0);
    // Over budget part way: the markets appended to first are held, the rest read back.
    const partly = await importedInRuns([[files.h0, files.h1]], undefined, 400);
    assert.deepEqual(held.state, readBack.state);
    assert.deepEqual(partly.state, readBack.state);
    assert.ok(held.state.every((m) => m.snapshots.length > 0));
  });

  test("a later run given only its own hour's coin prices derives the stored seconds again with theirs", async () => {
    const afterFirst = await importedInRuns([[files.h1]], [() => pricesFor(H + 3600, H + 7200)]);
    const afterBoth = await importedInRuns(
      [[files.h1], [files.h0]],
      [() => pricesFor(H + 3600, H + 7200), () => pricesFor(H - 600, H + 3600)],
    );
    assert.ok(afterBoth.report.snapshotsReplaced > 0);
    const times = (s: string[]) => s.map((j) => (JSON.parse(j) as { time: number }).time);
    const priceAt = (s: string[], time: number) =>
      (
        s.map((j) => JSON.parse(j) as { time: number; coinPrice: number }).find((r) => r.time === time) ??
        null
      )?.coinPrice;
    for (const [i, first] of afterFirst.state.entries()) {
      const both = afterBoth.state[i];
      // Every second stored after the first run is still there, its coin price the one it had
      // (the second run's feed, ending at H+3600, covers none of them beyond its last ticks' staleness).
      const kept = new Set(times(both.snapshots));
      for (const t of times(first.snapshots)) {
        assert.ok(kept.has(t), `${t} kept`);
        if (t > (H + 3600 + 10) * 1e6) assert.equal(priceAt(both.snapshots, t), priceAt(first.snapshots, t));
      }
    }
  });

  test("a market recorded live keeps its snapshots: the derivation only fills the seconds it lacks", async () => {
    const store = await openTestStore();
    try {
      const a = await store.markets.upsertMarket(A);
      await store.markets.markSource(a.key, "recorded");
      const recorded: SnapshotRow = {
        time: (A_START + 10) * 1e6,
        coinPrice: 1,
        priceUp: 0.5,
        priceDown: 0.5,
        books: null,
      };
      await store.markets.insertSnapshots(a.key, [recorded]);
      const report = await importPmxt({
        store,
        coins: ["btc"],
        inputs: inputsOf([files.h1, files.h0]),
        prices: pricesFor(),
      });
      assert.equal(report.snapshotsReplaced, 0);
      const at = await store.markets.snapshotAtOrBefore(a.key, recorded.time, true);
      assert.deepEqual(at, recorded);
      assert.equal(await store.markets.countSnapshots(a.key), 300);
    } finally {
      await store.close();
    }
  });
});

describe("import pmxt: start and end prices of 1h and daily markets from Binance's 1 s klines", () => {
  const binance = { source: "binance" as const, lookbackS: null };
  const S = H + 16 * 3600; // 12:00 US Eastern (EDT): a daily market's start
  /** Resolved Up upstream: the klines agree (the hour's close above its open). */
  const hourly = { ...market(`btc-updown-1h-${H}`, "btc", "5m", H, 505), marketType: "1h" as const };
  const HOURLY = { ...hourly, endTime: H + 3600, settlement: binance, winner: "Up" as const };
  /** Resolved Up upstream, its record holding its start price: the klines say Down, counted. */
  const daily = { ...market(`btc-updown-24h-${S}`, "btc", "5m", S, 606), marketType: "24h" as const };
  const DAILY = {
    ...daily,
    endTime: S + 86_400,
    settlement: binance,
    winner: "Up" as const,
    coinPriceStart: 65_000,
  };
  /** Unresolved: its start is filled, its end not yet. */
  const LATER = {
    ...market(`btc-updown-1h-${H + 3600}`, "btc", "5m", H + 3600, 707),
    marketType: "1h" as const,
  };
  const OPEN = { ...LATER, endTime: H + 7200, settlement: binance };
  const open = (s: number) => 1000 + (s % 1000) + 0.25;
  const close = (s: number) => open(s) + 0.5;
  let dir: string;
  let report: PmxtReport;
  let store: Store;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "pmxt-klines-"));
    const seconds = [
      [H - 5, H + 70],
      [H + 3600 - 65, H + 3600 + 5],
      [S - 5, S + 65],
      [S + 86_400 - 5, S + 86_400 + 65],
    ].flatMap(([from, to]) => Array.from({ length: to - from }, (_, i) => from + i));
    const csv = join(dir, "BTCUSDT-1s-2026-07-24.csv");
    const lines = seconds.map(
      (s) =>
        `${s * 1000},${open(s)},${close(s) + 1},${open(s) - 1},${close(s)},1,${s * 1000 + 999},1,1,1,1,0`,
    );
    writeFileSync(csv, `${lines.join("\n")}\n`);
    const file = join(dir, "klines-markets.parquet");
    const rows = [
      ...marketStream(HOURLY, 7, H * 1000, (H + 60) * 1000),
      ...marketStream(DAILY, 8, S * 1000, (S + 60) * 1000),
      ...marketStream(OPEN, 9, (H + 3600) * 1000, (H + 3660) * 1000),
    ].map(rowOf);
    writePmxtFile(file, archiveOrder(rows), 500);
    store = await openTestStore();
    for (const m of [HOURLY, DAILY, OPEN]) await store.markets.upsertMarket({ ...m, coinPriceEnd: null });
    const prices = new CoinPrices(10);
    prices.addKlines("btc", await readBinanceKlines(csv));
    report = await importPmxt({ store, coins: ["btc"], inputs: inputsOf([file]), prices });
  });

  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("1h: the open of the hour's first second and the close of its last; compared with the upstream's winner", async () => {
    const m = await store.markets.getMarket(HOURLY.slug);
    assert.equal(m?.coinPriceStart, open(H));
    assert.equal(m?.coinPriceEnd, close(H + 3599));
    assert.equal(m?.winner, "Up");
  });

  test("24h: the 1m closes at 12:00 US Eastern on both days; a start price the record has is kept", async () => {
    const m = await store.markets.getMarket(DAILY.slug);
    assert.equal(m?.coinPriceStart, 65_000, "the record's start price stays");
    assert.equal(m?.coinPriceEnd, close(S + 86_400 + 59));
    assert.equal(m?.winner, "Up", "the upstream's winner stays");
  });

  test("an unresolved market gets its start only; the report counts agreements and disagreements", async () => {
    const m = await store.markets.getMarket(OPEN.slug);
    assert.equal(m?.coinPriceStart, open(H + 3600));
    assert.equal(m?.coinPriceEnd, null);
    assert.deepEqual(report.settlement, {
      pricesFilled: 3,
      agreements: 1,
      disagreements: [
        { slug: DAILY.slug, upstream: "Up", feed: "Down", start: close(S + 59), end: close(S + 86_400 + 59) },
      ],
    });
    assert.deepEqual(report.coinPriceSources, { [BINANCE_1S]: 3 });
  });
});
