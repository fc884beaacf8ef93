import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { compileBookJsonWat, renderBinaryModule, BINARY_MODULE_PATH } from "../../scripts/wasm.ts";
import { Rng } from "../../src/demo/demo.ts";
import { type Level, mirrorBook, type OrderBook, sortBestFirst } from "../../src/domain/book.ts";
import { BookEncodingError, encodeBooks } from "../../src/wire/book-codec.ts";
import { writeBooksJson, writeBooksJsonScript } from "../../src/wire/book-json.ts";
import { wasmBookWriter } from "../../src/wire/book-json-wasm.ts";
import { JsonBytes } from "../../src/wire/json-bytes.ts";
import { writeSecondsWithBooks, writeSnapshotTail } from "../../src/wire/wire.ts";

/**
 * The WebAssembly writer of books (src/wire/book-json.wat) against the JavaScript one it stands in
 * for: the same bytes for every book it takes, and the JavaScript's answer (bytes or error) for every
 * book it leaves.
 */

const wasm = wasmBookWriter();
const DOWN = Buffer.from(',"orderbook_down":');

/** What each writer makes of a blob: its bytes and where the Up book ends, or the error it raised. */
function both(blob: Uint8Array, between: Uint8Array = DOWN): { wasm: unknown; script: unknown } {
  const run = (write: typeof writeBooksJson) => {
    const w = new JsonBytes(16);
    w.ascii("head");
    try {
      const mid = write(w, blob, between);
      return { text: w.text(), mid };
    } catch (err) {
      return { error: (err as Error).constructor.name, message: (err as Error).message };
    }
  };
  return { wasm: run(writeBooksJson), script: run(writeBooksJsonScript) };
}

function randomBooks(rng: Rng, pd: number, sizeDigits: number): { up: OrderBook; down: OrderBook } {
  const ticks = 10 ** pd;
  const side = () => {
    const levels: Level[] = [];
    const seen = new Set<number>();
    for (let i = Math.floor(rng.next() * 30); i > 0; i--) {
      const price = Math.floor(rng.next() * (ticks + 1)) / ticks;
      if (seen.has(price)) continue;
      seen.add(price);
      levels.push({ price, size: Math.floor(rng.next() * 10 ** Math.floor(rng.next() * sizeDigits)) / 100 });
    }
    return levels;
  };
  const up = sortBestFirst({ bids: side(), asks: side() });
  const down = rng.next() < 0.5 ? mirrorBook(up) : sortBestFirst({ bids: side(), asks: side() });
  return { up, down };
}

