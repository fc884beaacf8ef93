import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { PYTHON, pythonMissing, runPython, startPythonHarness, type PythonHarness } from "./harness.ts";

// The Python client (python/updown) against a running server: its unittest suite (python/tests) runs
// in python3 over real HTTP, with the README's examples and the example script among its tests. In
// CI (CI=true) a missing python3 or pandas fails here instead of skipping.

const missing = pythonMissing();
if (missing !== null && process.env.CI === "true")
  throw new Error(`the Python client's tests need ${missing}`);

let h: PythonHarness;
before(async () => {
  if (missing === null) h = await startPythonHarness();
});
after(() => h?.close());

test(
  "python/tests: the client's unittest suite passes against the server",
  { skip: missing ?? false },
  async () => {
    const { code, output } = await runPython(h, [
      "-m",
      "unittest",
      "discover",
      "-s",
      "tests",
      "-t",
      ".",
      "-v",
    ]);
    assert.equal(code, 0, `${PYTHON} -m unittest failed:\n${output}`);
    assert.match(output, /^OK/m, output);
    assert.doesNotMatch(output, /skipped/i, "no Python test skips");
  },
);
