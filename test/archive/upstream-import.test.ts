import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { gunzipSync } from "node:zlib";
import type { Market } from "../../src/domain/market.ts";
import { PriceFeed, scaledDecimalToNumber } from "../../src/upstream/price-feed.ts";
import {
  formatImportReport,
  ImportError,
  type ImportReport,
  importUpstream,
  parseFeedArgument,
} from "../../src/archive/upstream-import.ts";
import { SqliteStore } from "../../src/store/dialects/sqlite/sqlite-store.ts";
import type { StoredMarket } from "../../src/store/ports/market-store.ts";
import { FIXTURES } from "../helpers/paths.ts";

const FIXTURE_DIR = join(FIXTURES, "real-btc-5m-2026-07-24");
const MARKETS = join(FIXTURE_DIR, "markets-00-12utc.jsonl.gz");
const FEED = join(FIXTURE_DIR, "chainlink-btcusd-00-12utc.csv.gz");
/** The fixture day's `feeSchedule` (every market of it charges the same fees). */
const FIXTURE_FEES = { rate: 0.07, exponent: 1, takerOnly: true, rebateRate: 0.2 };

async function freshStore(): Promise<SqliteStore> {
  const store = new SqliteStore(":memory:");
  await store.migrate();
  return store;
}

/** Drops the store's own bookkeeping so records can be compared with hand-written Market literals. */
function recordOf(stored: StoredMarket | null): Market {
  assert.ok(stored, "market should be stored");
  const { key: _key, snapshotCount: _count, sources: _sources, ...market } = stored;
  return market;
}

async function allMarkets(store: SqliteStore): Promise<StoredMarket[]> {
  return (await store.markets.listMarkets({ limit: 1000, offset: 0 })).markets;
}

describe("PriceFeed", () => {
  test("a later-received tick for the same second replaces the stored one", () => {
    const feed = new PriceFeed();
    feed.addTick(100, 1.5, 1_000);
    feed.addTick(100, 1.75, 1_200);
    assert.deepEqual(feed.inEffectAt(100), { value: 1.75, tickSecond: 100 });
    assert.equal(feed.size, 1);
  });

  test("an earlier-received tick arriving after the correction is ignored", () => {
    const feed = new PriceFeed();
    feed.addTick(100, 1.75, 1_200);
    feed.addTick(100, 1.5, 1_000);
    assert.deepEqual(feed.inEffectAt(100), { value: 1.75, tickSecond: 100 });
  });

  test("the tick in effect is the latest at or before the second", () => {
    const feed = new PriceFeed();
    feed.addTick(10, 1, 0);
    feed.addTick(12, 2, 0);
    feed.addTick(20, 3, 0);
    assert.equal(feed.inEffectAt(9), null);
    assert.deepEqual(feed.inEffectAt(10), { value: 1, tickSecond: 10 });
    assert.deepEqual(feed.inEffectAt(11), { value: 1, tickSecond: 10 });
    assert.deepEqual(feed.inEffectAt(12), { value: 2, tickSecond: 12 });
    assert.deepEqual(feed.inEffectAt(19), { value: 2, tickSecond: 12 });
    assert.deepEqual(feed.inEffectAt(20), { value: 3, tickSecond: 20 });
    assert.deepEqual(feed.inEffectAt(1_000_000), { value: 3, tickSecond: 20 });
  });

  test("an empty feed has nothing in effect", () => {
    assert.equal(new PriceFeed().inEffectAt(0), null);
  });

  test("ticks arriving out of order are looked up as if sorted", () => {
    const feed = new PriceFeed();
    for (const s of [30, 10, 50, 20, 40, 0]) feed.addTick(s, s / 10, 0);
    assert.equal(feed.size, 6);
    for (let t = 0; t <= 55; t++) {
      const expected = Math.floor(Math.min(t, 50) / 10) * 10;
      assert.deepEqual(feed.inEffectAt(t), { value: expected / 10, tickSecond: expected }, `at ${t}`);
    }
  });

  test("agrees with a linear scan on many shuffled ticks with corrections", () => {
    // A fixed LCG keeps the shuffle reproducible.
    let seed = 12345;
    const rand = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const ticks: { s: number; v: number; r: number }[] = [];
    for (let i = 0; i < 2_000; i++) ticks.push({ s: rand(5_000), v: rand(1_000_000), r: rand(1_000_000) });
    const feed = new PriceFeed();
    for (const t of ticks) feed.addTick(t.s, t.v, t.r);
    for (let q = -1; q < 5_010; q += 7) {
      let best: { s: number; v: number; r: number } | null = null;
      for (const t of ticks) {
        if (t.s > q) continue;
        if (!best || t.s > best.s || (t.s === best.s && t.r > best.r)) best = t;
      }
      assert.deepEqual(feed.inEffectAt(q), best ? { value: best.v, tickSecond: best.s } : null, `at ${q}`);
    }
  });

  test("rejects a fractional second", () => {
    assert.throws(() => new PriceFeed().addTick(1.5, 1, 0), RangeError);
  });
});