describe("book JSON in WebAssembly", () => {
  test("the committed binary is what book-json.wat compiles to (npm run wasm writes it)", async () => {
    const committed = readFileSync(BINARY_MODULE_PATH, "utf8");
    assert.equal(committed, renderBinaryModule(await compileBookJsonWat()));
  });

  test("runs here: the service's books are written by it", () => {
    assert.ok(wasm, "WebAssembly is available in the test's Node");
    const blob = encodeBooks(
      { bids: [{ price: 0.5, size: 10 }], asks: [{ price: 0.51, size: 20.25 }] },
      { bids: [{ price: 0.49, size: 20.25 }], asks: [{ price: 0.5, size: 10 }] },
    );
    assert.ok(
      wasm.write(new JsonBytes(16), blob, DOWN) !== null,
      "a mirrored book of two decimals is the WebAssembly's",
    );
  });

  test("writes the JavaScript's bytes for every book it takes: prices of 0 to 4 decimals, sizes to 2^31 - 1 hundredths", () => {
    const rng = new Rng(2026);
    let taken = 0;
    for (let pd = 0; pd <= 4; pd++) {
      // Sizes of up to 10 digits of hundredths: one-byte to five-byte varints, whole parts of one to
      // eight digits (the ones past 2^31 - 1 hundredths are left to the JavaScript).
      for (let sizeDigits = 1; sizeDigits <= 10; sizeDigits++) {
        for (let i = 0; i < 40; i++) {
          const { up, down } = randomBooks(rng, pd, sizeDigits);
          const blob = encodeBooks(up, down);
          if (blob[1] >> 4 !== 2) continue; // sizes that happened to need fewer decimals
          const out = both(blob);
          assert.deepEqual(out.wasm, out.script, `price decimals ${pd}, size digits ${sizeDigits}`);
          assert.deepEqual(out.wasm, {
            text: `head${JSON.stringify(up)},"orderbook_down":${JSON.stringify(down)}`,
            mid: 4 + JSON.stringify(up).length,
          });
          const sizes = [up, down].flatMap((b) =>
            [...b.bids, ...b.asks].map((l) => Math.round(l.size * 100)),
          );
          if (sizes.every((u) => u <= 0x7fffffff)) {
            assert.ok(
              (wasm?.write(new JsonBytes(16), blob, DOWN) ?? null) !== null,
              `taken: price decimals ${pd}, size digits ${sizeDigits}`,
            );
            taken++;
          }
        }
      }
    }
    assert.ok(taken > 1000, `${taken} books taken`);
  });

  test("a recorded book (sizes past 3 million at the edges of the book) is written the same", () => {
    const raw = JSON.parse(
      readFileSync(
        fileURLToPath(
          new URL("../fixtures/polymarket-protocol/ws-market-book-captured.json", import.meta.url),
        ),
        "utf8",
      ),
    ) as { bids: { price: string; size: string }[]; asks: { price: string; size: string }[] };
    const levels = (side: { price: string; size: string }[]) =>
      side.map((l) => ({ price: Number(l.price), size: Number(l.size) }));
    const up = sortBestFirst({ bids: levels(raw.bids), asks: levels(raw.asks) });
    const blob = encodeBooks(up, mirrorBook(up));
    assert.ok(
      (wasm?.write(new JsonBytes(16), blob, DOWN) ?? null) !== null,
      "the recorded book is the WebAssembly's",
    );
    const out = both(blob);
    assert.deepEqual(out.wasm, out.script);
    assert.deepEqual(out.wasm, {
      text: `head${JSON.stringify(up)},"orderbook_down":${JSON.stringify(mirrorBook(up))}`,
      mid: 4 + JSON.stringify(up).length,
    });
  });

  test("leaves to the JavaScript the books it does not take, which are then written as before", () => {
    const book = (size: number, price = 0.5): OrderBook => ({ bids: [{ price, size }], asks: [] });
    const left = [
      encodeBooks(book(1.5), book(2.5)), // one decimal of size
      encodeBooks(book(1.255), book(2)), // three decimals of size
      encodeBooks(book(1.25, 0.12345), book(2)), // five decimals of price
      encodeBooks(book(21_474_836.48), book(2)), // 2^31 hundredths
      encodeBooks(book(9e12 + 0.01), book(2)), // a size of 15 digits
    ];
    for (const blob of left) {
      const w = new JsonBytes(16);
      assert.equal(wasm?.write(w, blob, DOWN), null);
      assert.equal(w.pos, 0, "nothing written");
      const out = both(blob);
      assert.deepEqual(out.wasm, out.script);
    }
    // The largest it takes.
    const largest = encodeBooks(book(21_474_836.47), book(0.01));
    assert.ok((wasm?.write(new JsonBytes(16), largest, DOWN) ?? null) !== null);
    assert.deepEqual(both(largest).wasm, both(largest).script);
  });

  test("every truncated or corrupted blob gets the JavaScript's answer: the same error or the same bytes", () => {
    const rng = new Rng(7);
    let errors = 0;
    for (let i = 0; i < 60; i++) {
      const { up, down } = randomBooks(rng, 2, 6);
      const blob = encodeBooks(up, down);
      for (let end = 0; end < blob.length; end++) {
        const out = both(blob.subarray(0, end));
        assert.deepEqual(out.wasm, out.script, `blob cut at ${end} of ${blob.length}`);
        if ((out.script as { error?: string }).error) errors++;
      }
      // Bytes flipped at random: steps that run below zero, counts past the end, long varints.
      for (let k = 0; k < 20; k++) {
        const bad = Uint8Array.from(blob);
        bad[2 + Math.floor(rng.next() * (bad.length - 2))] = Math.floor(rng.next() * 256);
        const out = both(bad);
        assert.deepEqual(out.wasm, out.script);
      }
    }
    assert.ok(errors > 100, `${errors} truncated blobs rejected`);
    const cut = both(
      encodeBooks({ bids: [{ price: 0.5, size: 1 }], asks: [] }, { bids: [], asks: [] }).subarray(0, 4),
    );
    assert.equal((cut.wasm as { error: string }).error, BookEncodingError.name);
  });

  test("writes books with whatever text comes between them, and none", () => {
    const up = sortBestFirst({ bids: [{ price: 0.4, size: 12.5 }], asks: [{ price: 0.6, size: 3 }] });
    const blob = encodeBooks(up, mirrorBook(up));
    for (const between of [new Uint8Array(0), Buffer.from(",x:"), DOWN, Buffer.alloc(300, 32)]) {
      const out = both(blob, between);
      assert.deepEqual(out.wasm, out.script);
    }
  });
});

