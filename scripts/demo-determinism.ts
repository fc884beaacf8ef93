/**
 * Generates the demo twice in one process, as test/demo/demo.test.ts does, and names every market whose
 * second generation differs from its first. One run rarely shows a JIT fault; many runs under load do:
 *
 *   seq 1 400 | xargs -P 4 -I{} sh -c 'node scripts/demo-determinism.ts > /tmp/det-{}.out 2>&1 || echo {}'
 *
 * (beside a busy loop or two on a small machine). docs/decisions.md, "A V8 bug in the demo's
 * volatility", tells what it found. Exit status 1 when a generation differed.
 */
import { type DemoOptions, generateDemo } from "../src/demo/demo.ts";

const OPTIONS: Omit<DemoOptions, "onProgress"> = {
  seed: 7,
  anchor: Date.UTC(2026, 6, 24, 16, 20, 7) / 1000,
  counts: { "5m": 4, "15m": 3, "1h": 2, "4h": 1, "24h": 1 },
  coins: ["btc", "eth"],
};

/** Each market's slug with its snapshot rows as text, books as hex. */
function generation(): Map<string, string[]> {
  const markets = new Map<string, string[]>();
  for (const demo of [...generateDemo(OPTIONS)]) {
    const rows = [...demo.snapshots()].map(
      (row) =>
        `${row.time} ${row.coinPrice} ${row.priceUp} ${row.priceDown} ${row.books === null ? "-" : Buffer.from(row.books).toString("hex")}`,
    );
    markets.set(`${demo.market.slug} ${JSON.stringify(demo.market)}`, rows);
  }
  return markets;
}

const first = generation();
const second = generation();
let differing = 0;
for (const [market, rows] of first) {
  const again = second.get(market);
  const changed = again === undefined ? rows.length : rows.filter((row, i) => row !== again[i]).length;
  if (changed > 0) {
    differing++;
    console.log(`differs: ${market.split(" ")[0]}, ${changed} of ${rows.length} snapshots`);
  }
}
if (second.size !== first.size) console.log(`markets: ${first.size}, then ${second.size}`);
console.log(differing === 0 && second.size === first.size ? "same" : `${differing} markets differ`);
process.exitCode = differing === 0 && second.size === first.size ? 0 : 1;
