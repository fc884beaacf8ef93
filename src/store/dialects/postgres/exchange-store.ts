import type { Pool, PoolClient } from "pg";
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
import type { MonthlyPartitions, PartitionedRows } from "./partitions.ts";
import { inTransaction } from "./pg-util.ts";

type ArrayRow = unknown[];

/** Inserts of each kind from parallel arrays, one statement per kind; conflicts are skipped. */
const INSERT = {
  depth: `INSERT INTO exchange_depth (coin, venue, time_us, books)
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bytea[]) ON CONFLICT DO NOTHING`,
  trades: `INSERT INTO exchange_trades (coin, venue, trade_id, time_us, price, qty, buyer_maker)
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::float8[], $6::float8[],
      $7::boolean[]) ON CONFLICT DO NOTHING`,
  candles: `INSERT INTO exchange_candles (coin, venue, period, open_time, open, high, low, close, volume,
      quote_volume, trades, taker_buy_volume, taker_buy_quote_volume)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::float8[], $6::float8[],
      $7::float8[], $8::float8[], $9::float8[], $10::float8[], $11::bigint[], $12::float8[], $13::float8[])
    ON CONFLICT DO NOTHING`,
  funding: `INSERT INTO exchange_funding (coin, time_us, rate, mark_price)
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::float8[], $4::float8[]) ON CONFLICT DO NOTHING`,
  openInterest: `INSERT INTO exchange_open_interest (coin, time_us, open_interest, open_interest_value)
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::float8[], $4::float8[]) ON CONFLICT DO NOTHING`,
  markPrices: `INSERT INTO exchange_mark_price (coin, time_us, mark_price, index_price, estimated_settle_price,
      funding_rate, next_funding_time)
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::float8[], $4::float8[], $5::float8[], $6::float8[],
      $7::bigint[]) ON CONFLICT DO NOTHING`,
} as const;

/** Parallel arrays (one per column) from rows, for unnest. */
function columns<T>(rows: T[], pick: (r: T) => unknown[]): unknown[][] {
  const cols: unknown[][] = [];
  for (const r of rows) {
    const values = pick(r);
    for (let i = 0; i < values.length; i++) (cols[i] ??= []).push(values[i]);
  }
  return cols;
}

/** Rows in key order, so that concurrent overlapping batches lock rows in the same order. */
const byTime = <T extends { time: number }>(rows: T[]) => rows.toSorted((a, b) => a.time - b.time);

const CANDLE_COLUMNS = `open_time, open_time, open, high, low, close, volume, quote_volume, trades,
  taker_buy_volume, taker_buy_quote_volume`;

/** See the SQLite store's aggregateSql: $1 coin, $2 venue, $3 lo, $4 hi, $5 limit, $6 offset. */
function aggregateSql(bucket: string, dir: "ASC" | "DESC"): string {
  return `WITH b AS (
      SELECT ${bucket} AS bucket, min(open_time) AS first_t, max(open_time) AS last_t, max(high) AS high,
        min(low) AS low, sum(trades)::bigint AS trades,
        ${exactSums(
          (c) => `sum(trunc(${c})::bigint)::bigint`,
          (c) => `sum(round((${c} - trunc(${c})) * 100000000)::bigint)::bigint`,
        )}
      FROM exchange_candles
      WHERE coin = $1 AND venue = $2 AND period = '1m' AND open_time >= $3 AND open_time < $4
      GROUP BY bucket ORDER BY bucket ${dir} LIMIT $5 OFFSET $6
    )
    SELECT b.first_t, b.last_t, o.open, b.high, b.low, c.close, b.trades, ${exactSumNames("b.")}
    FROM b
    JOIN exchange_candles o ON o.coin = $1 AND o.venue = $2 AND o.period = '1m' AND o.open_time = b.first_t
    JOIN exchange_candles c ON c.coin = $1 AND c.venue = $2 AND c.period = '1m' AND c.open_time = b.last_t
    ORDER BY b.bucket ${dir}`;
}

/** Fixed-width buckets take their offset and width as the parameters after the query's own. */
function bucketOf(interval: string, next: number): string {
  return interval === "1M"
    ? "to_char(to_timestamp(open_time / 1000000) AT TIME ZONE 'UTC', 'YYYY-MM')"
    : `(open_time - $${next}::bigint) / $${next + 1}::bigint`;
}

function bucketValues(interval: string): number[] {
  if (interval === "1M") return [];
  const { width, offset } = bucketParams(interval);
  return [offset, width];
}

const dirOf = (q: RangeQuery) => (q.order === "asc" ? "ASC" : "DESC");

/** Binance data in PostgreSQL, on the pool of the Store holding it (see ExchangeStore). */
export class PostgresExchangeStore implements ExchangeStore {
  private readonly pool: Pool;
  private readonly partitions: MonthlyPartitions;

  constructor(pool: Pool, partitions: MonthlyPartitions) {
    this.pool = pool;
    this.partitions = partitions;
  }

