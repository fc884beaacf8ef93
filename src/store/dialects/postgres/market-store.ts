import type { Pool } from "pg";
import type { Coin, Market, MarketSource, MarketType } from "../../../domain/market.ts";
import type { SnapshotRow } from "../../../domain/snapshot.ts";
import type { Micros } from "../../../domain/time.ts";
import { RENDER_VERSION } from "../../../wire/wire.ts";
import type {
  DemoSeedMark,
  MarketFilter,
  MarketStore,
  PageWriter,
  RecordingGap,
  SnapshotBatch,
  SnapshotQuery,
  SnapshotSpan,
  StoredMarket,
} from "../../ports/market-store.ts";
import {
  gapFromRow,
  MARKET_COLUMNS,
  upsertMarketSql,
  marketFromArray,
  marketValues,
  snapshotFromArray,
} from "../../sql/rows.ts";
import { markSourceSql, sourceBit, sourcesOf } from "../../sql/market-sources.ts";
import { marketListSql } from "../../rules/market-filter.ts";
import {
  allBlocks,
  atOrBeforeInBlocks,
  type BlockSource,
  countInBlocks,
  HeaderMemory,
  readBlockPage,
  readRenderedPage,
  spanOfBlocks,
} from "../../rules/snapshot-blocks.ts";
import {
  addBlockCounts,
  type SeriesSummaryRow,
  seriesSummaryFromRow,
  seriesSummarySql,
  straddlingBlockedSql,
} from "../../rules/series-summary.ts";
import { mergeBooks, pageRows, pageScan, pageTimeRange } from "../../rules/snapshot-page.ts";
import {
  blockSource,
  deleteBlocksFrom,
  lockForInsert,
  mergeIntoBlocks,
  PENDING_SQL,
  renderPendingBlocks,
  sealRows,
} from "./blocks.ts";
import type { MonthlyPartitions } from "./partitions.ts";
import { inTransaction, type Queryable } from "./pg-util.ts";
import type { PoolClient } from "pg";

/** A row as node-pg returns it with STORE_TYPES: BIGINT and DOUBLE PRECISION as numbers, BYTEA as Buffer. */
type Row = Record<string, unknown>;
type ArrayRow = unknown[];

const SERIES_SUMMARY_SQL = seriesSummarySql((i) => `$${i}`);
const MARK_SOURCE_SQL = markSourceSql((i) => `$${i}`);
const STRADDLING_BLOCKED_SQL = straddlingBlockedSql((i) => `$${i}`);
const UPSERT_MARKET_SQL = upsertMarketSql((i) => `$${i}`);

/**
 * Our slug, else the earliest market with that Polymarket alias, in one round trip. Both branches are
 * one index lookup; the rank puts a slug match first.
 */
const MARKET_BY_SLUG_OR_ALIAS_SQL = `SELECT ${MARKET_COLUMNS} FROM (
    (SELECT 0 AS rank, * FROM markets WHERE slug = $1)
    UNION ALL
    (SELECT 1 AS rank, * FROM markets WHERE polymarket_slug = $1 ORDER BY start_time, id LIMIT 1)
  ) m ORDER BY rank LIMIT 1`;

/**
 * Inserts a batch given as parallel arrays ($2 to $6) in one statement: new prices, the books of just
 * those seconds, and the market's count, so that the count moves with the rows atomically. A second
 * given twice in one batch keeps its first occurrence, as a row-by-row insert would; the batch goes in
 * time order so that concurrent overlapping inserts take their row locks in the same order.
 */
const INSERT_SNAPSHOTS_SQL = `WITH batch AS (
    SELECT DISTINCT ON (time_us) time_us, coin_price, price_up, price_down, books
    FROM unnest($2::bigint[], $3::float8[], $4::float8[], $5::float8[], $6::bytea[])
      WITH ORDINALITY AS b (time_us, coin_price, price_up, price_down, books, nth)
    ORDER BY time_us, nth
  ), added AS (
    INSERT INTO snapshots (market, time_us, coin_price, price_up, price_down)
    SELECT $1, time_us, coin_price, price_up, price_down FROM batch
    ON CONFLICT DO NOTHING
    RETURNING time_us
  ), added_books AS (
    INSERT INTO snapshot_books (market, time_us, books)
    SELECT $1, b.time_us, b.books FROM batch b JOIN added a ON a.time_us = b.time_us
    WHERE b.books IS NOT NULL
    ON CONFLICT DO NOTHING
  ), counted AS (
    UPDATE markets SET snapshot_count = snapshot_count + (SELECT count(*) FROM added)
    WHERE id = $1 AND EXISTS (SELECT 1 FROM added)
  )
  SELECT count(*) AS added FROM added`;

