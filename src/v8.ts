import { setFlagsFromString } from "node:v8";

/**
 * Turns off V8's on-stack replacement into Maglev code, for the whole process (worker threads share
 * the flags). Maglev (Node 24.21, and still 25.9 and 26.10) can give two objects made by one object
 * literal one box for a double field. When Maglev code deoptimizes at the literal's first store, the
 * object gets the box kept in that code, and the next object made through the same code gets it too,
 * so making the second rewrites the first one's number. It corrupted the demo's prices under load
 * (docs/decisions.md, "A V8 bug in the demo's volatility"), and nothing confines it to the demo.
 *
 * It needs the same Maglev code entered again after that deoptimization. A function's own Maglev code
 * is dropped at its first deoptimization, but code entered from a hot loop (OSR) stays cached and is
 * entered again by the next call. Without Maglev OSR the fault is not reproduced: the forced case in
 * test/v8.test.ts keeps the number, and the demo's old code gave 0 of 300 runs differing under load
 * where it gave 14 of 300 before. Maglev itself stays: without it, warm pages cost 83 to 98 µs of CPU
 * against 64 to 79 with it, and with this flag 66 to 82. Every entry point imports this first, before
 * the code it protects runs hot: bin/updown.mjs, each test process (test/helpers/compile-cache.mjs)
 * and the bench.
 */
setFlagsFromString("--no-maglev-osr");