describe("scaledDecimalToNumber", () => {
  test("places the decimal point exactly", () => {
    assert.equal(scaledDecimalToNumber("65048078902260626000000"), 65048.078902260626);
    assert.equal(scaledDecimalToNumber("65048078902260626000000"), Number("65048.078902260626"));
    assert.equal(scaledDecimalToNumber("1000000000000000000"), 1);
    assert.equal(scaledDecimalToNumber("120000000000000000000000"), 120000);
  });

  test("differs from floating division where division rounds twice (feed CSV line 4)", () => {
    const text = "65054016130431230000000";
    assert.equal(scaledDecimalToNumber(text), 65054.01613043123);
    assert.notEqual(Number(text) / 1e18, 65054.01613043123);
  });

  test("small values and zero", () => {
    assert.equal(scaledDecimalToNumber("1"), 1e-18);
    assert.equal(scaledDecimalToNumber("5"), 5e-18);
    assert.equal(scaledDecimalToNumber("123"), 1.23e-16);
    assert.equal(scaledDecimalToNumber("500000000000000000"), 0.5);
    assert.ok(Object.is(scaledDecimalToNumber("0"), 0));
    assert.ok(Object.is(scaledDecimalToNumber("000"), 0));
    assert.ok(Object.is(scaledDecimalToNumber("-0"), 0));
  });

  test("many digits and leading zeros", () => {
    assert.equal(
      scaledDecimalToNumber("123456789012345678901234567890"),
      Number("123456789012.345678901234567890"),
    );
    assert.equal(scaledDecimalToNumber("64996279757032865500000"), Number("64996.2797570328655"));
    assert.equal(scaledDecimalToNumber("0000065026457815000000000000"), 65026.457815);
  });

  test("negative values and other scales", () => {
    assert.equal(scaledDecimalToNumber("-1500000000000000000"), -1.5);
    assert.equal(scaledDecimalToNumber("12345", 2), 123.45);
    assert.equal(scaledDecimalToNumber("12345", 0), 12345);
    assert.equal(scaledDecimalToNumber("5", 3), 0.005);
  });

  test("rejects text that is not an integer", () => {
    for (const bad of ["", "1.5", "abc", "1e18", " 1", "+1", "--1"]) {
      assert.throws(() => scaledDecimalToNumber(bad), RangeError, JSON.stringify(bad));
    }
  });
});

