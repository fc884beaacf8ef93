import { setFlagsFromString } from "node:v8";

/**
 * Turns V8's Maglev tier off for the whole process, worker threads included. Maglev (Node 24.21, and
 * still 25.9 and 26.10) can give two objects made by one object literal one box for a double field:
 * after a deoptimization at the literal's first store, each object the same optimized code makes gets
 * the box kept in that code, so making the second rewrites the first one's number. It corrupted the
 * demo's prices under load (docs/decisions.md, "A V8 bug in the demo's volatility"), and nothing
 * confines it to the demo. A market-data service does not trade correct numbers for a warm-up tier:
 * measured, pages are served as fast without it (TurboFan does the steady work) and the demo seed
 * takes about 4 % longer. Every entry point imports this first, before the code it protects runs hot:
 * bin/updown.mjs, each test process (test/helpers/compile-cache.mjs) and the bench.
 */
setFlagsFromString("--no-maglev");
