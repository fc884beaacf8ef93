import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { BINANCE_1S, CoinPrices, readBinanceKlines } from "../../src/archive/coin-prices.ts";
import { ImportError } from "../../src/archive/upstream-import.ts";
import { HAND_MARKET } from "../helpers/app.ts";
import { writeZip } from "../helpers/zip.ts";

// 2025-01-01T00:00:00Z: spot files from this day on give microseconds.
const T_S = 1735689600;
const kline = (openTime: number, close: string) =>
  `${openTime},${close},${close},${close},${close},1.5,${openTime + 999},150,3,0.5,50,0`;

describe("--binance-klines: Binance's 1 s klines as a coin-price feed", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "klines-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("a zip of µs times and a CSV of ms times give the same prices; a close is in effect from the candle's end", async () => {
    const rows = (unit: number) =>
      [0, 1, 3].map((s, i) => kline((T_S + s) * unit, ["93000.5", "93001", "92999.25"][i])).join("\n");
    const zip = join(dir, "BTCUSDT-1s-2025-01-01.zip");
    writeZip(zip, `${rows(1_000_000)}\n`);
    const csv = join(dir, "BTCUSDT-1s-2025-01-01.csv");
    writeFileSync(
      csv,
      `open_time,open,high,low,close,volume,close_time,quote_volume,count,taker_buy_volume,taker_buy_quote_volume,ignore\n${rows(1000)}\n`,
    );
    for (const path of [zip, csv]) {
      const { feed } = await readBinanceKlines(path);
      assert.equal(feed.size, 3, path);
      // The candle opening at T closes at T + 1: nothing is known at T itself.
      assert.equal(feed.inEffectAt(T_S), null, path);
      assert.deepEqual(feed.inEffectAt(T_S + 1), { value: 93000.5, tickSecond: T_S + 1 }, path);
      assert.deepEqual(feed.inEffectAt(T_S + 2), { value: 93001, tickSecond: T_S + 2 }, path);
      // Second T+2's candle is missing: T+3 still reads the last close, one second stale.
      assert.deepEqual(feed.inEffectAt(T_S + 3), { value: 93001, tickSecond: T_S + 2 }, path);
      assert.deepEqual(feed.inEffectAt(T_S + 4), { value: 92999.25, tickSecond: T_S + 4 }, path);
    }
  });

  test("the 1m candles they make up: the open of a minute's first second, the close of its last", async () => {
    // T_S is a minute's first second. Minute 0 whole; minute 1 without its last second.
    const seconds = Array.from({ length: 119 }, (_, s) => s);
    const line = (s: number) =>
      `${(T_S + s) * 1000},${100 + s},${102 + s},${99 + s},${100.5 + s},1,${(T_S + s) * 1000 + 999},1,1,1,1,0`;
    const path = join(dir, "BTCUSDT-1s-minutes.csv");
    writeFileSync(path, `${seconds.map(line).join("\n")}\n`);
    const klines = await readBinanceKlines(path);
    const prices = new CoinPrices(10);
    prices.addKlines("btc", klines);
    const candle = (openTime: number, field: "open" | "close") =>
      prices.candlePrice("btc", { kind: "candle", openTime, field });
    assert.equal(candle(T_S, "open"), 100);
    assert.equal(candle(T_S, "close"), 159.5);
    assert.equal(candle(T_S + 60, "open"), 160);
    assert.equal(candle(T_S + 60, "close"), null, "its last second is missing");
    assert.equal(candle(T_S + 120, "open"), null, "not in the file");
    assert.equal(prices.candlePrice("eth", { kind: "candle", openTime: T_S, field: "open" }), null);
    // The closes are the binance_1s feed as before.
    assert.equal(prices.forMarket({ ...HAND_MARKET, coin: "btc" })?.source, BINANCE_1S);
  });

  test("a broken zip, a bad close or open and a file without rows are errors naming the file", async () => {
    const broken = join(dir, "BTCUSDT-1s-broken.zip");
    writeFileSync(broken, "PK not really a zip");
    const badClose = join(dir, "BTCUSDT-1s-bad.csv");
    writeFileSync(badClose, `${kline(T_S * 1000, "n/a")}\n`);
    const badOpen = join(dir, "BTCUSDT-1s-bad-open.csv");
    writeFileSync(badOpen, `${kline(T_S * 1000, "93000").replace(",93000,", ",x,")}\n`);
    const empty = join(dir, "BTCUSDT-1s-empty.csv");
    writeFileSync(empty, "open_time,open,high,low,close\n");
    for (const [path, message] of [
      [broken, /zip|central directory/i],
      [badClose, /close is not a number: n\/a/],
      [badOpen, /open is not a number: x/],
      [empty, /no kline rows/],
    ] as const) {
      await assert.rejects(readBinanceKlines(path), (err: unknown) => {
        assert.ok(err instanceof ImportError, String(err));
        assert.ok(err.message.includes(path), err.message);
        assert.match(err.message, message);
        return true;
      });
    }
  });
});
