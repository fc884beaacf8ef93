import type { SQLInputValue, SQLOutputValue } from "node:sqlite";
import {
  BASE_INTERVAL,
  isStoredInterval,
  type DepthRow,
  type ExchangeBatch,
  type ExchangeCounts,
  type FundingRow,
  type MarkPriceRow,
  type OpenInterestRow,
  type TradeRow,
  type Venue,
} from "../../../domain/exchange.ts";
import type { Coin } from "../../../domain/market.ts";
import type { Micros } from "../../../domain/time.ts";
import {
  bucketParams,
  candleFromAggregate,
  candleFromRow,
  candleRowRange,
  compareSeries,
  depthFrom,
  insertValues,
  type ExchangeRowOf,
  exactSumNames,
  exactSums,
  fundingFrom,
  listSeriesSql,
  markPriceFrom,
  MAX_TIME,
  MIN_TIME,
  openInterestFrom,
  tradeFrom,
  seriesBatch,
  seriesExtentFrom,
  seriesExtentSql,
  seriesPageSql,
  tradePriceFrom,
  lastTradeEachSecondSql,
} from "../../sql/exchange-sql.ts";
import {
  type Candle,
  EXCHANGE_KINDS,
  emptyCounts,
  type ExchangeKind,
  type ExchangeSeries,
  type ExchangeStore,
  type RangeQuery,
  type SeriesCursor,
  type SeriesExtent,
  type TradePrice,
} from "../../ports/exchange-store.ts";
import type { SqliteConnection } from "./connection.ts";

type ArrayRow = SQLOutputValue[];

/** SQLite has no boolean: true and false are stored as 1 and 0. */
function sqliteValue(v: unknown): SQLInputValue {
  return typeof v === "boolean" ? (v ? 1 : 0) : (v as SQLInputValue);
}

// ON CONFLICT DO NOTHING, not INSERT OR IGNORE: that would also skip rows breaking NOT NULL.
const INSERT = {
  depth:
    "INSERT INTO exchange_depth (coin, venue, time_us, books) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
  trades: `INSERT INTO exchange_trades (coin, venue, trade_id, time_us, price, qty, buyer_maker)
    VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  candles: `INSERT INTO exchange_candles (coin, venue, period, open_time, open, high, low, close,
    volume, quote_volume, trades, taker_buy_volume, taker_buy_quote_volume)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  funding:
    "INSERT INTO exchange_funding (coin, time_us, rate, mark_price) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
  openInterest: `INSERT INTO exchange_open_interest (coin, time_us, open_interest, open_interest_value)
    VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  markPrices: `INSERT INTO exchange_mark_price (coin, time_us, mark_price, index_price,
    estimated_settle_price, funding_rate, next_funding_time) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
} as const;

/** Columns of each futures-only table read back, in the order its row mapper takes them. */
const FUNDING_COLUMNS = "time_us, rate, mark_price";
const OPEN_INTEREST_COLUMNS = "time_us, open_interest, open_interest_value";
const MARK_PRICE_COLUMNS =
  "time_us, mark_price, index_price, estimated_settle_price, funding_rate, next_funding_time";

const CANDLE_COLUMNS = `open_time, open_time, open, high, low, close, volume, quote_volume, trades,
  taker_buy_volume, taker_buy_quote_volume`;

/**
 * Aggregates the 1m candles of a range into buckets (the bucket expression is spliced in), newest or
 * oldest first, then takes each bucket's open and close from its first and last candle.
 */
function aggregateSql(bucket: string, dir: "ASC" | "DESC"): string {
  return `WITH b AS (
      SELECT ${bucket} AS bucket, min(open_time) AS first_t, max(open_time) AS last_t, max(high) AS high,
        min(low) AS low, sum(trades) AS trades,
        ${exactSums(
          (c) => `sum(CAST(${c} AS INTEGER))`,
          (c) => `sum(CAST(round((${c} - CAST(${c} AS INTEGER)) * 100000000) AS INTEGER))`,
        )}
      FROM exchange_candles
      WHERE coin = :coin AND venue = :venue AND period = '1m' AND open_time >= :lo AND open_time < :hi
      GROUP BY bucket ORDER BY bucket ${dir} LIMIT :limit OFFSET :offset
    )
    SELECT b.first_t, b.last_t, o.open, b.high, b.low, c.close, b.trades, ${exactSumNames("b.")}
    FROM b
    JOIN exchange_candles o ON o.coin = :coin AND o.venue = :venue AND o.period = '1m' AND o.open_time = b.first_t
    JOIN exchange_candles c ON c.coin = :coin AND c.venue = :venue AND c.period = '1m' AND c.open_time = b.last_t
    ORDER BY b.bucket ${dir}`;
}

const FIXED_BUCKET = "CAST((open_time - :off) / :width AS INTEGER)";
const MONTH_BUCKET = "strftime('%Y-%m', open_time / 1000000, 'unixepoch')";

