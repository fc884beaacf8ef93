import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { after, before, describe, test } from "node:test";
import { openAndMigrate } from "../../src/store/open.ts";
import { SQLITE_MIGRATIONS } from "../../src/store/dialects/sqlite/migrations.ts";
import { postgresTestUrl, ScratchSchemas } from "../helpers/postgres.ts";
import { BIN, FIXTURES } from "../helpers/paths.ts";

const require = createRequire(import.meta.url);

const FIXTURE = join(FIXTURES, "real-btc-5m-2026-07-24");
let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "updown-cli-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** `keys list`'s first line, before any key. */
const KEYS_HEADER = "id\tplan\taccount\tstate\tname\n";

function updown(args: string[], env: Record<string, string> = {}) {
  const res = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, DATABASE_URL: `sqlite:${join(dir, "cli.db")}`, ...env },
    encoding: "utf8",
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

describe("updown keys", () => {
  test("create prints only the key; list shows ids and plans but never keys; revoke takes the id", () => {
    const created = updown(["keys", "create", "--plan", "pro", "--name", "ci"]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^ud_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}\n$/);
    const key = created.stdout.trim();
    const id = key.slice(3, 11);
    const listed = updown(["keys", "list"]);
    assert.equal(listed.stdout, `${KEYS_HEADER}${id}\tpro\tdefault\tactive\tci\n`);
    assert.ok(!listed.stdout.includes(key.slice(12)));
    assert.equal(updown(["keys", "revoke", id]).code, 0);
    assert.equal(updown(["keys", "list"]).stdout, `${KEYS_HEADER}${id}\tpro\tdefault\trevoked\tci\n`);
    const again = updown(["keys", "revoke", id]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /^error: no active key/);
  });

  test("create refuses past the plan's keys per account (exit 1) until one is revoked", () => {
    const create = () => updown(["keys", "create", "--plan", "starter", "--account", "acme"]);
    const first = create();
    assert.equal(first.code, 0, first.stderr);
    assert.equal(create().code, 0);
    const third = create();
    assert.equal(third.code, 1);
    assert.equal(third.stdout, "");
    assert.equal(
      third.stderr,
      'refused: account "acme" already holds 2 active starter keys, the plan\'s limit; revoke one first\n',
    );
    // Another account, or another plan of the same account, is counted apart.
    assert.equal(updown(["keys", "create", "--plan", "starter", "--account", "other"]).code, 0);
    assert.equal(updown(["keys", "create", "--plan", "pro", "--account", "acme"]).code, 0);
    assert.equal(updown(["keys", "revoke", first.stdout.slice(3, 11)]).code, 0);
    assert.equal(create().code, 0);
  });

  test("per-key limits are for enterprise keys; the plans file can change keys per account", () => {
    const starter = updown(["keys", "create", "--plan", "starter", "--per-minute", "100"]);
    assert.equal(starter.code, 1);
    assert.match(starter.stderr, /^refused: per-key limits are for enterprise keys/);
    const enterprise = updown([
      "keys",
      "create",
      "--plan",
      "enterprise",
      "--per-minute",
      "1000",
      "--per-day",
      "5",
    ]);
    assert.equal(enterprise.code, 0, enterprise.stderr);
    const badLimit = updown(["keys", "create", "--plan", "enterprise", "--per-day", "0"]);
    assert.equal(badLimit.code, 2);
    assert.match(badLimit.stderr, /^error: --per-day must be a positive integer/);

    const plansFile = join(dir, "plans.json");
    writeFileSync(plansFile, JSON.stringify({ starter: { keys_per_account: 1 } }));
    const one = ["keys", "create", "--plan", "starter", "--account", "solo"];
    assert.equal(updown(one, { PLANS_FILE: plansFile }).code, 0);
    assert.equal(updown(one, { PLANS_FILE: plansFile }).code, 1);
    assert.equal(updown(one).code, 0, "the default allows two");
    writeFileSync(plansFile, JSON.stringify({ starter: { keys_per_acount: 1 } }));
    const typo = updown(one, { PLANS_FILE: plansFile });
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /plans\.starter\.keys_per_acount is not a plan setting/);
  });

  test("bad usage is a one-line error and exit 2, --help documents options", () => {
    const missing = updown(["keys", "create"]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^error: keys create needs --plan starter\|pro\|enterprise/);
    const bad = updown(["keys", "create", "--plan", "gold"]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, 'error: --plan must be one of starter, pro, enterprise, got "gold"\n');
    const unknownFlag = updown(["keys", "list", "--colour"]);
    assert.equal(unknownFlag.code, 2);
    assert.match(updown(["--help"]).stdout, /Commands:/);
    assert.match(updown(["export", "--help"]).stdout, /--format ndjson\|csv\|parquet/);
    assert.equal(updown(["frobnicate"]).code, 2);
  });
});

