import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import type { Command } from "../../src/cli/command.ts";
import { loadCommands } from "../../src/cli/main.ts";
import { ConfigError, DEFAULT_CONFIG, loadConfig } from "../../src/config.ts";
import { type Option, type OptionName, OPTIONS, ruleOf, shownDefault } from "../../src/config/options.ts";
import { readOptions } from "../../src/config/read.ts";
import { ROOT, BIN } from "../helpers/paths.ts";

/** Every command, as `updown --help` lists them (loaded before the first test, not at the top level, so that the file can share a process: test/run.ts). */
let COMMANDS: Command[] = [];
before(async () => {
  COMMANDS = await loadCommands();
});

describe("configuration from the environment (docs/configuration.md)", () => {
  test("an empty environment gives the documented defaults", () => {
    assert.deepEqual(loadConfig({}), DEFAULT_CONFIG);
    assert.deepEqual(
      [DEFAULT_CONFIG.port, DEFAULT_CONFIG.host, DEFAULT_CONFIG.databaseUrl, DEFAULT_CONFIG.redisUrl],
      [8080, "127.0.0.1", "sqlite:./data/updown.db", null],
    );
    assert.deepEqual(
      [DEFAULT_CONFIG.authFailuresPerMinute, DEFAULT_CONFIG.trustProxy, DEFAULT_CONFIG.metricsToken],
      [30, false, null],
    );
    assert.deepEqual(DEFAULT_CONFIG.binance, {
      urls: {
        spotRest: "https://api.binance.com",
        spotWs: "wss://stream.binance.com:9443",
        futuresRest: "https://fapi.binance.com",
        futuresWs: "wss://fstream.binance.com",
      },
      weightLimits: { spot: 6000, futures: 2400 },
    });
  });

  test("every variable is read, and flags win over it", () => {
    const config = loadConfig(
      {
        PORT: "9000",
        REDIS_URL: "redis://127.0.0.1:6380",
        PLANS_FILE: "/etc/updown/plans.json",
        AUTH_FAILURES_PER_MINUTE: "5",
        TRUST_PROXY: "10.0.0.0/8,127.0.0.1",
        METRICS_TOKEN: "t0ken",
        PAGE_CACHE_MB: "0",
        SEED_DEMO: "false",
        SNAPSHOT_INTERVAL_MS: "500",
        POLYMARKET_GAMMA_URL: "http://127.0.0.1:1/gamma",
        POLYMARKET_CLOB_WS_URL: "ws://127.0.0.1:1/ws/market",
        POLYMARKET_RTDS_URL: "ws://127.0.0.1:1/rtds",
        BINANCE_SPOT_WEIGHT_LIMIT: "100",
        BINANCE_FUTURES_WEIGHT_LIMIT: "50",
      },
      ["--port", "9001"],
    );
    assert.equal(config.port, 9001);
    assert.equal(config.redisUrl, "redis://127.0.0.1:6380");
    assert.equal(config.plansFile, "/etc/updown/plans.json");
    assert.equal(config.authFailuresPerMinute, 5);
    assert.equal(config.trustProxy, "10.0.0.0/8,127.0.0.1");
    assert.equal(config.metricsToken, "t0ken");
    assert.equal(config.pageCacheBytes, 0);
    assert.equal(config.seedDemo, false);
    assert.equal(config.snapshotIntervalMs, 500);
    assert.deepEqual(config.polymarket, {
      gammaUrl: "http://127.0.0.1:1/gamma",
      clobWsUrl: "ws://127.0.0.1:1/ws/market",
      rtdsUrl: "ws://127.0.0.1:1/rtds",
    });
    assert.deepEqual(config.binance.weightLimits, { spot: 100, futures: 50 });
    assert.equal(loadConfig({ TRUST_PROXY: "2" }).trustProxy, 2);
    assert.equal(loadConfig({ TRUST_PROXY: "uniquelocal,::1" }).trustProxy, "uniquelocal,::1");
    assert.equal(loadConfig({ TRUST_PROXY: "false" }).trustProxy, false);
    assert.equal(
      loadConfig({ PUBLIC_BASE_URL: "https://api.example.com/" }).publicBaseUrl,
      "https://api.example.com",
    );
    assert.equal(loadConfig({}).publicBaseUrl, null);
    assert.equal(loadConfig({ SEED_DEMO: "0" }).seedDemo, false);
    assert.equal(loadConfig({ SEED_DEMO: "1" }, ["--no-seed"]).seedDemo, false);
    assert.equal(loadConfig({}, ["--page-cache-mb", "2"]).pageCacheBytes, 2 * 1024 * 1024);
  });

  test("TRUST_PROXY=true, which believed any client's X-Forwarded-For, stops the server naming the forms to use", () => {
    assert.throws(
      () => loadConfig({ TRUST_PROXY: "true" }),
      /TRUST_PROXY \(--trust-proxy\) no longer takes "true" .*addresses or CIDR ranges \(e\.g\. 10\.0\.0\.0\/8\).*number of proxies/,
    );
    for (const bad of ["0", "17", "everything", "10.0.0.0/8,*"]) {
      assert.throws(
        () => loadConfig({ TRUST_PROXY: bad }),
        /TRUST_PROXY \(--trust-proxy\) must be false, a number of proxy hops/,
      );
    }
    assert.throws(() => loadConfig({ PUBLIC_BASE_URL: "javascript://x" }), /PUBLIC_BASE_URL/);
  });

  test("a Binance address comes from its variable, and its flag wins over it; trailing slashes go", () => {
    const env = { BINANCE_SPOT_REST_URL: "http://127.0.0.1:1/", BINANCE_FUTURES_WS_URL: "ws://127.0.0.1:2" };
    assert.deepEqual(loadConfig(env).binance.urls, {
      spotRest: "http://127.0.0.1:1",
      spotWs: "wss://stream.binance.com:9443",
      futuresRest: "https://fapi.binance.com",
      futuresWs: "ws://127.0.0.1:2",
    });
    const flagged = loadConfig(env, ["--binance-spot-rest-url", "http://127.0.0.1:3//"]);
    assert.equal(flagged.binance.urls.spotRest, "http://127.0.0.1:3");
    assert.equal(flagged.binance.urls.futuresWs, "ws://127.0.0.1:2");
  });

  test("an out-of-range number is a ConfigError naming the variable, its flag and the rule", () => {
    for (const [name, flag, value] of [
      ["PORT", "--port", "70000"],
      ["AUTH_FAILURES_PER_MINUTE", "--auth-failures-per-minute", "0"],
      ["PAGE_CACHE_MB", "--page-cache-mb", "lots"],
      ["SNAPSHOT_INTERVAL_MS", "--snapshot-interval-ms", "50"],
      ["BINANCE_SPOT_WEIGHT_LIMIT", "--binance-spot-weight-limit", "0"],
    ]) {
      const expected = (err: Error) =>
        err instanceof ConfigError &&
        err.message.startsWith(`${name} (${flag}) must be `) &&
        /integer/.test(err.message) &&
        err.message.endsWith(`got "${value}"`);
      assert.throws(() => loadConfig({ [name]: value }), expected);
      assert.throws(() => loadConfig({}, [flag, value]), expected);
    }
  });

  test("a malformed address or word is refused with its rule, never echoing more than a URL's scheme", () => {
    const cases: [Record<string, string>, RegExp][] = [
      [
        { DATABASE_URL: "mysql://u:secret@h/db" },
        /^DATABASE_URL \(--database-url\) must be .*sqlite:.*got "mysql:"$/,
      ],
      [{ REDIS_URL: "http://u:secret@h" }, /^REDIS_URL \(--redis-url\) must be .*redis:\/\/.*got "http:"$/],
      [
        { POLYMARKET_CLOB_WS_URL: "https://x" },
        /^POLYMARKET_CLOB_WS_URL .* must be a URL starting with wss:\/\/ or ws:\/\//,
      ],
      [{ LOG_LEVEL: "loud" }, /^LOG_LEVEL \(--log-level\) must be one of fatal, .*got "loud"$/],
      [{ SEED_DEMO: "maybe" }, /^SEED_DEMO \(--no-seed\) must be 1, true/],
      [{ DEMO_COUNTS: "7m=3" }, /^DEMO_COUNTS \(--counts\) must be TYPE=N pairs/],
    ];
    for (const [env, message] of cases) {
      assert.throws(
        () => loadConfig(env),
        (err: Error) =>
          err instanceof ConfigError && message.test(err.message) && !err.message.includes("secret"),
        JSON.stringify(env),
      );
    }
  });

  test("every command's options read from nothing give their defaults (no flag taken twice)", () => {
    for (const command of COMMANDS) {
      const { values } = readOptions(command.options, [], {});
      for (const name of command.options) assert.deepEqual(values[name], OPTIONS[name].default, name);
    }
  });
});

