import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import { exportChunks, type ExportSelection } from "../../src/archive/archive.ts";
import {
  giveBack,
  PARQUET_BATCH_ROWS,
  parquetOfTable,
  parquetStream,
  takeBatch,
} from "../../src/archive/parquet.ts";
import type { OrderBook } from "../../src/domain/book.ts";
import { list, struct, ThriftReader, type ThriftStruct } from "../../src/archive/parquet/thrift.ts";
import { encodeBooks } from "../../src/wire/book-codec.ts";
import { SnapshotColumns } from "../../src/wire/snapshot-columns.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let app: TestApp;
before(async () => {
  app = await makeTestApp();
});
after(() => app.close());

/** A side of 20 levels a cent apart from `best`, sizes varying by row. */
function side(best: number, step: number, row: number): OrderBook["bids"] {
  return Array.from({ length: 20 }, (_, i) => ({
    price: Math.round((best + i * step) * 100) / 100,
    size: 10 + ((row * 7 + i * 13) % 500),
  }));
}

const BOOKS = Array.from({ length: 64 }, (_, row) => {
  const up = { bids: side(0.49, -0.01, row), asks: side(0.51, 0.01, row) };
  const down = { bids: side(0.48, -0.01, row + 1), asks: side(0.52, 0.01, row + 1) };
  // Every fifth a book of another shape: one side empty, the others of fewer levels.
  return row % 5 === 4
    ? encodeBooks({ bids: [], asks: up.asks.slice(0, 3) }, { bids: down.bids.slice(0, 1), asks: [] })
    : encodeBooks(up, down);
});

/**
 * Batches of `size` rows as an export fills them: `markets` markets of as many rows each (one starting
 * inside a batch), a second without books now and then, a time that needs both words of its int64.
 */
async function* batches(
  books: boolean,
  rows: number,
  size: number,
  markets = 3,
): AsyncGenerator<SnapshotColumns> {
  for (let from = 0; from < rows; from += size) {
    const batch = new SnapshotColumns(books, size);
    for (let i = from; i < Math.min(rows, from + size); i++) {
      batch.add(`btc-updown-1h-${1_784_851_200 + 3600 * Math.floor((markets * i) / rows)}`, {
        time: 1_784_851_200_000_000 + i * 1_000_000,
        coinPrice: 100_000 + i / 100,
        priceUp: 0.5 + (i % 7) / 100,
        priceDown: 0.5 - (i % 7) / 100,
        books: i % 11 === 3 ? null : BOOKS[i % BOOKS.length],
      });
    }
    yield batch;
  }
}

async function bytesOfStream(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const chunk of chunks) out.push(Buffer.from(chunk));
  return Buffer.concat(out);
}

/** A Parquet file as parquet-wasm reads it, into an Arrow table. */
function readBack(file: Uint8Array): arrow.Table {
  return arrow.tableFromIPC(parquet.readParquet(file).intoIPCStream());
}

/** A field as text: its name, type and nullability, its children's too. */
function fieldText(f: arrow.Field): string {
  const children = (f.type.children ?? []).map(fieldText).join(", ");
  return `${f.name}: ${String(f.type)}${f.nullable ? "?" : ""}${children ? ` {${children}}` : ""}`;
}

/** The export's file of those batches, and parquet-wasm's file of the same rows, both read back. */
async function bothReadBack(books: boolean, rows: number, size: number, markets?: number) {
  const ours = await bytesOfStream(parquetStream(batches(books, rows, size, markets), books));
  const tables: arrow.Table[] = [];
  for await (const batch of batches(books, rows, size, markets)) tables.push(batch.toArrow());
  const theirs = parquetOfTable(tables.reduce((a, b) => a.concat(b)));
  const [mine, reference] = [readBack(ours), readBack(theirs)];
  assert.deepEqual(mine.schema.fields.map(fieldText), reference.schema.fields.map(fieldText));
  assert.equal(mine.numRows, rows);
  assert.deepEqual(
    mine.toArray().map((r) => JSON.stringify(r)),
    reference.toArray().map((r) => JSON.stringify(r)),
  );
  return ours;
}

