import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { gunzipSync, gzipSync } from "node:zlib";
import { readFileSync } from "node:fs";
import { fetchGammaRecords, seriesSlugs } from "../../src/archive/gamma-import.ts";
import {
  importRecordFiles,
  importUpstream,
  parseFeedArgument,
  readFeeds,
} from "../../src/archive/upstream-import.ts";
import { SqliteStore } from "../../src/store/dialects/sqlite/sqlite-store.ts";
import { openStore } from "../../src/store/open.ts";
import type { MarketStore, StoredMarket } from "../../src/store/ports/market-store.ts";
import { runUpdown } from "../helpers/cli.ts";
import { BIN, FIXTURES } from "../helpers/paths.ts";

const FIXTURE_DIR = join(FIXTURES, "real-btc-5m-2026-07-24");
const MARKETS = join(FIXTURE_DIR, "markets-00-12utc.jsonl.gz");
const FEED = join(FIXTURE_DIR, "chainlink-btcusd-00-12utc.csv.gz");
/** The fixture's rows: our recorder's fields with Gamma's market object in `raw`. */
const ROWS = gunzipSync(readFileSync(MARKETS))
  .toString("utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as { slug: string; raw: Record<string, unknown> });
const GAMMA_BY_SLUG = new Map(ROWS.map((r) => [r.slug, r.raw]));

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "updown-gamma-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function freshStore(): Promise<SqliteStore> {
  const store = new SqliteStore(":memory:");
  await store.migrate();
  return store;
}

/** Every market as stored, by slug, without the store's surrogate key. */
async function records(store: MarketStore): Promise<Map<string, Omit<StoredMarket, "key">>> {
  const { markets } = await store.listMarkets({ limit: 1000, offset: 0 });
  return new Map(markets.map(({ key: _k, ...m }) => [m.slug, m]));
}

