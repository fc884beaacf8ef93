import type { SQLInputValue, SQLOutputValue } from "node:sqlite";
import type { Coin, Market, MarketType } from "../../domain/market.ts";
import type { SnapshotRow } from "../../domain/snapshot.ts";
import type { Micros } from "../../domain/time.ts";
import type {
  MarketFilter,
  MarketStore,
  RecordingGap,
  SnapshotBatch,
  SnapshotQuery,
  SnapshotSpan,
  StoredMarket,
} from "../market-store.ts";
import {
  gapFromRow,
  MARKET_COLUMNS,
  upsertMarketSql,
  marketFromArray,
  marketFromRow,
  marketValues,
} from "../rows.ts";
import { marketListSql } from "../rules/market-filter.ts";
import { type SeriesSummaryRow, seriesSummaryFromRow, seriesSummarySql } from "../rules/series-summary.ts";
import { mergeBooks, pageRows, pageScan, pageTimeRange } from "../rules/snapshot-page.ts";
import { attachConcatenatedBooks } from "./concatenated-books.ts";
import type { SqliteConnection } from "./connection.ts";

type Row = Record<string, SQLInputValue>;
type ArrayRow = SQLOutputValue[];

const SERIES_SUMMARY_SQL = seriesSummarySql((i) => `?${i}`);
const UPSERT_MARKET_SQL = upsertMarketSql(() => "?");

const MARKET_BY_SLUG_SQL = `SELECT ${MARKET_COLUMNS} FROM markets WHERE slug = ?`;
const MARKET_BY_ALIAS_SQL = `SELECT ${MARKET_COLUMNS} FROM markets WHERE polymarket_slug = ? ORDER BY start_time, id LIMIT 1`;
const PRICES_PAGE_SQL = {
  asc: `SELECT time_us, coin_price, price_up, price_down FROM snapshots
    WHERE market = ? AND time_us >= ? AND time_us <= ? ORDER BY time_us ASC LIMIT ? OFFSET ?`,
  desc: `SELECT time_us, coin_price, price_up, price_down FROM snapshots
    WHERE market = ? AND time_us >= ? AND time_us <= ? ORDER BY time_us DESC LIMIT ? OFFSET ?`,
};
const BOOKS_RANGE_SQL = {
  asc: "SELECT time_us, books FROM snapshot_books WHERE market = ? AND time_us >= ? AND time_us <= ? ORDER BY time_us ASC",
  desc: "SELECT time_us, books FROM snapshot_books WHERE market = ? AND time_us >= ? AND time_us <= ? ORDER BY time_us DESC",
};

/**
 * The books of a time range as one row: the times and the blobs' lengths (text, comma-separated) and
 * the blobs concatenated, all aggregated in the same step, from a subquery in page order.
 */
const BOOKS_CONCAT_SQL = {
  asc: `SELECT group_concat(time_us), group_concat(length(books)), CAST(group_concat(books, '') AS BLOB) FROM (
    SELECT time_us, books FROM snapshot_books WHERE market = ? AND time_us >= ? AND time_us <= ? ORDER BY time_us ASC)`,
  desc: `SELECT group_concat(time_us), group_concat(length(books)), CAST(group_concat(books, '') AS BLOB) FROM (
    SELECT time_us, books FROM snapshot_books WHERE market = ? AND time_us >= ? AND time_us <= ? ORDER BY time_us DESC)`,
};

const SNAPSHOT_AT_OR_BEFORE_SQL = {
  withBooks: `SELECT s.time_us, s.coin_price, s.price_up, s.price_down, b.books FROM snapshots s
    LEFT JOIN snapshot_books b ON b.market = s.market AND b.time_us = s.time_us
    WHERE s.market = ? AND s.time_us <= ? ORDER BY s.time_us DESC LIMIT 1`,
  withoutBooks: `SELECT time_us, coin_price, price_up, price_down FROM snapshots
    WHERE market = ? AND time_us <= ? ORDER BY time_us DESC LIMIT 1`,
};

/** node:sqlite gives a blob as a Uint8Array already. */
const blobOf = (stored: unknown) => stored as Uint8Array;