  private async rows(text: string, values: unknown[]): Promise<ArrayRow[]> {
    return (await this.pool.query<ArrayRow>({ text, values, rowMode: "array" })).rows;
  }

  private async count(text: string, values: unknown[]): Promise<number> {
    return (await this.rows(text, values))[0][0] as number;
  }

  async insertBatch(batch: ExchangeBatch): Promise<ExchangeCounts> {
    return this.partitions.writing(partitionedRowsOf(batch), () =>
      inTransaction(this.pool, (client) => insertAll(client, batch)),
    );
  }

  async latestDepth(coin: Coin, venue: Venue): Promise<DepthRow | null> {
    const rows = await this.rows(
      "SELECT time_us, books FROM exchange_depth WHERE coin = $1 AND venue = $2 ORDER BY time_us DESC LIMIT 1",
      [coin, venue],
    );
    return rows.length ? depthFrom(coin, venue, rows[0]) : null;
  }

  async depthPage(coin: Coin, venue: Venue, q: RangeQuery): Promise<DepthRow[]> {
    const rows = await this.rows(
      `SELECT time_us, books FROM exchange_depth WHERE coin = $1 AND venue = $2 AND time_us >= $3 AND time_us <= $4
       ORDER BY time_us ${dirOf(q)} LIMIT $5 OFFSET $6`,
      [coin, venue, q.from ?? MIN_TIME, q.to ?? MAX_TIME, q.limit, q.offset],
    );
    return rows.map((r) => depthFrom(coin, venue, r));
  }

  async countDepth(coin: Coin, venue: Venue, from?: Micros, to?: Micros): Promise<number> {
    return this.count(
      "SELECT count(*) FROM exchange_depth WHERE coin = $1 AND venue = $2 AND time_us >= $3 AND time_us <= $4",
      [coin, venue, from ?? MIN_TIME, to ?? MAX_TIME],
    );
  }

  async latestTrades(coin: Coin, venue: Venue, limit: number): Promise<TradeRow[]> {
    const rows = await this.rows(
      `SELECT trade_id, time_us, price, qty, buyer_maker FROM exchange_trades WHERE coin = $1 AND venue = $2
       ORDER BY trade_id DESC LIMIT $3`,
      [coin, venue, limit],
    );
    return rows.map((r) => tradeFrom(coin, venue, r));
  }

  async lastTradeEachSecond(coin: Coin, venue: Venue, from: Micros, to: Micros): Promise<TradePrice[]> {
    const { text, values } = lastTradeEachSecondSql(coin, venue, from, to, "$");
    return (await this.rows(text, values)).map(tradePriceFrom);
  }

  async candlePage(coin: Coin, venue: Venue, interval: string, q: RangeQuery): Promise<Candle[]> {
    const { lo, hi } = candleRowRange(interval, q.from, q.to);
    if (isStoredInterval(interval)) {
      const rows = await this.rows(
        `SELECT ${CANDLE_COLUMNS} FROM exchange_candles
         WHERE coin = $1 AND venue = $2 AND period = $7 AND open_time >= $3 AND open_time < $4
         ORDER BY open_time ${dirOf(q)} LIMIT $5 OFFSET $6`,
        [coin, venue, lo, hi, q.limit, q.offset, interval],
      );
      return rows.map(candleFromRow);
    }
    const rows = await this.rows(aggregateSql(bucketOf(interval, 7), dirOf(q)), [
      coin,
      venue,
      lo,
      hi,
      q.limit,
      q.offset,
      ...bucketValues(interval),
    ]);
    return rows.map((r) => candleFromAggregate(interval, r));
  }

  async countCandles(
    coin: Coin,
    venue: Venue,
    interval: string,
    from?: Micros,
    to?: Micros,
  ): Promise<number> {
    const { lo, hi } = candleRowRange(interval, from, to);
    const stored = isStoredInterval(interval);
    const what = stored ? "count(*)" : `count(DISTINCT ${bucketOf(interval, 6)})`;
    return this.count(
      `SELECT ${what} FROM exchange_candles
       WHERE coin = $1 AND venue = $2 AND period = $5 AND open_time >= $3 AND open_time < $4`,
      [coin, venue, lo, hi, stored ? interval : BASE_INTERVAL, ...(stored ? [] : bucketValues(interval))],
    );
  }

  private page(table: string, columns: string, coin: Coin, q: RangeQuery): Promise<ArrayRow[]> {
    return this.rows(
      `SELECT ${columns} FROM ${table} WHERE coin = $1 AND time_us >= $2 AND time_us <= $3
       ORDER BY time_us ${dirOf(q)} LIMIT $4 OFFSET $5`,
      [coin, q.from ?? MIN_TIME, q.to ?? MAX_TIME, q.limit, q.offset],
    );
  }

  private countIn(table: string, coin: Coin, from?: Micros, to?: Micros): Promise<number> {
    return this.count(`SELECT count(*) FROM ${table} WHERE coin = $1 AND time_us >= $2 AND time_us <= $3`, [
      coin,
      from ?? MIN_TIME,
      to ?? MAX_TIME,
    ]);
  }

