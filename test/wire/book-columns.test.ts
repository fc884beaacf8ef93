import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Rng } from "../../src/demo/demo.ts";
import { mirrorBook, sortBestFirst } from "../../src/domain/book.ts";
import { appendBookColumns, SideColumns } from "../../src/wire/book-columns.ts";
import { decodeBooks, encodeBooks } from "../../src/wire/book-codec.ts";

// The Parquet export's book columns (src/wire/book-columns.ts) hold, row by row and side by side, the
// very levels decodeBooks gives: the same doubles, best first, a mirrored Down book flipped.

const SIDES = [
  ["up", "bids"],
  ["up", "asks"],
  ["down", "bids"],
  ["down", "asks"],
] as const;

/** Row `row`'s levels of one side, as the columns hold them. */
function levelsOf(columns: SideColumns, row: number): { price: number; size: number }[] {
  const out = [];
  for (let k = columns.offsets[row]; k < columns.offsets[row + 1]; k++)
    out.push({ price: columns.prices[k], size: columns.sizes[k] });
  return out;
}

/** A random book's blob: Up sides of up to `maxLevels` levels, the Down book its mirror or its own. */
function randomBlob(rng: Rng, maxLevels: number): Uint8Array {
  const tick = rng.next() < 0.5 ? 100 : 1000;
  const level = () => ({
    price: Math.max(1, Math.floor(rng.next() * (tick - 1))) / tick,
    size: Math.round(rng.next() * 10 ** (2 + Math.floor(rng.next() * 6))) / 100,
  });
  const side = () => Array.from({ length: Math.floor(rng.next() * maxLevels) }, level);
  const up = sortBestFirst({ bids: side(), asks: side() });
  const down = rng.next() < 0.5 ? mirrorBook(up) : sortBestFirst({ bids: side(), asks: side() });
  return encodeBooks(up, down);
}

describe("appendBookColumns", () => {
  test("row after row, the levels decodeBooks gives, through the columns' growth", () => {
    const rng = new Rng(5);
    const sides = [new SideColumns(), new SideColumns(), new SideColumns(), new SideColumns()];
    // A side deeper than twice the columns' first capacity (4,096 levels), so that one row grows
    // them more than once; then many ordinary rows, some without books.
    const deep = Array.from({ length: 9_000 }, (_, i) => ({ price: (i + 1) / 10_000, size: i + 0.5 }));
    const rows: (Uint8Array | null)[] = [
      encodeBooks(sortBestFirst({ bids: deep, asks: [] }), sortBestFirst({ bids: [], asks: deep })),
    ];
    for (let i = 0; i < 400; i++) rows.push(rng.next() < 0.1 ? null : randomBlob(rng, 40));
    for (const blob of rows) appendBookColumns(blob, sides);

    rows.forEach((blob, row) => {
      const books = blob === null ? null : decodeBooks(blob);
      SIDES.forEach(([token, side], s) => {
        assert.deepEqual(levelsOf(sides[s], row), books?.[token][side] ?? [], `row ${row}, ${token} ${side}`);
      });
    });
    for (const columns of sides) assert.equal(columns.rows, rows.length);
  });

  test("cleared columns are filled again from the start", () => {
    const rng = new Rng(9);
    const sides = [new SideColumns(), new SideColumns(), new SideColumns(), new SideColumns()];
    const first = randomBlob(rng, 30);
    const second = randomBlob(rng, 30);
    appendBookColumns(first, sides);
    for (const columns of sides) columns.clear();
    appendBookColumns(second, sides);
    const books = decodeBooks(second);
    SIDES.forEach(([token, side], s) => {
      assert.equal(sides[s].rows, 1);
      assert.deepEqual(levelsOf(sides[s], 0), books[token][side]);
    });
  });
});