describe("importUpstream on the recorded BTC 5m fixture", () => {
  let store: SqliteStore;
  let report: ImportReport;
  const progress: [number, number][] = [];

  before(async () => {
    store = await freshStore();
    report = await importUpstream({
      store: store.markets,
      marketsPath: MARKETS,
      feedPath: FEED,
      onProgress: (done, total) => progress.push([done, total]),
    });
  });

  after(async () => {
    await store.close();
  });

  // Counts checked independently with a Python script over the same two files (Decimal arithmetic,
  // the feed as a per-second map, bisect for the tick in effect, max staleness 10 s).
  test("report counts", () => {
    assert.equal(report.markets, 145);
    assert.equal(report.resolved, 145);
    assert.equal(report.agreements, 135);
    assert.equal(report.disagreements.length, 1);
    assert.equal(report.undecidable.length, 9);
    assert.equal(
      report.agreements + report.disagreements.length + report.undecidable.length,
      report.resolved,
    );
  });

  test("the one disagreement: upstream Up, the feed says Down", () => {
    // Start: CSV line 16246 (1784868900000, 65262953214159100000000), 0 s old.
    // End: no tick at 1784869200; CSV line 16536 (1784869199000, 65258060632544490000000), 1 s old.
    assert.deepEqual(report.disagreements, [
      {
        slug: "btc-updown-5m-1784868900",
        feedName: "chainlink",
        upstream: "Up",
        feed: "Down",
        startPrice: 65262.9532141591,
        endPrice: 65258.06063254449,
        startTickAgeS: 0,
        endTickAgeS: 1,
      },
    ]);
  });

  test("undecidable markets, each with a reason naming the side", () => {
    const bySlug = new Map(report.undecidable.map((u) => [u.slug, u.reason]));
    assert.deepEqual(
      [...bySlug.keys()],
      [
        "btc-updown-5m-1784850900",
        "btc-updown-5m-1784862300",
        "btc-updown-5m-1784862600",
        "btc-updown-5m-1784880600",
        "btc-updown-5m-1784880900",
        "btc-updown-5m-1784890800",
        "btc-updown-5m-1784891100",
        "btc-updown-5m-1784892300",
        "btc-updown-5m-1784892600",
      ],
    );
    for (const [slug, reason] of bySlug) assert.match(reason, /\b(start|end)\b/, slug);
    assert.equal(
      bySlug.get("btc-updown-5m-1784850900"),
      "no feed tick at or before start 2026-07-23T23:55:00Z",
    );
    assert.equal(
      bySlug.get("btc-updown-5m-1784862300"),
      "feed gap: the tick in effect at end is 55 s old (max 10 s)",
    );
    assert.equal(
      bySlug.get("btc-updown-5m-1784891100"),
      "feed gap: the tick in effect at start is 302 s old (max 10 s)",
    );
  });

  test("progress is reported per market", () => {
    assert.equal(progress.length, 145);
    assert.deepEqual(progress[0], [1, 145]);
    assert.deepEqual(progress.at(-1), [145, 145]);
  });

  test("first market: start precedes the feed, so the start price is the strike", async () => {
    // markets line 1: strike_value 65026457815000000000000, outcome_prices ["1","0"], raw.id 3047949,
    // volumeNum 79945.98005599984, liquidityNum 0, closedTime "2026-07-24 00:00:16+00",
    // createdAt 2026-07-23T00:02:08.939464Z, updatedAt 2026-07-24T00:01:29.141988Z.
    // End price: CSV line 2 (1784851200000, 65048078902260626000000), the feed's first tick.
    const expected: Market = {
      slug: "btc-updown-5m-1784850900",
      polymarketSlug: null,
      coin: "btc",
      marketType: "5m",
      marketId: "3047949",
      eventId: "3047949",
      startTime: 1784850900,
      endTime: 1784851200,
      coinPriceStart: 65026.457815,
      coinPriceEnd: 65048.078902260626,
      conditionId: "0x11ba5a5ab05573dee22a32b4c5bec06f035b8660eed912fb134e7215f46bf537",
      clobTokenUp: "72690798903588392269001731007662425920353908498880709179939493847828858696064",
      clobTokenDown: "57726118860664877408225679006057036191805241206083874875095996065406561439567",
      winner: "Up",
      finalVolume: 79945.98005599984,
      finalLiquidity: 0,
      resolvedAt: 1784851216,
      createdAt: 1784764928939464,
      updatedAt: 1784851289141988,
      settlement: { source: "chainlink", lookbackS: null },
      feeSchedule: FIXTURE_FEES,
    };
    assert.deepEqual(recordOf(await store.markets.getMarket(expected.slug)), expected);
  });

  test("strike missing: the start price is the feed tick 1 s before the start", async () => {
    // markets line 9: strike_value null, outcome_prices ["0","1"], raw.id 3048438, volumeNum
    // 60599.414041999924, liquidityNum 0, closedTime "2026-07-24 00:40:27+00",
    // createdAt 2026-07-23T00:42:39.644297Z, updatedAt 2026-07-24T00:41:41.497845Z.
    // Start: no tick at 1784853300; CSV line 1934 (1784853299000, 64782450407775540000000).
    // End: CSV line 2212 (1784853600000, 64739594080000000000000).
    const expected: Market = {
      slug: "btc-updown-5m-1784853300",
      polymarketSlug: null,
      coin: "btc",
      marketType: "5m",
      marketId: "3048438",
      eventId: "3048438",
      startTime: 1784853300,
      endTime: 1784853600,
      coinPriceStart: 64782.45040777554,
      coinPriceEnd: 64739.59408,
      conditionId: "0x89e11af5330041de786e4d3540c2bc6ef3a9248e811dabc9868d403521360ac2",
      clobTokenUp: "39331855279349226778286113743900178360502263576990258656841182615320368993798",
      clobTokenDown: "1861273974294522281628033597732813733433602195874943090670101340164414944123",
      winner: "Down",
      finalVolume: 60599.414041999924,
      finalLiquidity: 0,
      resolvedAt: 1784853627,
      createdAt: 1784767359644297,
      updatedAt: 1784853701497845,
      settlement: { source: "chainlink", lookbackS: null },
      feeSchedule: FIXTURE_FEES,
    };
    assert.deepEqual(recordOf(await store.markets.getMarket(expected.slug)), expected);
  });

  test("the disagreement keeps upstream's winner (it is authoritative)", async () => {
    // markets line 61: strike_value 65262953214159100000000, outcome_prices ["1","0"], raw.id 3051174,
    // volumeNum 106993.04866300008, liquidityNum 0, closedTime "2026-07-24 05:00:21+00",
    // createdAt 2026-07-23T05:03:49.916028Z, updatedAt 2026-07-24T05:01:38.561132Z.
    // End: no tick at 1784869200; CSV line 16536 (1784869199000, 65258060632544490000000).
    const expected: Market = {
      slug: "btc-updown-5m-1784868900",
      polymarketSlug: null,
      coin: "btc",
      marketType: "5m",
      marketId: "3051174",
      eventId: "3051174",
      startTime: 1784868900,
      endTime: 1784869200,
      coinPriceStart: 65262.9532141591,
      coinPriceEnd: 65258.06063254449,
      conditionId: "0x5c449cbbb1ee06f659c6fc2bef7ca4954f94b56cf51e26fd9bf0843a64b5e964",
      clobTokenUp: "56623811552603766043727797041488055855209237614917039763330976509658151525028",
      clobTokenDown: "35440197309974022146250813397278066908510026254343085259548151967100637176380",
      winner: "Up",
      finalVolume: 106993.04866300008,
      finalLiquidity: 0,
      resolvedAt: 1784869221,
      createdAt: 1784783029916028,
      updatedAt: 1784869298561132,
      settlement: { source: "chainlink", lookbackS: null },
      feeSchedule: FIXTURE_FEES,
    };
    assert.deepEqual(recordOf(await store.markets.getMarket(expected.slug)), expected);
  });

  test("a market without volume fields gets a null final volume", async () => {
    // markets line 144: raw has neither volumeNum nor volume.
    const m = recordOf(await store.markets.getMarket("btc-updown-5m-1784893800"));
    assert.equal(m.finalVolume, null);
    assert.equal(m.winner, "Up");
  });

  test("importing again leaves the same rows", async () => {
    const before = await allMarkets(store);
    const again = await importUpstream({ store: store.markets, marketsPath: MARKETS, feedPath: FEED });
    assert.deepEqual(again, report);
    assert.equal(await store.markets.countMarkets(), 145);
    assert.deepEqual(await allMarkets(store), before);
  });

  test("the formatted report lists counts first, then each disagreement and undecidable market", () => {
    const text = formatImportReport(report);
    const lines = text.split("\n");
    assert.equal(lines[0], "markets imported: 145");
    assert.match(text, /agrees with upstream winner: 135/);
    assert.match(text, /disagrees: 1/);
    assert.match(text, /undecidable from the feed: 9/);
    const disagreementLine = lines.find((l) => l.includes("btc-updown-5m-1784868900"));
    assert.match(disagreementLine ?? "", /upstream Up, feed Down/);
    for (const u of report.undecidable)
      assert.ok(lines.includes(`  ${u.slug} [chainlink]: ${u.reason}`), u.slug);
    // Which feed decided: every market of the day settles on the instantaneous Chainlink stream.
    assert.ok(lines.includes("  chainlink: 145 markets"), text);
    assert.equal(report.settledBy.length, 145);
    assert.ok(report.settledBy.every((s) => s.feedName === "chainlink"));
  });

  test("a larger staleness allowance decides the 30 s and 55 s gaps", async () => {
    const other = await freshStore();
    try {
      const r = await importUpstream({
        store: other.markets,
        marketsPath: MARKETS,
        feedPath: FEED,
        maxStalenessSeconds: 60,
      });
      // Same Python check with 60 s: 139 agree, the same 1 disagrees, 5 stay undecidable.
      assert.equal(r.undecidable.length, 5);
      assert.equal(r.agreements, 139);
      assert.deepEqual(
        r.disagreements.map((d) => d.slug),
        ["btc-updown-5m-1784868900"],
      );
    } finally {
      await other.close();
    }
  });
});

