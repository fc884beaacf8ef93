// Preloaded into every test file's process (package.json's `test`): the modules each file imports are
// stripped of types and compiled once for the whole run, not once per file.
import { enableCompileCache } from "node:module";

enableCompileCache();
