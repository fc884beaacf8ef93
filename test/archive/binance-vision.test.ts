import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { importVisionFile, visionMicros, visionPaths } from "../../src/archive/binance-vision.ts";
import { SqliteStore } from "../../src/store/dialects/sqlite/sqlite-store.ts";
import { openStore } from "../../src/store/open.ts";
import { runUpdown } from "../helpers/cli.ts";
import { writeZip } from "../helpers/zip.ts";

const COINS = ["btc", "eth"];

function writeChecksum(path: string, hash?: string): void {
  const sha = hash ?? createHash("sha256").update(readFileSync(path)).digest("hex");
  writeFileSync(`${path}.CHECKSUM`, `${sha}  ${basename(path)}\n`);
}

// 2025-01-01T00:00:00Z: spot files from this day on give microseconds.
const T_MS = 1735689600000;
const T_US = T_MS * 1000;

const KLINE_HEADER =
  "open_time,open,high,low,close,volume,close_time,quote_volume,count,taker_buy_volume,taker_buy_quote_volume,ignore";

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "updown-vision-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function freshStore(): Promise<SqliteStore> {
  const store = new SqliteStore(":memory:");
  await store.migrate();
  return store;
}

describe("import binance-vision", () => {
  test("times in ms and in µs are the same instants", () => {
    assert.equal(visionMicros(String(T_MS)), T_US);
    assert.equal(visionMicros(String(T_US + 10866)), T_US + 10866);
    assert.throws(() => visionMicros("1.5e12"), /not a time/);
  });

  test("spot 1s klines in µs (no header: spot), with a verified CHECKSUM; a second import adds nothing", async () => {
    const path = join(dir, "a", "BTCUSDT-1s-2025-01-01.zip");
    writeZip(
      path,
      [0, 1, 2]
        .map(
          (i) =>
            `${T_US + i * 1e6},${94000 + i}.5,${94001 + i},${93999 + i},${94000 + i}.25,1.5,${T_US + i * 1e6 + 999999},141000.75,${10 + i},0.5,47000.25,0`,
        )
        .join("\n"),
    );
    writeChecksum(path);
    const store = await freshStore();
    try {
      const report = await importVisionFile(store.exchange, path, COINS);
      assert.deepEqual(
        { ...report, file: basename(report.file) },
        {
          file: "BTCUSDT-1s-2025-01-01.zip",
          kind: "klines",
          interval: "1s",
          coin: "btc",
          venue: "spot",
          rows: 3,
          added: 3,
          checksum: "verified",
        },
      );
      const { candles } = await store.exchange.seriesPage(
        { kind: "candles", coin: "btc", venue: "spot", interval: "1s" },
        null,
        10,
      );
      assert.deepEqual(candles?.[1], {
        coin: "btc",
        venue: "spot",
        interval: "1s",
        openTime: T_US + 1e6,
        open: 94001.5,
        high: 94002,
        low: 94000,
        close: 94001.25,
        volume: 1.5,
        quoteVolume: 141000.75,
        trades: 11,
        takerBuyVolume: 0.5,
        takerBuyQuoteVolume: 47000.25,
      });
      const again = await importVisionFile(store.exchange, path, COINS);
      assert.equal(again.added, 0);
      assert.equal(again.rows, 3);
    } finally {
      await store.close();
    }
  });

  test("futures files (a header line) in ms: 1m klines, aggTrades, fundingRate and metrics", async () => {
    const folder = join(dir, "futures-um");
    writeZip(
      join(folder, "ETHUSDT-1m-2024-12.zip"),
      `${KLINE_HEADER}\n${T_MS - 60_000},3300.1,3301,3299,3300.5,12.5,${T_MS - 1},41256.25,40,6.25,20628.1,0\n`,
    );
    writeZip(
      join(folder, "ETHUSDT-aggTrades-2024-12-31.zip"),
      "agg_trade_id,price,quantity,first_trade_id,last_trade_id,transact_time,is_buyer_maker\n" +
        `101,3300.1,0.5,200,202,${T_MS - 5},true\n102,3300.2,1.25,203,203,${T_MS - 2},false\n`,
    );
    writeZip(
      join(folder, "ETHUSDT-fundingRate-2024-12.zip"),
      `calc_time,funding_interval_hours,last_funding_rate\n${T_MS - 8 * 3600_000},8,0.00010000\n${T_MS},8,-0.00002500\n`,
      { stored: true },
    );
    writeZip(
      join(folder, "ETHUSDT-metrics-2024-12-31.zip"),
      "create_time,symbol,sum_open_interest,sum_open_interest_value,count_toptrader_long_short_ratio,sum_toptrader_long_short_ratio,count_long_short_ratio,sum_taker_long_short_vol_ratio\n" +
        "2024-12-31 23:55:00,ETHUSDT,2000123.5,6600407550.25,1.9,3.2,1.4,1.08\n",
    );
    const store = await freshStore();
    try {
      const paths = visionPaths([folder]);
      assert.equal(paths.length, 4);
      const reports = [];
      for (const p of paths) reports.push(await importVisionFile(store.exchange, p, COINS));
      assert.deepEqual(
        reports.map((r) => [r.kind, r.venue, r.rows, r.added, r.checksum]),
        [
          ["klines", "futures", 1, 1, "absent"],
          ["aggTrades", "futures", 2, 2, "absent"],
          ["fundingRate", "futures", 2, 2, "absent"],
          ["metrics", "futures", 1, 1, "absent"],
        ],
      );
      const candles = await store.exchange.candlePage("eth", "futures", "1m", {
        order: "asc",
        limit: 5,
        offset: 0,
      });
      assert.equal(candles[0].openTime, T_US - 60e6);
      assert.equal(candles[0].close, 3300.5);
      assert.deepEqual(await store.exchange.latestTrades("eth", "futures", 5), [
        {
          coin: "eth",
          venue: "futures",
          id: 102,
          time: T_US - 2000,
          price: 3300.2,
          qty: 1.25,
          buyerMaker: false,
        },
        {
          coin: "eth",
          venue: "futures",
          id: 101,
          time: T_US - 5000,
          price: 3300.1,
          qty: 0.5,
          buyerMaker: true,
        },
      ]);
      const funding = await store.exchange.fundingPage("eth", { order: "asc", limit: 5, offset: 0 });
      assert.deepEqual(
        funding.map((f) => [f.time, f.rate, f.markPrice]),
        [
          [T_US - 8 * 3600e6, 0.0001],
          [T_US, -0.000025],
        ].map((x) => [...x, null]),
      );
      const oi = await store.exchange.openInterestPage("eth", { order: "asc", limit: 5, offset: 0 });
      assert.deepEqual(oi, [
        { coin: "eth", time: T_US - 300e6, openInterest: 2000123.5, openInterestValue: 6600407550.25 },
      ]);
    } finally {
      await store.close();
    }
  });

  test("a CHECKSUM mismatch is a clear error and nothing is written", async () => {
    const path = join(dir, "bad", "BTCUSDT-1m-2025-01-01.zip");
    writeZip(path, `${T_US},1,1,1,1,1,${T_US + 59_999_999},1,1,1,1,0\n`);
    writeChecksum(path, "0".repeat(64));
    const store = await freshStore();
    try {
      await assert.rejects(
        importVisionFile(store.exchange, path, COINS),
        /BTCUSDT-1m-2025-01-01\.zip: checksum mismatch/,
      );
      assert.equal(await store.exchange.countCandles("btc", "spot", "1m"), 0);
    } finally {
      await store.close();
    }
  });

  test("a corrupted zip fails on its CRC; spot aggTrades, other intervals and unknown coins are refused plainly", async () => {
    const store = await freshStore();
    try {
      const corrupt = join(dir, "crc", "BTCUSDT-1m-2025-01-02.zip");
      writeZip(corrupt, `${T_US},1,1,1,1,1,${T_US + 59_999_999},1,1,1,1,0\n`, { stored: true });
      const bytes = readFileSync(corrupt);
      const at = bytes.indexOf(Buffer.from(String(T_US)));
      bytes[at] = "2".charCodeAt(0);
      writeFileSync(corrupt, bytes);
      await assert.rejects(importVisionFile(store.exchange, corrupt, COINS), /CRC-32 mismatch/);

      const spotAgg = join(dir, "spot", "BTCUSDT-aggTrades-2025-01-01.zip");
      writeZip(spotAgg, `1,94000.1,0.5,10,12,${T_US},True,True\n`);
      await assert.rejects(
        importVisionFile(store.exchange, spotAgg, COINS),
        /spot aggTrades cannot be imported/,
      );
      const hourly = join(dir, "x", "BTCUSDT-1h-2025-01.zip");
      writeZip(hourly, "1,2\n");
      await assert.rejects(importVisionFile(store.exchange, hourly, COINS), /1h files are not imported/);
      const doge = join(dir, "x", "DOGEUSDT-1m-2025-01.zip");
      writeZip(doge, "1,2\n");
      await assert.rejects(
        importVisionFile(store.exchange, doge, COINS),
        /DOGEUSDT is not a configured coin/,
      );
      assert.equal((await store.exchange.listSeries()).length, 0);
    } finally {
      await store.close();
    }
  });

  test("updown import binance-vision imports a folder and says what each file was", async () => {
    const folder = join(dir, "cli", "data", "spot", "daily", "trades", "BTCUSDT");
    writeZip(join(folder, "BTCUSDT-trades-2025-01-01.zip"), `7,94000.5,0.01,940.005,${T_US + 3},true,true\n`);
    const db = `sqlite:${join(dir, "cli.db")}`;
    const res = runUpdown(["import", "binance-vision", join(dir, "cli"), "--database-url", db]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(
      res.stdout,
      "BTCUSDT-trades-2025-01-01.zip: btc spot trades, 1 rows (1 new), checksum absent\n",
    );
    const store = await openStore(db);
    try {
      assert.deepEqual(await store.exchange.latestTrades("btc", "spot", 5), [
        { coin: "btc", venue: "spot", id: 7, time: T_US + 3, price: 94000.5, qty: 0.01, buyerMaker: true },
      ]);
    } finally {
      await store.close();
    }
  });
});
