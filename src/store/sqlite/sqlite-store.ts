import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type SQLInputValue, type SQLOutputValue, type StatementSync } from "node:sqlite";
import type { ApiKeyRecord, PlanName } from "../../domain/api-key.ts";
import type { Coin, Market, MarketType } from "../../domain/market.ts";
import type { SnapshotRow } from "../../domain/snapshot.ts";
import type { Micros } from "../../domain/time.ts";
import type {
  MarketFilter,
  QuotaCharge,
  QuotaChargeRecord,
  QuotaChargeResult,
  RecordingGap,
  SnapshotBatch,
  SnapshotQuery,
  SnapshotSpan,
  Store,
  StoredMarket,
} from "../store.ts";
import {
  gapFromRow,
  KEY_COLUMNS,
  keyFromArray,
  keyValues,
  MARKET_COLUMNS,
  marketFromArray,
  marketFromRow,
  marketValues,
  QUOTA_CHARGE_COLUMNS,
  quotaChargeFromArray,
} from "../rows.ts";
import { SqliteExchangeStore } from "./exchange-sqlite.ts";
import { SQLITE_MIGRATIONS } from "./migrations.ts";

type Row = Record<string, SQLInputValue>;
type ArrayRow = SQLOutputValue[];

// Statements run on every request, as constants: a template literal would build (and the statement
// cache hash) a new string per call.
const MARKET_BY_SLUG_SQL = `SELECT ${MARKET_COLUMNS} FROM markets WHERE slug = ?`;
const MARKET_BY_ALIAS_SQL = `SELECT ${MARKET_COLUMNS} FROM markets WHERE polymarket_slug = ? ORDER BY start_time, id LIMIT 1`;
const FIND_API_KEY_SQL = `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`;
const QUOTA_USED_SQL = "SELECT used FROM quota_usage WHERE key_id = ? AND month = ?";
const PRICES_PAGE_SQL = {
  asc: `SELECT time_us, coin_price, price_up, price_down FROM snapshots
    WHERE market = ? AND time_us >= ? AND time_us <= ? ORDER BY time_us ASC LIMIT ? OFFSET ?`,
  desc: `SELECT time_us, coin_price, price_up, price_down FROM snapshots
    WHERE market = ? AND time_us >= ? AND time_us <= ? ORDER BY time_us DESC LIMIT ? OFFSET ?`,
};
/** Pages at smaller offsets skip too few rows for reading from the far end to pay. */
const FAR_END_MIN_OFFSET = 256;
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

function snapshotFromRow(r: Row): SnapshotRow {
  return {
    time: r.time_us as number,
    coinPrice: r.coin_price as number,
    priceUp: r.price_up as number,
    priceDown: r.price_down as number,
    books: (r.books as Uint8Array | null | undefined) ?? null,
  };
}

/** Parses `sqlite:./data/updown.db`, `sqlite::memory:` or a bare path. */
export function sqlitePathOf(url: string): string {
  return url.startsWith("sqlite:") ? url.slice("sqlite:".length) : url;
}

/**
 * The embedded store. node:sqlite is synchronous; every call here finishes before it returns, so the
 * async interface costs one microtask and no thread hops.
 */
export class SqliteStore implements Store {
  readonly kind = "sqlite" as const;
  readonly db: DatabaseSync;
  readonly exchange: SqliteExchangeStore;
  private readonly statements = new Map<string, StatementSync>();
  private readonly arrayStatements = new Map<string, StatementSync>();

