import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runUpdown } from "../../helpers/cli.ts";

const require = createRequire(import.meta.url);

let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "updown-cli-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** `updown` run to its end, over a SQLite database in this file's folder unless `env` names another. */
function updown(args: string[], env: Record<string, string> = {}) {
  return runUpdown(args, { DATABASE_URL: `sqlite:${join(dir, "cli.db")}`, ...env });
}

describe("updown seed, export and import archive", () => {
  test("seed is deterministic; export then import archive gives the same data; both are idempotent", () => {
    const a = { DATABASE_URL: `sqlite:${join(dir, "a.db")}` };
    const b = { DATABASE_URL: `sqlite:${join(dir, "b.db")}` };
    const seedArgs = [
      "seed",
      "--seed",
      "3",
      "--anchor",
      "2026-07-24T00:20:34Z",
      "--counts",
      "5m=2,15m=1,1h=0,4h=0,24h=0",
      "--coins",
      "sol",
    ];
    const seeded = updown(seedArgs, a);
    assert.equal(seeded.code, 0, seeded.stderr);
    assert.match(seeded.stderr, /3 markets, 670 snapshots/);
    assert.equal(updown(seedArgs, b).code, 0);

    const archiveA = join(dir, "a.ndjson.gz");
    const archiveB = join(dir, "b.ndjson");
    assert.equal(updown(["export", "--out", archiveA, "--books"], a).code, 0);
    assert.equal(updown(["export", "--out", archiveB, "--books"], b).code, 0);
    const { gunzipSync } = require("node:zlib") as typeof import("node:zlib");
    const textA = gunzipSync(readFileSync(archiveA)).toString();
    assert.equal(textA, readFileSync(archiveB, "utf8"), "the same seed gives the same data");
    assert.equal(textA.split("\n").filter((l) => l.startsWith('{"type":"market"')).length, 3);

    const c = { DATABASE_URL: `sqlite:${join(dir, "c.db")}` };
    const imported = updown(["import", "archive", archiveA], c);
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stderr, /3 markets, 670 snapshots \(670 new\)/);
    assert.match(updown(["import", "archive", archiveA], c).stderr, /\(0 new\)/);
    const reexported = join(dir, "c.ndjson");
    updown(["export", "--out", reexported, "--books"], c);
    assert.equal(readFileSync(reexported, "utf8"), textA);

    const csv = updown(["export", "--out", "-", "--format", "csv", "--type", "15m"], a);
    assert.equal(csv.stdout.split("\n")[0], "slug,time,coin_price,price_up,price_down");
    assert.equal(csv.stdout.trimEnd().split("\n").length, 1 + 335);
  });

  test("export --format parquet of a series over a time range, with progress, read back by DuckDB", async () => {
    const env = { DATABASE_URL: `sqlite:${join(dir, "pq.db")}` };
    const seedArgs = ["seed", "--seed", "3", "--anchor", "2026-07-24T00:20:34Z", "--coins", "sol"];
    assert.equal(updown([...seedArgs, "--counts", "5m=3,15m=0,1h=0,4h=0,24h=0"], env).code, 0);
    const file = join(dir, "sol-5m.parquet");
    const range = ["--from", "2026-07-24T00:12:30Z", "--to", "2026-07-24T00:16:00Z"];
    const args = ["export", "--format", "parquet", "--books", "--coin", "sol", "--type", "5m", ...range];
    const res = updown([...args, "--out", file], env);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /Exporting: 2 markets, 211 snapshots in/);
    const { DuckDBInstance } = await import("@duckdb/node-api");
    const c = await (await DuckDBInstance.create(":memory:")).connect();
    const rows = (
      await c.runAndReadAll(
        `SELECT slug, count(*)::INT AS n, min(time)::VARCHAR AS first, max(len(orderbook_up.bids))::INT AS levels
         FROM '${file}' GROUP BY slug ORDER BY slug`,
      )
    ).getRowObjects();
    c.closeSync();
    assert.deepEqual(rows, [
      { slug: "sol-updown-5m-1784851800", n: 150, first: "2026-07-24 00:12:30+00", levels: rows[0].levels },
      { slug: "sol-updown-5m-1784852100", n: 61, first: "2026-07-24 00:15:00+00", levels: rows[1].levels },
    ]);
    assert.ok((rows[0].levels as number) > 0);
  });
});
