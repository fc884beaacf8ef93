import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { pricePoints, settlementOf, settleWinner } from "../../src/domain/settlement.ts";
import {
  booksEqual,
  complementPrice,
  displayedPrice,
  EMPTY_BOOK,
  mirrorBook,
  mirrors,
  type OrderBook,
  sortBestFirst,
} from "../../src/domain/book.ts";
import { BookEncodingError, bestPrice, decodeBooks, encodeBooks } from "../../src/wire/book-codec.ts";
import { renderBooksJson } from "../../src/wire/book-json.ts";
import { JsonBytes } from "../../src/wire/json-bytes.ts";
import { parseMarketType, winnerOf } from "../../src/domain/market.ts";
import {
  canonicalSlug,
  formatSlug,
  parseSlug,
  polymarketSlug,
  polymarketSlugSeries,
} from "../../src/domain/slug.ts";
import { isoMicros, isoSeconds, keptWithin, parseIsoMicros, parseUserTime } from "../../src/domain/time.ts";
import { Rng } from "../../src/demo/demo.ts";

describe("time", () => {
  test("something kept is good for its ttl, from when it was kept, never from the future", () => {
    assert.equal(keptWithin(1000, 1000, 10), true);
    assert.equal(keptWithin(1000, 1009, 10), true);
    assert.equal(keptWithin(1000, 1010, 10), false, "the ttl is over");
    assert.equal(keptWithin(1000, 999, 10), false, "a clock set back does not keep it");
  });

  test("formats microseconds exactly, as integers", () => {
    assert.equal(isoMicros(1774975800_943587), "2026-03-31T16:50:00.943587Z");
    assert.equal(isoMicros(0), "1970-01-01T00:00:00.000000Z");
    assert.equal(isoMicros(1784851199_999999), "2026-07-23T23:59:59.999999Z");
    assert.equal(isoSeconds(1784851200), "2026-07-24T00:00:00Z");
  });

  test("parses ISO 8601 with zones and up to microseconds, rejects nonsense", () => {
    assert.equal(parseIsoMicros("2026-03-31T16:50:00.943587Z"), 1774975800_943587);
    assert.equal(parseIsoMicros("2026-07-24 00:00:16+00"), 1784851216_000000);
    assert.equal(parseIsoMicros("2026-07-24T02:00:00+02:00"), 1784851200_000000);
    assert.equal(parseIsoMicros("2026-07-24"), 1784851200_000000);
    for (const bad of ["", "2026-02-30", "2026-13-01", "yesterday", "2026-07-24T25:00:00Z"]) {
      assert.equal(parseIsoMicros(bad), null, bad);
    }
    assert.equal(parseUserTime("1784851200000"), 1784851200_000000);
  });

  test("round-trips every microsecond format we produce", () => {
    const rng = new Rng(3);
    for (let i = 0; i < 1000; i++) {
      const us = Math.floor(rng.next() * 4e15);
      assert.equal(parseIsoMicros(isoMicros(us)), us);
    }
  });
});

describe("JSON bytes", () => {
  test("numbers are written exactly as String() prints them", () => {
    const w = new JsonBytes(64);
    const written = (x: number) => {
      w.reset();
      w.number(x);
      return w.text();
    };
    const edges = [
      0,
      -0,
      1,
      0.1,
      0.2,
      0.1 + 0.2,
      0.505,
      1e-6,
      9.99e-7,
      1e-7,
      1e-8,
      0.00000123,
      0.12345678,
      0.123456789,
      67297.89023308,
      99999.99999999,
      9999999.99999999,
      1e7,
      1e21,
      123456789.5,
      -1,
      -0.5,
      5e-324,
      2 ** 53,
      Number.MAX_VALUE,
      Number.NaN,
      Number.POSITIVE_INFINITY,
    ];
    for (const x of edges) assert.equal(written(x), String(x), String(x));
    const rng = new Rng(13);
    for (let i = 0; i < 20_000; i++) {
      const decimals = Math.floor(rng.next() * 11);
      const x = Math.round(rng.next() * 10 ** Math.floor(rng.next() * 16)) / 10 ** decimals;
      assert.equal(written(x), String(x), String(x));
      const y = rng.next() * 10 ** Math.floor(rng.next() * 16 - 8);
      assert.equal(written(y), String(y), String(y));
    }
  });
});

