import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, describe, test } from "node:test";
import type { Market } from "../../../src/domain/market.ts";
import { SqliteStore } from "../../../src/store/dialects/sqlite/sqlite-store.ts";
import type { Store } from "../../../src/store/ports/store.ts";
import { runUpdown, runUpdownAsync } from "../../helpers/cli.ts";
import { BIN, ROOT } from "../../helpers/paths.ts";
import {
  HOUR_MARKETS,
  importPmxtProcess,
  keptRows,
  strangerRows,
  writeHourFeed,
} from "../../helpers/pmxt-hour.ts";
import { writePmxtFile } from "../../helpers/pmxt-parquet.ts";
import { archiveOrder } from "../../helpers/pmxt-stream.ts";

/**
 * `updown import pmxt` as a real process: the report (text and --json), a run killed (SIGKILL) in the
 * middle and run again ending equal to an uninterrupted run, and the peak memory of a file of one
 * full row group (1,048,576 rows) within the bound docs/archives.md states.
 */

/** docs/archives.md: peak resident memory of `import pmxt`, whatever the file's size. */
const MEMORY_BOUND_MIB = 700;
const MARKETS = HOUR_MARKETS;

async function openStore(path: string, markets: readonly Market[]): Promise<Store> {
  const store = new SqliteStore(path);
  await store.migrate();
  for (const m of markets) await store.markets.upsertMarket(m);
  return store;
}

async function all<T>(blocks: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const b of blocks) out.push(...b);
  return out;
}

/** Everything an import writes about the markets, comparable across databases. */
async function contents(path: string): Promise<unknown[]> {
  const store = new SqliteStore(path);
  try {
    const out: unknown[] = [];
    for (const m of MARKETS) {
      const s = await store.markets.getMarket(m.slug);
      if (!s) throw new Error(m.slug);
      const events = await all(store.events.streamMarketEvents(s.key));
      const snaps = await store.markets.snapshotPage(s.key, {
        order: "asc",
        limit: 1000,
        offset: 0,
        books: true,
      });
      out.push({
        slug: s.slug,
        events: events.map((e) => JSON.stringify(e)),
        snapshots: snaps.map(
          (r) =>
            `${r.time} ${r.priceUp} ${r.priceDown} ${r.coinPrice} ${Buffer.from(r.books ?? []).toString("hex")}`,
        ),
        trades: await store.trades.tradePage(s.key, { order: "asc", limit: 100_000, offset: 0 }),
        integrity: await store.events.bookIntegrity(s.key),
      });
    }
    return out;
  } finally {
    await store.close();
  }
}

