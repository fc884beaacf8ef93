import pg, { type Pool, type PoolClient, type PoolConfig } from "pg";
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
  keyFromRow,
  keyValues,
  MARKET_COLUMNS,
  marketFromRow,
  marketValues,
  QUOTA_CHARGE_COLUMNS,
  quotaChargeFromArray,
} from "../rows.ts";
import { PostgresExchangeStore } from "./exchange-pg.ts";
import { POSTGRES_MIGRATIONS } from "./migrations.ts";
import { SnapshotPartitions } from "./partitions.ts";
import {
  ACCOUNT_KEYS_LOCK_NAMESPACE,
  QUOTA_LOCK_NAMESPACE,
  SCHEMA_LOCK,
  STORE_TYPES,
  inTransaction,
} from "./pg-util.ts";

/** A row as node-pg returns it with STORE_TYPES: BIGINT and DOUBLE PRECISION as numbers, BYTEA as Buffer. */
type Row = Record<string, unknown>;
type ArrayRow = unknown[];

const UPSERT_MARKET_SQL = `INSERT INTO markets (slug, polymarket_slug, coin, market_type, market_id, event_id,
    start_time, end_time, coin_price_start, coin_price_end, condition_id, clob_token_up, clob_token_down, winner,
    final_volume, final_liquidity, resolved_at, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
  ON CONFLICT (slug) DO UPDATE SET polymarket_slug = excluded.polymarket_slug, coin = excluded.coin,
    market_type = excluded.market_type, market_id = excluded.market_id, event_id = excluded.event_id,
    start_time = excluded.start_time, end_time = excluded.end_time,
    coin_price_start = excluded.coin_price_start, coin_price_end = excluded.coin_price_end,
    condition_id = excluded.condition_id, clob_token_up = excluded.clob_token_up,
    clob_token_down = excluded.clob_token_down, winner = excluded.winner,
    final_volume = excluded.final_volume, final_liquidity = excluded.final_liquidity,
    resolved_at = excluded.resolved_at, created_at = excluded.created_at, updated_at = excluded.updated_at
  RETURNING ${MARKET_COLUMNS}`;

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

/** A key record as given; a revocation on either side stays (LEAST ignores a NULL). */
const PUT_API_KEY_SQL = `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
  ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, plan = excluded.plan, account = excluded.account,
    name = excluded.name, created_at = excluded.created_at,
    revoked_at = LEAST(api_keys.revoked_at, excluded.revoked_at),
    per_minute_limit = excluded.per_minute_limit, per_day_limit = excluded.per_day_limit`;

/** Other charges holding an idempotency key of the batch for the same API key give way to the batch's. */
const DROP_OTHER_CHARGES_SQL = `DELETE FROM quota_charges q
  USING unnest($1::text[], $2::text[], $3::text[]) AS b (id, key_id, idempotency_key)
  WHERE q.key_id = b.key_id AND q.idempotency_key = b.idempotency_key AND q.id <> b.id`;

/** Charges as given; a refund (the earlier one) and a recorded result already stored are kept. */
const PUT_QUOTA_CHARGES_SQL = `INSERT INTO quota_charges (${QUOTA_CHARGE_COLUMNS})
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[])
  ON CONFLICT (id) DO UPDATE SET key_id = excluded.key_id, month = excluded.month,
    idempotency_key = excluded.idempotency_key, charged_at = excluded.charged_at,
    refunded_at = LEAST(quota_charges.refunded_at, excluded.refunded_at),
    result = COALESCE(excluded.result, quota_charges.result)`;

/** Each (key, month) of the batch: used set to its live charges. */
const RECOUNT_QUOTA_SQL = `INSERT INTO quota_usage (key_id, month, used)
  SELECT t.key_id, t.month,
    (SELECT count(*) FROM quota_charges c WHERE c.key_id = t.key_id AND c.month = t.month AND c.refunded_at IS NULL)
  FROM (SELECT DISTINCT key_id, month FROM unnest($1::text[], $2::text[]) AS b (key_id, month)) t
  ON CONFLICT (key_id, month) DO UPDATE SET used = excluded.used`;

/**
 * Books as a plain Uint8Array over the bytes node-pg parsed, as the SQLite store returns them: a
 * Buffer has other methods and fails a strict comparison with the encoder's output.
 */