describe("slugs", () => {
  test("our shape for every type, parsed in any case and with hr spellings", () => {
    assert.equal(formatSlug("btc", "4h", 1784851200), "btc-updown-4h-1784851200");
    assert.deepEqual(parseSlug("ETH-UpDown-24hr-1784851200"), {
      coin: "eth",
      marketType: "24h",
      startTime: 1784851200,
    });
    assert.equal(canonicalSlug("sol-updown-1hr-1784851200"), "sol-updown-1h-1784851200");
    assert.deepEqual(parseSlug("DOGE-updown-5m-1"), { coin: "doge", marketType: "5m", startTime: 1 });
    assert.equal(parseSlug("d-updown-5m-1"), null);
    assert.equal(parseSlug("btc-updown-7m-1"), null);
    assert.equal(parseMarketType("4HR"), "4h");
  });

  test("Polymarket's names for hourly and daily markets, in US Eastern time", () => {
    // 2026-06-03T07:00:00Z is 3am EDT.
    const start = Date.UTC(2026, 5, 3, 7) / 1000;
    assert.equal(polymarketSlug("btc", "1h", start), "bitcoin-up-or-down-june-3-2026-3am-et");
    assert.equal(
      polymarketSlug("eth", "1h", Date.UTC(2026, 0, 5, 17) / 1000),
      "ethereum-up-or-down-january-5-2026-12pm-et",
    );
    assert.equal(
      polymarketSlug("sol", "24h", Date.UTC(2026, 5, 2, 16) / 1000),
      "solana-up-or-down-on-june-3-2026",
    );
    assert.equal(polymarketSlug("btc", "5m", start), null);
  });

  test("Polymarket's hourly and daily slugs name their coin and type back", () => {
    const coins = ["btc", "eth", "sol"];
    assert.deepEqual(polymarketSlugSeries("bitcoin-up-or-down-june-3-2026-3am-et", coins), {
      coin: "btc",
      marketType: "1h",
    });
    assert.deepEqual(polymarketSlugSeries("solana-up-or-down-on-june-3-2026", coins), {
      coin: "sol",
      marketType: "24h",
    });
    assert.equal(polymarketSlugSeries("dogecoin-up-or-down-on-june-3-2026", coins), null);
    assert.equal(polymarketSlugSeries("btc-updown-5m-1784851200", coins), null);
  });
});

describe("market rules", () => {
  test("Up wins when the end price is at least the start price", () => {
    assert.equal(winnerOf(100, 100), "Up");
    assert.equal(winnerOf(100, 100.01), "Up");
    assert.equal(winnerOf(100, 99.99), "Down");
  });
});

