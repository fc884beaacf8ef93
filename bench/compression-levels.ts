/**
 * How the compression levels of src/http/compression.ts were chosen: one page of 1000 snapshots of a
 * resolved 1h demo market, with and without books, compressed at each level of br, gzip and zstd;
 * prints the size against the JSON and the CPU time a compression takes (the mean of a few runs).
 *
 *   node bench/compression-levels.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import zlib from "node:zlib";
import { seedDemo } from "../src/demo/seed.ts";
import { JsonBytes } from "../src/wire/json-bytes.ts";
import { writeSnapshotJson } from "../src/wire/wire.ts";
import { SqliteStore } from "../src/store/dialects/sqlite/sqlite-store.ts";

const C = zlib.constants;
type Compressor = [string, (b: Buffer) => Buffer];

function compressors(): Compressor[] {
  const out: Compressor[] = [];
  for (const q of [1, 3, 4, 5, 6, 8, 11]) {
    const params = { [C.BROTLI_PARAM_QUALITY]: q, [C.BROTLI_PARAM_MODE]: C.BROTLI_MODE_TEXT };
    out.push([`br ${q}`, (b) => zlib.brotliCompressSync(b, { params })]);
  }
  for (const level of [1, 3, 6, 9]) out.push([`gzip ${level}`, (b) => zlib.gzipSync(b, { level })]);
  for (const level of [1, 3, 6, 9, 12]) {
    out.push([
      `zstd ${level}`,
      (b) => zlib.zstdCompressSync(b, { params: { [C.ZSTD_c_compressionLevel]: level } }),
    ]);
  }
  return out;
}

function cpuMs(): number {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(os.tmpdir(), "updown-levels-"));
  const store = new SqliteStore(join(dir, "levels.db"));
  try {
    await store.migrate();
    const counts = { "5m": 0, "15m": 0, "1h": 2, "4h": 0, "24h": 0 };
    await seedDemo(store, { seed: 42, anchor: 1784852434, counts, coins: ["btc"] });
    const [m] = (await store.markets.listMarkets({ resolved: true, limit: 1, offset: 0 })).markets;
    for (const books of [true, false]) {
      const rows = await store.markets.snapshotPage(m.key, { order: "desc", limit: 1000, offset: 0, books });
      const w = new JsonBytes();
      w.ascii("[");
      rows.forEach((r, i) => {
        if (i > 0) w.byte(44);
        writeSnapshotJson(w, r, books);
      });
      w.ascii("]");
      const page = w.toBuffer();
      console.log(`page of 1000 snapshots ${books ? "with" : "without"} books: ${page.length} B of JSON`);
      for (const [name, compress] of compressors()) {
        const runs = name === "br 11" ? 1 : 5;
        compress(page);
        const t = cpuMs();
        let out: Buffer = Buffer.alloc(0);
        for (let i = 0; i < runs; i++) out = compress(page);
        const ms = (cpuMs() - t) / runs;
        console.log(
          `  ${name.padEnd(8)} ${String(out.length).padStart(8)} B  1/${(page.length / out.length).toFixed(1).padEnd(5)} ${ms.toFixed(1).padStart(7)} ms`,
        );
      }
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
