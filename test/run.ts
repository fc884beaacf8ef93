/**
 * `npm test`: node's test runner over every test file, six at a time (`TEST_CONCURRENCY` sets another
 * number), the longest first.
 *
 * `node --test` sorts the files it finds by path, so the longest files started minutes into the run,
 * which could not end before they did. Started first, the long files run beside the many short ones,
 * which fill the gaps. `npm test -- <files or globs>` runs only those, in the same order. At the end,
 * a table of the files that took the most CPU (test/helpers/file-usage.mjs measures each): on two
 * cores the run is bound by the CPU, so that is where to look to make it shorter.
 */
import { globSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { run } from "node:test";
import { spec } from "node:test/reporters";
import { ROOT, SEEDED_IMAGES_VARIABLE, USAGE_VARIABLE } from "./helpers/paths.ts";

/**
 * Files at once (`TEST_CONCURRENCY` sets another number). Six, measured both ways on two cores on
 * 2026-12-02 (docs/decisions.md): fewer files at once spend less CPU, which shortened the plain suite
 * (three at once 6 min 5 s and 6 min 26 s from a fresh clone, six 6 min 38 s and 7 min 44 s), but
 * inside `.ci/run`, where many files wait on PostgreSQL, Redis, a browser or Python, three at once
 * kept the test processes on 1.4 of the two cores and took 11 min 27 s, where six have taken 8 min 21 s
 * to 9 min 36 s.
 */
const CONCURRENCY = concurrency(process.env.TEST_CONCURRENCY);

/**
 * The longest files, longest first: by their CPU in a full run (the table at the end; on two cores the
 * run is bound by the CPU, so a file's CPU is its length; its wall time says more about what ran
 * beside it), the API tests over PostgreSQL a little earlier, since they wait on the database too.
 * A file missing from the tree fails the run, so that this list stays true when tests move.
 */
const LONGEST_FIRST = [
  "test/cli/commands/import-pmxt.test.ts",
  "test/store/copy.test.ts",
  "test/e2e/api-on-postgres/backtests.test.ts",
  "test/http/routes/export-memory.test.ts",
  "test/e2e/fuzz.test.ts",
  "test/python/client.test.ts",
  "test/backtest/jobs/jobs.test.ts",
  "test/e2e/api-on-postgres/access-and-errors.test.ts",
  "test/e2e/api-on-postgres/market-data.test.ts",
  "test/client/package.test.ts",
  "test/cli/first-start.test.ts",
  "test/demo/seed.test.ts",
  "test/cli/commands/backtest.test.ts",
  "test/cli/main.test.ts",
  "test/e2e/first-steps.test.ts",
  "test/e2e/workbench.test.ts",
  "test/http/web-page.test.ts",
  "test/cli/files.test.ts",
  "test/e2e/replicas.test.ts",
  "test/http/routes/backtest.test.ts",
  "test/mcp/mcp.test.ts",
  "test/cli/commands/serve.test.ts",
  "test/store/postgres-store.test.ts",
  "test/store/sqlite-store.test.ts",
  "test/cli/commands/collect.test.ts",
];

/** How many files the closing table lists. */
const TABLE_ROWS = 20;

/** What test/helpers/file-usage.mjs writes for a file. */
interface FileUsage {
  file: string;
  /** When the file's process started (milliseconds since the epoch). */
  startedAt: number;
  wallSeconds: number;
  cpuSeconds: number;
  childrenCpuSeconds: number;
}

/** Stops the run before it starts, with why. */
function refuse(why: string): never {
  process.stderr.write(`npm test: ${why}\n`);
  process.exit(2);
}

function concurrency(asked: string | undefined): number {
  if (asked === undefined || asked === "") return 6;
  const n = Number(asked);
  if (!Number.isInteger(n) || n < 1)
    refuse(`TEST_CONCURRENCY=${asked}: a whole number of files at once, 1 or more`);
  return n;
}

const patterns = process.argv.slice(2);
const option = patterns.find((p) => p.startsWith("-"));
if (option !== undefined) {
  refuse(
    `${option}: npm test takes files or globs; for node's options run npx node --test <files> ${option}`,
  );
}
const found = globSync(patterns.length > 0 ? patterns : ["test/**/*.test.ts"], { cwd: ROOT })
  .map((f) => relative(ROOT, resolve(ROOT, f)))
  .sort();
if (found.length === 0) refuse(`no test file matches ${patterns.join(" ")}`);
const missing = LONGEST_FIRST.filter((f) => patterns.length === 0 && !found.includes(f));
if (missing.length > 0) refuse(`test/run.ts names test files that are not there: ${missing.join(", ")}`);
const rank = (f: string) => {
  const i = LONGEST_FIRST.indexOf(f);
  return i === -1 ? LONGEST_FIRST.length : i;
};
// Array.prototype.sort is stable: the files not listed keep their order by path.
const files = found.sort((a, b) => rank(a) - rank(b)).map((f) => join(ROOT, f));

// Node reports the files in the order they were given, each once it has ended: the first is the longest.
process.stderr.write(
  `npm test: ${files.length} file${files.length === 1 ? "" : "s"}, ${CONCURRENCY} at a time, the longest first` +
    (patterns.length === 0
      ? `; node reports them in that order, so nothing shows until ${relative(ROOT, files[0])} has ended (minutes)\n`
      : "\n"),
);

// makeTestApp's demo data, seeded by the first process that needs it, read by the others.
const images = mkdtempSync(join(tmpdir(), "updown-test-run-"));
process.env[SEEDED_IMAGES_VARIABLE] = images;
// What each file cost, left there by test/helpers/file-usage.mjs as its process exits.
const usage = mkdtempSync(join(tmpdir(), "updown-test-usage-"));
process.env[USAGE_VARIABLE] = usage;
process.on("exit", () => {
  rmSync(images, { recursive: true, force: true });
  rmSync(usage, { recursive: true, force: true });
});
// Interrupted (^C reaches the test processes too), the folder goes all the same.
process.once("SIGINT", () => process.exit(130));
process.once("SIGTERM", () => process.exit(143));

run({
  files,
  concurrency: CONCURRENCY,
  cwd: ROOT,
  // The modules each file imports are stripped of types and compiled once for the run, not once per file.
  execArgv: [
    "--import",
    join(ROOT, "test", "helpers", "compile-cache.mjs"),
    "--import",
    join(ROOT, "test", "helpers", "file-usage.mjs"),
  ],
})
  .on("test:fail", (failed) => {
    // As node --test: a failing todo test does not fail the run.
    if (!failed.todo) process.exitCode = 1;
  })
  .compose(spec)
  .on("end", () => process.stdout.write(usageTable()))
  .pipe(process.stdout, { end: false });

/** The files that took the most CPU, with the run's totals: where a maintainer looks to make it shorter. */
function usageTable(): string {
  const rows = readdirSync(usage)
    .map((f) => JSON.parse(readFileSync(join(usage, f), "utf8")) as FileUsage)
    .sort((a, b) => b.cpuSeconds - a.cpuSeconds);
  const total = rows.reduce((sum, r) => sum + r.cpuSeconds, 0);
  const children = rows.reduce((sum, r) => sum + r.childrenCpuSeconds, 0);
  const seconds = (s: number) => s.toFixed(1).padStart(7);
  const lines = rows
    .slice(0, TABLE_ROWS)
    .map(
      (r) =>
        `${seconds(r.cpuSeconds)} ${seconds(r.childrenCpuSeconds)} ${seconds((r.startedAt - performance.timeOrigin) / 1000)} ${seconds(r.wallSeconds)}  ${relative(ROOT, r.file)}`,
    );
  return [
    "",
    `npm test: the ${Math.min(TABLE_ROWS, rows.length)} files of most CPU, in seconds (CPU: user and system time of the file's process and of the processes it started, not of the database servers; started: after the run's start; wall: until the file's process exited)`,
    "    cpu  of which  started    wall  file",
    "         children    after",
    ...lines,
    `${seconds(total)} ${seconds(children)}         ${seconds(performance.now() / 1000)}  all ${rows.length} files; the run's wall time`,
    "",
  ].join("\n");
}
