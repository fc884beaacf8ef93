import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { dropRunDatabases, postgresTestUrl, TEMPLATE_RUN_VARIABLE } from "./postgres.ts";

/**
 * Every test file that talks to the store through makeTestApp/openTestStore (the collector too), in
 * three parts of about equal CPU (measured over PostgreSQL: about 22 s each), each run by a test file
 * of test/e2e/api-on-postgres/. In one file they were the longest file of `npm test` by far (about
 * 290 s of its 4 to 5 minutes, mostly waiting for the CPU): the run could not end before it did. In
 * three, the runner starts them first and they end with the rest.
 */
export const API_TEST_FILES = {
  backtests: [
    "http/routes/backtest.test.ts",
    "http/routes/backtest-replay.test.ts",
    "http/routes/backtest-runs.test.ts",
    "http/routes/backtest-exports.test.ts",
  ],
  "market-data": [
    "archive/archive.test.ts",
    "http/page-cache.test.ts",
    "http/routes/replay.test.ts",
    "http/routes/snapshots.test.ts",
    "http/routes/book.test.ts",
    "http/routes/events.test.ts",
    "http/routes/coverage.test.ts",
    "http/routes/markets.test.ts",
  ],
  "access-and-errors": [
    "http/metering.test.ts",
    "e2e/hostile-input.test.ts",
    "e2e/polyhistorical.test.ts",
    "http/api-key-header.test.ts",
    "http/routes/exchange.test.ts",
    "record/polymarket/collector.test.ts",
    "access/plans.test.ts",
    "http/routes/ops.test.ts",
    "http/auth-and-errors.test.ts",
  ],
} as const;

/** This environment for a test run of its own: NODE_TEST_CONTEXT would make it report to ours. */
function childEnv(run: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    UPDOWN_TEST_STORE: "postgres",
    [TEMPLATE_RUN_VARIABLE]: run,
  };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

/**
 * The same API tests, run again with PostgreSQL under the app (DESIGN 1: same code, same tests on
 * both): one part of API_TEST_FILES. Runs when DATABASE_URL names a PostgreSQL server; fails, never
 * skips, if it is unreachable.
 */
export function testOnPostgres(part: keyof typeof API_TEST_FILES): void {
  // The run's name for its seeded template databases (test/helpers/postgres.ts), dropped after it.
  const run = randomBytes(4).toString("hex");
  test(
    `the API test files (${part}) pass with PostgreSQL as the store`,
    { skip: postgresTestUrl() ? false : "DATABASE_URL is not postgres", timeout: 600_000 },
    async (t) => {
      t.after(() => dropRunDatabases(postgresTestUrl()!, run));
      const result = spawnSync(
        process.execPath,
        [
          "--import",
          pathToFileURL(join(import.meta.dirname, "compile-cache.mjs")).href,
          "--test",
          "--test-concurrency=2",
          "--test-reporter=spec",
          ...API_TEST_FILES[part].map((f) => join(import.meta.dirname, "..", f)),
        ],
        { env: childEnv(run), encoding: "utf8" },
      );
      const summary = result.stdout
        .split("\n")
        .filter((line) => /^ℹ (tests|pass|fail|cancelled|skipped) /.test(line));
      assert.equal(
        result.status,
        0,
        `API tests over PostgreSQL failed:\n${result.stdout.slice(-20_000)}\n${result.stderr}`,
      );
      assert.ok(
        summary.some((line) => /^ℹ pass [1-9]/.test(line)),
        summary.join("\n"),
      );
      assert.ok(summary.includes("ℹ fail 0"), summary.join("\n"));
    },
  );
}