function snapshotFromRow(r: Row): SnapshotRow {
  return {
    time: r.time_us as number,
    coinPrice: r.coin_price as number,
    priceUp: r.price_up as number,
    priceDown: r.price_down as number,
    books: (r.books as Uint8Array | null | undefined) ?? null,
  };
}

/** Markets, snapshots and gaps in the embedded store (see MarketStore). */
export class SqliteMarketStore implements MarketStore {
  private readonly conn: SqliteConnection;

  constructor(conn: SqliteConnection) {
    this.conn = conn;
  }

  async upsertMarket(m: Market): Promise<StoredMarket> {
    return marketFromRow(this.conn.stmt(UPSERT_MARKET_SQL).get(...marketValues(m)) as Row);
  }

  /** Our slug first; else the earliest market with that Polymarket alias (one lookup in the usual case). */
  async getMarket(slug: string): Promise<StoredMarket | null> {
    const row = (this.conn.arrayStmt(MARKET_BY_SLUG_SQL).get(slug) ??
      this.conn.arrayStmt(MARKET_BY_ALIAS_SQL).get(slug)) as ArrayRow | undefined;
    return row ? marketFromArray(row) : null;
  }

  async listMarkets(f: MarketFilter): Promise<{ markets: StoredMarket[]; total: number }> {
    const sql = marketListSql(f, "?");
    const total = (this.conn.db.prepare(sql.count).get(...sql.filterValues) as Row).n as number;
    const rows = this.conn.db.prepare(sql.page).all(...sql.pageValues) as Row[];
    return { markets: rows.map(marketFromRow), total };
  }

  async latestStartTimes(coin: Coin, marketType: MarketType, count: number): Promise<number[]> {
    const rows = this.conn
      .stmt(
        "SELECT start_time FROM markets WHERE coin = ? AND market_type = ? ORDER BY start_time DESC LIMIT ?",
      )
      .all(coin, marketType, count) as Row[];
    return rows.map((r) => r.start_time as number);
  }

  async seriesSummary(since: number): Promise<SeriesSummaryRow[]> {
    const rows = this.conn.stmt(SERIES_SUMMARY_SQL).all(since, since * 1e6) as Row[];
    return rows.map(seriesSummaryFromRow);
  }

  async countMarkets(): Promise<number> {
    return (this.conn.stmt("SELECT count(*) AS n FROM markets").get() as Row).n as number;
  }

  async insertSnapshots(marketKey: number, rows: SnapshotRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    return this.conn.transaction(() => this.insertRows(marketKey, rows));
  }

  async insertSnapshotBatch(batch: SnapshotBatch[]): Promise<number> {
    return this.conn.transaction(() => {
      let added = 0;
      for (const b of batch) added += this.insertRows(b.marketKey, b.rows);
      return added;
    });
  }

  /** Inserts within the caller's transaction. */
  private insertRows(marketKey: number, rows: SnapshotRow[]): number {
    const insertPrices = this.conn.stmt(
      "INSERT OR IGNORE INTO snapshots (market, time_us, coin_price, price_up, price_down) VALUES (?, ?, ?, ?, ?)",
    );
    const insertBooks = this.conn.stmt(
      "INSERT OR IGNORE INTO snapshot_books (market, time_us, books) VALUES (?, ?, ?)",
    );
    let added = 0;
    for (const r of rows) {
      const res = insertPrices.run(marketKey, r.time, r.coinPrice, r.priceUp, r.priceDown);
      if (res.changes === 0) continue;
      added++;
      if (r.books) insertBooks.run(marketKey, r.time, r.books);
    }
    if (added > 0) {
      this.conn
        .stmt("UPDATE markets SET snapshot_count = snapshot_count + ? WHERE id = ?")
        .run(added, marketKey);
    }
    return added;
  }

  async recordGap(marketKey: number, gap: RecordingGap): Promise<void> {
    this.conn
      .stmt(
        `INSERT INTO recording_gaps (market, from_us, to_us, cause, detail) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (market, from_us) DO UPDATE SET to_us = max(to_us, excluded.to_us)`,
      )
      .run(marketKey, gap.from, gap.to, gap.cause, gap.detail);
  }