function booksOf(value: unknown): Uint8Array | null {
  if (value === null || value === undefined) return null;
  const b = value as Buffer;
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function snapshotFromArray(r: ArrayRow): SnapshotRow {
  return {
    time: r[0] as number,
    coinPrice: r[1] as number,
    priceUp: r[2] as number,
    priceDown: r[3] as number,
    books: booksOf(r[4]),
  };
}

/**
 * SQLSTATE of a row that fits no partition (its month's partition is gone from under us), shared with
 * failed CHECK constraints, which the snapshot tables have none of; the message is not matched, as it
 * depends on the server's language.
 */
const NO_PARTITION_FOR_ROW = "23514";

function isMissingPartition(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === NO_PARTITION_FOR_ROW;
}

export interface PostgresStoreOptions {
  /** Passed to pg.Pool after the defaults below (max connections, timeouts...). */
  pool?: Omit<PoolConfig, "connectionString" | "types" | "onConnect">;
}

/**
 * The server store: the same data and answers as SqliteStore, for several service processes sharing
 * one database. Everything that must be atomic across processes is one statement or one transaction
 * serialized by an advisory lock (see pg-util.ts).
 */
export class PostgresStore implements Store {
  readonly kind = "postgres" as const;
  readonly pool: Pool;
  readonly exchange: PostgresExchangeStore;
  private readonly partitions: SnapshotPartitions;

  constructor(connectionString: string, options: PostgresStoreOptions = {}) {
    this.pool = new pg.Pool({
      connectionTimeoutMillis: 10_000,
      ...options.pool,
      connectionString,
      types: STORE_TYPES,
      // Floats in text go out with the fewest digits that read back exactly (any value above 0 does
      // that from PostgreSQL 12; 3 gives 17 significant digits, also exact, before), whatever the
      // server's or role's default. A connection that cannot set it is not used.
      onConnect: async (client) => {
        await client.query("SET extra_float_digits = 3");
      },
    });
    // An idle client's connection dropping (a server restart) is reported here; without a listener
    // it would crash the process. The pool replaces the client on the next checkout.
    this.pool.on("error", () => {});
    this.partitions = new SnapshotPartitions(this.pool);
    this.exchange = new PostgresExchangeStore(this.pool);
  }

  /** Applies the missing migrations in one transaction, after any other process migrating has finished. */
  async migrate(): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1, $2)", [
        SCHEMA_LOCK.namespace,
        SCHEMA_LOCK.migrations,
      ]);
      await client.query<Row>(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT)",
      );
      const { rows } = await client.query<Row>("SELECT version FROM schema_migrations");
      const done = new Set(rows.map((r) => r.version as number));
      for (const m of POSTGRES_MIGRATIONS) {
        if (done.has(m.version)) continue;
        await client.query(m.sql);
        await client.query("INSERT INTO schema_migrations VALUES ($1, $2)", [m.version, Date.now()]);
      }
    });
  }

  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }

  private async one(sql: string, params: unknown[]): Promise<Row | undefined> {
    return (await this.pool.query<Row>(sql, params)).rows[0] as Row | undefined;
  }

  private async count(sql: string, params: unknown[]): Promise<number> {
    return (await this.one(sql, params))!.n as number;
  }

  async upsertMarket(m: Market): Promise<StoredMarket> {
    const row = await this.one(UPSERT_MARKET_SQL, marketValues(m));
    return marketFromRow(row!);
  }

  async getMarket(slug: string): Promise<StoredMarket | null> {
    const row = await this.one(MARKET_BY_SLUG_OR_ALIAS_SQL, [slug]);
    return row ? marketFromRow(row) : null;
  }

  async listMarkets(f: MarketFilter): Promise<{ markets: StoredMarket[]; total: number }> {
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (f.coin) where.push(`coin = ${param(f.coin)}`);
    if (f.marketType) where.push(`market_type = ${param(f.marketType)}`);
    if (f.resolved !== undefined) where.push(f.resolved ? "winner IS NOT NULL" : "winner IS NULL");
    if (f.startFrom !== undefined) where.push(`start_time >= ${param(f.startFrom)}`);
    if (f.startTo !== undefined) where.push(`start_time <= ${param(f.startTo)}`);
    for (const h of f.hiddenBefore ?? []) {
      where.push(
        `NOT (coin = ${param(h.coin)} AND market_type = ${param(h.marketType)} AND start_time < ${param(h.startTime)})`,
      );
    }
    const clause = where.length ? `WHERE ${where.join(" AND ")}` : "";
    const total = await this.count(`SELECT count(*) AS n FROM markets ${clause}`, params);
    const n = params.length;
    const { rows } = await this.pool.query<Row>(
      `SELECT ${MARKET_COLUMNS} FROM markets ${clause} ORDER BY start_time DESC, slug LIMIT $${n + 1} OFFSET $${n + 2}`,
      [...params, f.limit, f.offset],
    );
    return { markets: rows.map(marketFromRow), total };
  }

  async latestStartTimes(coin: Coin, marketType: MarketType, count: number): Promise<number[]> {
    const { rows } = await this.pool.query<Row>(
      "SELECT start_time FROM markets WHERE coin = $1 AND market_type = $2 ORDER BY start_time DESC LIMIT $3",
      [coin, marketType, count],
    );
    return rows.map((r) => r.start_time as number);
  }

  async countMarkets(): Promise<number> {
    return this.count("SELECT count(*) AS n FROM markets", []);
  }

  async insertSnapshots(marketKey: number, rows: SnapshotRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    await this.partitions.ensureFor(rows.map((r) => r.time));
    try {
      return await this.insertChunks(marketKey, rows);
    } catch (err) {
      if (!isMissingPartition(err)) throw err;
      this.partitions.forget();
      await this.partitions.ensureFor(rows.map((r) => r.time));
      return this.insertChunks(marketKey, rows);
    }
  }

  /**
   * One statement for a usual batch; a large one in chunks, all in one transaction. The chunks go in
   * time order (a stable sort keeps a repeated second's first occurrence first), so that concurrent
   * overlapping batches lock rows in the same order throughout, as each statement does within itself.
   */
  private async insertChunks(marketKey: number, rows: SnapshotRow[]): Promise<number> {
    if (rows.length <= INSERT_CHUNK_ROWS) return insertChunk(this.pool, marketKey, rows);
    const sorted = rows.toSorted((a, b) => a.time - b.time);
    return inTransaction(this.pool, async (client) => {
      let added = 0;
      for (let i = 0; i < sorted.length; i += INSERT_CHUNK_ROWS) {
        added += await insertChunk(client, marketKey, sorted.slice(i, i + INSERT_CHUNK_ROWS));
      }
      return added;
    });
  }

  async insertSnapshotBatch(batch: SnapshotBatch[]): Promise<number> {
    const times = batch.flatMap((b) => b.rows.map((r) => r.time));
    if (times.length === 0) return 0;
    const write = () =>
      inTransaction(this.pool, async (client) => {
        let added = 0;
        // Markets in key order, so that concurrent batches lock rows in one order.
        for (const b of batch.toSorted((x, y) => x.marketKey - y.marketKey)) {
          const rows = b.rows.toSorted((x, y) => x.time - y.time);
          for (let i = 0; i < rows.length; i += INSERT_CHUNK_ROWS) {
            added += await insertChunk(client, b.marketKey, rows.slice(i, i + INSERT_CHUNK_ROWS));
          }
        }
        return added;
      });
    await this.partitions.ensureFor(times);
    try {
      return await write();
    } catch (err) {
      if (!isMissingPartition(err)) throw err;
      this.partitions.forget();
      await this.partitions.ensureFor(times);
      return write();
    }
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
    return this.count(
      "SELECT count(*) AS n FROM snapshots WHERE market = $1 AND time_us >= $2 AND time_us <= $3",
      [marketKey, from ?? Number.MIN_SAFE_INTEGER, to ?? Number.MAX_SAFE_INTEGER],
    );
  }

  /**
   * A page is one range scan of the prices and, with books, one range scan of the books over the
   * page's times, merged here (both come in page order).
   */
  async snapshotPage(marketKey: number, q: SnapshotQuery): Promise<SnapshotRow[]> {
    const asc = q.order === "asc";
    const prices = await this.pool.query<ArrayRow>({
      text: asc ? PRICES_PAGE_SQL.asc : PRICES_PAGE_SQL.desc,
      values: [
        marketKey,
        q.from ?? Number.MIN_SAFE_INTEGER,
        q.to ?? Number.MAX_SAFE_INTEGER,
        q.limit,
        q.offset,
      ],
      rowMode: "array",
    });
    const rows = prices.rows.map(snapshotFromArray);
    if (!q.books || rows.length === 0) return rows;
    const first = rows[0].time;
    const last = rows[rows.length - 1].time;
    const books = await this.pool.query<ArrayRow>({
      text: asc ? BOOKS_RANGE_SQL.asc : BOOKS_RANGE_SQL.desc,
      values: [marketKey, asc ? first : last, asc ? last : first],
      rowMode: "array",
    });
    attachBooks(rows, books.rows, asc);
    return rows;
  }

  async snapshotAtOrBefore(marketKey: number, time: Micros, books: boolean): Promise<SnapshotRow | null> {
    const { rows } = await this.pool.query<ArrayRow>({
      text: books ? SNAPSHOT_AT_OR_BEFORE_SQL.withBooks : SNAPSHOT_AT_OR_BEFORE_SQL.withoutBooks,
      values: [marketKey, time],
      rowMode: "array",
    });
    return rows.length ? snapshotFromArray(rows[0]) : null;
  }

  /**
   * With a limit, counting the account's keys and inserting one happen under a lock on the (account,
   * plan): two concurrent inserts cannot both see room for one more.
   */
  async insertApiKey(k: ApiKeyRecord, maxActive: number | null = null): Promise<boolean> {
    const values = keyValues(k);
    const insert = `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`;
    if (maxActive === null) {
      await this.pool.query<Row>(insert, values);
      return true;
    }
    return inTransaction(this.pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2::text || '/' || $3::text))", [
        ACCOUNT_KEYS_LOCK_NAMESPACE,
        k.account,
        k.plan,
      ]);
      if ((await activeKeys(client, k.account, k.plan)) >= maxActive) return false;
      await client.query(insert, values);
      return true;
    });
  }

  async countActiveKeys(account: string, plan: PlanName): Promise<number> {
    return activeKeys(this.pool, account, plan);
  }

  async findApiKey(id: string): Promise<ApiKeyRecord | null> {
    const row = await this.one(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    return row ? keyFromRow(row) : null;
  }

  async listApiKeys(): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`,
    );
    return rows.map(keyFromRow);
  }

  async revokeApiKey(id: string, at: Micros): Promise<boolean> {
    const res = await this.pool.query<Row>(
      "UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
      [at, id],
    );
    return (res.rowCount ?? 0) > 0;
  }

  async putApiKey(k: ApiKeyRecord): Promise<void> {
    await this.pool.query(PUT_API_KEY_SQL, keyValues(k));
  }

  /**
   * Charges of one key run one at a time, under a lock on the key taken before anything is read: in
   * READ COMMITTED each later statement then sees every charge committed before it.
   */
  async chargeQuota(c: QuotaCharge): Promise<QuotaChargeResult> {
    return inTransaction(this.pool, async (client) => {
      await lockQuotaOf(client, c.keyId);
      if (c.idempotencyKey !== null) {
        const earlier = await chargeByIdempotencyKey(client, c.keyId, c.idempotencyKey);
        if (earlier && earlier.refunded_at === null) {
          return {
            status: "replayed",
            chargeId: earlier.id as string,
            used: await quotaUsedIn(client, c.keyId, earlier.month as string),
            result: earlier.result as string | null,
          };
        }
        // A refunded charge bought nothing: its idempotency key may be spent again.
        if (earlier) await client.query("DELETE FROM quota_charges WHERE id = $1", [earlier.id]);
      }
      const used = await quotaUsedIn(client, c.keyId, c.month);
      if (c.limit !== null && used >= c.limit) return { status: "exhausted", used };
      await client.query<Row>(
        `INSERT INTO quota_usage (key_id, month, used) VALUES ($1, $2, 1)
         ON CONFLICT (key_id, month) DO UPDATE SET used = quota_usage.used + 1`,
        [c.keyId, c.month],
      );
      await client.query<Row>(
        "INSERT INTO quota_charges (id, key_id, month, idempotency_key, charged_at) VALUES ($1, $2, $3, $4, $5)",
        [c.chargeId, c.keyId, c.month, c.idempotencyKey, c.at],
      );
      return { status: "charged", chargeId: c.chargeId, used: used + 1 };
    });
  }

  /**
   * Marking the charge refunded is conditional on its not being refunded yet, so only one refund wins;
   * the key's lock keeps a concurrent charge from deciding on a charge that is being refunded.
   */
  async refundQuota(keyId: string, chargeId: string, at: Micros): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      await lockQuotaOf(client, keyId);
      const refunded = await client.query<Row>(
        `UPDATE quota_charges SET refunded_at = $1 WHERE id = $2 AND key_id = $3 AND refunded_at IS NULL
         RETURNING month`,
        [at, chargeId, keyId],
      );
      const charge = refunded.rows[0] as Row | undefined;
      if (!charge) return false;
      await client.query("UPDATE quota_usage SET used = used - 1 WHERE key_id = $1 AND month = $2", [
        keyId,
        charge.month,
      ]);
      return true;
    });
  }

  async recordChargeResult(keyId: string, chargeId: string, result: string): Promise<void> {
    await this.pool.query<Row>("UPDATE quota_charges SET result = $1 WHERE id = $2 AND key_id = $3", [
      result,
      chargeId,
      keyId,
    ]);
  }

  async quotaUsed(keyId: string, month: string): Promise<number> {
    return quotaUsedIn(this.pool, keyId, month);
  }

  async listQuotaCharges(afterId: string | null, limit: number): Promise<QuotaChargeRecord[]> {
    const { rows } = await this.pool.query<ArrayRow>({
      text:
        afterId === null
          ? `SELECT ${QUOTA_CHARGE_COLUMNS} FROM quota_charges ORDER BY id LIMIT $1`
          : `SELECT ${QUOTA_CHARGE_COLUMNS} FROM quota_charges WHERE id > $2 ORDER BY id LIMIT $1`,
      values: afterId === null ? [limit] : [limit, afterId],
      rowMode: "array",
    });
    return rows.map(quotaChargeFromArray);
  }

  /**
   * Three statements over the batch as parallel arrays, under the quota locks of its keys (taken in
   * key order), so that a charge running meanwhile sees the ledger before or after, never between.
   */
  async putQuotaCharges(charges: QuotaChargeRecord[]): Promise<void> {
    if (charges.length === 0) return;
    // ON CONFLICT may not touch a row twice in one statement: one charge per id, the last given.
    const byId = [...new Map(charges.map((c) => [c.id, c])).values()];
    const ids = byId.map((c) => c.id);
    const keyIds = byId.map((c) => c.keyId);
    await inTransaction(this.pool, async (client) => {
      for (const keyId of [...new Set(keyIds)].sort()) await lockQuotaOf(client, keyId);
      await client.query(DROP_OTHER_CHARGES_SQL, [ids, keyIds, byId.map((c) => c.idempotencyKey)]);
      await client.query(PUT_QUOTA_CHARGES_SQL, [
        ids,
        keyIds,
        byId.map((c) => c.month),
        byId.map((c) => c.idempotencyKey),
        byId.map((c) => c.chargedAt),
        byId.map((c) => c.refundedAt),
        byId.map((c) => c.result),
      ]);
      await client.query(RECOUNT_QUOTA_SQL, [keyIds, byId.map((c) => c.month)]);
    });
  }
}

/** Pool or a client in a transaction: both run a query the same way. */
type Queryable = Pool | PoolClient;

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

/**
 * Gives each row of a page its books from the books of the page's time range; both lists are in page
 * order, and a second without books keeps null.
 */
function attachBooks(rows: SnapshotRow[], books: ArrayRow[], asc: boolean): void {
  let j = 0;
  for (const row of rows) {
    const t = row.time;
    while (j < books.length && (asc ? (books[j][0] as number) < t : (books[j][0] as number) > t)) j++;
    if (j < books.length && books[j][0] === t) row.books = booksOf(books[j++][1]);
  }
}

async function activeKeys(db: Queryable, account: string, plan: PlanName): Promise<number> {
  const { rows } = await db.query<Row>(
    "SELECT count(*) AS n FROM api_keys WHERE account = $1 AND plan = $2 AND revoked_at IS NULL",
    [account, plan],
  );
  return (rows[0] as Row).n as number;
}

async function chargeByIdempotencyKey(
  client: PoolClient,
  keyId: string,
  idempotencyKey: string,
): Promise<Row | undefined> {
  const { rows } = await client.query<Row>(
    "SELECT id, month, refunded_at, result FROM quota_charges WHERE key_id = $1 AND idempotency_key = $2",
    [keyId, idempotencyKey],
  );
  return rows[0];
}

async function lockQuotaOf(client: PoolClient, keyId: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [QUOTA_LOCK_NAMESPACE, keyId]);
}

async function quotaUsedIn(db: Queryable, keyId: string, month: string): Promise<number> {
  const { rows } = await db.query<Row>("SELECT used FROM quota_usage WHERE key_id = $1 AND month = $2", [
    keyId,
    month,
  ]);
  return ((rows[0] as Row | undefined)?.used as number | undefined) ?? 0;
}
