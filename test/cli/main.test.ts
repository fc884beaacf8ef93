import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { KEYS_HEADER, runUpdown } from "../helpers/cli.ts";
import { BIN, FIXTURES } from "../helpers/paths.ts";

const FIXTURE = join(FIXTURES, "real-btc-5m-2026-07-24");
let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "updown-cli-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** `updown` run to its end, over a SQLite database in this file's folder unless `env` names another. */
function updown(args: string[], env: Record<string, string> = {}) {
  return runUpdown(args, { DATABASE_URL: `sqlite:${join(dir, "cli.db")}`, ...env });
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

describe("what a command's help loads", () => {
  // The server, the engine, the archive's readers, the MCP SDK and the drivers cost about a second of
  // CPU to load; the help of every command, and a usage error, need none of them (src/cli/main.ts).
  const HEAVY = [
    "fastify",
    "typebox",
    "apache-arrow",
    "parquet-wasm",
    "pg",
    "ioredis",
    "@modelcontextprotocol/sdk",
    "zod",
  ];
  const LOADER = join(import.meta.dirname, "..", "helpers", "loaded-modules.mjs");

  /** The packages of node_modules a Node process resolved, run with `nodeArgs`. */
  function packagesLoaded(nodeArgs: string[]): { code: number | null; packages: Set<string> } {
    const res = spawnSync(process.execPath, ["--import", LOADER, ...nodeArgs], { encoding: "utf8" });
    const [, listed = ""] = res.stderr.split("-- modules loaded --\n");
    const packages = new Set(
      listed
        .split("\n")
        .map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
        .filter((p): p is string => p !== undefined),
    );
    return { code: res.status, packages };
  }

  for (const args of [
    ["--help"],
    ["nope"],
    ["serve", "--help"],
    ["backtest", "--help"],
    ["import", "--help"],
    ["export", "--help"],
    ["mcp", "--help"],
    ["serve", "--port", "x"],
  ]) {
    test(`updown ${args.join(" ")} loads none of ${HEAVY.join(", ")}`, () => {
      const { code, packages } = packagesLoaded([BIN, ...args]);
      assert.equal(code, args.includes("--help") && args[0] !== "nope" ? 0 : 2);
      assert.deepEqual(
        HEAVY.filter((p) => packages.has(p)),
        [],
      );
    });
  }

  test("the server's app loads neither Arrow nor parquet-wasm until it writes a Parquet file", () => {
    const app = join(import.meta.dirname, "..", "..", "src", "http", "app.ts");
    const { code, packages } = packagesLoaded([
      "--input-type=module",
      "-e",
      `await import(${JSON.stringify(app)})`,
    ]);
    assert.equal(code, 0);
    assert.ok(packages.has("fastify"), "the hook saw the app's own packages");
    assert.ok(!packages.has("apache-arrow") && !packages.has("parquet-wasm"), [...packages].join(", "));
  });

  test("a command that only opens a store loads neither the server nor TypeBox", () => {
    // The stores render snapshots through src/wire/wire.ts, whose schemas sit apart (wire-schemas.ts)
    // so that opening a store does not load TypeBox: half of `keys create`'s CPU when it did.
    const { code, packages } = packagesLoaded([
      BIN,
      "keys",
      "list",
      "--database-url",
      `sqlite:${join(dir, "store-only.db")}`,
    ]);
    assert.equal(code, 0);
    assert.deepEqual(
      HEAVY.filter((p) => packages.has(p)),
      [],
    );
  });

  test("the check sees them when a command's work loads them", () => {
    // A Parquet export loads Arrow as it writes; a PostgreSQL URL loads node-pg as it opens.
    const parquet = packagesLoaded([
      BIN,
      "export",
      "--out",
      "-",
      "--format",
      "parquet",
      "--database-url",
      `sqlite:${join(dir, "help.db")}`,
    ]);
    assert.equal(parquet.code, 0);
    assert.ok(parquet.packages.has("apache-arrow"), [...parquet.packages].join(", "));
    const postgres = packagesLoaded([BIN, "keys", "list", "--database-url", "postgres://127.0.0.1:1/none"]);
    assert.ok(postgres.packages.has("pg"), [...postgres.packages].join(", "));
  });
});