describe("updown import pmxt (a real process)", () => {
  let dir: string;
  let file: string;
  let feed: string;
  /** The file imported once, uninterrupted, into a new database: what the other ways must end equal to. */
  let reference: { db: string; text: ReturnType<typeof runUpdown>; contents: unknown[] };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "pmxt-cli-"));
    file = join(dir, "polymarket_orderbook_2026-07-24T00.parquet");
    feed = join(dir, "chainlink-btcusd.csv");
    writeHourFeed(feed);
    const rows = [...keptRows(10, 25), ...strangerRows(20_000, 7)];
    // Small row groups: many marks, so that a kill lands between two of them.
    writePmxtFile(file, archiveOrder(rows), 4096);
    const db = join(dir, "reference.db");
    await (await openStore(db, MARKETS)).close();
    const text = runUpdown([
      "import",
      "pmxt",
      file,
      "--feed",
      `btc:${feed}`,
      "--coins",
      "btc",
      "--database-url",
      `sqlite:${db}`,
    ]);
    assert.equal(text.code, 0, text.stderr);
    reference = { db, text, contents: await contents(db) };
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  test("the report, as text and as --json", () => {
    const { text } = reference;
    assert.match(text.stdout, /^files: 1 \(row groups: \d+, of which resumed from an earlier run: 0\)$/m);
    assert.match(text.stdout, /^markets: 6$/m);
    assert.match(text.stdout, /^snapshots: 1800 new, 0 stored ones removed to be derived again$/m);
    assert.match(text.stdout, /^hours missing: 0$/m);
    assert.match(text.stderr, /Importing PMXT: 1 files/);
    const json = runUpdown([
      "import",
      "pmxt",
      file,
      "--feed",
      `btc:${feed}`,
      "--coins",
      "btc",
      "--json",
      "--database-url",
      `sqlite:${reference.db}`,
    ]);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as Record<string, unknown>;
    assert.equal(report.events, 0, "the second import adds nothing");
    assert.equal(report.rowGroups, report.rowGroupsResumed);
  });

  test("from a server: --base expands to hour files, a 404 is a missing hour, a 500 stops the import", async () => {
    const served: string[] = [];
    const server: Server = createServer((req, res) => {
      served.push(req.url ?? "");
      if (req.url === "/archive/polymarket_orderbook_2026-07-24T00.parquet") {
        res.writeHead(200, { "content-type": "application/octet-stream" }).end(readFileSync(file));
      } else if (req.url === "/broken/polymarket_orderbook_2026-07-24T00.parquet") {
        res.writeHead(500).end("no");
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const fromServer = join(dir, "from-server.db");
      await (await openStore(fromServer, MARKETS)).close();
      const common = ["--feed", `btc:${feed}`, "--coins", "btc", "--json"];
      const range = [
        "--base",
        `${base}/archive/`,
        "--from",
        "2026-07-24T00:00:00Z",
        "--to",
        "2026-07-24T01:59:59Z",
      ];
      const r = await runUpdownAsync([
        "import",
        "pmxt",
        ...range,
        ...common,
        "--database-url",
        `sqlite:${fromServer}`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as { files: number; hoursMissing: string[] };
      assert.equal(report.files, 1);
      assert.deepEqual(report.hoursMissing, ["polymarket_orderbook_2026-07-24T01.parquet"]);
      assert.deepEqual(served, [
        "/archive/polymarket_orderbook_2026-07-24T00.parquet",
        "/archive/polymarket_orderbook_2026-07-24T01.parquet",
      ]);
      assert.deepEqual(await contents(fromServer), reference.contents, "the same as importing the file");

      // A URL named on the command line must be there: its 404, like a 500, is an error naming it.
      const broken = join(dir, "broken.db");
      await (await openStore(broken, MARKETS)).close();
      for (const url of [
        `${base}/broken/polymarket_orderbook_2026-07-24T00.parquet`,
        `${base}/nowhere.parquet`,
      ]) {
        const failed = await runUpdownAsync([
          "import",
          "pmxt",
          url,
          ...common,
          "--database-url",
          `sqlite:${broken}`,
        ]);
        assert.notEqual(failed.code, 0);
        assert.ok(failed.stderr.includes(url), failed.stderr);
        assert.match(failed.stderr, /HTTP (500|404)/);
      }
      const store = new SqliteStore(broken);
      try {
        for (const m of MARKETS) {
          const s = await store.markets.getMarket(m.slug);
          assert.equal(await store.events.countMarketEvents(s!.key), 0, "nothing written");
        }
      } finally {
        await store.close();
      }
    } finally {
      server.close();
    }
  });

  test("a bad command line is a usage error", () => {
    const r = runUpdown(["import", "pmxt", "--base", dir]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--base, --from and --to go together/);
  });

  test("killed in the middle and run again, it ends equal to an uninterrupted run", async () => {
    const killed = join(dir, "killed.db");
    await (await openStore(killed, MARKETS)).close();
    const args = (db: string) => [
      "import",
      "pmxt",
      file,
      "--feed",
      `btc:${feed}`,
      "--coins",
      "btc",
      "--database-url",
      `sqlite:${db}`,
    ];
    const child = spawn(process.execPath, [BIN, ...args(killed)], { stdio: "ignore", cwd: ROOT });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on("exit", (_c, signal) => resolve(signal)),
    );
    // Wait for the event: the third row group marked in the database, then kill without warning.
    const watcher = new DatabaseSync(killed, { readOnly: true });
    try {
      for (;;) {
        const marked = (
          watcher.prepare("SELECT count(*) AS n FROM archive_row_groups").get() as { n: number }
        ).n;
        if (marked >= 3) break;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      watcher.close();
    }
    child.kill("SIGKILL");
    assert.equal(await exited, "SIGKILL");
    const resumed = runUpdown([...args(killed), "--json"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    const report = JSON.parse(resumed.stdout) as { rowGroups: number; rowGroupsResumed: number };
    assert.ok(
      report.rowGroupsResumed >= 3 && report.rowGroupsResumed < report.rowGroups,
      JSON.stringify(report),
    );
    assert.deepEqual(await contents(killed), reference.contents);
  });
});

describe("updown import pmxt: peak memory of a full row group", () => {
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "pmxt-mem-"));
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  test(`a 1,048,576-row file is imported within ${MEMORY_BOUND_MIB} MiB`, async () => {
    const file = join(dir, "polymarket_orderbook_2026-07-24T00.parquet");
    const feed = join(dir, "chainlink-btcusd.csv");
    writeHourFeed(feed);
    const kept = keptRows(20, 100, 600);
    const rows = archiveOrder([...kept, ...strangerRows(1_048_576 - kept.length, 8)]);
    assert.equal(rows.length, 1_048_576);
    writePmxtFile(file, rows);
    const db = join(dir, "mem.db");
    await (await openStore(db, MARKETS)).close();
    const { code, stdout, stderr, peakMiB: mib } = await importPmxtProcess(file, feed, db);
    assert.equal(code, 0, stderr);
    const report = JSON.parse(stdout) as { rowsRead: number; rowsKept: number };
    assert.equal(report.rowsRead, 1_048_576);
    assert.equal(report.rowsKept, kept.length);
    process.stderr.write(
      `import pmxt of 1,048,576 rows (${kept.length} kept): peak RSS ${mib.toFixed(0)} MiB\n`,
    );
    assert.ok(mib > 0 && mib < MEMORY_BOUND_MIB, `${mib.toFixed(0)} MiB`);
  });
});
