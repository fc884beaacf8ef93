import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { PmxtFile, PmxtFileError } from "../../src/archive/pmxt-file.ts";
import type { KeptEvent } from "../../src/archive/pmxt-rows.ts";
import { DuckDBInstance } from "@duckdb/node-api";
import * as parquet from "parquet-wasm";
import { writePmxtFile } from "../helpers/pmxt-parquet.ts";
import { strangerRows } from "../helpers/pmxt-hour.ts";
import {
  ARCHIVE_MIX,
  archiveOrder,
  conditionIdOf,
  marketStream,
  rowOf,
  type StreamMessage,
} from "../helpers/pmxt-stream.ts";

/**
 * Reading PMXT files (src/archive/pmxt-file.ts), at small sizes (batches
 * of 1,000 rows, spans cut at gaps of 8,000): the kept markets' rows spread among other markets' (as
 * random condition ids are in the archive), runs longer than one decoded batch, several row groups
 * (of 29,000 rows: the longest run is cut by a boundary), runs close enough to be read as one span
 * and runs far apart. Every kept row comes back as the message it was cut from, in the file's order,
 * once.
 */

const T0 = 1_784_851_200_000;

/** Kept markets' ids sort between strangerRows(..., 2)'s (50,000, 50,002, ...): 50,001 + 2k. */
const KEPT = [0, 1, 4, 5, 11].map((k) => 50_001 + 2 * k);
const streams = new Map<string, StreamMessage[]>(
  KEPT.map((n, i) => [
    conditionIdOf(n),
    marketStream(
      { conditionId: conditionIdOf(n), clobTokenUp: `${n}1`, clobTokenDown: `${n}2` },
      i + 1,
      T0,
      T0 + (i === 2 ? 400_000 : 100_000),
      100,
      true,
      i % 2 === 0 ? ARCHIVE_MIX : undefined,
    ),
  ]),
);

let dir: string;
let file: string;
let rowGroups: number[];
const SMALL = { batchRows: 1_000, spanGapRows: 8_000 };

