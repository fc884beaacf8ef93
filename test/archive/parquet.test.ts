import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as parquet from "parquet-wasm";
import { exportChunks, type ExportSelection } from "../../src/archive/archive.ts";
import {
  giveBack,
  PARQUET_BATCH_ROWS,
  ParquetBatch,
  parquetStream,
  takeBatch,
} from "../../src/archive/parquet.ts";
import type { OrderBook } from "../../src/domain/book.ts";
import { encodeBooks } from "../../src/wire/book-codec.ts";
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

const ROWS = 3 * PARQUET_BATCH_ROWS.books;
const BOOKS = Array.from({ length: 64 }, (_, row) => {
  const up = { bids: side(0.49, -0.01, row), asks: side(0.51, 0.01, row) };
  const down = { bids: side(0.48, -0.01, row + 1), asks: side(0.52, 0.01, row + 1) };
  return encodeBooks(up, down);
});

async function* batches(): AsyncGenerator<ParquetBatch> {
  const size = PARQUET_BATCH_ROWS.books;
  for (let from = 0; from < ROWS; from += size) {
    const batch = new ParquetBatch(true, size);
    for (let i = from; i < from + size; i++) {
      batch.add("btc-updown-1h-1784851200", {
        time: 1_784_851_200_000_000 + i * 1_000_000,
        coinPrice: 100_000 + i,
        priceUp: 0.5,
        priceDown: 0.5,
        books: BOOKS[i % BOOKS.length],
      });
    }
    yield batch;
  }
}

async function exportBytes(): Promise<number> {
  let bytes = 0;
  for await (const chunk of parquetStream(batches(), true)) bytes += chunk.byteLength;
  return bytes;
}

test("a streamed Parquet export gives its batches' WebAssembly memory back as it goes", async () => {
  // WebAssembly memory never shrinks: an Arrow table left for the garbage collector to free grew it
  // by every batch of every export (45 MB an export of two hours with books, stop 36).
  const first = await exportBytes();
  await exportBytes();
  const level = parquet.wasmMemory().buffer.byteLength;
  for (let i = 0; i < 8; i++) assert.equal(await exportBytes(), first);
  const grown = parquet.wasmMemory().buffer.byteLength - level;
  assert.ok(grown <= 4 << 20, `WebAssembly memory grew ${grown} B over 8 exports of ${ROWS} rows with books`);
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