describe("order books", () => {
  const upstream: OrderBook = {
    bids: [
      { price: 0.01, size: 3149725.72 },
      { price: 0.48, size: 100 },
      { price: 0.5, size: 150 },
    ],
    asks: [
      { price: 0.99, size: 156606.14 },
      { price: 0.53, size: 90 },
      { price: 0.51, size: 120 },
    ],
  };

  test("sorted best first whatever order upstream sends", () => {
    const b = sortBestFirst(upstream);
    assert.deepEqual(
      b.bids.map((l) => l.price),
      [0.5, 0.48, 0.01],
    );
    assert.deepEqual(
      b.asks.map((l) => l.price),
      [0.51, 0.53, 0.99],
    );
  });

  test("a book best first already is returned as it is", () => {
    const sorted = sortBestFirst(upstream);
    assert.notEqual(sorted, upstream, "upstream's order is sorted into a copy");
    assert.equal(sortBestFirst(sorted), sorted);
    const ties = {
      bids: [
        { price: 0.5, size: 1 },
        { price: 0.5, size: 2 },
      ],
      asks: [],
    };
    assert.equal(sortBestFirst(ties), ties);
  });

  test("mirrors(up, down) is booksEqual(mirrorBook(up), down)", () => {
    const up = sortBestFirst(upstream);
    const down = mirrorBook(up);
    assert.equal(mirrors(up, down), true);
    const offSize = {
      ...down,
      bids: [{ ...down.bids[0], size: down.bids[0].size + 1 }, ...down.bids.slice(1)],
    };
    const offPrice = { ...down, asks: [{ ...down.asks[0], price: 0.51 }, ...down.asks.slice(1)] };
    const shorter = { ...down, asks: down.asks.slice(1) };
    const swapped = { bids: down.asks, asks: down.bids };
    for (const other of [offSize, offPrice, shorter, swapped, EMPTY_BOOK]) {
      assert.equal(mirrors(up, other), booksEqual(mirrorBook(up), other));
      assert.equal(mirrors(up, other), false);
    }
    assert.equal(mirrors(EMPTY_BOOK, EMPTY_BOOK), true);
  });

  test("the Down book mirrors the Up book at 1-p in exact decimals", () => {
    assert.equal(complementPrice(0.51), 0.49);
    assert.equal(complementPrice(0.001), 0.999);
    const down = mirrorBook(sortBestFirst(upstream));
    assert.deepEqual(down.bids[0], { price: 0.49, size: 120 });
    assert.deepEqual(down.asks[0], { price: 0.5, size: 150 });
  });

  test("displayed price: midpoint unless the spread is wider than 0.10 or a side is empty", () => {
    const book = (bid: number | null, ask: number | null): OrderBook => ({
      bids: bid === null ? [] : [{ price: bid, size: 1 }],
      asks: ask === null ? [] : [{ price: ask, size: 1 }],
    });
    assert.equal(displayedPrice(book(0.51, 0.52), 0.9), 0.515);
    assert.equal(
      displayedPrice(book(0.51, 0.61), 0.9),
      0.56,
      "a spread of exactly 0.10 still shows the midpoint",
    );
    assert.equal(displayedPrice(book(0.5, 0.61), 0.9), 0.9, "wider than 0.10: last trade");
    assert.equal(displayedPrice(book(null, 0.6), 0.55), 0.55);
    assert.equal(displayedPrice(book(0.4, null), null), 0.4);
    assert.equal(displayedPrice(book(null, null), null), null);
  });

  test("the compact codec round-trips exactly, gives each side's best price alone, and renders the same bytes as JSON.stringify", () => {
    const rng = new Rng(11);
    for (let i = 0; i < 300; i++) {
      const tick = rng.next() < 0.5 ? 100 : 1000;
      const level = () => ({
        price: Math.max(1, Math.floor(rng.next() * (tick - 1))) / tick,
        size: Math.round(rng.next() * 10 ** (2 + Math.floor(rng.next() * 6))) / 100,
      });
      const side = () => Array.from({ length: Math.floor(rng.next() * 25) }, level);
      const up = sortBestFirst({ bids: side(), asks: side() });
      const down = rng.next() < 0.5 ? mirrorBook(up) : sortBestFirst({ bids: side(), asks: side() });
      const blob = encodeBooks(up, down);
      const decoded = decodeBooks(blob);
      assert.deepEqual(decoded, { up, down });
      for (const token of ["up", "down"] as const)
        for (const side of ["bids", "asks"] as const)
          assert.equal(
            bestPrice(blob, token, side),
            decoded[token][side][0]?.price ?? null,
            `${token} ${side}`,
          );
      const rendered = renderBooksJson(blob);
      assert.equal(rendered.up, JSON.stringify(up));
      assert.equal(rendered.down, JSON.stringify(down));
    }
  });

  test("renders the bytes of JSON.stringify at every price and size precision", () => {
    const rng = new Rng(12);
    for (let pd = 0; pd <= 8; pd++) {
      for (let sd = 0; sd <= 10; sd++) {
        const ticks = 10 ** pd;
        const level = () => ({
          price: Math.floor(rng.next() * (ticks + 1)) / ticks,
          // Sizes from below 1e-6 (printed with an exponent) to above 2^31 units.
          size: Math.round(rng.next() * 10 ** Math.floor(rng.next() * 14)) / 10 ** sd,
        });
        const side = () => Array.from({ length: Math.floor(rng.next() * 12) }, level);
        for (let i = 0; i < 20; i++) {
          const dedupe = (levels: { price: number; size: number }[]) =>
            levels.filter((l, k) => levels.findIndex((x) => x.price === l.price) === k);
          const up = sortBestFirst({ bids: dedupe(side()), asks: dedupe(side()) });
          const down = i % 2 ? mirrorBook(up) : sortBestFirst({ bids: dedupe(side()), asks: dedupe(side()) });
          const rendered = renderBooksJson(encodeBooks(up, down));
          assert.equal(rendered.up, JSON.stringify(up), `price decimals ${pd}, size decimals ${sd}`);
          assert.equal(rendered.down, JSON.stringify(down), `price decimals ${pd}, size decimals ${sd}`);
        }
      }
    }
  });

  test("a mirrored Down book costs nothing, and a 20-level book is small", () => {
    const up = sortBestFirst({
      bids: Array.from({ length: 20 }, (_, i) => ({ price: (50 - i) / 100, size: 100 + i * 37.25 })),
      asks: Array.from({ length: 20 }, (_, i) => ({ price: (51 + i) / 100, size: 90 + i * 41.5 })),
    });
    const mirrored = encodeBooks(up, mirrorBook(up));
    const json = JSON.stringify({ orderbook_up: up, orderbook_down: mirrorBook(up) });
    assert.ok(mirrored.length * 10 < json.length, `${mirrored.length} bytes for ${json.length} of JSON`);
    assert.ok(encodeBooks(up, { bids: [], asks: [] }).length > mirrored.length);
  });

  test("rejects values it cannot store exactly", () => {
    assert.throws(
      () => encodeBooks({ bids: [{ price: Math.PI / 10, size: 1 }], asks: [] }, { bids: [], asks: [] }),
      BookEncodingError,
    );
    assert.throws(
      () => encodeBooks({ bids: [{ price: 0.5, size: -1 }], asks: [] }, { bids: [], asks: [] }),
      BookEncodingError,
    );
  });
});

