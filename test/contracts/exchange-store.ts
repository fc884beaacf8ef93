import assert from "node:assert/strict";
import { EMPTY_BOOK } from "../../src/domain/book.ts";
import { encodeBooks } from "../../src/wire/book-codec.ts";
import type {
  CandleRow,
  DepthRow,
  FundingRow,
  MarkPriceRow,
  OpenInterestRow,
  TradeRow,
} from "../../src/domain/exchange.ts";
import type {
  Candle,
  ExchangeSeries,
  ExchangeStore,
  SeriesCursor,
} from "../../src/store/ports/exchange-store.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { type StoreTests, describeStoreTests } from "./store-tests.ts";

/** 2026-07-24T00:00:00Z, a Friday. */
const T0 = 1784851200_000_000;
const SECOND = 1_000_000;
const MINUTE = 60 * SECOND;

export function depthRow(
  i: number,
  coin: "btc" | "eth" = "btc",
  venue: "spot" | "futures" = "spot",
): DepthRow {
  const bid = 65000 + i / 100;
  const book = {
    bids: Array.from({ length: 20 }, (_, k) => ({
      price: Math.round((bid - k / 100) * 100) / 100,
      size: 0.5 + k,
    })),
    asks: Array.from({ length: 20 }, (_, k) => ({
      price: Math.round((bid + 0.01 + k / 100) * 100) / 100,
      size: Math.round(123 * (k + 1)) / 1e5,
    })),
  };
  return { coin, venue, time: T0 + i * SECOND, books: encodeBooks(book, EMPTY_BOOK) };
}

function trade(id: number, venue: "spot" | "futures" = "spot"): TradeRow {
  return {
    coin: "btc",
    venue,
    id,
    time: T0 + id * 1000,
    price: 65000.5 + id / 100,
    qty: 0.001 * id,
    buyerMaker: id % 2 === 0,
  };
}

/** A 1m candle whose numbers say which minute it is (open i, close i + 0.5, volume 0.1). */
function candle(minute: number, venue: "spot" | "futures" = "spot"): CandleRow {
  return {
    coin: "btc",
    venue,
    interval: "1m",
    openTime: T0 + minute * MINUTE,
    open: 100 + minute,
    high: 101 + minute,
    low: 99 + minute,
    close: 100.5 + minute,
    volume: 0.1,
    quoteVolume: 10.2,
    trades: 3,
    takerBuyVolume: 0.05,
    takerBuyQuoteVolume: 5.1,
  };
}

const funding = (i: number): FundingRow => ({
  coin: "btc",
  time: T0 + i * 8 * 3600 * SECOND,
  rate: 0.0001 * (i + 1),
  markPrice: i === 0 ? null : 65000 + i,
});

const openInterest = (i: number): OpenInterestRow => ({
  coin: "btc",
  time: T0 + i * 5 * MINUTE,
  openInterest: 80000.123 + i,
  openInterestValue: i === 0 ? null : 5.2e9 + i,
});

const markPrice = (i: number): MarkPriceRow => ({
  coin: "btc",
  time: T0 + i * SECOND,
  markPrice: 65001.12345678 + i,
  indexPrice: i === 1 ? null : 65000.5,
  estimatedSettlePrice: 65000.9,
  fundingRate: 0.0001,
  nextFundingTime: T0 + 8 * 3600 * SECOND,
});

/** Minutes 0..11 but 7 (see the candle test) as 5m buckets: open of the first, close of the last, sums. */
const FIVE_MINUTE_CANDLES: Candle[] = [
  {
    openTime: T0,
    lastOpenTime: T0 + 4 * MINUTE,
    open: 100,
    high: 105,
    low: 99,
    close: 104.5,
    volume: 0.5,
    quoteVolume: 51,
    trades: 15,
    takerBuyVolume: 0.25,
    takerBuyQuoteVolume: 25.5,
  },
  {
    openTime: T0 + 5 * MINUTE,
    lastOpenTime: T0 + 9 * MINUTE,
    open: 105,
    high: 110,
    low: 104,
    close: 109.5,
    volume: 0.4,
    quoteVolume: 40.8,
    trades: 12,
    takerBuyVolume: 0.2,
    takerBuyQuoteVolume: 20.4,
  },
  {
    openTime: T0 + 10 * MINUTE,
    lastOpenTime: T0 + 11 * MINUTE,
    open: 110,
    high: 112,
    low: 109,
    close: 111.5,
    volume: 0.2,
    quoteVolume: 20.4,
    trades: 6,
    takerBuyVolume: 0.1,
    takerBuyQuoteVolume: 10.2,
  },
];

