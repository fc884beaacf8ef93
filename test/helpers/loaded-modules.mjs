// Loaded with `node --import` before bin/updown.mjs by test/cli/main.test.ts: at exit, writes to
// stderr, after a marker line, every file module the process resolved, one URL a line.
import { writeSync } from "node:fs";
import { registerHooks } from "node:module";

export const MARKER = "-- modules loaded --";
const seen = new Set();
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    if (resolved.url.startsWith("file:")) seen.add(resolved.url);
    return resolved;
  },
});
process.on("exit", () => writeSync(2, `${MARKER}\n${[...seen].join("\n")}\n`));