describe("importUpstream on small hand-made files", () => {
  let dir: string;
  /** markets line 1 of the fixture, as a template for hand-made lines. */
  let template: Record<string, unknown>;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "upstream-import-"));
    const first = gunzipSync(readFileSync(MARKETS)).toString("utf8").split("\n")[0];
    template = JSON.parse(first) as Record<string, unknown>;
  });

  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function write(name: string, text: string): string {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  }

  const FEED_HEADER = "feed_ts_ms,value,full_accuracy_value,server_ts_ms,recv_ms";

  test("plain files work and same-second corrections are applied", async () => {
    const market = { ...template, strike_value: null };
    const marketsPath = write("markets.jsonl", `${JSON.stringify(market)}\n`);
    // Start second 1784850900: the feed's tick 1 s before is corrected (recv 30 beats recv 10).
    // End second 1784851200: the tick received at 20 stands; the copy received at 15 arrives later
    // in the file but was received earlier, so it is ignored.
    const feedPath = write(
      "feed.csv",
      [
        FEED_HEADER,
        "1784850899000,100,100000000000000000000,0,10",
        "1784851200000,101,101000000000000000000,0,20",
        "1784851200000,99,99000000000000000000,0,15",
        "1784850899000,102,102000000000000000000,0,30",
        "",
      ].join("\n"),
    );
    const store = await freshStore();
    try {
      const r = await importUpstream({ store: store.markets, marketsPath, feedPath });
      const m = recordOf(await store.markets.getMarket("btc-updown-5m-1784850900"));
      assert.equal(m.coinPriceStart, 102);
      assert.equal(m.coinPriceEnd, 101);
      // 101 < 102, so the feed says Down while upstream (line 1) says Up.
      assert.deepEqual(
        r.disagreements.map((d) => [d.slug, d.upstream, d.feed, d.startTickAgeS, d.endTickAgeS]),
        [["btc-updown-5m-1784850900", "Up", "Down", 1, 0]],
      );
    } finally {
      await store.close();
    }
  });

  test("an unresolved market is stored without resolution fields and not cross-checked", async () => {
    const market = { ...template, resolved: false, outcome_prices: ["0.5", "0.5"] };
    const marketsPath = write("unresolved.jsonl", `${JSON.stringify(market)}\n`);
    const feedPath = write(
      "feed-unresolved.csv",
      `${FEED_HEADER}\n1784851200000,1,1000000000000000000,0,0\n`,
    );
    const store = await freshStore();
    try {
      const r = await importUpstream({ store: store.markets, marketsPath, feedPath });
      assert.deepEqual(r, {
        markets: 1,
        resolved: 0,
        agreements: 0,
        disagreements: [],
        undecidable: [],
        settledBy: [{ slug: "btc-updown-5m-1784850900", feedName: "chainlink" }],
      });
      const m = recordOf(await store.markets.getMarket("btc-updown-5m-1784850900"));
      assert.equal(m.winner, null);
      assert.equal(m.coinPriceStart, 65026.457815);
      assert.equal(m.coinPriceEnd, null);
      assert.equal(m.finalVolume, null);
      assert.equal(m.resolvedAt, null);
    } finally {
      await store.close();
    }
  });

  test("an upstream slug not in our shape becomes the Polymarket alias", async () => {
    const market = { ...template, slug: "bitcoin-up-or-down-july-23-2026-755pm-et" };
    const marketsPath = write("alias.jsonl", `${JSON.stringify(market)}\n`);
    const feedPath = write("feed-alias.csv", `${FEED_HEADER}\n`);
    const store = await freshStore();
    try {
      await importUpstream({ store: store.markets, marketsPath, feedPath });
      const m = recordOf(await store.markets.getMarket("bitcoin-up-or-down-july-23-2026-755pm-et"));
      assert.equal(m.slug, "btc-updown-5m-1784850900");
      assert.equal(m.polymarketSlug, "bitcoin-up-or-down-july-23-2026-755pm-et");
    } finally {
      await store.close();
    }
  });

  test("a malformed markets line is an ImportError naming file and line, and nothing is written", async () => {
    const marketsPath = write("bad.jsonl", `${JSON.stringify(template)}\n{"slug": "btc-updown-5m-1"\n`);
    const feedPath = write("feed-ok.csv", `${FEED_HEADER}\n`);
    const store = await freshStore();
    try {
      await assert.rejects(
        importUpstream({ store: store.markets, marketsPath, feedPath }),
        (err: unknown) => {
          assert.ok(err instanceof ImportError);
          assert.equal(err.file, marketsPath);
          assert.equal(err.line, 2);
          assert.match(err.message, /bad\.jsonl:2: not valid JSON/);
          return true;
        },
      );
      assert.equal(await store.markets.countMarkets(), 0);
    } finally {
      await store.close();
    }
  });

  test("a market line with a bad field names the field", async () => {
    const marketsPath = write("bad-asset.jsonl", `${JSON.stringify({ ...template, asset: "b@d" })}\n`);
    const feedPath = write("feed-ok2.csv", `${FEED_HEADER}\n`);
    const store = await freshStore();
    try {
      await assert.rejects(
        importUpstream({ store: store.markets, marketsPath, feedPath }),
        (err: unknown) => {
          assert.ok(err instanceof ImportError);
          assert.equal(err.line, 1);
          assert.match(err.message, /bad-asset\.jsonl:1: asset "b@d"/);
          return true;
        },
      );
    } finally {
      await store.close();
    }
  });

  test("a malformed feed row is an ImportError naming the line", async () => {
    const marketsPath = write("ok.jsonl", `${JSON.stringify(template)}\n`);
    const feedPath = write(
      "bad-feed.csv",
      `${FEED_HEADER}\n1784851200000,1,1000000000000000000,0,0\n1784851201000,1,1.5e18,0,0\n`,
    );
    const store = await freshStore();
    try {
      await assert.rejects(
        importUpstream({ store: store.markets, marketsPath, feedPath }),
        (err: unknown) => {
          assert.ok(err instanceof ImportError);
          assert.equal(err.line, 3);
          assert.match(err.message, /bad-feed\.csv:3: full_accuracy_value is not a scaled integer/);
          return true;
        },
      );
    } finally {
      await store.close();
    }
  });

  test("a missing file or a broken gzip is an ImportError naming the file", async () => {
    const marketsPath = write("ok2.jsonl", `${JSON.stringify(template)}\n`);
    const brokenGz = write("broken.csv.gz", "this is not gzip\n");
    const store = await freshStore();
    try {
      await assert.rejects(
        importUpstream({ store: store.markets, marketsPath, feedPath: join(dir, "missing.csv") }),
        (err: unknown) =>
          err instanceof ImportError && err.line === null && /missing\.csv: cannot read/.test(err.message),
      );
      await assert.rejects(
        importUpstream({ store: store.markets, marketsPath, feedPath: brokenGz }),
        (err: unknown) => err instanceof ImportError && /broken\.csv\.gz: cannot read/.test(err.message),
      );
    } finally {
      await store.close();
    }
  });
});