describe("settlement rules (DESIGN 3.4)", () => {
  test("each market's record says its feed; a TWAP lookback only for the TWAP stream", () => {
    assert.deepEqual(settlementOf("5m", { lookbackS: 60 }), { source: "chainlink_twap", lookbackS: 60 });
    assert.deepEqual(settlementOf("5m", null), { source: "chainlink", lookbackS: null });
    assert.deepEqual(settlementOf("4h", null), { source: "chainlink", lookbackS: null });
    assert.deepEqual(settlementOf("24h", null), { source: "binance", lookbackS: null });
  });

  test("where the prices are read: ticks, the hour's candles, the noon minute's close", () => {
    const chainlink = { source: "chainlink" as const, lookbackS: null };
    const binance = { source: "binance" as const, lookbackS: null };
    assert.deepEqual(pricePoints("5m", chainlink, 100, 400), {
      start: { kind: "tick", second: 100 },
      end: { kind: "tick", second: 400 },
    });
    assert.deepEqual(pricePoints("1h", binance, 3600, 7200), {
      start: { kind: "candle", openTime: 3600, field: "open" },
      end: { kind: "candle", openTime: 7140, field: "close" },
    });
    assert.deepEqual(pricePoints("24h", binance, 57600, 144000), {
      start: { kind: "candle", openTime: 57600, field: "close" },
      end: { kind: "candle", openTime: 144000, field: "close" },
    });
  });

  test("Up iff end >= start, except that a daily market's exact tie is 50-50", () => {
    assert.equal(settleWinner("5m", 10, 10), "Up");
    assert.equal(settleWinner("5m", 10, 9.99), "Down");
    assert.equal(settleWinner("24h", 10, 10), "50-50");
    assert.equal(settleWinner("24h", 10, 10.01), "Up");
  });
});