function bucketOf(interval: string): string {
  return interval === "1M" ? MONTH_BUCKET : FIXED_BUCKET;
}

const dirOf = (q: RangeQuery) => (q.order === "asc" ? "ASC" : "DESC");

/** Binance data in the embedded store, on the connection of the Store holding it (see ExchangeStore). */
export class SqliteExchangeStore implements ExchangeStore {
  private readonly conn: SqliteConnection;

  constructor(conn: SqliteConnection) {
    this.conn = conn;
  }

  private all(sql: string, ...params: SQLInputValue[]): ArrayRow[] {
    return this.conn.arrayStmt(sql).all(...params) as unknown as ArrayRow[];
  }

  private allNamed(sql: string, params: Record<string, SQLInputValue>): ArrayRow[] {
    return this.conn.arrayStmt(sql).all(params) as unknown as ArrayRow[];
  }

  private count(sql: string, ...params: SQLInputValue[]): number {
    return (this.conn.arrayStmt(sql).get(...params) as unknown as ArrayRow)[0] as number;
  }

  async insertBatch(batch: ExchangeBatch): Promise<ExchangeCounts> {
    const counts = emptyCounts();
    const run = <K extends keyof ExchangeBatch>(rows: ExchangeRowOf<K>[] | undefined, key: K) => {
      if (!rows?.length) return;
      const s = this.conn.arrayStmt(INSERT[key]);
      for (const r of rows) counts[key] += Number(s.run(...insertValues(key, r).map(sqliteValue)).changes);
    };
    this.conn.transaction(() => {
      run(batch.depth, "depth");
      run(batch.trades, "trades");
      run(batch.candles, "candles");
      run(batch.funding, "funding");
      run(batch.openInterest, "openInterest");
      run(batch.markPrices, "markPrices");
    });
    return counts;
  }

  async latestDepth(coin: Coin, venue: Venue): Promise<DepthRow | null> {
    const rows = this.all(
      "SELECT time_us, books FROM exchange_depth WHERE coin = ? AND venue = ? ORDER BY time_us DESC LIMIT 1",
      coin,
      venue,
    );
    return rows.length ? depthFrom(coin, venue, rows[0]) : null;
  }

  async depthPage(coin: Coin, venue: Venue, q: RangeQuery): Promise<DepthRow[]> {
    return this.all(
      `SELECT time_us, books FROM exchange_depth WHERE coin = ? AND venue = ? AND time_us >= ? AND time_us <= ?
       ORDER BY time_us ${dirOf(q)} LIMIT ? OFFSET ?`,
      coin,
      venue,
      q.from ?? MIN_TIME,
      q.to ?? MAX_TIME,
      q.limit,
      q.offset,
    ).map((r) => depthFrom(coin, venue, r));
  }

  async countDepth(coin: Coin, venue: Venue, from?: Micros, to?: Micros): Promise<number> {
    return this.count(
      "SELECT count(*) FROM exchange_depth WHERE coin = ? AND venue = ? AND time_us >= ? AND time_us <= ?",
      coin,
      venue,
      from ?? MIN_TIME,
      to ?? MAX_TIME,
    );
  }

  async latestTrades(coin: Coin, venue: Venue, limit: number): Promise<TradeRow[]> {
    return this.all(
      `SELECT trade_id, time_us, price, qty, buyer_maker FROM exchange_trades WHERE coin = ? AND venue = ?
       ORDER BY trade_id DESC LIMIT ?`,
      coin,
      venue,
      limit,
    ).map((r) => tradeFrom(coin, venue, r));
  }

  async lastTradeEachSecond(coin: Coin, venue: Venue, from: Micros, to: Micros): Promise<TradePrice[]> {
    const { text, values } = lastTradeEachSecondSql(coin, venue, from, to, "?");
    return this.all(text, ...values).map(tradePriceFrom);
  }

  async candlePage(coin: Coin, venue: Venue, interval: string, q: RangeQuery): Promise<Candle[]> {
    const { lo, hi } = candleRowRange(interval, q.from, q.to);
    if (isStoredInterval(interval)) {
      return this.all(
        `SELECT ${CANDLE_COLUMNS} FROM exchange_candles
         WHERE coin = ? AND venue = ? AND period = ? AND open_time >= ? AND open_time < ?
         ORDER BY open_time ${dirOf(q)} LIMIT ? OFFSET ?`,
        coin,
        venue,
        interval,
        lo,
        hi,
        q.limit,
        q.offset,
      ).map(candleFromRow);
    }
    const params: Record<string, SQLInputValue> = { coin, venue, lo, hi, limit: q.limit, offset: q.offset };
    if (interval !== "1M") {
      const { width, offset } = bucketParams(interval);
      params.width = width;
      params.off = offset;
    }
    return this.allNamed(aggregateSql(bucketOf(interval), dirOf(q)), params).map((r) =>
      candleFromAggregate(interval, r),
    );
  }

