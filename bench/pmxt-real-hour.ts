import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Market } from "../src/domain/market.ts";
import { SqliteStore } from "../src/store/dialects/sqlite/sqlite-store.ts";
import { archiveHour, importPmxtProcess, strangerRows, writeHourFeed } from "../test/helpers/pmxt-hour.ts";
import { writePmxtFileInRowGroups } from "../test/helpers/pmxt-parquet.ts";
import { archiveOrder } from "../test/helpers/pmxt-stream.ts";

/**
 * The time and disk of `updown import pmxt` on one generated PMXT hour of a real hour's size (the
 * archive's are 100 to 400 MB): PMXT_HOUR_ROW_GROUPS row groups of 1,048,576 rows (default 16), each
 * shaped as the bench's hour (bench/pmxt-import.ts): twelve BTC 5-minute markets kept, about 5 % of its
 * rows, in the archive's mix of types, spread among 200 other markets' rows. The file is imported by
 * the CLI as a process into a fresh SQLite file holding the markets' records, with a Chainlink feed
 * over their hours. Prints the file's size, the import's time and peak memory, and the database's
 * growth: the figures of docs/archives.md's "Backfill a month". Run: node bench/pmxt-real-hour.ts
 */

const GROUPS = Number(process.env.PMXT_HOUR_ROW_GROUPS ?? 16);
const ROWS = 1_048_576;

const dir = mkdtempSync(join(tmpdir(), "pmxt-hour-"));
try {
  const file = join(dir, "polymarket_orderbook_2026-07-24T00.parquet");
  const feed = join(dir, "chainlink-btcusd.csv");
  const db = join(dir, "import.db");
  const markets: Market[] = [];
  let kept = 0;
  const t0 = performance.now();
  await writePmxtFileInRowGroups(
    file,
    (function* () {
      for (let g = 0; g < GROUPS; g++) {
        const hour = archiveHour(200, 600, g);
        markets.push(...hour.markets);
        kept += hour.rows.length;
        yield archiveOrder([...hour.rows, ...strangerRows(ROWS - hour.rows.length, 8 + g, 2, g)]);
      }
    })(),
  );
  writeHourFeed(feed, GROUPS + 1);
  console.log(
    `generated ${GROUPS} row groups, ${(GROUPS * ROWS).toLocaleString("en-US")} rows (${kept.toLocaleString("en-US")} kept, ` +
      `${markets.length} markets): ${(statSync(file).size / 1e6).toFixed(0)} MB in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  const store = new SqliteStore(db);
  await store.migrate();
  for (const m of markets) await store.markets.upsertMarket(m);
  await store.close();
  // The database's bytes: its file and its write-ahead log, if one is left.
  const bytes = () => statSync(db).size + (existsSync(`${db}-wal`) ? statSync(`${db}-wal`).size : 0);
  const before = bytes();
  const { code, stdout, stderr, peakMiB: mib, seconds } = await importPmxtProcess(file, feed, db);
  if (code !== 0) throw new Error(`import pmxt exited ${code}: ${stderr}`);
  const report = JSON.parse(stdout) as {
    rowsRead: number;
    rowsKept: number;
    events: number;
    snapshots: number;
  };
  if (report.rowsRead !== GROUPS * ROWS || report.rowsKept !== kept)
    throw new Error(
      `the import read ${report.rowsRead} rows (${report.rowsKept} kept): not the file written`,
    );
  const growth = bytes() - before;
  console.log(
    `import pmxt: ${seconds.toFixed(1)} s (${Math.round(report.rowsRead / seconds).toLocaleString("en-US")} rows/s), ` +
      `peak RSS ${mib.toFixed(0)} MiB; ${report.events.toLocaleString("en-US")} events, ` +
      `${report.snapshots.toLocaleString("en-US")} snapshots; database +${(growth / 1e6).toFixed(0)} MB ` +
      `(${Math.round(growth / report.rowsKept)} B a kept row)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
