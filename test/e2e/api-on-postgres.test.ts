import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { dropRunDatabases, postgresTestUrl, TEMPLATE_RUN_VARIABLE } from "../helpers/postgres.ts";

/** Every test file that talks to the store through makeTestApp/openTestStore (the collector too). */
const API_TEST_FILES = [
  "archive/archive.test.ts",
  "http/auth-and-errors.test.ts",
  "http/routes/backtest.test.ts",
  "http/routes/backtest-replay.test.ts",
  "http/routes/backtest-runs.test.ts",
  "http/routes/backtest-exports.test.ts",
  "http/api-key-header.test.ts",
  "e2e/polyhistorical.test.ts",
  "record/polymarket/collector.test.ts",
  "http/routes/exchange.test.ts",
  "e2e/hostile-input.test.ts",
  "http/metering.test.ts",
  "http/routes/markets.test.ts",
  "http/routes/ops.test.ts",
  "http/page-cache.test.ts",
  "access/plans.test.ts",
  "http/routes/snapshots.test.ts",
  "http/routes/events.test.ts",
  "http/routes/book.test.ts",
  "http/routes/coverage.test.ts",
  "http/routes/replay.test.ts",
];

/** The run's name for its seeded template databases (test/helpers/postgres.ts), dropped after it. */
const RUN = randomBytes(4).toString("hex");

/** This environment for a test run of its own: NODE_TEST_CONTEXT would make it report to ours. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    UPDOWN_TEST_STORE: "postgres",
    [TEMPLATE_RUN_VARIABLE]: RUN,
  };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

// The same API tests, run again with PostgreSQL under the app (DESIGN 1: same code, same tests on
// both). Runs when DATABASE_URL names a PostgreSQL server; fails, never skips, if it is unreachable.
test(
  "the API test files pass with PostgreSQL as the store",
  { skip: postgresTestUrl() ? false : "DATABASE_URL is not postgres", timeout: 600_000 },
  async (t) => {
    t.after(() => dropRunDatabases(postgresTestUrl()!, RUN));
    const run = spawnSync(
      process.execPath,
      [
        "--import",
        pathToFileURL(join(import.meta.dirname, "..", "helpers", "compile-cache.mjs")).href,
        "--test",
        "--test-concurrency=2",
        "--test-reporter=spec",
        ...API_TEST_FILES.map((f) => join(import.meta.dirname, "..", f)),
      ],
      { env: childEnv(), encoding: "utf8" },
    );
    const summary = run.stdout
      .split("\n")
      .filter((line) => /^ℹ (tests|pass|fail|cancelled|skipped) /.test(line));
    assert.equal(
      run.status,
      0,
      `API tests over PostgreSQL failed:\n${run.stdout.slice(-20_000)}\n${run.stderr}`,
    );
    assert.ok(
      summary.some((line) => /^ℹ pass [1-9]/.test(line)),
      summary.join("\n"),
    );
    assert.ok(summary.includes("ℹ fail 0"), summary.join("\n"));
  },
);
