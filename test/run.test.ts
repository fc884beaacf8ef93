import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "./helpers/paths.ts";

/** `npm test` itself (test/run.ts) over the files given, with `env` over this process's environment. */
function npmTest(files: string[], env: Record<string, string>) {
  // Node's runner tells the processes it starts that they are test files (NODE_TEST_CONTEXT): run()
  // in such a process runs no file at all, and says that nothing failed.
  const { NODE_TEST_CONTEXT: _, ...outside } = process.env;
  return spawnSync(process.execPath, [join(ROOT, "test", "run.ts"), ...files], {
    cwd: ROOT,
    env: { ...outside, ...env },
    encoding: "utf8",
  });
}

/** The count of tests run, from the report's summary. */
const testsRun = (stdout: string) => Number(/^ℹ tests (\d+)$/m.exec(stdout)?.[1]);

test("TEST_CONCURRENCY sets the files at once; six by default", () => {
  const two = npmTest(["test/log.test.ts"], { TEST_CONCURRENCY: "2" });
  assert.equal(two.status, 0, two.stderr);
  assert.match(two.stderr, /^npm test: 1 file, 2 at a time, the longest first\n/);
  assert.match(two.stdout, /ℹ fail 0/);
  assert.ok(testsRun(two.stdout) > 0, two.stdout);
  const fallback = npmTest(["test/log.test.ts"], { TEST_CONCURRENCY: "" });
  assert.match(fallback.stderr, /^npm test: 1 file, 6 at a time/);
});

test("short files share a process, TEST_FILES_PER_PROCESS to one; a file that sets something for the whole process keeps its own", () => {
  const files = ["plain-a", "plain-b", "root-hook", "sets-env", "top-level-await"].map(
    (f) => `test/fixtures/runner/${f}.ts`,
  );
  const shared = npmTest(files, { TEST_FILES_PER_PROCESS: "", TEST_CONCURRENCY: "" });
  assert.equal(shared.status, 0, shared.stderr);
  assert.match(shared.stderr, /^npm test: 5 files in 4 processes, 6 at a time/);
  assert.equal(testsRun(shared.stdout), 5, shared.stdout);
  assert.match(shared.stdout, /ℹ fail 0/);
  assert.match(shared.stdout, /^(?: +[\d.]+){4} {2}test\/fixtures\/runner\/plain-a\.ts and 1 more$/m);
  assert.match(shared.stdout, /all 5 files in 4 processes; the run's wall time/);
  const alone = npmTest(files, { TEST_FILES_PER_PROCESS: "1", TEST_CONCURRENCY: "" });
  assert.equal(alone.status, 0, alone.stderr);
  assert.match(alone.stderr, /^npm test: 5 files, 6 at a time/);
  assert.equal(testsRun(alone.stdout), 5, alone.stdout);
  assert.match(alone.stdout, /all 5 files in 5 processes/);
});

test("a test failing in a shared process fails the run, and the report names its own file and line", () => {
  const res = npmTest(["test/fixtures/runner/plain-a.ts", "test/fixtures/runner/fails.ts"], {
    TEST_FILES_PER_PROCESS: "",
  });
  assert.equal(res.status, 1, res.stderr);
  assert.match(res.stderr, /^npm test: 2 files in 1 process,/);
  assert.match(res.stdout, /^test at test\/fixtures\/runner\/fails\.ts:4:1$/m);
  assert.match(res.stdout, /ℹ pass 1\nℹ fail 1/);
});

test("a TEST_CONCURRENCY or TEST_FILES_PER_PROCESS that is not a whole number of 1 or more: one line, exit 2, nothing run", () => {
  for (const [name, what] of [
    ["TEST_CONCURRENCY", "files at once"],
    ["TEST_FILES_PER_PROCESS", "files per process"],
  ]) {
    for (const value of ["0", "-1", "1.5", "abc"]) {
      const res = npmTest(["test/log.test.ts"], { [name]: value });
      assert.equal(res.status, 2, value);
      assert.equal(res.stderr, `npm test: ${name}=${value}: a whole number of ${what}, 1 or more\n`);
      assert.equal(res.stdout, "");
    }
  }
});
