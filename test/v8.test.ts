import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const V8_FLAGS = fileURLToPath(new URL("../src/v8.ts", import.meta.url));

/**
 * V8's fault, made to happen every time (src/v8.ts tells it): a function whose hot loop is followed by
 * an object literal with a double field. Its first run is interpreted; its second runs inlined in
 * TurboFan code (the literal's boilerplate is made, its stores' feedback left stale); a full GC clears
 * that feedback; then the loop goes on-stack into Maglev code, which deoptimizes at the literal's first
 * store, twice, handing both objects one box for `sigma`. In V8's own test syntax, hence the flags.
 */
const REPRODUCTION = `
function path(coin, sigma, n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.sqrt(i) * sigma;
  return { coin, sigma, s };
}
function once(coin, sigma) { return path(coin, sigma, 1); }
%EnsureFeedbackVectorForFunction(path);
%PrepareFunctionForOptimization(once);
once("a", 0.1);
%OptimizeFunctionOnNextCall(once);
once("b", 0.2);
gc(); gc();
const btc = path("btc", 8.9e-5, 200000);
const sigma = btc.sigma;
path("eth", 1.157e-4, 200000);
console.log(btc.sigma === sigma ? "kept" : "rewritten");
`;

function run(flags: string[]): string {
  return execFileSync(
    process.execPath,
    [
      "--allow-natives-syntax",
      "--expose-gc",
      "--no-concurrent-osr",
      ...flags,
      "--input-type=module",
      "-e",
      REPRODUCTION,
    ],
    { encoding: "utf8" },
  ).trim();
}

describe("the service's V8 flags", () => {
  it("keep an object's double field its own where Maglev would share its box", () => {
    assert.equal(run(["--import", V8_FLAGS]), "kept");
  });

  it("are still needed: without them this Node rewrites the first object's number", () => {
    // When this fails, the Node in use no longer has the fault: src/v8.ts may go (docs/decisions.md).
    assert.equal(run([]), "rewritten", `Node ${process.version} (V8 ${process.versions.v8})`);
  });

  it("are set by every entry point before anything else of the project it imports", () => {
    const entries = [
      "bin/updown.mjs",
      "test/helpers/compile-cache.mjs",
      "bench/run.ts",
      "bench/page-profile.ts",
    ];
    // Node's own modules may come first (enabling the compile cache); of the rest, src/v8.ts, whether
    // imported statically or awaited.
    const imports = /^(?:import\s[^;]*?|await import\()["']([^"']+)["']/gm;
    for (const entry of entries) {
      const source = readFileSync(new URL(`../${entry}`, import.meta.url), "utf8");
      const first = [...source.matchAll(imports)].map((m) => m[1]).find((s) => !s.startsWith("node:"));
      assert.ok(first, entry);
      assert.match(first, /\/src\/v8\.ts$/, `${entry} imports ${first} first`);
    }
  });
});