  async countCandles(
    coin: Coin,
    venue: Venue,
    interval: string,
    from?: Micros,
    to?: Micros,
  ): Promise<number> {
    const { lo, hi } = candleRowRange(interval, from, to);
    const where =
      "coin = :coin AND venue = :venue AND period = :period AND open_time >= :lo AND open_time < :hi";
    const stored = isStoredInterval(interval);
    const params: Record<string, SQLInputValue> = {
      coin,
      venue,
      period: stored ? interval : BASE_INTERVAL,
      lo,
      hi,
    };
    if (stored) {
      return (
        (this.allNamed(`SELECT count(*) FROM exchange_candles WHERE ${where}`, params)[0][0] as number) ?? 0
      );
    }
    if (interval !== "1M") {
      const { width, offset } = bucketParams(interval);
      params.width = width;
      params.off = offset;
    }
    return this.allNamed(
      `SELECT count(DISTINCT ${bucketOf(interval)}) FROM exchange_candles WHERE ${where}`,
      params,
    )[0][0] as number;
  }

  private page(table: string, columns: string, coin: Coin, q: RangeQuery): ArrayRow[] {
    return this.all(
      `SELECT ${columns} FROM ${table} WHERE coin = ? AND time_us >= ? AND time_us <= ?
       ORDER BY time_us ${dirOf(q)} LIMIT ? OFFSET ?`,
      coin,
      q.from ?? MIN_TIME,
      q.to ?? MAX_TIME,
      q.limit,
      q.offset,
    );
  }

  private countIn(table: string, coin: Coin, from?: Micros, to?: Micros): number {
    return this.count(
      `SELECT count(*) FROM ${table} WHERE coin = ? AND time_us >= ? AND time_us <= ?`,
      coin,
      from ?? MIN_TIME,
      to ?? MAX_TIME,
    );
  }

  async fundingPage(coin: Coin, q: RangeQuery): Promise<FundingRow[]> {
    return this.page("exchange_funding", FUNDING_COLUMNS, coin, q).map((r) => fundingFrom(coin, r));
  }

  async countFunding(coin: Coin, from?: Micros, to?: Micros): Promise<number> {
    return this.countIn("exchange_funding", coin, from, to);
  }

  async openInterestPage(coin: Coin, q: RangeQuery): Promise<OpenInterestRow[]> {
    return this.page("exchange_open_interest", OPEN_INTEREST_COLUMNS, coin, q).map((r) =>
      openInterestFrom(coin, r),
    );
  }

  async countOpenInterest(coin: Coin, from?: Micros, to?: Micros): Promise<number> {
    return this.countIn("exchange_open_interest", coin, from, to);
  }

  async markPricePage(coin: Coin, q: RangeQuery): Promise<MarkPriceRow[]> {
    return this.page("exchange_mark_price", MARK_PRICE_COLUMNS, coin, q).map((r) => markPriceFrom(coin, r));
  }

  async countMarkPrices(coin: Coin, from?: Micros, to?: Micros): Promise<number> {
    return this.countIn("exchange_mark_price", coin, from, to);
  }

  async latestTime(kind: ExchangeKind, coin: Coin, venue: Venue): Promise<Micros | null> {
    const sql = LATEST_TIME_SQL[kind];
    const row = (kind === "depth" || kind === "trades" || kind === "candles"
      ? this.conn.arrayStmt(sql).get(coin, venue)
      : this.conn.arrayStmt(sql).get(coin)) as unknown as ArrayRow | undefined;
    return (row?.[0] as number | null | undefined) ?? null;
  }

  async listSeries(): Promise<SeriesExtent[]> {
    return EXCHANGE_KINDS.flatMap((kind) =>
      this.all(listSeriesSql(kind)).map((r) => seriesExtentFrom(kind, r)),
    ).sort(compareSeries);
  }

  async seriesExtent(series: ExchangeSeries): Promise<{ rows: number; last: Micros | null }> {
    const { text, values } = seriesExtentSql(series, "?");
    const [rows, last] = this.all(text, ...values)[0];
    return { rows: rows as number, last: last as number | null };
  }

  async seriesPage(
    series: ExchangeSeries,
    after: SeriesCursor | null,
    limit: number,
  ): Promise<ExchangeBatch> {
    const { text, values } = seriesPageSql(series, after, limit, "?");
    return seriesBatch(series, this.all(text, ...values));
  }
}

const LATEST_TIME_SQL: Record<ExchangeKind, string> = {
  depth: "SELECT max(time_us) FROM exchange_depth WHERE coin = ? AND venue = ?",
  trades: "SELECT max(time_us) FROM exchange_trades WHERE coin = ? AND venue = ?",
  candles: "SELECT max(open_time) FROM exchange_candles WHERE coin = ? AND venue = ? AND period = '1m'",
  funding: "SELECT max(time_us) FROM exchange_funding WHERE coin = ?",
  open_interest: "SELECT max(time_us) FROM exchange_open_interest WHERE coin = ?",
  mark_price: "SELECT max(time_us) FROM exchange_mark_price WHERE coin = ?",
};