describe("a block's seconds with their books in one call", () => {
  /** A block as rendered-blocks.ts has it: heads joined by commas, blobs end to end. */
  function block(rng: Rng, n: number, blobOf: (i: number) => Uint8Array | null) {
    const heads = Array.from({ length: n }, (_, i) => `{"time":"${i}","price_up":0.${i % 10}}`);
    const blobs = Array.from({ length: n }, (_, i) => blobOf(i));
    const text = heads.join(",");
    const books = Buffer.concat(blobs.map((b) => b ?? new Uint8Array(0)));
    const spans = new Int32Array(4 * n);
    let h = 0;
    let b = 0;
    // Seconds in a shuffled order, as a page may ask for them newest first.
    const order = Array.from({ length: n }, (_, i) => i).sort(() => rng.next() - 0.5);
    const starts = heads.map((x) => {
      const at = h;
      h += x.length + 1;
      return at;
    });
    const bookStarts = blobs.map((x) => {
      const at = b;
      b += x?.length ?? 0;
      return at;
    });
    order.forEach((i, k) => {
      spans.set(
        [starts[i], starts[i] + heads[i].length - 1, bookStarts[i], bookStarts[i] + (blobs[i]?.length ?? 0)],
        4 * k,
      );
    });
    /** One second as the page's loop writes it, and the seconds it was asked for (in `k` order). */
    const handed: number[] = [];
    const one = (w: JsonBytes) => (k: number, comma: boolean) => {
      handed.push(k);
      if (comma) w.byte(44);
      w.ascii(heads[order[k]].slice(0, -1));
      writeSnapshotTail(w, blobs[order[k]], true);
    };
    /** The seconds as the page's loop writes them one by one. */
    const expected = (comma: boolean) => {
      const w = new JsonBytes(16);
      order.forEach((_, k) => one(w)(k, k > 0 || comma));
      handed.length = 0;
      return w.text();
    };
    return { text, books: books.length > 0 ? books : null, spans, n, order, expected, one, handed };
  }

  test("writes what the page's loop writes, with a comma before the first when asked, from a string or bytes", () => {
    const rng = new Rng(5);
    const b = block(rng, 256, (i) =>
      i % 7 === 3 ? null : encodeBooks(randomBooks(rng, 2, 7).up, randomBooks(rng, 2, 7).down),
    );
    for (const comma of [false, true]) {
      for (const text of [b.text, Buffer.from(b.text, "latin1")]) {
        const w = new JsonBytes(16);
        w.ascii("[");
        assert.equal(writeSecondsWithBooks(w, text, b.books, b.spans, b.n, comma, b.one(w)), true);
        assert.equal(w.text(), `[${b.expected(comma)}`);
        assert.deepEqual(b.handed, [], "every second was the WebAssembly's");
      }
    }
  });

  test("hands the JavaScript each second it does not take and goes on after it", () => {
    const rng = new Rng(6);
    const sized = (size: number) =>
      encodeBooks({ bids: [{ price: 0.5, size }], asks: [] }, { bids: [], asks: [] });
    // Sizes of one decimal are the JavaScript's: the seconds of rows 17 and 30, wherever they fall.
    const b = block(rng, 40, (i) => sized(i === 17 || i === 30 ? 1.5 : 2.25));
    for (const comma of [false, true]) {
      const w = new JsonBytes(16);
      assert.equal(writeSecondsWithBooks(w, b.text, b.books, b.spans, b.n, comma, b.one(w)), true);
      assert.deepEqual(
        [...b.handed].sort((x, y) => x - y),
        [17, 30].map((i) => b.order.indexOf(i)).sort((x, y) => x - y),
      );
      assert.equal(w.text(), b.expected(comma));
    }
    // So is a second whose span lies outside the text or the books it was given.
    const fine = block(rng, 3, () => sized(2.25));
    for (const [k, value] of [
      [1, fine.text.length + 1],
      [3, (fine.books as Uint8Array).length + 1],
      [0, -1],
    ]) {
      const spans = Int32Array.from(fine.spans);
      spans[k] = value;
      const w = new JsonBytes(16);
      writeSecondsWithBooks(w, fine.text, fine.books, spans, 3, false, () => fine.handed.push(-1));
      assert.deepEqual(fine.handed, [-1], `span ${k} set to ${value}`);
      fine.handed.length = 0;
    }
  });

  test("seconds whose books need more than its output holds are written in several calls", () => {
    const rng = new Rng(8);
    // Books of 1,500 levels a side: blobs of about 9 KB, whose bound of output is 370 KB a second.
    const big = () => {
      const levels = (from: number) =>
        Array.from({ length: 1500 }, (_, i) => ({
          price: (from + i) / 10_000,
          size: (100 + Math.floor(rng.next() * 1e6)) / 100,
        }));
      const up = sortBestFirst({ bids: levels(1), asks: levels(5001) });
      return encodeBooks(up, mirrorBook(up));
    };
    const b = block(rng, 12, () => big());
    const w = new JsonBytes(16);
    assert.equal(writeSecondsWithBooks(w, b.text, b.books, b.spans, b.n, false, b.one(w)), true);
    assert.equal(w.text(), b.expected(false));
    assert.deepEqual(b.handed, []);
  });
});

