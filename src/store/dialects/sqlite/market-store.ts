import type { SQLInputValue, SQLOutputValue } from "node:sqlite";
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
  affectedBlocks,
  allBlocks,
  allRows,
  atOrBeforeInBlocks,
  blockOfRow,
  blockReadSql,
  blocksFrom,
  type BlockSource,
  countInBlocks,
  type EncodedBlock,
  HeaderMemory,
  headerOfRow,
  mergeRows,
  readBlockPage,
  readRenderedPage,
  type Rendering,
  renderStored,
  rowsBefore,
  spanOfBlocks,
  type StoredBlock,
} from "../../rules/snapshot-blocks.ts";
import {
  addBlockCounts,
  type SeriesSummaryRow,
  seriesSummaryFromRow,
  seriesSummarySql,
  straddlingBlockedSql,
} from "../../rules/series-summary.ts";
import { mergeBooks, pageRows, pageScan, pageTimeRange } from "../../rules/snapshot-page.ts";
import { attachConcatenatedBooks } from "./concatenated-books.ts";
import type { SqliteConnection } from "./connection.ts";

type Row = Record<string, SQLInputValue>;
type ArrayRow = SQLOutputValue[];

const SERIES_SUMMARY_SQL = seriesSummarySql((i) => `?${i}`);
const MARK_SOURCE_SQL = markSourceSql((i) => `?${i}`);
const STRADDLING_BLOCKED_SQL = straddlingBlockedSql((i) => `?${i}`);
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

/**
 * The rendered reads take the rendered column's text alone, as TEXT (node:sqlite gives a string; see
 * FetchedRendering for why), skipping its format, count and ends: 1 + varint(n) + 2n bytes, the
 * varint one byte below 128 and two from there (n <= BLOCK_ROWS).
 */
const blockSql = (renderVersion: number) =>
  blockReadSql((i) => `?${i}`, renderVersion, "CAST(substr(rendered, 3 + (n >= 128) + 2 * n) AS TEXT)");
