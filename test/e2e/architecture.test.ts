import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { test } from "node:test";
import { ROOT } from "../helpers/paths.ts";

/**
 * The boundaries of ARCHITECTURE.md are checked by dependency-cruiser (`.dependency-cruiser.mjs`,
 * `npm run lint:deps`). These tests hold the check itself: it passes on the project, and it fails on a
 * tree that breaks the layering and closes a circle through type-only imports.
 */

const CLI = resolve(ROOT, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs");
const CONFIG = resolve(ROOT, ".dependency-cruiser.mjs");

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: { name: string }[];
}

function cruise(cwd: string, paths: string[]): { violations: Violation[]; modules: number } {
  const run = spawnSync(process.execPath, [CLI, "--config", CONFIG, "--output-type", "json", ...paths], {
    cwd,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  assert.ok(run.stdout, run.stderr);
  const { summary } = JSON.parse(run.stdout) as {
    summary: { violations: Violation[]; totalCruised: number };
  };
  return { violations: summary.violations, modules: summary.totalCruised };
}

test("the project keeps its boundaries and has no import cycle, type imports included", () => {
  const { violations, modules } = cruise(ROOT, ["src", "client", "web", "bench", "scripts", "test"]);
  assert.ok(modules > 300);
  assert.deepEqual(
    violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`),
    [],
  );
});

test("the check refuses an import across the layers and a circle through type-only imports", () => {
  const { violations } = cruise(resolve(ROOT, "test/fixtures/import-cycle"), ["src"]);
  const found = violations.map((v) =>
    v.rule.name === "no-circular"
      ? `no-circular: ${[v.from, ...(v.cycle ?? []).map((c) => c.name)].join(" -> ")}`
      : `${v.rule.name}: ${v.from} -> ${v.to}`,
  );
  assert.deepEqual(found.sort(), [
    "no-circular: src/store/depth.ts -> src/store/level.ts -> src/store/depth.ts",
    "not-in-allowed: src/domain/price.ts -> src/store/depth.ts",
  ]);
});
