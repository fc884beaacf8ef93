import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { dropRunDatabases, postgresTestUrl, TEMPLATE_RUN_VARIABLE } from "./postgres.ts";

/**
 * Every test file that talks to the store through makeTestApp/openTestStore (the collector too), in
 * three parts of about equal CPU (about 15 s each), each run by a test file of
 * test/e2e/api-on-postgres/. In one file they were the longest file of `npm test` by far (about 290 s
 * of its 4 to 5 minutes, mostly waiting for the CPU): the run could not end before it did. In three,
 * the runner starts them first and they end with the rest.
 */
const API_TEST_FILES = {
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

/**
 * The same API tests, run again with PostgreSQL under the app (DESIGN 1: same code, same tests on
 * both): one part of API_TEST_FILES, imported into this test file's process with the store switched
 * to PostgreSQL (UPDOWN_TEST_STORE), so that `npm test` reports each of their tests and schedules the
 * parts beside the other files. The files were once run in a `node --test` of their own, one process
 * each: loading them again per file cost about a third of their CPU. Runs when DATABASE_URL names a
 * PostgreSQL server; fails, never skips, if it is unreachable.
 */
export async function testOnPostgres(part: keyof typeof API_TEST_FILES): Promise<void> {
  const url = postgresTestUrl();
  if (url === null) {
    test(`the API test files (${part}) with PostgreSQL as the store`, {
      skip: "DATABASE_URL is not postgres",
    });
    return;
  }
  process.env.UPDOWN_TEST_STORE = "postgres";
  // The name of this process's seeded template databases (test/helpers/postgres.ts), dropped after it.
  const run = randomBytes(4).toString("hex");
  process.env[TEMPLATE_RUN_VARIABLE] = run;
  // In order, so that the files' root hooks (their apps made before their tests) are all in place.
  for (const file of API_TEST_FILES[part])
    await import(pathToFileURL(join(import.meta.dirname, "..", file)).href);
  // Registered last, so run last: after every file's own `after` has closed its apps and stores.
  after(() => dropRunDatabases(url, run));
}