/** Rows per insert statement: bounds the size of one statement's parameters (books are sent as hex). */
const INSERT_CHUNK_ROWS = 5000;

/** The tables a snapshot's rows go to, partitioned alike by month. */
const SNAPSHOT_TABLES = ["snapshots", "snapshot_books"];

/**
 * A page of prices and, when asked, the books over the page's own time range (not the query's), merged
 * in snapshotPage. Two range scans measured faster than one query joining the books to the limited
 * page (about 4.5 against 7 ms a 1000-row page on a local server); the books scan never leaves the
 * page's months. Books are inserted in the same statement as their prices, so a second the first
 * query sees has its books visible to the second.
 */
const PRICES_PAGE_SQL = {
  asc: `SELECT time_us, coin_price, price_up, price_down FROM snapshots
    WHERE market = $1 AND time_us >= $2 AND time_us <= $3 ORDER BY time_us ASC LIMIT $4 OFFSET $5`,
  desc: `SELECT time_us, coin_price, price_up, price_down FROM snapshots
    WHERE market = $1 AND time_us >= $2 AND time_us <= $3 ORDER BY time_us DESC LIMIT $4 OFFSET $5`,
};
const BOOKS_RANGE_SQL = {
  asc: `SELECT time_us, books FROM snapshot_books WHERE market = $1 AND time_us >= $2 AND time_us <= $3
    ORDER BY time_us ASC`,
  desc: `SELECT time_us, books FROM snapshot_books WHERE market = $1 AND time_us >= $2 AND time_us <= $3
    ORDER BY time_us DESC`,
};

const SNAPSHOT_AT_OR_BEFORE_SQL = {
  withBooks: `SELECT s.time_us, s.coin_price, s.price_up, s.price_down, b.books FROM (
      SELECT * FROM snapshots WHERE market = $1 AND time_us <= $2 ORDER BY time_us DESC LIMIT 1
    ) s LEFT JOIN snapshot_books b ON b.market = s.market AND b.time_us = s.time_us`,
  withoutBooks: `SELECT time_us, coin_price, price_up, price_down, NULL AS books FROM snapshots
    WHERE market = $1 AND time_us <= $2 ORDER BY time_us DESC LIMIT 1`,
};

/**
 * Books as a plain Uint8Array over the bytes node-pg parsed, as the SQLite store returns them: a
 * Buffer has other methods and fails a strict comparison with the encoder's output.
 */