describe("importUpstream after the switch to TWAP settlement", () => {
  let dir: string;
  const TWAP_RECORD = JSON.parse(
    readFileSync(join(FIXTURES, "polymarket-protocol", "gamma-market-twap-btc-5m.json"), "utf8"),
  ) as Record<string, unknown>;
  const START = 1787414400; // eventStartTime 2026-08-22T16:00:00Z
  const HEADER = "feed_ts_ms,value,full_accuracy_value,server_ts_ms,recv_ms";
  /** The TWAP stream one tick a second around the market, at another level than the instantaneous one. */
  const feedRows = (base: number) =>
    Array.from({ length: 320 }, (_, i) => {
      const ms = (START - 10 + i) * 1000;
      return `${ms},0,${base + i}${"0".repeat(16)},${ms + 500},${ms + 700}`;
    }).join("\n");

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "upstream-twap-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function write(name: string, text: string): string {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  }

  test("the Gamma TWAP record as a market row fills settlement and fee_schedule from it", async () => {
    const marketsPath = write("twap.jsonl", `${JSON.stringify(TWAP_RECORD)}\n`);
    const instant = write("instant.csv", `${HEADER}\n${feedRows(6_500_000)}\n`);
    const twap = write("twap60.csv", `${HEADER}\n${feedRows(6_400_000)}\n`);
    const store = await freshStore();
    try {
      const report = await importUpstream({
        store: store.markets,
        marketsPath,
        feeds: [
          { settlement: { source: "chainlink", lookbackS: null }, path: instant },
          { settlement: { source: "chainlink_twap", lookbackS: 60 }, path: twap },
        ],
      });
      assert.deepEqual(report.settledBy, [
        { slug: "btc-updown-5m-1787414400", feedName: "chainlink_twap 60 s" },
      ]);
      const m = recordOf(await store.markets.getMarket("btc-updown-5m-1787414400"));
      assert.deepEqual(m.settlement, { source: "chainlink_twap", lookbackS: 60 });
      assert.deepEqual(m.feeSchedule, { rate: 0.07, exponent: 1, takerOnly: true, rebateRate: 0.2 });
      assert.equal(m.marketId, "3763487");
      assert.equal(m.startTime, START);
      assert.equal(m.endTime, START + 300);
      assert.equal(
        m.clobTokenUp,
        "113013382422133157315656090194075928009220145127085300671933810669470922115281",
      );
      // Open (not resolved): the start price from the TWAP stream at the open, not the instantaneous one.
      assert.equal(m.coinPriceStart, 64000.1);
      assert.equal(m.winner, null);
      assert.match(formatImportReport(report), /chainlink_twap 60 s: 1 market\b/);
    } finally {
      await store.close();
    }
  });

  test("resolved, it is cross-checked on its TWAP feed; without that feed it is undecidable, saying so", async () => {
    const resolved = {
      ...TWAP_RECORD,
      closed: true,
      outcomePrices: '["1", "0"]',
      umaResolutionStatus: "resolved",
    };
    const marketsPath = write("twap-resolved.jsonl", `${JSON.stringify(resolved)}\n`);
    const twap = write("twap60b.csv", `${HEADER}\n${feedRows(6_400_000)}\n`);
    const withFeed = await freshStore();
    const without = await freshStore();
    try {
      const checked = await importUpstream({
        store: withFeed.markets,
        marketsPath,
        feeds: [{ settlement: { source: "chainlink_twap", lookbackS: 60 }, path: twap }],
      });
      assert.equal(checked.agreements, 1);
      const m = recordOf(await withFeed.markets.getMarket("btc-updown-5m-1787414400"));
      assert.equal(m.coinPriceEnd, 64003.1);
      const instantOnly = write("instant-b.csv", `${HEADER}\n${feedRows(6_500_000)}\n`);
      const unchecked = await importUpstream({ store: without.markets, marketsPath, feedPath: instantOnly });
      assert.deepEqual(unchecked.undecidable, [
        {
          slug: "btc-updown-5m-1787414400",
          feedName: "chainlink_twap 60 s",
          reason: "no chainlink_twap 60 s feed was given (--feed twap60=FILE)",
        },
      ]);
    } finally {
      await withFeed.close();
      await without.close();
    }
  });

  test("a 50-50 upstream outcome is stored as it is", async () => {
    const split = {
      ...TWAP_RECORD,
      closed: true,
      outcomePrices: '["0.5", "0.5"]',
      umaResolutionStatus: "resolved",
    };
    const marketsPath = write("split.jsonl", `${JSON.stringify(split)}\n`);
    const twap = write("twap60c.csv", `${HEADER}\n${feedRows(6_400_000)}\n`);
    const store = await freshStore();
    try {
      const r = await importUpstream({
        store: store.markets,
        marketsPath,
        feeds: [{ settlement: { source: "chainlink_twap", lookbackS: 60 }, path: twap }],
      });
      assert.equal(recordOf(await store.markets.getMarket("btc-updown-5m-1787414400")).winner, "50-50");
      assert.equal(r.disagreements[0]?.upstream, "50-50", "the feed says Up; reported, not forced");
    } finally {
      await store.close();
    }
  });

  test("--feed takes the instantaneous stream, or twapN= a TWAP stream", () => {
    assert.deepEqual(parseFeedArgument("a.csv"), {
      settlement: { source: "chainlink", lookbackS: null },
      path: "a.csv",
    });
    assert.deepEqual(parseFeedArgument("twap60=b.csv.gz"), {
      settlement: { source: "chainlink_twap", lookbackS: 60 },
      path: "b.csv.gz",
    });
    assert.equal(parseFeedArgument("twap0=c.csv"), null);
  });
});