const INSERT_BLOCK_SQL = `INSERT INTO snapshot_blocks (market, first_us, last_us, n, render_version, prices, books, rendered)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;
/** A block's rendering kept, stamped, if the block still holds the prices it was rendered from. */
const SET_RENDERED_SQL = `UPDATE snapshot_blocks SET rendered = ?, render_version = ?
  WHERE market = ? AND first_us = ? AND prices = ?`;
const DELETE_BLOCK_SQL = "DELETE FROM snapshot_blocks WHERE market = ? AND first_us = ?";
/** Whether a market's snapshots go to blocks: resolved, or in blocks already. */
const SEALED_SQL = `SELECT winner IS NOT NULL AS resolved,
    EXISTS (SELECT 1 FROM snapshot_blocks WHERE market = ?1) AS blocked,
    EXISTS (SELECT 1 FROM snapshots WHERE market = ?1) AS rowed
  FROM markets WHERE id = ?1`;
/** Resolved markets whose snapshots are still in the rows (before version 7, or mid-upgrade). */
const PENDING_SQL = `SELECT id FROM markets m WHERE winner IS NOT NULL
  AND EXISTS (SELECT 1 FROM snapshots s WHERE s.market = m.id) ORDER BY id`;

/** node:sqlite gives a blob as a Uint8Array already. */
const blobOf = (stored: unknown) => stored as Uint8Array;
const blobOrNull = (stored: unknown) => (stored as Uint8Array | null) ?? null;

/** A row of the rendered reads: blockReadSql's columns, the rendered text a string (or NULL). */
function renderedBlockOfRow(r: ArrayRow): StoredBlock {
  return { ...blockOfRow(r, blobOrNull), rendered: r[5] as string | null };
}

/** Markets, snapshots and gaps in the embedded store (see MarketStore). */
export class SqliteMarketStore implements MarketStore {
  private readonly conn: SqliteConnection;
  private readonly headerMemory = new HeaderMemory();
  /** The render version this store reads as current and stamps what it renders with. */
  private readonly renderVersion: number;
  private readonly sql: ReturnType<typeof blockSql>;

  constructor(conn: SqliteConnection, renderVersion = RENDER_VERSION) {
    this.conn = conn;
    this.renderVersion = renderVersion;
    this.sql = blockSql(renderVersion);
  }

  /** A market that is (now) resolved has its snapshots moved into blocks in the same transaction. */
  async upsertMarket(m: Market): Promise<StoredMarket> {
    return this.conn.transaction(() => {
      const stored = marketFromArray(
        this.conn.arrayStmt(UPSERT_MARKET_SQL).get(...marketValues(m)) as unknown as ArrayRow,
      );
      if (m.winner !== null) this.sealRows(stored.key);
      return stored;
    });
  }

  async markSource(marketKey: number, source: MarketSource): Promise<MarketSource[]> {
    const row = this.conn.stmt(MARK_SOURCE_SQL).get(sourceBit(source), marketKey) as Row | undefined;
    return row ? sourcesOf(Number(row.sources)) : [];
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
    const page = this.conn.db.prepare(sql.page);
    page.setReturnArrays(true);
    return { markets: (page.all(...sql.pageValues) as unknown as ArrayRow[]).map(marketFromArray), total };
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
    const straddling = this.conn.stmt(STRADDLING_BLOCKED_SQL).all(since) as Row[];
    return addBlockCounts(rows.map(seriesSummaryFromRow), straddling, (key) =>
      this.countSnapshots(key, since * 1e6),
    );
  }

  async countMarkets(): Promise<number> {
    return (this.conn.stmt("SELECT count(*) AS n FROM markets").get() as Row).n as number;
  }

  async demoSeed(): Promise<DemoSeedMark | null> {
    const row = this.conn.stmt("SELECT anchor, completed_at FROM demo_seed WHERE id = 1").get() as
      Row | undefined;
    return row
      ? {
          anchor: Number(row.anchor),
          completedAt: row.completed_at === null ? null : Number(row.completed_at),
        }
      : null;
  }

  async beginDemoSeed(anchor: number): Promise<void> {
    this.conn
      .stmt("INSERT INTO demo_seed (id, anchor) VALUES (1, ?) ON CONFLICT (id) DO NOTHING")
      .run(anchor);
  }

  async completeDemoSeed(at: Micros): Promise<void> {
    this.conn.stmt("UPDATE demo_seed SET completed_at = ? WHERE id = 1").run(at);
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

  async deleteSnapshotsFrom(marketKey: number, from: Micros): Promise<number> {
    return this.conn.transaction(() => {
      this.headerMemory.forget(marketKey);
      let removed = Number(
        this.conn.stmt("DELETE FROM snapshots WHERE market = ? AND time_us >= ?").run(marketKey, from)
          .changes,
      );
      this.conn.stmt("DELETE FROM snapshot_books WHERE market = ? AND time_us >= ?").run(marketKey, from);
      const headers = (this.conn.arrayStmt(this.sql.headers).all(marketKey) as unknown as ArrayRow[]).map(
        headerOfRow,
      );
      const affected = blocksFrom(headers, from);
      if (affected.length > 0) {
        const stored = affected.flatMap((h) => this.blocksSync(marketKey, h.first, h.first, true));
        const kept = rowsBefore(allRows(stored), from);
        for (const h of affected) this.conn.stmt(DELETE_BLOCK_SQL).run(marketKey, h.first);
        for (const b of kept.blocks) this.writeBlock(marketKey, b);
        removed += kept.removed;
      }
      if (removed > 0) {
        this.conn
          .stmt("UPDATE markets SET snapshot_count = snapshot_count - ? WHERE id = ?")
          .run(removed, marketKey);
      }
      return removed;
    });
  }

  /** Inserts within the caller's transaction: into the market's blocks once it has or needs them. */
  private insertRows(marketKey: number, rows: SnapshotRow[]): number {
    const state = this.conn.stmt(SEALED_SQL).get(marketKey) as Row | undefined;
    if (state && (state.resolved || state.blocked)) {
      if (state.rowed) this.sealRows(marketKey);
      return this.mergeIntoBlocks(marketKey, rows);
    }
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

  /** Merges rows into a market's blocks (within the caller's transaction); returns how many were new. */
  private mergeIntoBlocks(marketKey: number, rows: SnapshotRow[], counted = true): number {
    this.headerMemory.forget(marketKey);
    if (rows.length === 0) return 0;
    let lo = rows[0].time;
    let hi = lo;
    for (const r of rows) {
      if (r.time < lo) lo = r.time;
      if (r.time > hi) hi = r.time;
    }
    const headers = this.conn.arrayStmt(this.sql.headers).all(marketKey) as unknown as ArrayRow[];
    const affected = affectedBlocks(headers.map(headerOfRow), lo, hi);
    const stored: StoredBlock[] = [];
    for (const h of affected) stored.push(...this.blocksSync(marketKey, h.first, h.first, true));
    const merged = mergeRows(allRows(stored), rows);
    if (merged.added === 0) return 0;
    for (const h of affected) this.conn.stmt(DELETE_BLOCK_SQL).run(marketKey, h.first);
    for (const b of merged.blocks) this.writeBlock(marketKey, b);
    if (counted) {
      this.conn
        .stmt("UPDATE markets SET snapshot_count = snapshot_count + ? WHERE id = ?")
        .run(merged.added, marketKey);
    }
    return merged.added;
  }

  private writeBlock(marketKey: number, b: EncodedBlock): void {
    this.conn
      .stmt(INSERT_BLOCK_SQL)
      .run(marketKey, b.first, b.last, b.n, this.renderVersion, b.prices, b.books, b.rendered);
  }

  private blocksSync(marketKey: number, lo: number, hi: number, books: boolean): StoredBlock[] {
    return this.fetchBlocks(books ? this.sql.books : this.sql.prices, marketKey, lo, hi);
  }

  private fetchBlocks(sql: string, marketKey: number, lo: number, hi: number): StoredBlock[] {
    const rows = this.conn.arrayStmt(sql).all(marketKey, lo, hi) as unknown as ArrayRow[];
    return rows.map((r) => blockOfRow(r, blobOrNull));
  }

  /** Moves a market's snapshots from the rows into blocks (within the caller's transaction). */
  private sealRows(marketKey: number): void {
    const rows = this.rowsPage(marketKey, {
      order: "asc",
      limit: Number.MAX_SAFE_INTEGER,
      offset: 0,
      books: true,
    });
    if (rows.length === 0) return;
    // Copies, as the merge keeps them: the books are views of one aggregate blob about to go.
    this.mergeIntoBlocks(marketKey, rows, false);
    this.conn.stmt("DELETE FROM snapshots WHERE market = ?").run(marketKey);
    this.conn.stmt("DELETE FROM snapshot_books WHERE market = ?").run(marketKey);
  }

  /**
   * Moves the snapshots of every resolved market still holding rows into blocks, a market a
   * transaction (migrate() runs it: version 7's upgrade of existing databases, resumable).
   */
  async sealPendingMarkets(onMarket?: (done: number, total: number) => void): Promise<number> {
    const ids = (this.conn.stmt(PENDING_SQL).all() as Row[]).map((r) => r.id as number);
    ids.forEach((id, i) => {
      this.conn.transaction(() => this.sealRows(id));
      onMarket?.(i + 1, ids.length);
    });
    return ids.length;
  }

  /**
   * Renders the blocks whose rendering is stale (another render version's, or none: written before
   * version 8), a batch a transaction in key order (migrate() runs it after the scripts), so that an
   * interrupted run resumes; a block rewritten meanwhile keeps its writer's rendering.
   */
  async renderPendingBlocks(): Promise<number> {
    let done = 0;
    let after: [number, number] = [Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    for (;;) {
      const rows = this.conn.transaction(() => {
        const stale = this.conn.arrayStmt(this.sql.stale).all(...after) as unknown as ArrayRow[];
        for (const r of stale) {
          const block = blockOfRow([r[1], r[2], r[3], r[4], null, null], (v) => v as Uint8Array);
          this.keepRendering(r[0] as number, { ...block, rendered: renderStored(block) });
        }
        return stale;
      });
      if (rows.length === 0) return done;
      const last = rows[rows.length - 1];
      after = [last[0] as number, last[1] as number];
      done += rows.length;
    }
  }

  private keepRendering(marketKey: number, r: Rendering): void {
    this.conn.stmt(SET_RENDERED_SQL).run(r.rendered, this.renderVersion, marketKey, r.first, r.prices);
  }

  private blockSource(marketKey: number): BlockSource {
    return this.headerMemory.source(marketKey, {
      headers: async () =>
        (this.conn.arrayStmt(this.sql.headers).all(marketKey) as unknown as ArrayRow[]).map(headerOfRow),
      blocks: async (lo, hi, books) => this.blocksSync(marketKey, lo, hi, books),
      rendered: async (lo, hi, books) => {
        const sql = books ? this.sql.renderedBooks : this.sql.rendered;
        const rows = this.conn.arrayStmt(sql).all(marketKey, lo, hi) as unknown as ArrayRow[];
        return rows.map(renderedBlockOfRow);
      },
      restamp: async (made) =>
        this.conn.transaction(() => {
          for (const r of made) this.keepRendering(marketKey, r);
        }),
    });
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
    const blocks = await allBlocks(this.blockSource(marketKey));
    if (blocks.length > 0) return spanOfBlocks(blocks, maxStep);
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
    const inBlocks = await countInBlocks(this.blockSource(marketKey), from, to);
    if (inBlocks !== null) return inBlocks;
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
    return (await readBlockPage(this.blockSource(marketKey), q)) ?? this.rowsPage(marketKey, q);
  }

  async renderedPage(marketKey: number, q: SnapshotQuery): Promise<PageWriter | null> {
    return readRenderedPage(this.blockSource(marketKey), q);
  }

  private rowsPage(marketKey: number, q: SnapshotQuery): SnapshotRow[] {
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
    const inBlocks = await atOrBeforeInBlocks(this.blockSource(marketKey), time, books);
    if (inBlocks !== undefined) return inBlocks;
    const sql = books ? SNAPSHOT_AT_OR_BEFORE_SQL.withBooks : SNAPSHOT_AT_OR_BEFORE_SQL.withoutBooks;
    const row = this.conn.arrayStmt(sql).get(marketKey, time) as ArrayRow | undefined;
    return row ? snapshotFromArray(row, blobOrNull) : null;
  }
}