describe("import gamma from files", () => {
  test("the real fixture gives the same records and report as import upstream, marked gamma", async () => {
    const upstream = await freshStore();
    const gamma = await freshStore();
    try {
      const feeds = [parseFeedArgument(FEED)!];
      const expected = await importUpstream({ store: upstream.markets, marketsPath: MARKETS, feeds });
      const report = await importRecordFiles({
        store: gamma.markets,
        paths: [MARKETS],
        feeds: await readFeeds(feeds),
      });
      assert.deepEqual(report, expected);
      assert.equal(report.markets, 145);
      const got = await records(gamma.markets);
      assert.deepEqual(got, await records(upstream.markets));
      for (const m of got.values()) assert.deepEqual(m.sources, ["gamma"], m.slug);
    } finally {
      await upstream.close();
      await gamma.close();
    }
  });

  test("Gamma's own objects, as markets or as events nesting them, give the same records", async () => {
    const asMarkets = join(dir, "markets.jsonl.gz");
    writeFileSync(asMarkets, gzipSync(ROWS.map((r) => JSON.stringify(r.raw)).join("\n")));
    const asEvents = join(dir, "events.jsonl");
    writeFileSync(
      asEvents,
      ROWS.map((r, i) =>
        JSON.stringify({
          id: String(900_000 + i),
          slug: r.slug,
          title: "Bitcoin Up or Down",
          markets: [r.raw],
        }),
      ).join("\n"),
    );
    const a = await freshStore();
    const b = await freshStore();
    try {
      const feeds = await readFeeds([parseFeedArgument(FEED)!]);
      await importRecordFiles({ store: a.markets, paths: [asMarkets], feeds });
      await importRecordFiles({ store: b.markets, paths: [asEvents], feeds });
      const fromMarkets = await records(a.markets);
      const fromEvents = await records(b.markets);
      assert.equal(fromMarkets.size, 145);
      for (const [slug, m] of fromMarkets) {
        const e = fromEvents.get(slug);
        assert.ok(e, slug);
        // The event's id is the market's event id; everything else is the market's own.
        assert.match(e.eventId, /^9\d{5}$/);
        assert.deepEqual({ ...e, eventId: m.eventId }, m);
      }
      // The recorded rows carry the same Gamma objects: the same winners, tokens, fees and times.
      const upstream = await freshStore();
      await importUpstream({
        store: upstream.markets,
        marketsPath: MARKETS,
        feeds: [parseFeedArgument(FEED)!],
      });
      for (const [slug, u] of await records(upstream.markets)) {
        const m = fromMarkets.get(slug)!;
        for (const field of [
          "winner",
          "clobTokenUp",
          "clobTokenDown",
          "conditionId",
          "feeSchedule",
          "settlement",
          "startTime",
          "endTime",
        ] as const) {
          assert.deepEqual(m[field], u[field], `${slug} ${field}`);
        }
      }
      await upstream.close();
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("updown import gamma FILE prints the report; files and a fetch range together are refused", () => {
    const db = `sqlite:${join(dir, "cli-files.db")}`;
    const res = runUpdown(["import", "gamma", MARKETS, "--database-url", db]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^markets imported: 145\n/);
    assert.match(res.stdout, /undecidable from the feed: 145/);
    const both = runUpdown([
      "import",
      "gamma",
      MARKETS,
      "--from",
      "2026-07-24T00:00:00Z",
      "--database-url",
      db,
    ]);
    assert.equal(both.code, 2);
    assert.match(
      both.stderr,
      /import gamma takes files, or --from and --to to fetch from Gamma: one of the two/,
    );
    const half = runUpdown(["import", "gamma", "--from", "2026-07-24T00:00:00Z", "--database-url", db]);
    assert.equal(half.code, 2);
    assert.match(half.stderr, /--from and --to go together/);
  });

  test("an hourly market goes by Polymarket's own slug: its coin name and shape say the series", async () => {
    const file = join(dir, "hourly.jsonl");
    const start = 1784851200;
    const hourly = {
      ...ROWS[0].raw,
      slug: "ethereum-up-or-down-july-23-2026-8pm-et",
      eventStartTime: "2026-07-24T00:00:00Z",
      endDate: "2026-07-24T01:00:00Z",
    };
    writeFileSync(file, JSON.stringify(hourly));
    const store = await freshStore();
    try {
      await importRecordFiles({ store: store.markets, paths: [file], feeds: new Map() });
      const m = await store.markets.getMarket("ethereum-up-or-down-july-23-2026-8pm-et");
      assert.equal(m?.slug, `eth-updown-1h-${start}`);
      assert.equal(m?.polymarketSlug, hourly.slug);
      assert.deepEqual(
        [m?.coin, m?.marketType, m?.startTime, m?.endTime],
        ["eth", "1h", start, start + 3600],
      );
      assert.deepEqual(m?.settlement, { source: "binance", lookbackS: null });
    } finally {
      await store.close();
    }
  });

  test("a market with book data keeps its sources when its Gamma record is imported again", async () => {
    const store = await freshStore();
    try {
      await importRecordFiles({ store: store.markets, paths: [MARKETS], feeds: new Map() });
      const first = (await store.markets.getMarket(ROWS[0].slug))!;
      await store.markets.markSource(first.key, "pmxt");
      await importRecordFiles({ store: store.markets, paths: [MARKETS], feeds: new Map() });
      assert.deepEqual((await store.markets.getMarket(ROWS[0].slug))!.sources, ["pmxt"]);
      assert.deepEqual((await store.markets.getMarket(ROWS[1].slug))!.sources, ["gamma"]);
    } finally {
      await store.close();
    }
  });
});

/** A local server playing Gamma's `/markets?slug=` and `/events?slug=` over the fixture's objects. */
class GammaServer {
  readonly server: Server;
  readonly requests: string[] = [];
  /** Answers to give first, by slug, before the real one (a status, and its Retry-After). */
  readonly failures = new Map<string, { status: number; retryAfter?: string }[]>();
  /** Slugs listed only under `/events`. */
  readonly onlyAsEvent = new Set<string>();
  /** Called on each request before it is answered; may hold it (the kill test). */
  onRequest: (count: number) => Promise<void> = async () => {};

  constructor() {
    this.server = createServer((req, res) => void this.answer(req, res));
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    this.requests.push(`${url.pathname}?${url.searchParams.toString()}`);
    await this.onRequest(this.requests.length);
    const slug = url.searchParams.get("slug") ?? "";
    const failure = this.failures.get(slug)?.shift();
    if (failure) {
      res.writeHead(failure.status, failure.retryAfter ? { "retry-after": failure.retryAfter } : {});
      res.end("{}");
      return;
    }
    const market = GAMMA_BY_SLUG.get(slug);
    let body: unknown[] = [];
    if (market && url.pathname === "/markets" && !this.onlyAsEvent.has(slug)) body = [market];
    if (market && url.pathname === "/events") body = [{ id: "77", slug, markets: [market] }];
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  }
}

const FROM = 1784851200; // 2026-07-24T00:00:00Z, the fixture's first full hour
const TO = FROM + 3600;

describe("import gamma fetching by slug", () => {
  test("the series' slugs in a range: every start from --from to --to", () => {
    const slugs = seriesSlugs("btc", "5m", FROM + 1, TO);
    assert.equal(slugs.length, 12);
    assert.equal(slugs[0].slug, `btc-updown-5m-${FROM + 300}`);
    assert.equal(slugs.at(-1)!.slug, `btc-updown-5m-${TO}`);
    const hourly = seriesSlugs("eth", "1h", FROM, FROM + 3600);
    assert.deepEqual(
      hourly.map((s) => s.upstreamSlug),
      ["ethereum-up-or-down-july-23-2026-8pm-et", "ethereum-up-or-down-july-23-2026-9pm-et"],
    );
  });

  test("429 and 5xx answers are retried after Retry-After or a backoff; a market only under /events is found; unknown ones reported", async () => {
    const gamma = new GammaServer();
    const base = await gamma.start();
    const store = await freshStore();
    const files = await freshStore();
    try {
      gamma.failures.set(`btc-updown-5m-${FROM}`, [{ status: 429, retryAfter: "2" }]);
      gamma.failures.set(`btc-updown-5m-${FROM + 600}`, [{ status: 503 }, { status: 502 }]);
      gamma.onlyAsEvent.add(`btc-updown-5m-${FROM + 900}`);
      const sleeps: number[] = [];
      let now = 0;
      const report = await fetchGammaRecords({
        store: store.markets,
        baseUrl: base,
        series: [{ coin: "btc", marketType: "5m" }],
        from: FROM,
        to: FROM + 43_200, // past the fixture's end: those markets are not on this Gamma
        feeds: new Map(),
        requestsPerSecond: 4,
        sleep: async (ms) => {
          sleeps.push(ms);
          now += ms;
        },
        nowMs: () => now,
        random: () => 0.5,
      });
      assert.equal(report.wanted, 145);
      assert.equal(report.markets, 144); // the fixture's markets from 00:00 on
      assert.equal(report.retries, 3);
      assert.deepEqual(report.notFound, [`btc-updown-5m-${FROM + 43_200}`]);
      // The Retry-After of the 429, then the backoffs of the 503 and 502 (half of 500 ms and 1 s).
      assert.ok(sleeps.includes(2000), `Retry-After honoured: ${sleeps.slice(0, 5).join(",")}`);
      assert.ok(sleeps.includes(250) || sleeps.includes(500));
      // Paced: no two requests closer than 250 ms on the injected clock.
      assert.ok(now >= (report.requests - 1) * 250, `${now} ms for ${report.requests} requests`);
      assert.ok(gamma.requests.includes(`/events?slug=btc-updown-5m-${FROM + 900}`));
      // The same records as the fixture's Gamma objects imported from a file.
      const file = join(dir, "fetched-same.jsonl");
      writeFileSync(
        file,
        ROWS.filter((r) => Number(r.slug.split("-").at(-1)) >= FROM)
          .map((r) => JSON.stringify(r.raw))
          .join("\n"),
      );
      await importRecordFiles({ store: files.markets, paths: [file], feeds: new Map() });
      const fetched = await records(store.markets);
      const fromFile = await records(files.markets);
      assert.equal(fetched.size, fromFile.size);
      for (const [slug, m] of fetched) {
        const f = fromFile.get(slug)!;
        // Found under /events, the market takes the event's id, as the collector's look-up does.
        if (slug === `btc-updown-5m-${FROM + 900}`) assert.deepEqual({ ...m, eventId: f.eventId }, f);
        else assert.deepEqual(m, f, slug);
      }
    } finally {
      await gamma.stop();
      await store.close();
      await files.close();
    }
  });

  test("a client error is not retried: the import stops naming the URL", async () => {
    const gamma = new GammaServer();
    const base = await gamma.start();
    const store = await freshStore();
    try {
      gamma.failures.set(`btc-updown-5m-${FROM}`, [{ status: 400 }]);
      await assert.rejects(
        fetchGammaRecords({
          store: store.markets,
          baseUrl: base,
          series: [{ coin: "btc", marketType: "5m" }],
          from: FROM,
          to: FROM,
          feeds: new Map(),
          requestsPerSecond: 100,
          sleep: async () => {},
        }),
        new RegExp(`/markets\\?slug=btc-updown-5m-${FROM}: HTTP 400$`),
      );
    } finally {
      await gamma.stop();
      await store.close();
    }
  });

  test("killed mid-way, the command run again asks only for what is left and ends as an uninterrupted run", async () => {
    const gamma = new GammaServer();
    const base = await gamma.start();
    const args = (db: string) => [
      BIN,
      "import",
      "gamma",
      "--coin",
      "btc",
      "--type",
      "5m",
      "--from",
      "2026-07-24T00:00:00Z",
      "--to",
      "2026-07-24T01:00:00Z",
      "--polymarket-gamma-url",
      base,
      "--requests-per-second",
      "100",
      "--database-url",
      `sqlite:${join(dir, db)}`,
    ];
    const run = (db: string, onRequest: (count: number, kill: () => void) => Promise<void>) =>
      new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>(
        (resolve) => {
          const child = spawn(process.execPath, args(db), { stdio: ["ignore", "pipe", "pipe"] });
          let stdout = "";
          let stderr = "";
          child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
          child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
          gamma.onRequest = (count) => onRequest(count, () => child.kill("SIGKILL"));
          child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
        },
      );
    try {
      const whole = await run("whole.db", async () => {});
      assert.equal(whole.code, 0, whole.stderr);
      assert.match(whole.stdout, /markets imported: 13/);
      gamma.requests.length = 0;
      // Killed while its seventh request is held: six markets were written.
      const killed = await run("resumed.db", async (count, kill) => {
        if (count === 7) {
          kill();
          await new Promise(() => {}); // never answered
        }
      });
      assert.equal(killed.signal, "SIGKILL");
      gamma.requests.length = 0;
      const resumed = await run("resumed.db", async () => {});
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stdout, /stored resolved already, skipped: 6/);
      assert.equal(gamma.requests.length, 7, gamma.requests.join("\n"));
      assert.ok(!gamma.requests.includes(`/markets?slug=btc-updown-5m-${FROM}`));
      const a = await openStore(`sqlite:${join(dir, "whole.db")}`);
      const b = await openStore(`sqlite:${join(dir, "resumed.db")}`);
      try {
        const expected = await records(a.markets);
        assert.equal(expected.size, 13);
        assert.deepEqual(await records(b.markets), expected);
      } finally {
        await a.close();
        await b.close();
      }
    } finally {
      await gamma.stop();
    }
  });
});