before(() => {
  dir = mkdtempSync(join(tmpdir(), "pmxt-file-"));
  file = join(dir, "polymarket_orderbook_2026-07-24T00.parquet");
  const kept = [...streams.values()].flatMap((s) => s.map(rowOf));
  writePmxtFile(file, archiveOrder([...kept, ...strangerRows(60_000, 3, 2)]), 29_000);
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The messages the file's rows were cut from, in the archive's order (market, token, receive time). */
function expected(conditionId: string): unknown[] {
  const rows = (streams.get(conditionId) ?? []).map((s, i) => ({ s, i, row: rowOf(s) }));
  rows.sort(
    (a, b) =>
      (a.row.assetId < b.row.assetId ? -1 : a.row.assetId > b.row.assetId ? 1 : 0) ||
      a.s.receivedMs - b.s.receivedMs ||
      a.i - b.i,
  );
  return rows.map(({ s }) => ({ receivedUs: s.receivedMs * 1000, message: s.message }));
}

describe("PMXT file reading", () => {
  /** Every kept market's events read from `path` by `reader`, and how often they were handed over. */
  async function readAll(path: string, reader: "auto" | "flat" | "wasm") {
    const opened = await PmxtFile.open(path, { ...SMALL, reader });
    if (path === file) rowGroups = opened.rowGroupRows;
    const got = new Map<string, KeptEvent[]>();
    let kept = 0;
    let handedOver = 0;
    for (let g = 0; g < opened.rowGroupRows.length; g++)
      kept += await opened.readRowGroup(
        g,
        new Set(streams.keys()),
        async (events) => {
          handedOver++;
          for (const e of events) {
            const list = got.get(e.conditionId) ?? [];
            list.push(e);
            got.set(e.conditionId, list);
          }
        },
        1_000,
      );
    opened.close();
    return { got, kept, handedOver, used: opened.reader };
  }

  for (const reader of ["flat", "wasm"] as const)
    test(`every kept row, spread among other markets' rows, comes back once as the message it was (${reader} reader)`, async () => {
      const { got, kept, handedOver, used } = await readAll(file, reader);
      assert.equal(used, reader);
      assert.ok(rowGroups.length >= 3, `${rowGroups.length} row groups`);
      const total = [...streams.values()].reduce((n, s) => n + s.length, 0);
      assert.equal(kept, total);
      assert.ok(handedOver >= KEPT.length, "events are handed over at each market's end");
      assert.ok((streams.get(conditionIdOf(KEPT[2]))?.length ?? 0) > 2_000, "a run longer than a batch");
      for (const id of streams.keys()) {
        const events = (got.get(id) ?? []).map((e) => ({
          receivedUs: e.event.receivedUs,
          message: JSON.parse(JSON.stringify(e.event.message)) as unknown,
        }));
        assert.deepEqual(events, expected(id), id);
      }
    });

  test("the flat reader reads the archive's files; a file in another Parquet dialect is read by parquet-wasm, alike", async () => {
    const auto = await readAll(file, "auto");
    assert.equal(auto.used, "flat");
    const snappy = join(dir, "polymarket_orderbook_2026-07-24T01.parquet");
    const kept = [...streams.values()].flatMap((s) => s.map(rowOf));
    writePmxtFile(
      snappy,
      archiveOrder([...kept, ...strangerRows(20_000, 3, 2)]),
      29_000,
      parquet.Compression.SNAPPY,
    );
    const other = await readAll(snappy, "auto");
    assert.equal(other.used, "wasm");
    for (const id of streams.keys())
      assert.deepEqual(
        (other.got.get(id) ?? []).map((e) => e.event),
        (auto.got.get(id) ?? []).map((e) => e.event),
        id,
      );
    await assert.rejects(PmxtFile.open(snappy, { reader: "flat" }), /not a readable Parquet file.*codec/);
  });

  test("a file of another writer (DuckDB: timestamps in µs, the condition id as a blob) gives the same events", async () => {
    const duck = join(dir, "polymarket_orderbook_2026-07-24T02.parquet");
    const db = await DuckDBInstance.create(":memory:");
    const connection = await db.connect();
    try {
      await connection.run(
        `COPY (SELECT * FROM read_parquet('${file}')) TO '${duck}' (FORMAT parquet, COMPRESSION zstd)`,
      );
    } finally {
      connection.closeSync();
      db.closeSync();
    }
    const ours = await readAll(file, "flat");
    const theirs = await readAll(duck, "auto");
    assert.equal(theirs.used, "flat");
    const wasm = await readAll(duck, "wasm");
    for (const id of streams.keys()) {
      const events = (ours.got.get(id) ?? []).map((e) => e.event);
      assert.deepEqual(
        (theirs.got.get(id) ?? []).map((e) => e.event),
        events,
        id,
      );
      assert.deepEqual(
        (wasm.got.get(id) ?? []).map((e) => e.event),
        events,
        `${id}, read by parquet-wasm`,
      );
    }
  });

  test("a row group of no kept market gives nothing and hands nothing over", async () => {
    const opened = await PmxtFile.open(file, SMALL);
    let calls = 0;
    const kept = await opened.readRowGroup(0, new Set([conditionIdOf(7)]), async () => {
      calls++;
    });
    opened.close();
    assert.equal(kept, 0);
    assert.equal(calls, 0);
  });

  test("a file that is not Parquet is an error naming it", async () => {
    const junk = join(dir, "junk.parquet");
    writeFileSync(junk, "PAR1 this is not a parquet file");
    await assert.rejects(PmxtFile.open(junk), (err: Error) => {
      assert.ok(err instanceof PmxtFileError);
      assert.match(err.message, /junk\.parquet: not a readable Parquet file/);
      return true;
    });
    await assert.rejects(PmxtFile.open(join(dir, "missing.parquet")), /missing\.parquet: not a readable/);
    const opened = await PmxtFile.open(file, SMALL);
    assert.deepEqual(opened.rowGroupRows, rowGroups);
    opened.close();
  });
});