test("a batch of 300 markets (a slug dictionary of over 256) reads back as parquet-wasm's file", async () => {
  await bothReadBack(false, 600, 600, 300);
});

for (const books of [true, false]) {
  test(`the export's file reads back as parquet-wasm's own file of the same rows (${books ? "with" : "without"} books)`, async () => {
    const size = 700;
    const rows = 3 * size - 100;
    const ours = await bothReadBack(books, rows, size);
    // One row group a batch, as the stream gives them, each with its times' bounds (readers skip by them).
    const footer = new ThriftReader(ours, ours.length - 8 - ours.readUInt32LE(ours.length - 8)).readStruct();
    // A sort order for each column chunk of a row group (readers pair them by position).
    assert.equal(list(footer, 7).length, list(list(footer, 4)[0] as ThriftStruct, 1).length);
    assert.equal(list(footer, 7).length, books ? 13 : 5);
    const bounds = list(footer, 4).map((group) => {
      const time = list(group as ThriftStruct, 1)[1] as ThriftStruct;
      const stats = struct(struct(time, 3)!, 12)!;
      return [stats.get(6), stats.get(5)].map((b) => Number((b as Buffer).readBigInt64LE()));
    });
    const at = (i: number) => 1_784_851_200_000_000 + i * 1_000_000;
    assert.deepEqual(bounds, [
      [at(0), at(size - 1)],
      [at(size), at(2 * size - 1)],
      [at(2 * size), at(rows - 1)],
    ]);
  });
}

test("an export of no rows is a file of the schema and no row group", async () => {
  const empty = readBack(await bytesOfStream(parquetStream(batches(true, 0, 10), true)));
  assert.equal(empty.numRows, 0);
  assert.deepEqual(
    empty.schema.fields.map((f) => f.name),
    ["slug", "time", "coin_price", "price_up", "price_down", "orderbook_up", "orderbook_down"],
  );
});

test("an ended export's batch is the next export's, emptied", () => {
  const batch = takeBatch(true);
  batch.add("btc-updown-1h-1784851200", {
    time: 1_784_851_200_000_000,
    coinPrice: 1,
    priceUp: 0.5,
    priceDown: 0.5,
    books: BOOKS[0],
  });
  giveBack(batch);
  const next = takeBatch(true);
  assert.equal(next, batch);
  assert.equal(next.length, 0);
  assert.deepEqual(
    next.sides.map((s) => [s.length, s.rows]),
    [
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
    ],
  );
  assert.notEqual(takeBatch(true), batch, "a batch taken is no longer spare");
  giveBack(next);
});

async function bytesOf(chunks: AsyncGenerator<string | Uint8Array>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const chunk of chunks) out.push(Buffer.from(chunk));
  return Buffer.concat(out);
}

test("exports streamed at once each fill a batch of their own: each gives the bytes it gives alone", async () => {
  // Their store reads interleave, so a batch shared between them would hold rows of both.
  const all: ExportSelection = { format: "parquet", books: true };
  const eth: ExportSelection = { format: "parquet", books: true, coin: "eth" };
  const counts = { markets: 0, snapshots: 0 };
  const allAlone = await bytesOf(exportChunks(app.store.markets, all, counts));
  assert.ok(counts.snapshots > PARQUET_BATCH_ROWS.books, `${counts.snapshots} rows: two batches at least`);
  const ethAlone = await bytesOf(exportChunks(app.store.markets, eth));
  const [allAtOnce, ethAtOnce] = await Promise.all([
    bytesOf(exportChunks(app.store.markets, all)),
    bytesOf(exportChunks(app.store.markets, eth)),
  ]);
  assert.ok(allAtOnce.equals(allAlone), "every market's export");
  assert.ok(ethAtOnce.equals(ethAlone), "eth's export");
});

test("an export cut short gives its batch back, and the next export's bytes are whole", async () => {
  const sel: ExportSelection = { format: "parquet", books: true };
  const whole = await bytesOf(exportChunks(app.store.markets, sel));
  const cut = exportChunks(app.store.markets, sel);
  assert.equal((await cut.next()).done, false);
  await cut.return(undefined);
  const again = await bytesOf(exportChunks(app.store.markets, sel));
  assert.ok(again.equals(whole));
});
