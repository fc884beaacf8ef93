/**
 * `npm test`: node's test runner over every test file, six processes at a time (`TEST_CONCURRENCY`
 * sets another number), the longest first, the short files sixteen to a process
 * (`TEST_FILES_PER_PROCESS`).
 *
 * `node --test` sorts the files it finds by path, so the longest files started minutes into the run,
 * which could not end before they did. Started first, the long files run beside the many short ones,
 * which fill the gaps. `npm test -- <files or globs>` runs only those, in the same order. At the end,
 * a table of the processes that took the most CPU (test/helpers/file-usage.mjs measures each): on two
 * cores the run is bound by the CPU, so that is where to look to make it shorter.
 */
import { globSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
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
const CONCURRENCY = wholeNumber("TEST_CONCURRENCY", 6, "files at once");

/**
 * Short files share a process, this many to one (`TEST_FILES_PER_PROCESS`; 1 gives each file its own).
 * A process pays for what every file of it needs before its first test: starting Node, loading the
 * service's modules, compiling the routes' serializers and the API document's validators, and warming
 * up the engine. For a short file that was most of its cost: the fifteen route files of
 * test/http/routes (all but export-memory) took 45 s of CPU in fifteen processes and 13 s in one,
 * the same 138 tests passing (2026-12-02). On two cores the run is bound by the CPU, so that is time.
 * A file that sets something for the whole process keeps one of its own (canShareProcess), as do
 * the long files, which gain nothing.
 */
const FILES_PER_PROCESS = wholeNumber("TEST_FILES_PER_PROCESS", 16, "files per process");

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

/** "1 file", "2 files", "1 process", "2 processes". */
function count(n: number, noun: "file" | "process"): string {
  return `${n} ${noun}${n === 1 ? "" : noun === "file" ? "s" : "es"}`;
}

/** Stops the run before it starts, with why. */
function refuse(why: string): never {
  process.stderr.write(`npm test: ${why}\n`);
  process.exit(2);
}

/** The whole number in the environment variable `name`, 1 or more, or `fallback` when it is unset. */
function wholeNumber(name: string, fallback: number, what: string): number {
  const asked = process.env[name];
  if (asked === undefined || asked === "") return fallback;
  const n = Number(asked);
  if (!Number.isInteger(n) || n < 1) refuse(`${name}=${asked}: a whole number of ${what}, 1 or more`);
  return n;
}

/**
 * Whether the test file whose text is `source` can share a process. In one process, files are modules
 * of one entry, whose tests node runs one after another, with the hooks each file declares at its top
 * level run before the first test and after the last.
 */
function canShareProcess(source: string): boolean {
  // Such a hook at the top level wraps every test of the process, other files' included.
  const aroundEachTest = /^(?:beforeEach|afterEach)\(/m;
  // While a module awaits, the files before it start their tests: a hook the awaiting file declares
  // after that would come too late for the process's first test.
  const topLevelAwait = /^(?:for await\b|await\b|(?:export\s+)?(?:const|let|var)\s[^=;]*=\s*await\b)/m;
  const setsEnvironment = /process\.env(?:\.\w+|\[[^\]]+\])\s*=(?!=)|delete process\.env/;
  return ![aroundEachTest, topLevelAwait, setsEnvironment].some((rule) => rule.test(source));
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
const files = found.sort((a, b) => rank(a) - rank(b));

/**
 * The processes to run, in order: each long file alone; the files that can share a process, in order by
 * path, FILES_PER_PROCESS to one (files of a folder tend to load the same modules, so they go
 * together); the other short files alone, last, where they fill the gaps the others leave at the end.
 */
const long = files.filter((f) => LONGEST_FIRST.includes(f));
const short = files.filter((f) => !LONGEST_FIRST.includes(f));
const canShare = short.filter((f) => canShareProcess(readFileSync(join(ROOT, f), "utf8")));
const processes: string[][] = [
  ...long.map((f) => [f]),
  ...Array.from({ length: Math.ceil(canShare.length / FILES_PER_PROCESS) }, (_, i) =>
    canShare.slice(i * FILES_PER_PROCESS, (i + 1) * FILES_PER_PROCESS),
  ),
  ...short.filter((f) => !canShare.includes(f)).map((f) => [f]),
];

// Node reports the files in the order they were given, each once it has ended: the first is the longest.
process.stderr.write(
  `npm test: ${count(files.length, "file")}` +
    (processes.length < files.length ? ` in ${count(processes.length, "process")}` : "") +
    `, ${CONCURRENCY} at a time, the longest first` +
    (patterns.length === 0
      ? `; node reports them in that order, so nothing shows until ${files[0]} has ended (minutes)\n`
      : "\n"),
);

// makeTestApp's demo data, seeded by the first process that needs it, read by the others.
const images = mkdtempSync(join(tmpdir(), "updown-test-run-"));
process.env[SEEDED_IMAGES_VARIABLE] = images;
// What each file cost, left there by test/helpers/file-usage.mjs as its process exits.
const usage = mkdtempSync(join(tmpdir(), "updown-test-usage-"));
process.env[USAGE_VARIABLE] = usage;
// The entries of the shared processes: a module importing the files, in order.
const entries = mkdtempSync(join(tmpdir(), "updown-test-shared-"));
process.on("exit", () => {
  for (const folder of [images, usage, entries]) rmSync(folder, { recursive: true, force: true });
});
// Interrupted (^C reaches the test processes too), the folder goes all the same.
process.once("SIGINT", () => process.exit(130));
process.once("SIGTERM", () => process.exit(143));

/** What the table at the end calls each process, by the file node runs. */
const processNames = new Map<string, string>();
const entryFiles = processes.map((group, i) => {
  if (group.length === 1) return join(ROOT, group[0]);
  const entry = join(entries, `shared-${i + 1}.test.mjs`);
  writeFileSync(
    entry,
    group.map((f) => `import ${JSON.stringify(pathToFileURL(join(ROOT, f)).href)};\n`).join(""),
  );
  processNames.set(entry, `${group[0]} and ${group.length - 1} more`);
  return entry;
});

run({
  files: entryFiles,
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

/** The processes that took the most CPU, with the run's totals: where a maintainer looks to make it shorter. */
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
        `${seconds(r.cpuSeconds)} ${seconds(r.childrenCpuSeconds)} ${seconds((r.startedAt - performance.timeOrigin) / 1000)} ${seconds(r.wallSeconds)}  ${processNames.get(r.file) ?? relative(ROOT, r.file)}`,
    );
  return [
    "",
    `npm test: the ${count(Math.min(TABLE_ROWS, rows.length), "process")} of most CPU, in seconds (CPU: user and system time of the process and of the processes it started, not of the database servers; started: after the run's start; wall: until the process exited)`,
    "    cpu  of which  started    wall  files",
    "         children    after",
    ...lines,
    `${seconds(total)} ${seconds(children)}         ${seconds(performance.now() / 1000)}  all ${count(files.length, "file")} in ${count(rows.length, "process")}; the run's wall time`,
    "",
  ].join("\n");
}
