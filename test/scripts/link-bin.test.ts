import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");

test("npx updown runs the clone's own command: nothing installed into npx's cache, no npm warning", () => {
  const cache = mkdtempSync(join(tmpdir(), "updown-npx-cache-"));
  try {
    // npm's own Node, as a newcomer's shell has it (npm test puts node_modules/.bin first).
    const PATH = (process.env.PATH ?? "")
      .split(delimiter)
      .filter((dir) => !dir.includes("node_modules"))
      .join(delimiter);
    const res = spawnSync("npx", ["updown", "--help"], {
      cwd: ROOT,
      env: { ...process.env, PATH, npm_config_cache: cache },
      encoding: "utf8",
    });
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /^updown: historical Polymarket Up or Down market data\n/);
    assert.equal(res.stderr, "");
    assert.ok(!existsSync(join(cache, "_npx")), "npx installed the project into its cache");
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});
