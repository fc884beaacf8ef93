import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { SQLITE_MIGRATIONS } from "../../../src/store/dialects/sqlite/migrations.ts";
import { openAndMigrate } from "../../../src/store/open.ts";
import { runUpdown } from "../../helpers/cli.ts";
import { BIN } from "../../helpers/paths.ts";
import { postgresTestUrl, ScratchSchemas } from "../../helpers/postgres.ts";

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

describe("updown migrate", () => {
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
});