  async fundingPage(coin: Coin, q: RangeQuery): Promise<FundingRow[]> {
    return (await this.page("exchange_funding", "time_us, rate, mark_price", coin, q)).map((r) =>
      fundingFrom(coin, r),
    );
  }

  async countFunding(coin: Coin, from?: Micros, to?: Micros): Promise<number> {
    return this.countIn("exchange_funding", coin, from, to);
  }

  async openInterestPage(coin: Coin, q: RangeQuery): Promise<OpenInterestRow[]> {
    return (
      await this.page("exchange_open_interest", "time_us, open_interest, open_interest_value", coin, q)
    ).map((r) => openInterestFrom(coin, r));
  }

  async countOpenInterest(coin: Coin, from?: Micros, to?: Micros): Promise<number> {
    return this.countIn("exchange_open_interest", coin, from, to);
  }

  async markPricePage(coin: Coin, q: RangeQuery): Promise<MarkPriceRow[]> {
    const columns =
      "time_us, mark_price, index_price, estimated_settle_price, funding_rate, next_funding_time";
    return (await this.page("exchange_mark_price", columns, coin, q)).map((r) => markPriceFrom(coin, r));
  }

  async countMarkPrices(coin: Coin, from?: Micros, to?: Micros): Promise<number> {
    return this.countIn("exchange_mark_price", coin, from, to);
  }

  async latestTime(kind: ExchangeKind, coin: Coin, venue: Venue): Promise<Micros | null> {
    const withVenue = kind === "depth" || kind === "trades" || kind === "candles";
    const rows = await this.rows(LATEST_TIME_SQL[kind], withVenue ? [coin, venue] : [coin]);
    return (rows[0]?.[0] as number | null | undefined) ?? null;
  }

  async listSeries(): Promise<SeriesExtent[]> {
    const perKind = await Promise.all(
      EXCHANGE_KINDS.map(async (kind) =>
        (await this.rows(listSeriesSql(kind), [])).map((r) => seriesExtentFrom(kind, r)),
      ),
    );
    return perKind.flat().sort(compareSeries);
  }

  async seriesExtent(series: ExchangeSeries): Promise<{ rows: number; last: Micros | null }> {
    const { text, values } = seriesExtentSql(series, "$");
    const [rows, last] = (await this.rows(text, values))[0];
    return { rows: rows as number, last: last as number | null };
  }

  async seriesPage(
    series: ExchangeSeries,
    after: SeriesCursor | null,
    limit: number,
  ): Promise<ExchangeBatch> {
    const { text, values } = seriesPageSql(series, after, limit, "$");
    return seriesBatch(series, await this.rows(text, values));
  }
}

/** The rows of a batch bound for the exchange tables partitioned by UTC month of time_us (a row or more a second per coin). */
function partitionedRowsOf(batch: ExchangeBatch): PartitionedRows[] {
  const rows: PartitionedRows[] = [];
  if (batch.depth?.length) rows.push({ tables: ["exchange_depth"], times: batch.depth.map((r) => r.time) });
  if (batch.trades?.length)
    rows.push({ tables: ["exchange_trades"], times: batch.trades.map((r) => r.time) });
  if (batch.markPrices?.length) {
    rows.push({ tables: ["exchange_mark_price"], times: batch.markPrices.map((r) => r.time) });
  }
  return rows;
}

const LATEST_TIME_SQL: Record<ExchangeKind, string> = {
  depth: "SELECT max(time_us) FROM exchange_depth WHERE coin = $1 AND venue = $2",
  trades: "SELECT max(time_us) FROM exchange_trades WHERE coin = $1 AND venue = $2",
  candles: "SELECT max(open_time) FROM exchange_candles WHERE coin = $1 AND venue = $2 AND period = '1m'",
  funding: "SELECT max(time_us) FROM exchange_funding WHERE coin = $1",
  open_interest: "SELECT max(time_us) FROM exchange_open_interest WHERE coin = $1",
  mark_price: "SELECT max(time_us) FROM exchange_mark_price WHERE coin = $1",
};

async function insertAll(client: PoolClient, batch: ExchangeBatch): Promise<ExchangeCounts> {
  const counts = emptyCounts();
  const run = async <K extends keyof ExchangeBatch>(key: K, sorted: ExchangeRowOf<K>[] | undefined) => {
    if (!sorted?.length) return;
    const result = await client.query(
      INSERT[key],
      columns(sorted, (r) => insertValues(key, r)),
    );
    counts[key] = result.rowCount ?? 0;
  };
  // Rows in time order, so that concurrent batches lock them in one order.
  await run("depth", batch.depth && byTime(batch.depth));
  await run("trades", batch.trades && byTime(batch.trades));
  await run(
    "candles",
    batch.candles?.toSorted((a, b) => a.openTime - b.openTime),
  );
  await run("funding", batch.funding && byTime(batch.funding));
  await run("openInterest", batch.openInterest && byTime(batch.openInterest));
  await run("markPrices", batch.markPrices && byTime(batch.markPrices));
  return counts;
}