/** A series' extent as listSeries gives it (an interval only for candles). */
function extent(kind: string, coin: string, venue: string, rows: number, last: number, interval?: string) {
  return interval === undefined
    ? { kind, coin, venue, rows, last }
    : { kind, coin, venue, interval, rows, last };
}

/** Every row of a series, `limit` at a time, each page continuing after the last row of the one before. */
async function readAll(exchange: ExchangeStore, s: ExchangeSeries, limit: number): Promise<unknown[]> {
  const rows: unknown[] = [];
  let after: SeriesCursor | null = null;
  for (;;) {
    const batch = await exchange.seriesPage(s, after, limit);
    assert.equal(Object.keys(batch).length, 1, "a batch of the series' kind only");
    const page = Object.values(batch)[0] as { time?: number; openTime?: number; id?: number }[];
    assert.ok(page.length <= limit);
    rows.push(...page);
    if (page.length < limit) return rows;
    const last = page[page.length - 1];
    after = { time: last.time ?? last.openTime!, id: last.id };
  }
}

/** Every row the tests before the series test store, by series name, in time order. */
function storedRows(hourly: CandleRow, tied: TradeRow[]): Record<string, unknown[]> {
  return {
    "depth btc futures": [depthRow(0, "btc", "futures")],
    "depth btc spot": Array.from({ length: 10 }, (_, i) => depthRow(i)),
    "trades btc futures": [
      trade(1, "futures"),
      ...Array.from({ length: 1000 }, (_, i) => trade(1000 + i, "futures")),
    ],
    "trades btc spot": [trade(1), trade(2), trade(3)],
    "trades eth spot": tied,
    "candles btc spot 1h": [hourly],
    "candles btc spot 1m": [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11].map((m) => candle(m)),
    "funding btc futures": [funding(0), funding(1), funding(2)],
    "open_interest btc futures": [openInterest(0), openInterest(1), openInterest(2)],
    "mark_price btc futures": [markPrice(0), markPrice(1), markPrice(2)],
  };
}