function booksOf(value: unknown): Uint8Array | null {
  if (value === null || value === undefined) return null;
  const b = value as Buffer;
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** Markets, snapshots and gaps in PostgreSQL (see MarketStore); snapshots partitioned by month. */
export class PostgresMarketStore implements MarketStore {
  private readonly pool: Pool;
  private readonly partitions: MonthlyPartitions;
  private readonly headerMemory = new HeaderMemory();
  /** The render version this store reads as current and stamps what it renders with. */
  private readonly renderVersion: number;

  constructor(pool: Pool, partitions: MonthlyPartitions, renderVersion = RENDER_VERSION) {
    this.pool = pool;
    this.partitions = partitions;
    this.renderVersion = renderVersion;
  }

  /** A market's blocks to read, planned from remembered headers where a read allows (HeaderMemory). */
  private blocksOf(marketKey: number): BlockSource {
    return this.headerMemory.source(marketKey, blockSource(this.pool, marketKey, this.renderVersion));
  }

  private async one(sql: string, params: unknown[]): Promise<Row | undefined> {
    return (await this.pool.query<Row>(sql, params)).rows[0] as Row | undefined;
  }

  /** The first row as an array of column values (what the shared row readers take). */
  private async oneArray(db: Queryable, text: string, values: unknown[]): Promise<ArrayRow | undefined> {
    return (await db.query<ArrayRow>({ text, values, rowMode: "array" })).rows[0];
  }

  private async count(sql: string, params: unknown[]): Promise<number> {
    return (await this.one(sql, params))!.n as number;
  }

  /** A market that is (now) resolved has its snapshots moved into blocks in the same transaction. */
  async upsertMarket(m: Market): Promise<StoredMarket> {
    if (m.winner === null)
      return marketFromArray((await this.oneArray(this.pool, UPSERT_MARKET_SQL, marketValues(m)))!);
    return inTransaction(this.pool, async (client) => {
      const stored = marketFromArray((await this.oneArray(client, UPSERT_MARKET_SQL, marketValues(m)))!);
      this.headerMemory.forget(stored.key);
      await sealRows(client, stored.key, this.renderVersion);
      return stored;
    });
  }

  /**
   * Moves the snapshots of every resolved market still holding rows into blocks, a market a
   * transaction (migrate() runs it: version 7's upgrade of existing databases, resumable).
   */
  async sealPendingMarkets(): Promise<number> {
    const { rows } = await this.pool.query<Row>(PENDING_SQL);
    for (const r of rows) {
      await inTransaction(this.pool, async (client) => {
        await lockForInsert(client, [r.id as number]);
        this.headerMemory.forget(r.id as number);
        await sealRows(client, r.id as number, this.renderVersion);
      });
    }
    return rows.length;
  }
  /** Renders the blocks written before version 8, as SQLite's store does (a batch a statement). */
  async renderPendingBlocks(): Promise<number> {
    return renderPendingBlocks(this.pool, this.renderVersion);
  }

  async markSource(marketKey: number, source: MarketSource): Promise<MarketSource[]> {
    const { rows } = await this.pool.query<Row>(MARK_SOURCE_SQL, [sourceBit(source), marketKey]);
    return rows.length === 0 ? [] : sourcesOf(Number(rows[0].sources));
  }

  async getMarket(slug: string): Promise<StoredMarket | null> {
    const row = await this.oneArray(this.pool, MARKET_BY_SLUG_OR_ALIAS_SQL, [slug]);
    return row ? marketFromArray(row) : null;
  }

  async listMarkets(f: MarketFilter): Promise<{ markets: StoredMarket[]; total: number }> {
    const sql = marketListSql(f, "$");
    const total = await this.count(sql.count, sql.filterValues);
    const { rows } = await this.pool.query<ArrayRow>({
      text: sql.page,
      values: sql.pageValues,
      rowMode: "array",
    });
    return { markets: rows.map(marketFromArray), total };
  }

  async latestStartTimes(coin: Coin, marketType: MarketType, count: number): Promise<number[]> {
    const { rows } = await this.pool.query<Row>(
      "SELECT start_time FROM markets WHERE coin = $1 AND market_type = $2 ORDER BY start_time DESC LIMIT $3",
      [coin, marketType, count],
    );
    return rows.map((r) => r.start_time as number);
  }

  async seriesSummary(since: number): Promise<SeriesSummaryRow[]> {
    const { rows } = await this.pool.query<Row>(SERIES_SUMMARY_SQL, [since, since * 1e6]);
    const straddling = await this.pool.query<Row>(STRADDLING_BLOCKED_SQL, [since]);
    return addBlockCounts(rows.map(seriesSummaryFromRow), straddling.rows, (key) =>
      this.countSnapshots(key, since * 1e6),
    );
  }

  async countMarkets(): Promise<number> {
    return this.count("SELECT count(*) AS n FROM markets", []);
  }

  async demoSeed(): Promise<DemoSeedMark | null> {
    const row = await this.one("SELECT anchor, completed_at FROM demo_seed WHERE id = 1", []);
    return row
      ? {
          anchor: Number(row.anchor),
          completedAt: row.completed_at === null ? null : Number(row.completed_at),
        }
      : null;
  }

  async beginDemoSeed(anchor: number): Promise<void> {
    await this.pool.query("INSERT INTO demo_seed (id, anchor) VALUES (1, $1) ON CONFLICT (id) DO NOTHING", [
      anchor,
    ]);
  }

  async completeDemoSeed(at: Micros): Promise<void> {
    await this.pool.query("UPDATE demo_seed SET completed_at = $1 WHERE id = 1", [at]);
  }

  async insertSnapshots(marketKey: number, rows: SnapshotRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    return this.insertSnapshotBatch([{ marketKey, rows }]);
  }

  /**
   * One transaction: the markets' records locked first (in key order, see blocks.ts), then each
   * market's rows into its blocks or its row tables. Row tables take chunks in time order (a stable
   * sort keeps a repeated second's first occurrence first), so that concurrent overlapping batches lock
   * rows in the same order throughout, as each statement does within itself.
   */
  async insertSnapshotBatch(batch: SnapshotBatch[]): Promise<number> {
    const times = batch.flatMap((b) => b.rows.map((r) => r.time));
    if (times.length === 0) return 0;
    const write = () =>
      inTransaction(this.pool, async (client) => {
        const sorted = batch.filter((b) => b.rows.length > 0).toSorted((x, y) => x.marketKey - y.marketKey);
        const states = await lockForInsert(client, [...new Set(sorted.map((b) => b.marketKey))]);
        let added = 0;
        for (const b of sorted) added += await this.insertInto(client, b, states.get(b.marketKey));
        return added;
      });
    return this.partitions.writing([{ tables: SNAPSHOT_TABLES, times }], write);
  }

  async deleteSnapshotsFrom(marketKey: number, from: Micros): Promise<number> {
    return inTransaction(this.pool, async (client) => {
      // The market's record locked first, as an insert does: the two are ordered.
      await lockForInsert(client, [marketKey]);
      this.headerMemory.forget(marketKey);
      const rows = await client.query("DELETE FROM snapshots WHERE market = $1 AND time_us >= $2", [
        marketKey,
        from,
      ]);
      await client.query("DELETE FROM snapshot_books WHERE market = $1 AND time_us >= $2", [marketKey, from]);
      const removed =
        (rows.rowCount ?? 0) + (await deleteBlocksFrom(client, marketKey, from, this.renderVersion));
      if (removed > 0) {
        await client.query("UPDATE markets SET snapshot_count = snapshot_count - $1 WHERE id = $2", [
          removed,
          marketKey,
        ]);
      }
      this.headerMemory.forget(marketKey);
      return removed;
    });
  }

  private async insertInto(
    client: PoolClient,
    b: SnapshotBatch,
    state: { blocks: boolean; rowsToMove: boolean } | undefined,
  ): Promise<number> {
    if (state?.blocks) {
      this.headerMemory.forget(b.marketKey);
      if (state.rowsToMove) await sealRows(client, b.marketKey, this.renderVersion);
      return mergeIntoBlocks(client, b.marketKey, b.rows, this.renderVersion);
    }
    const rows = b.rows.toSorted((x, y) => x.time - y.time);
    let added = 0;
    for (let i = 0; i < rows.length; i += INSERT_CHUNK_ROWS) {
      added += await insertChunk(client, b.marketKey, rows.slice(i, i + INSERT_CHUNK_ROWS));
    }
    return added;
  }

  async recordGap(marketKey: number, gap: RecordingGap): Promise<void> {
    await this.pool.query(
      `INSERT INTO recording_gaps (market, from_us, to_us, cause, detail) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (market, from_us) DO UPDATE SET to_us = greatest(recording_gaps.to_us, excluded.to_us)`,
      [marketKey, gap.from, gap.to, gap.cause, gap.detail],
    );
  }

  async listGaps(marketKey: number): Promise<RecordingGap[]> {
    const { rows } = await this.pool.query<Row>(
      "SELECT from_us, to_us, cause, detail FROM recording_gaps WHERE market = $1 ORDER BY from_us",
      [marketKey],
    );
    return rows.map(gapFromRow);
  }

  async snapshotSpan(marketKey: number, maxStep: Micros): Promise<SnapshotSpan> {
    const blocks = await allBlocks(this.blocksOf(marketKey));
    if (blocks.length > 0) return spanOfBlocks(blocks, maxStep);
    const ends = await this.pool.query<Row>(
      "SELECT min(time_us) AS first, max(time_us) AS last FROM snapshots WHERE market = $1",
      [marketKey],
    );
    const holes = await this.pool.query<Row>(
      `SELECT prev_us, time_us FROM (
         SELECT time_us, lag(time_us) OVER (ORDER BY time_us) AS prev_us FROM snapshots WHERE market = $1
       ) AS t WHERE time_us - prev_us > $2 ORDER BY time_us`,
      [marketKey, maxStep],
    );
    const first = ends.rows[0] as Row;
    return {
      first: (first.first as number | null) ?? null,
      last: (first.last as number | null) ?? null,
      holes: holes.rows.map((h) => ({ after: h.prev_us as number, before: h.time_us as number })),
    };
  }

  async countSnapshots(marketKey: number, from?: Micros, to?: Micros): Promise<number> {
    const inBlocks = await countInBlocks(this.blocksOf(marketKey), from, to);
    if (inBlocks !== null) return inBlocks;
    return this.count(
      "SELECT count(*) AS n FROM snapshots WHERE market = $1 AND time_us >= $2 AND time_us <= $3",
      [marketKey, from ?? Number.MIN_SAFE_INTEGER, to ?? Number.MAX_SAFE_INTEGER],
    );
  }

  /**
   * A page is one range scan of the prices (rules/snapshot-page.ts says from which end) and, with
   * books, one range scan of the books over the page's times, merged here (both come in page order).
   */
  async renderedPage(marketKey: number, q: SnapshotQuery): Promise<PageWriter | null> {
    return readRenderedPage(this.blocksOf(marketKey), q);
  }

  async snapshotPage(marketKey: number, q: SnapshotQuery): Promise<SnapshotRow[]> {
    return (await readBlockPage(this.blocksOf(marketKey), q)) ?? this.rowsPage(marketKey, q);
  }

  private async rowsPage(marketKey: number, q: SnapshotQuery): Promise<SnapshotRow[]> {
    const asc = q.order === "asc";
    const scan = pageScan(q);
    const prices = await this.pool.query<ArrayRow>({
      text: scan.ascending ? PRICES_PAGE_SQL.asc : PRICES_PAGE_SQL.desc,
      values: [
        marketKey,
        q.from ?? Number.MIN_SAFE_INTEGER,
        q.to ?? Number.MAX_SAFE_INTEGER,
        scan.limit,
        scan.offset,
      ],
      rowMode: "array",
    });
    const rows = pageRows(prices.rows, scan.reversed);
    if (!q.books || rows.length === 0) return rows;
    const { lo, hi } = pageTimeRange(rows, asc);
    const books = await this.pool.query<ArrayRow>({
      text: asc ? BOOKS_RANGE_SQL.asc : BOOKS_RANGE_SQL.desc,
      values: [marketKey, lo, hi],
      rowMode: "array",
    });
    mergeBooks(rows, books.rows, asc, booksOf);
    return rows;
  }

  async snapshotAtOrBefore(marketKey: number, time: Micros, books: boolean): Promise<SnapshotRow | null> {
    const inBlocks = await atOrBeforeInBlocks(this.blocksOf(marketKey), time, books);
    if (inBlocks !== undefined) return inBlocks;
    const { rows } = await this.pool.query<ArrayRow>({
      text: books ? SNAPSHOT_AT_OR_BEFORE_SQL.withBooks : SNAPSHOT_AT_OR_BEFORE_SQL.withoutBooks,
      values: [marketKey, time],
      rowMode: "array",
    });
    return rows.length === 0 ? null : snapshotFromArray(rows[0], booksOf);
  }
}

async function insertChunk(db: Queryable, marketKey: number, rows: SnapshotRow[]): Promise<number> {
  const n = rows.length;
  const times = new Array<number>(n);
  const coinPrices = new Array<number>(n);
  const pricesUp = new Array<number>(n);
  const pricesDown = new Array<number>(n);
  const books = new Array<Uint8Array | null>(n);
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    times[i] = r.time;
    coinPrices[i] = r.coinPrice;
    pricesUp[i] = r.priceUp;
    pricesDown[i] = r.priceDown;
    books[i] = r.books;
  }
  const res = await db.query<Row>(INSERT_SNAPSHOTS_SQL, [
    marketKey,
    times,
    coinPrices,
    pricesUp,
    pricesDown,
    books,
  ]);
  return (res.rows[0] as Row).added as number;
}
