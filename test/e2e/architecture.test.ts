import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { test } from "node:test";
import { ROOT } from "../helpers/paths.ts";

/**
 * The import rules ESLint cannot see: no module of src/ reaches itself again through imports that
 * exist at run time (type-only imports are erased and may go either way).
 */

function runtimeImports(file: string): string[] {
  const text = readFileSync(resolve(ROOT, file), "utf8");
  const deps: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s+(?!type\b)([^;]*?)\s+from\s+"(\.[^"]+)"/gms)) {
    const bindings = m[1].trim();
    const named = /^\{[^}]*\}$/.test(bindings)
      ? bindings
          .replace(/[{}\s]/g, "")
          .split(",")
          .filter(Boolean)
      : [];
    if (named.length > 0 && named.every((n) => n.startsWith("type"))) continue;
    deps.push(relative(ROOT, resolve(ROOT, dirname(file), m[2])));
  }
  return deps;
}

function importCycles(files: string[]): string[] {
  const graph = new Map(files.map((f) => [f, runtimeImports(f)]));
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const cycles: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    path.push(file);
    for (const dep of graph.get(file) ?? []) {
      if (state.get(dep) === "open") cycles.push([...path.slice(path.indexOf(dep)), dep].join(" -> "));
      else if (!state.has(dep)) visit(dep);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return cycles;
}

test("src has no import cycles at run time", () => {
  const files = execFileSync("git", ["ls-files", "src"], { cwd: ROOT, encoding: "utf8" })
    .split("\n")
    .filter((f) => f.endsWith(".ts"));
  assert.ok(files.length > 50);
  assert.deepEqual(importCycles(files), []);
});

test("the cycle finder finds a cycle", () => {
  assert.deepEqual(importCycles(["a", "b", "c"].map((n) => `test/fixtures/import-cycle/${n}.ts`)), [
    "test/fixtures/import-cycle/a.ts -> test/fixtures/import-cycle/b.ts -> test/fixtures/import-cycle/a.ts",
  ]);
});