test("where WebAssembly cannot run, books are written by the JavaScript, the same", () => {
  // Node's own TypeScript loader needs WebAssembly (so --jitless cannot load this project): the
  // child loads a module first, then takes WebAssembly away before the writer is made.
  const script = `
    await import("./src/domain/book.ts");
    delete globalThis.WebAssembly;
    const { encodeBooks } = await import("./src/wire/book-codec.ts");
    const { renderBooksJson } = await import("./src/wire/book-json.ts");
    const { wasmBookWriter } = await import("./src/wire/book-json-wasm.ts");
    const up = { bids: [{ price: 0.5, size: 12.25 }], asks: [{ price: 0.52, size: 3 }] };
    const down = { bids: [{ price: 0.48, size: 3 }], asks: [{ price: 0.5, size: 12.25 }] };
    console.log(JSON.stringify({ wasm: wasmBookWriter() !== null, ...renderBooksJson(encodeBooks(up, down)) }));
  `;
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const out = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: root,
    encoding: "utf8",
  });
  assert.equal(out.status, 0, out.stderr);
  assert.deepEqual(JSON.parse(out.stdout), {
    wasm: false,
    up: '{"bids":[{"price":0.5,"size":12.25}],"asks":[{"price":0.52,"size":3}]}',
    down: '{"bids":[{"price":0.48,"size":3}],"asks":[{"price":0.5,"size":12.25}]}',
  });
});