describe("updown import upstream", () => {
  test("imports the real fixture and prints the cross-check report", () => {
    const res = updown([
      "import",
      "upstream",
      "--markets",
      join(FIXTURE, "markets-00-12utc.jsonl.gz"),
      "--feed",
      join(FIXTURE, "chainlink-btcusd-00-12utc.csv.gz"),
    ]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /145/);
    assert.match(res.stdout, /btc-updown-5m-1784868900/);
    const missing = updown([
      "import",
      "upstream",
      "--markets",
      join(dir, "nope.jsonl"),
      "--feed",
      join(dir, "nope.csv"),
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^error: .*nope/);
  });

  test("takes a TWAP stream with --feed twap60=FILE, beside the instantaneous one, and says which decided", () => {
    const record = join(FIXTURES, "polymarket-protocol", "gamma-market-twap-btc-5m.json");
    const markets = join(dir, "twap-market.jsonl");
    writeFileSync(markets, `${JSON.stringify(JSON.parse(readFileSync(record, "utf8")))}\n`);
    const twap = join(dir, "twap60.csv");
    const start = 1787414400;
    const rows = Array.from(
      { length: 3 },
      (_, i) => `${(start + i) * 1000},0,6400000${i}${"0".repeat(16)},0,0`,
    );
    writeFileSync(twap, `feed_ts_ms,value,full_accuracy_value,server_ts_ms,recv_ms\n${rows.join("\n")}\n`);
    const res = updown([
      "import",
      "upstream",
      "--markets",
      markets,
      "--feed",
      join(FIXTURE, "chainlink-btcusd-00-12utc.csv.gz"),
      "--feed",
      `twap60=${twap}`,
    ]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /chainlink_twap 60 s: 1 market/);
    const bad = updown(["import", "upstream", "--markets", markets, "--feed", `twap0=${twap}`]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /TWAP lookback/);
  });
});

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const m = pattern.exec(seen);
      if (m) resolve(m[0]);
    });
    child.once("exit", (code) => reject(new Error(`exited ${code} before ${pattern}: ${seen}`)));
  });
}

describe("updown serve", () => {
  test("first start seeds demo data, prints and writes demo keys, serves them, and stops cleanly on SIGTERM", async () => {
    const dataDir = join(dir, "serve");
    const env = {
      ...process.env,
      DATABASE_URL: `sqlite:${join(dataDir, "updown.db")}`,
      PORT: "0",
      LOG_LEVEL: "warn",
      DEMO_COUNTS: "5m=2,15m=1,1h=1,4h=0,24h=0",
    };
    const start = async () => {
      const child = spawn(process.execPath, [BIN, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString();
      });
      const url = (await waitForLine(child, /http:\/\/127\.0\.0\.1:\d+/)).trim();
      return { child, url, output: () => out };
    };

    const first = await start();
    const keysFile = join(dataDir, "demo-keys.json");
    assert.ok(existsSync(keysFile));
    const keys = JSON.parse(readFileSync(keysFile, "utf8")) as Record<string, string>;
    assert.deepEqual(Object.keys(keys), ["starter", "pro", "enterprise"]);
    for (const k of Object.values(keys)) assert.ok(first.output().includes(k), "each demo key is printed");
    const res = await fetch(`${first.url}/v1/markets?coin=btc`, { headers: { "x-api-key": keys.starter } });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { total: number }).total, 4);
    const exited = new Promise((r) => first.child.once("exit", r));
    first.child.kill("SIGTERM");
    assert.equal(await exited, 0);

    const second = await start();
    assert.ok(!second.output().includes("Demo API keys"), "a second start neither seeds nor makes keys");
    const again = await fetch(`${second.url}/v1/markets?coin=btc`, { headers: { "x-api-key": keys.pro } });
    assert.equal(((await again.json()) as { total: number }).total, 4);

    // A long export in flight when SIGTERM arrives is finished before the process exits 0.
    const hourly = (await (
      await fetch(`${second.url}/v1/markets?coin=btc&market_type=1h`, { headers: { "x-api-key": keys.pro } })
    ).json()) as { markets: { slug: string }[] };
    const slug = hourly.markets[0].slug;
    const detail = await fetch(`${second.url}/v1/markets/${slug}/snapshots?limit=1`, {
      headers: { "x-api-key": keys.pro },
    });
    const total = ((await detail.json()) as { total: number }).total;
    const exportRes = await fetch(
      `${second.url}/v1/markets/${slug}/snapshots/export?include_orderbook=true`,
      {
        headers: { "x-api-key": keys.pro, "accept-encoding": "identity" },
      },
    );
    const reader = exportRes.body!.getReader();
    const firstChunk = await reader.read();
    const stopped = new Promise((r) => second.child.once("exit", r));
    second.child.kill("SIGTERM");
    let bytes = Buffer.from(firstChunk.value ?? []);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      bytes = Buffer.concat([bytes, chunk.value]);
    }
    assert.equal(
      bytes.toString().trimEnd().split("\n").length,
      1 + total,
      "the market line and every second",
    );
    assert.equal(await stopped, 0);
  });
});

