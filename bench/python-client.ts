/**
 * `node bench/python-client.ts`: the Python client's time to load a 24h market's snapshots with books
 * into a DataFrame, against the same pages fetched with a plain urllib loop (python/bench/load_24h.py
 * says how). Serves the test app with a resolved 24h market of 86,400 snapshots, each with 10-level
 * books on both outcomes, on a loopback port; BENCH_RUNS (default 5) runs of each.
 */
import { insertLongMarket, pythonMissing, runPython, startPythonHarness } from "../test/python/harness.ts";

const missing = pythonMissing();
if (missing !== null) throw new Error(missing);
/** 2026-07-22T12:00:00Z: a day ending before the test clock. */
const DAY_START = 1784721600;
const h = await startPythonHarness(async (s) => ({
  UPDOWN_BENCH_SLUG: await insertLongMarket(s.t.store, DAY_START, 86_400, 1),
}));
try {
  const { code, output } = await runPython(h, ["bench/load_24h.py"], {}, 1_800_000);
  process.stdout.write(output);
  if (code !== 0) process.exitCode = 1;
} finally {
  await h.close();
}
