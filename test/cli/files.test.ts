import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { BIN } from "../helpers/serve.ts";
import { FIXTURES } from "../helpers/paths.ts";

/**
 * Every command given a file or folder that is not there (or is the wrong kind), a database that
 * cannot be opened, or a port that is taken: one line on stderr and exit status 2, never a stack
 * trace. Each is a real process.
 */

const FIXTURE = join(FIXTURES, "real-btc-5m-2026-07-24");
let dir: string;
/** A file where a folder is wanted. */
let aFile: string;
let db: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "updown-cli-files-"));
  aFile = join(dir, "a-file");
  writeFileSync(aFile, "not a folder\n");
  mkdirSync(join(dir, "a-folder"));
  db = `sqlite:${join(dir, "ok.db")}`;
});
after(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], env: Record<string, string> = {}) {
  const res = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, DATABASE_URL: db, REDIS_URL: "", PLANS_FILE: "", ...env },
    encoding: "utf8",
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

function assertOneLine(res: { code: number | null; stderr: string }, message: RegExp): void {
  assert.equal(res.code, 2, res.stderr);
  assert.match(res.stderr, /^error: [^\n]+\n$/, "one line");
  assert.match(res.stderr, message);
  assert.doesNotMatch(res.stderr, /\n\s+at /, "no stack");
}

describe("a missing file or folder is one line and exit 2", () => {
  test("import: the archive, the upstream markets and feed files", () => {
    const nope = join(dir, "nope.ndjson");
    assertOneLine(
      run(["import", "archive", nope]),
      /^error: archive \S+nope\.ndjson: no such file or folder$/m,
    );
    assertOneLine(run(["import", "archive", join(dir, "a-folder")]), /a-folder is a folder, not a file$/m);
    const markets = join(FIXTURE, "markets-00-12utc.jsonl.gz");
    const missingMarkets = run(["import", "upstream", "--markets", join(dir, "m.jsonl"), "--feed", markets]);
    assertOneLine(missingMarkets, /^error: --markets \S+m\.jsonl: no such file or folder$/m);
    const missingFeed = run(["import", "upstream", "--markets", markets, "--feed", join(dir, "f.csv")]);
    assertOneLine(missingFeed, /^error: --feed \S+f\.csv: no such file or folder$/m);
  });

  test("export: a missing output folder, a folder as the output, a path through a file", () => {
    const out = join(dir, "no-such-folder", "out.ndjson");
    assertOneLine(
      run(["export", "--out", out]),
      /^error: --out \S+out\.ndjson: folder \S+no-such-folder: no such file or folder$/m,
    );
    assertOneLine(run(["export", "--out", join(dir, "a-folder")]), /is a folder; name a file in it$/m);
    assertOneLine(run(["export", "--out", join(aFile, "out.csv")]), /a-file is not a folder$/m);
  });

  test("PLANS_FILE (keys, serve)", () => {
    const plans = { PLANS_FILE: join(dir, "plans.json") };
    assertOneLine(run(["keys", "list"], plans), /^error: cannot read plans file \S+plans\.json: ENOENT/m);
    assertOneLine(run(["serve", "--port", "0"], plans), /^error: cannot read plans file/m);
  });

  test("a database that cannot be opened, whichever command opens it", () => {
    const underFile = `sqlite:${join(aFile, "x.db")}`;
    const commands = [
      ["migrate"],
      ["seed", "--counts", "5m=1,15m=0,1h=0,4h=0,24h=0"],
      ["keys", "list"],
      ["export", "--out", "-"],
      ["import", "archive", join(FIXTURE, "markets-00-12utc.jsonl.gz")],
      ["backfill", "binance", "--from", "2026-07-24T00:00:00Z", "--to", "2026-07-24T00:01:00Z"],
      ["collect", "--types", "none", "--venues", "none"],
      ["serve", "--port", "0", "--no-seed"],
    ];
    for (const args of commands) {
      const res = run(args, { DATABASE_URL: underFile });
      assertOneLine(res, /^error: cannot open the database sqlite:\S+a-file\/x\.db: .*EEXIST/m);
    }
    const unreachable = run(["migrate"], { DATABASE_URL: "postgres://updown:secret@127.0.0.1:1/updown" });
    assertOneLine(
      unreachable,
      /^error: cannot open the database postgres:\/\/updown@127\.0\.0\.1:1\/updown: .*ECONNREFUSED/m,
    );
    assert.ok(!unreachable.stderr.includes("secret"), "never the password");
  });

  test("copy: a missing source file, a destination that cannot be made", () => {
    assert.equal(run(["migrate"]).code, 0);
    const from = ["copy", "--from", `sqlite:${join(dir, "none.db")}`, "--to", db];
    assertOneLine(run(from), /^error: --from sqlite:\S+none\.db: no such database file$/m);
    const to = ["copy", "--from", db, "--to", `sqlite:${join(aFile, "c.db")}`];
    assertOneLine(run(to), /^error: cannot open the destination sqlite:\S+a-file\/c\.db: .*EEXIST/m);
  });

  test("a SQLite path in a folder not made yet is no error: the folders are made", () => {
    const res = run(["migrate"], { DATABASE_URL: `sqlite:${join(dir, "new", "deeper", "u.db")}` });
    assert.equal(res.code, 0, res.stderr);
  });

  test("serve on a port in use says so in one line", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const child = spawn(process.execPath, [BIN, "serve", "--no-seed", "--port", String(port)], {
        env: { ...process.env, DATABASE_URL: db, REDIS_URL: "", PLANS_FILE: "" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      assertOneLine(
        { code, stderr },
        new RegExp(`^error: cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`, "m"),
      );
    } finally {
      taken.close();
    }
  });
});