/** The cells of docs/configuration.md's option tables, one array a row. */
function documentedRows(): string[][] {
  const doc = readFileSync(join(ROOT, "docs", "configuration.md"), "utf8");
  return doc
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) =>
      line
        .slice(1, -1)
        .split(" | ")
        .map((cell) => cell.trim()),
    );
}

const code = (items: readonly string[]) => items.map((item) => `\`${item}\``).join(", ");

describe("docs/configuration.md", () => {
  test("lists every option with its variable, flags, commands, default and rule", () => {
    const rows = documentedRows();
    for (const [name, spec] of Object.entries(OPTIONS) as [OptionName, Option<unknown>][]) {
      const commands = COMMANDS.filter((c) => c.options.includes(name)).map((c) => c.name);
      const shown = shownDefault(spec);
      const expected = [
        code(spec.flags),
        code(commands),
        spec.default === null ? shown : `\`${shown}\``,
        ruleOf(spec).replaceAll("|", "\\|"),
      ];
      if (spec.env) expected.unshift(`\`${spec.env}\``);
      // A variable's row is found by variable and flags; a flag's by flags and commands, since two options
      // of different commands may share a flag (copy's --from and backfill's).
      const row = rows.find((r) => r[0] === expected[0] && r[1] === expected[1]);
      assert.ok(row, `${name} is missing; its row starts | ${expected.join(" | ")} |`);
      assert.deepEqual(row.slice(0, expected.length), expected, name);
    }
    assert.equal(rows.length, Object.keys(OPTIONS).length, "every documented option is in the table");
  });
});