  constructor(path: string) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path);
    // busy_timeout first: switching to WAL waits for other connections opening the same new file.
    this.db.exec("PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
    this.exchange = new SqliteExchangeStore(this.db);
  }

  private stmt(sql: string): StatementSync {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /** A cached statement that returns rows as arrays of column values. */
  private arrayStmt(sql: string): StatementSync {
    let s = this.arrayStatements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      s.setReturnArrays(true);
      this.arrayStatements.set(sql, s);
    }
    return s;
  }

  private transaction<T>(work: () => T): T {
    this.db.exec("BEGIN IMMEDIATE");
    try {
      const result = work();
      this.db.exec("COMMIT");
      return result;
    } catch (err) {
      this.db.exec("ROLLBACK");
      throw err;
    }
  }

  async migrate(): Promise<void> {
    this.db.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER)",
    );
    const applied = this.db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?");
    for (const m of SQLITE_MIGRATIONS) {
      // Checked inside the write transaction, so two processes migrating at once apply each version once.
      this.transaction(() => {
        if (applied.get(m.version)) return;
        this.db.exec(m.sql);
        this.db.prepare("INSERT INTO schema_migrations VALUES (?, ?)").run(m.version, Date.now());
      });
    }
  }

  async close(): Promise<void> {
    this.statements.clear();
    this.arrayStatements.clear();
    if (this.db.isOpen) this.db.close();
  }

  async upsertMarket(m: Market): Promise<StoredMarket> {
    const row = this.stmt(
      `INSERT INTO markets (slug, polymarket_slug, coin, market_type, market_id, event_id, start_time, end_time,
         coin_price_start, coin_price_end, condition_id, clob_token_up, clob_token_down, winner, final_volume,
         final_liquidity, resolved_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (slug) DO UPDATE SET polymarket_slug = excluded.polymarket_slug, coin = excluded.coin,
         market_type = excluded.market_type, market_id = excluded.market_id, event_id = excluded.event_id,
         start_time = excluded.start_time, end_time = excluded.end_time,
         coin_price_start = excluded.coin_price_start, coin_price_end = excluded.coin_price_end,
         condition_id = excluded.condition_id, clob_token_up = excluded.clob_token_up,
         clob_token_down = excluded.clob_token_down, winner = excluded.winner,
         final_volume = excluded.final_volume, final_liquidity = excluded.final_liquidity,
         resolved_at = excluded.resolved_at, created_at = excluded.created_at, updated_at = excluded.updated_at
       RETURNING ${MARKET_COLUMNS}`,
    ).get(...marketValues(m)) as Row;
    return marketFromRow(row);
  }

  /** Our slug first; else the earliest market with that Polymarket alias (one lookup in the usual case). */
  async getMarket(slug: string): Promise<StoredMarket | null> {
    const row = (this.arrayStmt(MARKET_BY_SLUG_SQL).get(slug) ??
      this.arrayStmt(MARKET_BY_ALIAS_SQL).get(slug)) as ArrayRow | undefined;
    return row ? marketFromArray(row) : null;
  }

  async listMarkets(f: MarketFilter): Promise<{ markets: StoredMarket[]; total: number }> {
    const where: string[] = [];
    const params: SQLInputValue[] = [];
    if (f.coin) {
      where.push("coin = ?");
      params.push(f.coin);
    }
    if (f.marketType) {
      where.push("market_type = ?");
      params.push(f.marketType);
    }
    if (f.resolved !== undefined) where.push(f.resolved ? "winner IS NOT NULL" : "winner IS NULL");
    if (f.startFrom !== undefined) {
      where.push("start_time >= ?");
      params.push(f.startFrom);
    }
    if (f.startTo !== undefined) {
      where.push("start_time <= ?");
      params.push(f.startTo);
    }
    for (const h of f.hiddenBefore ?? []) {
      where.push("NOT (coin = ? AND market_type = ? AND start_time < ?)");
      params.push(h.coin, h.marketType, h.startTime);
    }
    const clause = where.length ? `WHERE ${where.join(" AND ")}` : "";
    const total = (this.db.prepare(`SELECT count(*) AS n FROM markets ${clause}`).get(...params) as Row)
      .n as number;
    const rows = this.db
      .prepare(
        `SELECT ${MARKET_COLUMNS} FROM markets ${clause} ORDER BY start_time DESC, slug LIMIT ? OFFSET ?`,
      )
      .all(...params, f.limit, f.offset) as Row[];
    return { markets: rows.map(marketFromRow), total };
  }

  async latestStartTimes(coin: Coin, marketType: MarketType, count: number): Promise<number[]> {
    const rows = this.stmt(
      "SELECT start_time FROM markets WHERE coin = ? AND market_type = ? ORDER BY start_time DESC LIMIT ?",
    ).all(coin, marketType, count) as Row[];
    return rows.map((r) => r.start_time as number);
  }

  async countMarkets(): Promise<number> {
    return (this.stmt("SELECT count(*) AS n FROM markets").get() as Row).n as number;
  }

  async insertSnapshots(marketKey: number, rows: SnapshotRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    return this.transaction(() => this.insertRows(marketKey, rows));
  }

  async insertSnapshotBatch(batch: SnapshotBatch[]): Promise<number> {
    return this.transaction(() => {
      let added = 0;
      for (const b of batch) added += this.insertRows(b.marketKey, b.rows);
      return added;
    });
  }

  /** Inserts within the caller's transaction. */
  private insertRows(marketKey: number, rows: SnapshotRow[]): number {
    const insertPrices = this.stmt(
      "INSERT OR IGNORE INTO snapshots (market, time_us, coin_price, price_up, price_down) VALUES (?, ?, ?, ?, ?)",
    );
    const insertBooks = this.stmt(
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
      this.stmt("UPDATE markets SET snapshot_count = snapshot_count + ? WHERE id = ?").run(added, marketKey);
    }
    return added;
  }

  async recordGap(marketKey: number, gap: RecordingGap): Promise<void> {
    this.stmt(
      `INSERT INTO recording_gaps (market, from_us, to_us, cause, detail) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (market, from_us) DO UPDATE SET to_us = max(to_us, excluded.to_us)`,
    ).run(marketKey, gap.from, gap.to, gap.cause, gap.detail);
  }

  async listGaps(marketKey: number): Promise<RecordingGap[]> {
    const rows = this.stmt(
      "SELECT from_us, to_us, cause, detail FROM recording_gaps WHERE market = ? ORDER BY from_us",
    ).all(marketKey) as Row[];
    return rows.map(gapFromRow);
  }

  async snapshotSpan(marketKey: number, maxStep: Micros): Promise<SnapshotSpan> {
    const ends = this.stmt(
      "SELECT min(time_us) AS first, max(time_us) AS last FROM snapshots WHERE market = ?",
    ).get(marketKey) as Row;
    const holes = this.stmt(
      `SELECT prev_us, time_us FROM (
         SELECT time_us, lag(time_us) OVER (ORDER BY time_us) AS prev_us FROM snapshots WHERE market = ?
       ) WHERE time_us - prev_us > ? ORDER BY time_us`,
    ).all(marketKey, maxStep) as Row[];
    return {
      first: (ends.first as number | null) ?? null,
      last: (ends.last as number | null) ?? null,
      holes: holes.map((h) => ({ after: h.prev_us as number, before: h.time_us as number })),
    };
  }

  async countSnapshots(marketKey: number, from?: Micros, to?: Micros): Promise<number> {
    const row = this.stmt(
      "SELECT count(*) AS n FROM snapshots WHERE market = ? AND time_us >= ? AND time_us <= ?",
    ).get(marketKey, from ?? Number.MIN_SAFE_INTEGER, to ?? Number.MAX_SAFE_INTEGER) as Row;
    return row.n as number;
  }

  /**
   * A page is one range scan of the prices and, with books, a second range scan of the books over the
   * same times, merged here: cheaper than a join, which looks each second's books up separately.
   * Rows come back as arrays (setReturnArrays) to save building an object per row.
   *
   * OFFSET steps over every row it skips, so a deep page (the oldest seconds, newest first) is read
   * from the other end, which skips fewer rows, and reversed, when the caller says how many rows the
   * range holds (`total`).
   */
  async snapshotPage(marketKey: number, q: SnapshotQuery): Promise<SnapshotRow[]> {
    const asc = q.order === "asc";
    let scanAsc = asc;
    let limit = q.limit;
    let offset = q.offset;
    if (q.total !== undefined && q.offset >= FAR_END_MIN_OFFSET) {
      const left = q.total - q.offset; // rows from the page's first to the last of the range
      const farOffset = Math.max(0, left - q.limit);
      if (left > 0 && farOffset < q.offset) {
        scanAsc = !asc;
        limit = Math.min(q.limit, left);
        offset = farOffset;
      }
    }
    const prices = this.arrayStmt(scanAsc ? PRICES_PAGE_SQL.asc : PRICES_PAGE_SQL.desc).all(
      marketKey,
      q.from ?? Number.MIN_SAFE_INTEGER,
      q.to ?? Number.MAX_SAFE_INTEGER,
      limit,
      offset,
    ) as unknown as ArrayRow[];
    const n = prices.length;
    const rows = new Array<SnapshotRow>(n);
    const reversed = scanAsc !== asc;
    for (let i = 0; i < n; i++) {
      const r = prices[i];
      rows[reversed ? n - 1 - i : i] = {
        time: r[0] as number,
        coinPrice: r[1] as number,
        priceUp: r[2] as number,
        priceDown: r[3] as number,
        books: null,
      };
    }
    if (!q.books || n === 0) return rows;
    const first = rows[0].time;
    const last = rows[n - 1].time;
    const lo = asc ? first : last;
    const hi = asc ? last : first;
    if (!this.attachConcatenatedBooks(rows, marketKey, lo, hi, asc))
      this.attachBooks(rows, marketKey, lo, hi, asc);
    return rows;
  }

  /**
   * Gives each row its books from one aggregate row: the times and the blobs' lengths as text and the
   * blobs concatenated. node:sqlite copies every blob it returns into a new ArrayBuffer; one blob for the
   * page instead of one per second is most of the cost saved. The times and lengths come from the
   * same aggregate step as the blobs, so they pair up whatever order SQLite aggregates in; anything
   * unexpected (out of page order, unparsable, lengths not adding up) returns false for attachBooks.
   */
  private attachConcatenatedBooks(
    rows: SnapshotRow[],
    marketKey: number,
    lo: number,
    hi: number,
    asc: boolean,
  ): boolean {
    const r = this.arrayStmt(asc ? BOOKS_CONCAT_SQL.asc : BOOKS_CONCAT_SQL.desc).get(
      marketKey,
      lo,
      hi,
    ) as unknown as ArrayRow | undefined;
    const times = r?.[0];
    const lengths = r?.[1];
    const blobs = r?.[2];
    if (times === null || times === undefined || blobs === null || blobs === undefined) return true; // no books
    if (typeof times !== "string" || typeof lengths !== "string" || !(blobs instanceof Uint8Array))
      return false;
    let i = 0;
    let tp = 0;
    let lp = 0;
    let bp = 0;
    let prev = asc ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
    while (tp < times.length) {
      // An integer time up to the next comma, and the blob's length likewise.
      let t = 0;
      let c = times.charCodeAt(tp);
      const negative = c === 45;
      if (negative) tp++;
      let start = tp;
      while (tp < times.length && (c = times.charCodeAt(tp)) !== 44) {
        if (c < 48 || c > 57) return false;
        t = t * 10 + (c - 48);
        tp++;
      }
      if (tp === start || t > Number.MAX_SAFE_INTEGER) return false;
      tp++;
      let length = 0;
      start = lp;
      while (lp < lengths.length && (c = lengths.charCodeAt(lp)) !== 44) {
        if (c < 48 || c > 57) return false;
        length = length * 10 + (c - 48);
        lp++;
      }
      if (lp === start) return false;
      lp++;
      if (negative) t = -t;
      if (asc ? t < prev : t > prev) return false;
      prev = t;
      const end = bp + length;
      if (end > blobs.length) return false;
      while (i < rows.length && (asc ? rows[i].time < t : rows[i].time > t)) i++;
      if (i < rows.length && rows[i].time === t) rows[i++].books = blobs.subarray(bp, end);
      bp = end;
    }
    return bp === blobs.length && lp >= lengths.length;
  }

  /** attachConcatenatedBooks by a row per second (two range scans merged). */
  private attachBooks(rows: SnapshotRow[], marketKey: number, lo: number, hi: number, asc: boolean): void {
    const books = this.arrayStmt(asc ? BOOKS_RANGE_SQL.asc : BOOKS_RANGE_SQL.desc).all(
      marketKey,
      lo,
      hi,
    ) as unknown as ArrayRow[];
    // Both lists are in page order; a second without books keeps null.
    let j = 0;
    for (let i = 0; i < rows.length; i++) {
      rows[i].books = null;
      const t = rows[i].time;
      while (j < books.length && (asc ? (books[j][0] as number) < t : (books[j][0] as number) > t)) j++;
      if (j < books.length && books[j][0] === t) {
        rows[i].books = books[j][1] as Uint8Array;
        j++;
      }
    }
  }

  async snapshotAtOrBefore(marketKey: number, time: Micros, books: boolean): Promise<SnapshotRow | null> {
    const sql = books
      ? `SELECT s.time_us, s.coin_price, s.price_up, s.price_down, b.books FROM snapshots s
           LEFT JOIN snapshot_books b ON b.market = s.market AND b.time_us = s.time_us
           WHERE s.market = ? AND s.time_us <= ? ORDER BY s.time_us DESC LIMIT 1`
      : `SELECT time_us, coin_price, price_up, price_down FROM snapshots
           WHERE market = ? AND time_us <= ? ORDER BY time_us DESC LIMIT 1`;
    const row = this.stmt(sql).get(marketKey, time) as Row | undefined;
    return row ? snapshotFromRow(row) : null;
  }

  async insertApiKey(k: ApiKeyRecord, maxActive: number | null = null): Promise<boolean> {
    return this.transaction(() => {
      if (maxActive !== null && this.activeKeys(k.account, k.plan) >= maxActive) return false;
      this.stmt(`INSERT INTO api_keys (${KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
        ...keyValues(k),
      );
      return true;
    });
  }

  private activeKeys(account: string, plan: PlanName): number {
    const row = this.stmt(
      "SELECT count(*) AS n FROM api_keys WHERE account = ? AND plan = ? AND revoked_at IS NULL",
    ).get(account, plan) as Row;
    return row.n as number;
  }

  async countActiveKeys(account: string, plan: PlanName): Promise<number> {
    return this.activeKeys(account, plan);
  }

  async findApiKey(id: string): Promise<ApiKeyRecord | null> {
    const r = this.arrayStmt(FIND_API_KEY_SQL).get(id) as unknown as ArrayRow | undefined;
    return r ? keyFromArray(r) : null;
  }

  async listApiKeys(): Promise<ApiKeyRecord[]> {
    const rows = this.arrayStmt(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`).all();
    return (rows as unknown as ArrayRow[]).map(keyFromArray);
  }

  async revokeApiKey(id: string, at: Micros): Promise<boolean> {
    return (
      this.stmt("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(at, id)
        .changes > 0
    );
  }

  async putApiKey(k: ApiKeyRecord): Promise<void> {
    // min() of SQLite is NULL when either side is; coalesce then takes the one revocation there is.
    this.stmt(
      `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, plan = excluded.plan, account = excluded.account,
         name = excluded.name, created_at = excluded.created_at,
         revoked_at = coalesce(min(api_keys.revoked_at, excluded.revoked_at), api_keys.revoked_at, excluded.revoked_at),
         per_minute_limit = excluded.per_minute_limit, per_day_limit = excluded.per_day_limit`,
    ).run(...keyValues(k));
  }

  async chargeQuota(c: QuotaCharge): Promise<QuotaChargeResult> {
    return this.transaction(() => {
      if (c.idempotencyKey !== null) {
        const earlier = this.stmt(
          "SELECT id, month, refunded_at, result FROM quota_charges WHERE key_id = ? AND idempotency_key = ?",
        ).get(c.keyId, c.idempotencyKey) as Row | undefined;
        if (earlier && earlier.refunded_at === null) {
          return {
            status: "replayed",
            chargeId: earlier.id as string,
            used: this.used(c.keyId, earlier.month as string),
            result: earlier.result as string | null,
          };
        }
        // A refunded charge bought nothing: its idempotency key may be spent again.
        if (earlier) this.stmt("DELETE FROM quota_charges WHERE id = ?").run(earlier.id as string);
      }
      const used = this.used(c.keyId, c.month);
      if (c.limit !== null && used >= c.limit) return { status: "exhausted", used };
      this.stmt(
        `INSERT INTO quota_usage (key_id, month, used) VALUES (?, ?, 1)
         ON CONFLICT (key_id, month) DO UPDATE SET used = used + 1`,
      ).run(c.keyId, c.month);
      this.stmt(
        "INSERT INTO quota_charges (id, key_id, month, idempotency_key, charged_at) VALUES (?, ?, ?, ?, ?)",
      ).run(c.chargeId, c.keyId, c.month, c.idempotencyKey, c.at);
      return { status: "charged", chargeId: c.chargeId, used: used + 1 };
    });
  }

  private used(keyId: string, month: string): number {
    const row = this.stmt(QUOTA_USED_SQL).get(keyId, month) as Row | undefined;
    return (row?.used as number | undefined) ?? 0;
  }

  async refundQuota(keyId: string, chargeId: string, at: Micros): Promise<boolean> {
    return this.transaction(() => {
      const charge = this.stmt(
        "SELECT month FROM quota_charges WHERE id = ? AND key_id = ? AND refunded_at IS NULL",
      ).get(chargeId, keyId) as Row | undefined;
      if (!charge) return false;
      this.stmt("UPDATE quota_charges SET refunded_at = ? WHERE id = ?").run(at, chargeId);
      this.stmt("UPDATE quota_usage SET used = used - 1 WHERE key_id = ? AND month = ?").run(
        keyId,
        charge.month as string,
      );
      return true;
    });
  }

  async recordChargeResult(keyId: string, chargeId: string, result: string): Promise<void> {
    this.stmt("UPDATE quota_charges SET result = ? WHERE id = ? AND key_id = ?").run(result, chargeId, keyId);
  }

  async quotaUsed(keyId: string, month: string): Promise<number> {
    return this.used(keyId, month);
  }

  async listQuotaCharges(afterId: string | null, limit: number): Promise<QuotaChargeRecord[]> {
    const rows = (afterId === null
      ? this.arrayStmt(`SELECT ${QUOTA_CHARGE_COLUMNS} FROM quota_charges ORDER BY id LIMIT ?`).all(limit)
      : this.arrayStmt(
          `SELECT ${QUOTA_CHARGE_COLUMNS} FROM quota_charges WHERE id > ? ORDER BY id LIMIT ?`,
        ).all(afterId, limit)) as unknown as ArrayRow[];
    return rows.map(quotaChargeFromArray);
  }

  async putQuotaCharges(charges: QuotaChargeRecord[]): Promise<void> {
    if (charges.length === 0) return;
    const dropOther = this.stmt(
      "DELETE FROM quota_charges WHERE key_id = ? AND idempotency_key = ? AND id <> ?",
    );
    const put = this.stmt(
      `INSERT INTO quota_charges (${QUOTA_CHARGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET key_id = excluded.key_id, month = excluded.month,
         idempotency_key = excluded.idempotency_key, charged_at = excluded.charged_at,
         refunded_at = coalesce(min(quota_charges.refunded_at, excluded.refunded_at), quota_charges.refunded_at,
           excluded.refunded_at),
         result = coalesce(excluded.result, quota_charges.result)`,
    );
    const recount = this.stmt(
      `INSERT INTO quota_usage (key_id, month, used)
       SELECT ?1, ?2, count(*) FROM quota_charges WHERE key_id = ?1 AND month = ?2 AND refunded_at IS NULL
       ON CONFLICT (key_id, month) DO UPDATE SET used = excluded.used`,
    );
    this.transaction(() => {
      const touched = new Map<string, [string, string]>();
      for (const c of charges) {
        if (c.idempotencyKey !== null) dropOther.run(c.keyId, c.idempotencyKey, c.id);
        put.run(c.id, c.keyId, c.month, c.idempotencyKey, c.chargedAt, c.refundedAt, c.result);
        touched.set(`${c.keyId}\n${c.month}`, [c.keyId, c.month]);
      }
      for (const [keyId, month] of touched.values()) recount.run(keyId, month);
    });
  }
}