describe("updown migrate, seed, export and import archive", () => {
  test("processes migrating one new database at once apply each version once, and all succeed", async () => {
    const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, "race.db")}` };
    const runs = Array.from(
      { length: 4 },
      () =>
        new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, [BIN, "migrate"], { env, stdio: "ignore" });
          child.on("exit", resolve);
        }),
    );
    assert.deepEqual(await Promise.all(runs), [0, 0, 0, 0]);
    const { DatabaseSync } = require("node:sqlite") as typeof import("node:sqlite");
    const db = new DatabaseSync(join(dir, "race.db"));
    const versions = db.prepare("SELECT version FROM schema_migrations ORDER BY version").all();
    db.close();
    assert.deepEqual(
      versions.map((r) => r.version),
      SQLITE_MIGRATIONS.map((m) => m.version),
    );
  });

  test("migrate says what it did: the schema created with its tables, an upgrade, or nothing to do", () => {
    const path = join(dir, "report", "new.db");
    const env = { DATABASE_URL: `sqlite:${path}` };
    const latest = SQLITE_MIGRATIONS.at(-1)!.version;
    const created = updown(["migrate"], env);
    assert.equal(created.code, 0, created.stderr);
    const m = /^sqlite:(\S+): created the schema at version (\d+) \(tables: ([a-z_, ]+)\)\.\n$/.exec(
      created.stdout,
    );
    assert.ok(m, created.stdout);
    assert.deepEqual([m[1], Number(m[2])], [path, latest]);
    const tables = m[3].split(", ");
    for (const t of ["markets", "snapshots", "snapshot_books", "api_keys", "schema_migrations"]) {
      assert.ok(tables.includes(t), `${t} in ${m[3]}`);
    }
    assert.equal(
      updown(["migrate"], env).stdout,
      `sqlite:${path}: the schema is already at version ${latest}; nothing to do.\n`,
    );

    // A database left at an older version by an earlier release.
    const oldPath = join(dir, "report", "old.db");
    const { DatabaseSync } = require("node:sqlite") as typeof import("node:sqlite");
    const old = new DatabaseSync(oldPath);
    old.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER)");
    for (const mig of SQLITE_MIGRATIONS.slice(0, -2)) {
      old.exec(mig.sql);
      old.prepare("INSERT INTO schema_migrations VALUES (?, ?)").run(mig.version, Date.now());
    }
    old.close();
    const upgraded = updown(["migrate"], { DATABASE_URL: `sqlite:${oldPath}` });
    const applied = SQLITE_MIGRATIONS.slice(-2).map((mig) => mig.version);
    assert.match(
      upgraded.stdout,
      new RegExp(`: upgraded the schema to version ${latest}, applying ${applied.join(", ")} \\(tables: `),
    );
  });

  const pgUrl = postgresTestUrl();
  test(
    "migrate on a new PostgreSQL schema says so too, its monthly partitions left out of the tables",
    { skip: pgUrl ? false : "DATABASE_URL names no PostgreSQL" },
    async () => {
      const schemas = new ScratchSchemas(pgUrl!);
      try {
        const env = { DATABASE_URL: await schemas.create() };
        const created = updown(["migrate"], env);
        assert.equal(created.code, 0, created.stderr);
        assert.match(created.stdout, /: created the schema at version \d+ \(tables: .*\bsnapshots\b/);
        // A write makes this month's partitions; they are not tables of their own in the report.
        assert.equal(
          updown(["seed", "--counts", "5m=1,15m=0,1h=0,4h=0,24h=0", "--coins", "btc"], env).code,
          0,
        );
        const again = updown(["migrate"], env);
        assert.match(again.stdout, /: the schema is already at version \d+; nothing to do\.\n$/);
        const { store, migration } = await openAndMigrate(env.DATABASE_URL);
        await store.close();
        assert.ok(migration.tables.includes("snapshots"));
        assert.ok(!migration.tables.some((t) => /_\d{4}_?\d{2}$|_p\d/.test(t)), migration.tables.join(", "));
      } finally {
        await schemas.dropAll();
      }
    },
  );

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

  test("serve --no-seed leaves an empty database empty and makes no keys", async () => {
    const env = {
      ...process.env,
      DATABASE_URL: `sqlite:${join(dir, "empty", "updown.db")}`,
      PORT: "0",
      LOG_LEVEL: "warn",
    };
    const child = spawn(process.execPath, [BIN, "serve", "--no-seed"], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    await waitForLine(child, /http:\/\/127\.0\.0\.1:\d+/);
    const stopped = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    assert.equal(await stopped, 0);
    assert.ok(!out.includes("Demo API keys"));
    assert.ok(!existsSync(join(dir, "empty", "demo-keys.json")));
    assert.equal(updown(["keys", "list"], { DATABASE_URL: env.DATABASE_URL }).stdout, KEYS_HEADER);
  });
});
