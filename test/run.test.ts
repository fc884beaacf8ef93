import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "./helpers/paths.ts";

/** `npm test` itself (test/run.ts) over the files given, with `env` over this process's environment. */
function npmTest(files: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [join(ROOT, "test", "run.ts"), ...files], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
}

test("TEST_CONCURRENCY sets the files at once; six by default", () => {
  const two = npmTest(["test/log.test.ts"], { TEST_CONCURRENCY: "2" });
  assert.equal(two.status, 0, two.stderr);
  assert.match(two.stderr, /^npm test: 1 file, 2 at a time, the longest first\n/);
  assert.match(two.stdout, /ℹ fail 0/);
  const fallback = npmTest(["test/log.test.ts"], { TEST_CONCURRENCY: "" });
  assert.match(fallback.stderr, /^npm test: 1 file, 6 at a time/);
});

test("a TEST_CONCURRENCY that is not a whole number of 1 or more: one line, exit 2, nothing run", () => {
  for (const value of ["0", "-1", "1.5", "abc"]) {
    const res = npmTest(["test/log.test.ts"], { TEST_CONCURRENCY: value });
    assert.equal(res.status, 2, value);
    assert.equal(
      res.stderr,
      `npm test: TEST_CONCURRENCY=${value}: a whole number of files at once, 1 or more\n`,
    );
    assert.equal(res.stdout, "");
  }
});
