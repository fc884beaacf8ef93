import assert from "node:assert/strict";
import { test } from "node:test";
import { Rng } from "../../../src/demo/demo.ts";
import type { SnapshotRow } from "../../../src/domain/snapshot.ts";
import { bookStartsOf, decodeBlock, encodeBlock } from "../../../src/store/rules/snapshot-blocks.ts";

test("bookStartsOf finds where each second's books lie as decoding the whole block does", () => {
  const rng = new Rng(31);
  for (let k = 0; k < 200; k++) {
    const n = 1 + Math.floor(rng.next() * 256);
    let time = 1_784_852_434_000_000;
    const rows: SnapshotRow[] = Array.from({ length: n }, () => {
      // Steps of one byte to five bytes of varint; books absent, short, or longer than 127 bytes.
      time += 1 + Math.floor(rng.next() * 10 ** Math.floor(rng.next() * 11));
      const length = rng.next() < 0.2 ? 0 : Math.floor(rng.next() * (rng.next() < 0.5 ? 100 : 20_000));
      return {
        time,
        coinPrice: rng.next() * 1e5,
        priceUp: rng.next(),
        priceDown: rng.next(),
        books: length === 0 ? null : new Uint8Array(length),
      };
    });
    const { prices } = encodeBlock(rows);
    assert.deepEqual(bookStartsOf(prices), decodeBlock(prices).bookStart);
  }
});

test("bookStartsOf refuses prices that end early or are of another format", () => {
  const rows: SnapshotRow[] = [1, 2, 3].map((s) => ({
    time: s * 1_000_000,
    coinPrice: 1,
    priceUp: 0.5,
    priceDown: 0.5,
    books: new Uint8Array(300),
  }));
  const { prices } = encodeBlock(rows);
  for (let end = 2; end < prices.length; end++) {
    assert.throws(() => bookStartsOf(prices.subarray(0, end)), /end early/, `prices cut at ${end}`);
  }
  assert.throws(
    () => bookStartsOf(Uint8Array.from([9, ...prices.subarray(1)])),
    /unknown snapshot block format/,
  );
});
