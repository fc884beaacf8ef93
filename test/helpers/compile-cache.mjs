// Preloaded into every test file's process (package.json's `test`): the modules each file imports are
// stripped of types and compiled once for the whole run, not once per file. Enabled before the first
// TypeScript module is imported, as bin/updown.mjs does (why: there).
import { enableCompileCache } from "node:module";

enableCompileCache();
// The service's V8 flags (src/v8.ts), so that the tests run the engine as production does.
await import("../../src/v8.ts");