  async listGaps(marketKey: number): Promise<RecordingGap[]> {
    const rows = this.conn
      .stmt("SELECT from_us, to_us, cause, detail FROM recording_gaps WHERE market = ? ORDER BY from_us")
      .all(marketKey) as Row[];
    return rows.map(gapFromRow);
  }

  async snapshotSpan(marketKey: number, maxStep: Micros): Promise<SnapshotSpan> {
    const ends = this.conn
      .stmt("SELECT min(time_us) AS first, max(time_us) AS last FROM snapshots WHERE market = ?")
      .get(marketKey) as Row;
    const holes = this.conn
      .stmt(
        `SELECT prev_us, time_us FROM (
           SELECT time_us, lag(time_us) OVER (ORDER BY time_us) AS prev_us FROM snapshots WHERE market = ?
         ) WHERE time_us - prev_us > ? ORDER BY time_us`,
      )
      .all(marketKey, maxStep) as Row[];
    return {
      first: (ends.first as number | null) ?? null,
      last: (ends.last as number | null) ?? null,
      holes: holes.map((h) => ({ after: h.prev_us as number, before: h.time_us as number })),
    };
  }

  async countSnapshots(marketKey: number, from?: Micros, to?: Micros): Promise<number> {
    const row = this.conn
      .stmt("SELECT count(*) AS n FROM snapshots WHERE market = ? AND time_us >= ? AND time_us <= ?")
      .get(marketKey, from ?? Number.MIN_SAFE_INTEGER, to ?? Number.MAX_SAFE_INTEGER) as Row;
    return row.n as number;
  }

  /**
   * A page is one range scan of the prices (rules/snapshot-page.ts says from which end) and, with
   * books, a second range scan of the books over the same times, merged here. Rows come back as arrays
   * (setReturnArrays) to save building an object per row.
   */
  async snapshotPage(marketKey: number, q: SnapshotQuery): Promise<SnapshotRow[]> {
    const asc = q.order === "asc";
    const scan = pageScan(q);
    const prices = this.conn
      .arrayStmt(scan.ascending ? PRICES_PAGE_SQL.asc : PRICES_PAGE_SQL.desc)
      .all(
        marketKey,
        q.from ?? Number.MIN_SAFE_INTEGER,
        q.to ?? Number.MAX_SAFE_INTEGER,
        scan.limit,
        scan.offset,
      ) as unknown as ArrayRow[];
    const rows = pageRows(prices, scan.reversed);
    if (!q.books || rows.length === 0) return rows;
    const { lo, hi } = pageTimeRange(rows, asc);
    if (!this.attachConcatenatedBooks(rows, marketKey, lo, hi, asc)) {
      const books = this.conn
        .arrayStmt(asc ? BOOKS_RANGE_SQL.asc : BOOKS_RANGE_SQL.desc)
        .all(marketKey, lo, hi) as unknown as ArrayRow[];
      mergeBooks(rows, books, asc, blobOf);
    }
    return rows;
  }

  /** The books of the page's range read as one aggregate row; false when that row is not usable. */
  private attachConcatenatedBooks(
    rows: SnapshotRow[],
    marketKey: number,
    lo: number,
    hi: number,
    asc: boolean,
  ): boolean {
    const r = this.conn
      .arrayStmt(asc ? BOOKS_CONCAT_SQL.asc : BOOKS_CONCAT_SQL.desc)
      .get(marketKey, lo, hi) as unknown as ArrayRow | undefined;
    const times = r?.[0];
    const lengths = r?.[1];
    const blobs = r?.[2];
    if (times === null || times === undefined || blobs === null || blobs === undefined) return true; // no books
    if (typeof times !== "string" || typeof lengths !== "string" || !(blobs instanceof Uint8Array))
      return false;
    return attachConcatenatedBooks(rows, times, lengths, blobs, asc);
  }

  async snapshotAtOrBefore(marketKey: number, time: Micros, books: boolean): Promise<SnapshotRow | null> {
    const sql = books ? SNAPSHOT_AT_OR_BEFORE_SQL.withBooks : SNAPSHOT_AT_OR_BEFORE_SQL.withoutBooks;
    const row = this.conn.stmt(sql).get(marketKey, time) as Row | undefined;
    return row ? snapshotFromRow(row) : null;
  }
}