const EXCHANGE_STORE_TESTS: StoreTests<ExchangeStore> = {
  "a batch of every kind is written once; replaying it or an overlap adds only new rows": async (
    exchange,
  ) => {
    const batch = {
      depth: [depthRow(0), depthRow(1), depthRow(0, "btc", "futures")],
      trades: [trade(1), trade(2), trade(1, "futures")],
      candles: [candle(0), candle(1)],
      funding: [funding(0)],
      openInterest: [openInterest(0)],
      markPrices: [markPrice(0), markPrice(1)],
    };
    assert.deepEqual(await exchange.insertBatch(batch), {
      depth: 3,
      trades: 3,
      candles: 2,
      funding: 1,
      openInterest: 1,
      markPrices: 2,
    });
    assert.deepEqual(await exchange.insertBatch(batch), {
      depth: 0,
      trades: 0,
      candles: 0,
      funding: 0,
      openInterest: 0,
      markPrices: 0,
    });
    // The first write wins: a second write of a stored key with other values changes nothing.
    const counts = await exchange.insertBatch({
      depth: [depthRow(1), depthRow(2)],
      trades: [{ ...trade(2), price: 1 }, trade(3), trade(3)],
      candles: [{ ...candle(1), close: 1 }, candle(2)],
    });
    assert.deepEqual(counts, {
      depth: 1,
      trades: 1,
      candles: 1,
      funding: 0,
      openInterest: 0,
      markPrices: 0,
    });
    assert.equal(await exchange.countDepth("btc", "spot"), 3);
    assert.equal(await exchange.countDepth("btc", "futures"), 1);
    const trades = await exchange.latestTrades("btc", "spot", 10);
    assert.deepEqual(trades, [trade(3), trade(2), trade(1)]);
  },
  "a batch with a bad row writes nothing": async (exchange) => {
    const bad = { ...candle(50), open: null as unknown as number };
    await assert.rejects(exchange.insertBatch({ depth: [depthRow(50)], candles: [candle(51), bad] }));
    assert.equal(await exchange.countDepth("btc", "spot", T0 + 50 * SECOND), 0);
    assert.equal(await exchange.countCandles("btc", "spot", "1m", T0 + 51 * MINUTE), 0);
  },
  "depth snapshots read back byte for byte, newest first, in ranges and pages": async (exchange) => {
    await exchange.insertBatch({ depth: Array.from({ length: 10 }, (_, i) => depthRow(i)) });
    assert.deepEqual(await exchange.latestDepth("btc", "spot"), depthRow(9));
    assert.equal(await exchange.latestDepth("eth", "spot"), null);
    const desc = await exchange.depthPage("btc", "spot", { order: "desc", limit: 3, offset: 1 });
    assert.deepEqual(desc, [depthRow(8), depthRow(7), depthRow(6)]);
    const ranged = await exchange.depthPage("btc", "spot", {
      order: "asc",
      limit: 100,
      offset: 0,
      from: T0 + 2 * SECOND,
      to: T0 + 4 * SECOND,
    });
    assert.deepEqual(ranged, [depthRow(2), depthRow(3), depthRow(4)]);
    assert.equal(await exchange.countDepth("btc", "spot", T0 + 2 * SECOND, T0 + 4 * SECOND), 3);
    assert.equal(await exchange.countDepth("btc", "spot"), 10);
    assert.equal(await exchange.latestTime("depth", "btc", "spot"), T0 + 9 * SECOND);
  },
  "1m candles read as stored; wider intervals are aggregated from them": async (exchange) => {
    // Minutes 0..11 stored (0..2 from the first test), with minute 7 missing.
    await exchange.insertBatch({ candles: [3, 4, 5, 6, 8, 9, 10, 11].map((m) => candle(m)) });
    const ones = await exchange.candlePage("btc", "spot", "1m", {
      order: "desc",
      limit: 2,
      offset: 0,
    });
    assert.deepEqual(
      ones.map((c) => [c.openTime, c.open, c.close]),
      [
        [T0 + 11 * MINUTE, 111, 111.5],
        [T0 + 10 * MINUTE, 110, 110.5],
      ],
    );
    assert.equal(await exchange.countCandles("btc", "spot", "1m"), 11);
    const fives = await exchange.candlePage("btc", "spot", "5m", {
      order: "asc",
      limit: 10,
      offset: 0,
    });
    assert.deepEqual(fives, FIVE_MINUTE_CANDLES);
    assert.equal(await exchange.countCandles("btc", "spot", "5m"), 3);
    // A bucket opening before start_time is left out whole; end_time takes the bucket opening at it.
    const ranged = await exchange.candlePage("btc", "spot", "5m", {
      order: "desc",
      limit: 10,
      offset: 0,
      from: T0 + 1 * MINUTE,
      to: T0 + 10 * MINUTE,
    });
    assert.deepEqual(
      ranged.map((c) => [c.openTime, c.open, c.close]),
      [
        [T0 + 10 * MINUTE, 110, 111.5],
        [T0 + 5 * MINUTE, 105, 109.5],
      ],
    );
    assert.equal(await exchange.countCandles("btc", "spot", "5m", T0 + MINUTE, T0 + 10 * MINUTE), 2);
    const paged = await exchange.candlePage("btc", "spot", "5m", {
      order: "desc",
      limit: 1,
      offset: 1,
    });
    assert.deepEqual(
      paged.map((c) => c.openTime),
      [T0 + 5 * MINUTE],
    );
    for (const interval of ["1h", "1d", "1w", "1M"]) {
      const [one] = await exchange.candlePage("btc", "spot", interval, {
        order: "desc",
        limit: 5,
        offset: 0,
      });
      assert.equal(one.open, 100, interval);
      assert.equal(one.close, 111.5, interval);
      assert.equal(one.trades, 33, interval);
      assert.equal(await exchange.countCandles("btc", "spot", interval), 1, interval);
    }
    const opens = async (interval: string) =>
      (await exchange.candlePage("btc", "spot", interval, { order: "asc", limit: 1, offset: 0 }))[0].openTime;
    // Weeks open on Monday (2026-07-20), months on the 1st, 3-day buckets on multiples of 3 days.
    assert.equal(await opens("1w"), Date.UTC(2026, 6, 20) * 1000);
    assert.equal(await opens("1M"), Date.UTC(2026, 6, 1) * 1000);
    assert.equal(await opens("3d"), Math.floor(T0 / (3 * 86400e6)) * 3 * 86400e6);
    assert.equal(await exchange.latestTime("candles", "btc", "spot"), T0 + 11 * MINUTE);
    assert.deepEqual(
      await exchange.candlePage("btc", "futures", "5m", { order: "asc", limit: 5, offset: 0 }),
      [],
    );
  },
  "funding rates, open interest and mark prices page by time with nulls kept": async (exchange) => {
    await exchange.insertBatch({
      funding: [funding(1), funding(2)],
      openInterest: [openInterest(1), openInterest(2)],
      markPrices: [markPrice(2)],
    });
    assert.deepEqual(await exchange.fundingPage("btc", { order: "desc", limit: 10, offset: 0 }), [
      funding(2),
      funding(1),
      funding(0),
    ]);
    assert.deepEqual(
      await exchange.fundingPage("btc", { order: "asc", limit: 1, offset: 1, from: funding(1).time }),
      [funding(2)],
    );
    assert.equal(await exchange.countFunding("btc", funding(1).time), 2);
    assert.deepEqual(await exchange.openInterestPage("btc", { order: "asc", limit: 10, offset: 0 }), [
      openInterest(0),
      openInterest(1),
      openInterest(2),
    ]);
    assert.equal(await exchange.countOpenInterest("btc"), 3);
    assert.equal(await exchange.countOpenInterest("eth"), 0);
    assert.deepEqual(await exchange.markPricePage("btc", { order: "desc", limit: 2, offset: 0 }), [
      markPrice(2),
      markPrice(1),
    ]);
    assert.equal(await exchange.countMarkPrices("btc", undefined, markPrice(1).time), 2);
    assert.equal(await exchange.latestTime("funding", "btc", "futures"), funding(2).time);
    assert.equal(await exchange.latestTime("mark_price", "eth", "futures"), null);
  },
  "a thousand trades in one batch are all stored and the latest come newest first": async (exchange) => {
    const many = Array.from({ length: 1000 }, (_, i) => trade(1000 + i, "futures"));
    assert.equal((await exchange.insertBatch({ trades: many })).trades, 1000);
    const latest = await exchange.latestTrades("btc", "futures", 3);
    assert.deepEqual(
      latest.map((t) => t.id),
      [1999, 1998, 1997],
    );
    assert.equal(await exchange.latestTime("trades", "btc", "futures"), trade(1999).time);
  },
  "every series lists with its count and latest time and reads back as stored, in time order after a cursor":
    async (exchange) => {
      // Stored as given and never aggregated: a candle of another interval is a series of its own.
      const hourly: CandleRow = { ...candle(60), interval: "1h", open: 1 };
      // Trades sharing a time come by id; a lower id at a later time comes later.
      const at = (id: number, time: number): TradeRow => ({ ...trade(id), coin: "eth", time });
      const tied = [
        at(1, T0),
        at(2, T0),
        at(3, T0),
        at(4, T0 + SECOND),
        at(5, T0 + SECOND),
        at(0, T0 + 2 * SECOND),
      ];
      await exchange.insertBatch({ candles: [hourly], trades: tied.toReversed() });

      const series = await exchange.listSeries();
      assert.deepEqual(series, [
        extent("depth", "btc", "futures", 1, T0),
        extent("depth", "btc", "spot", 10, T0 + 9 * SECOND),
        extent("trades", "btc", "futures", 1001, trade(1999).time),
        extent("trades", "btc", "spot", 3, trade(3).time),
        extent("trades", "eth", "spot", 6, T0 + 2 * SECOND),
        extent("candles", "btc", "spot", 1, hourly.openTime, "1h"),
        extent("candles", "btc", "spot", 11, T0 + 11 * MINUTE, "1m"),
        extent("funding", "btc", "futures", 3, funding(2).time),
        extent("open_interest", "btc", "futures", 3, openInterest(2).time),
        extent("mark_price", "btc", "futures", 3, markPrice(2).time),
      ]);
      for (const s of series) {
        assert.deepEqual(await exchange.seriesExtent(s), { rows: s.rows, last: s.last }, JSON.stringify(s));
        if (s.interval !== "1h") {
          assert.equal(await exchange.latestTime(s.kind, s.coin, s.venue), s.last, JSON.stringify(s));
        }
      }
      assert.deepEqual(await exchange.seriesExtent({ kind: "depth", coin: "eth", venue: "futures" }), {
        rows: 0,
        last: null,
      });

      const expected = storedRows(hourly, tied);
      for (const s of series) {
        const name = [s.kind, s.coin, s.venue, s.interval].filter(Boolean).join(" ");
        // 2 at a time splits the trades at T0 between pages.
        assert.deepEqual(await readAll(exchange, s, s.rows > 100 ? 97 : 2), expected[name], name);
      }

      const eth: ExchangeSeries = { kind: "trades", coin: "eth", venue: "spot" };
      assert.deepEqual(await exchange.seriesPage(eth, { time: T0 }, 10), { trades: tied.slice(3) });
      assert.deepEqual(await exchange.seriesPage(eth, { time: T0, id: 2 }, 10), {
        trades: tied.slice(2),
      });
      assert.deepEqual(await exchange.seriesPage(eth, { time: T0 - 1 }, 1), {
        trades: tied.slice(0, 1),
      });
      assert.deepEqual(
        await exchange.seriesPage(
          { kind: "depth", coin: "btc", venue: "spot" },
          { time: T0 + 7 * SECOND },
          10,
        ),
        { depth: [depthRow(8), depthRow(9)] },
      );
      assert.deepEqual(
        await exchange.seriesPage(
          { kind: "funding", coin: "btc", venue: "futures" },
          { time: funding(2).time },
          10,
        ),
        { funding: [] },
      );
    },
  "wider candles sum volumes exactly: the same answer whatever order the store adds them in": async (
    exchange,
  ) => {
    // Added in this order the doubles give 168801858.4838552; the decimal sum is 168801858.48385516.
    const quote = [
      49453747.0608454, 22058883.81162849, 23574182.97918641, 29218718.22582537, 44496326.40636949,
    ];
    const rows = quote.map((q, i): CandleRow => ({
      ...candle(i),
      coin: "eth",
      venue: "futures",
      volume: 0.1 + i / 10,
      quoteVolume: q,
      takerBuyVolume: 0.00000001,
      takerBuyQuoteVolume: quote[(i + 1) % quote.length],
    }));
    await exchange.insertBatch({ candles: rows });
    const [five] = await exchange.candlePage("eth", "futures", "5m", {
      order: "asc",
      limit: 1,
      offset: 0,
    });
    assert.equal(
      quote.reduce((a, b) => a + b, 0),
      168801858.4838552,
    );
    assert.equal(five.quoteVolume, 168801858.48385516);
    assert.equal(five.volume, 1.5);
    assert.equal(five.takerBuyVolume, 0.00000005);
    assert.equal(five.takerBuyQuoteVolume, 168801858.48385516);
  },

  "the last trade of each second: the latest of (s - 1, s] by time, then id, within the range": async (
    exchange,
  ) => {
    const at = (id: number, ms: number, price: number): TradeRow => ({
      coin: "sol",
      venue: "spot",
      id,
      time: T0 + ms * 1000,
      price,
      qty: 1,
      buyerMaker: false,
    });
    // Second 0 ends with a trade at exactly 0 ms; (0, 1 s] holds 200 ms, 1000 ms (two, ids 4 and 3:
    // id 4 is later); (1 s, 2 s] holds 1500 ms; then 3000 ms, out of the range asked.
    await exchange.insertBatch({
      trades: [
        at(1, -400, 10),
        at(2, 0, 11),
        at(5, 200, 12),
        at(3, 1000, 13),
        at(4, 1000, 14),
        at(6, 1500, 15),
        at(7, 3000, 16),
      ],
    });
    assert.deepEqual(await exchange.lastTradeEachSecond("sol", "spot", T0 - SECOND, T0 + 2 * SECOND), [
      { time: T0, price: 11 },
      { time: T0 + SECOND, price: 14 },
      { time: T0 + 1500 * 1000, price: 15 },
    ]);
    // The range bounds the trades read, not the seconds: from 100 ms on, second 0 has none.
    assert.deepEqual(await exchange.lastTradeEachSecond("sol", "spot", T0 + 100_000, T0 + SECOND - 1), [
      { time: T0 + 200_000, price: 12 },
    ]);
    assert.deepEqual(await exchange.lastTradeEachSecond("sol", "futures", T0, T0 + 10 * SECOND), []);
  },
  "1s candles, as imported, read as stored, apart from the 1m ones and never in their aggregates": async (
    exchange,
  ) => {
    const second = (s: number): CandleRow => ({
      ...candle(0),
      coin: "eth",
      interval: "1s",
      openTime: T0 + s * 1_000_000,
      open: 3000 + s,
      close: 3000.5 + s,
    });
    const minute: CandleRow = { ...candle(0), coin: "eth", open: 2900, close: 2950 };
    // Seconds 0..9 with second 4 missing, and one 1m candle over the same minute.
    await exchange.insertBatch({ candles: [0, 1, 2, 3, 5, 6, 7, 8, 9].map(second) });
    await exchange.insertBatch({ candles: [minute] });
    const range = { from: T0 + 2_000_000, to: T0 + 6_000_000 };
    const seconds = await exchange.candlePage("eth", "spot", "1s", {
      order: "asc",
      limit: 10,
      offset: 0,
      ...range,
    });
    assert.deepEqual(
      seconds.map((c) => [c.openTime, c.open, c.close]),
      [2, 3, 5, 6].map((s) => [T0 + s * 1_000_000, 3000 + s, 3000.5 + s]),
    );
    assert.equal(await exchange.countCandles("eth", "spot", "1s", range.from, range.to), 4);
    assert.equal(await exchange.countCandles("eth", "spot", "1s"), 9);
    const newest = await exchange.candlePage("eth", "spot", "1s", { order: "desc", limit: 2, offset: 1 });
    assert.deepEqual(
      newest.map((c) => c.openTime),
      [T0 + 8_000_000, T0 + 7_000_000],
    );
    // 1m and wider read the 1m candles only.
    assert.deepEqual(
      (await exchange.candlePage("eth", "spot", "1m", { order: "asc", limit: 10, offset: 0 })).map(
        (c) => c.open,
      ),
      [2900],
    );
    const [five] = await exchange.candlePage("eth", "spot", "5m", { order: "asc", limit: 10, offset: 0 });
    assert.deepEqual([five.open, five.close], [2900, 2950]);
    assert.equal(await exchange.countCandles("eth", "spot", "5m"), 1);
  },
};

/**
 * The behaviour every ExchangeStore shares; each backend's test file calls this with a factory for an
 * empty, migrated store.
 */
export function exchangeStoreContract(name: string, open: () => Promise<Store>): void {
  describeStoreTests(
    `ExchangeStore contract: ${name}`,
    open,
    (store) => store.exchange,
    EXCHANGE_STORE_TESTS,
  );
}