describe("one error for a setting, whether it comes from a variable or a flag", () => {
  const updown = (args: string[], env: Record<string, string> = {}) => {
    const res = spawnSync(process.execPath, [BIN, ...args], {
      env: { ...process.env, DATABASE_URL: "sqlite::memory:", SEED_DEMO: "0", ...env },
      encoding: "utf8",
    });
    return { code: res.status, stdout: res.stdout, stderr: res.stderr };
  };

  test("updown serve --port abc and PORT=abc updown serve: the same line, exit status 2", () => {
    const byFlag = updown(["serve", "--port", "abc"]);
    const byEnv = updown(["serve"], { PORT: "abc" });
    assert.equal(byFlag.stderr, 'error: PORT (--port) must be an integer from 0 to 65535, got "abc"\n');
    assert.equal(byEnv.stderr, byFlag.stderr);
    assert.deepEqual([byFlag.code, byEnv.code], [2, 2]);
    assert.deepEqual([byFlag.stdout, byEnv.stdout], ["", ""]);
  });

  test("every command's --help exits 0 and lists each of its flags and variables", () => {
    for (const command of COMMANDS) {
      const res = updown([command.name, "--help"]);
      assert.equal(res.code, 0, command.name);
      assert.equal(res.stderr, "");
      for (const name of command.options) {
        const option: Option<unknown> = OPTIONS[name];
        for (const word of [...option.flags, option.env ?? ""]) assert.ok(res.stdout.includes(word), word);
      }
    }
  });
});
