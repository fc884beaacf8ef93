import type { PoolClient } from "pg";
import type { SnapshotRow } from "../../../domain/snapshot.ts";
import {
  affectedBlocks,
  allRows,
  blockOfRow,
  blockReadSql,
  blocksFrom,
  type BlockSource,
  headerOfRow,
  mergeRows,
  type EncodedBlock,
  type Rendering,
  renderStored,
  rowsBefore,
  type StoredBlock,
} from "../../rules/snapshot-blocks.ts";
import type { Queryable } from "./pg-util.ts";

/** A market's snapshot blocks in PostgreSQL (rules/snapshot-blocks.ts says what they hold). */

type ArrayRow = unknown[];

/** The block reads of a render version (see blockReadSql), made once each. */
const blockSqls = new Map<number, ReturnType<typeof blockReadSql>>();
function blockSql(renderVersion: number): ReturnType<typeof blockReadSql> {
  let sql = blockSqls.get(renderVersion);
  if (!sql) {
    sql = blockReadSql((i) => `$${i}`, renderVersion);
    blockSqls.set(renderVersion, sql);
  }
  return sql;
}
const INSERT_BLOCKS_SQL = `INSERT INTO snapshot_blocks (market, first_us, last_us, n, prices, books, rendered, render_version)
  SELECT $1, *, $8::int FROM unnest($2::bigint[], $3::bigint[], $4::int[], $5::bytea[], $6::bytea[], $7::bytea[])`;

/**
 * Locks markets' records for an insert (in key order, as batches lock rows) and says, for each, where
 * its snapshots go: into blocks once it is resolved or has blocks, and whether rows wait to be moved.
 * Taken first in the insert's transaction, the lock orders it against the move at resolution.
 */
const STATE_SQL = `SELECT id, winner IS NOT NULL OR EXISTS (SELECT 1 FROM snapshot_blocks b WHERE b.market = m.id),
    EXISTS (SELECT 1 FROM snapshots s WHERE s.market = m.id)
  FROM markets m WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`;

/** Resolved markets whose snapshots are still in the rows (before version 7, or mid-upgrade). */
export const PENDING_SQL = `SELECT id FROM markets m WHERE winner IS NOT NULL
  AND EXISTS (SELECT 1 FROM snapshots s WHERE s.market = m.id) ORDER BY id`;

const ROWS_SQL = `SELECT s.time_us, s.coin_price, s.price_up, s.price_down, b.books FROM snapshots s
  LEFT JOIN snapshot_books b ON b.market = s.market AND b.time_us = s.time_us
  WHERE s.market = $1 ORDER BY s.time_us`;

/** A Buffer node-pg parsed, as the plain Uint8Array view the SQLite store gives. */
function bytesOf(value: unknown): Uint8Array | null {
  if (value === null || value === undefined) return null;
  const b = value as Buffer;
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

export function blockSource(db: Queryable, marketKey: number, renderVersion: number): BlockSource {
  const BLOCK_SQL = blockSql(renderVersion);
  return {
    headers: async () => {
      const { rows } = await db.query<ArrayRow>({
        text: BLOCK_SQL.headers,
        values: [marketKey],
        rowMode: "array",
      });
      return rows.map(headerOfRow);
    },
    blocks: (lo, hi, books) => fetchBlocks(db, books ? BLOCK_SQL.books : BLOCK_SQL.prices, marketKey, lo, hi),
    rendered: (lo, hi, books) =>
      fetchBlocks(db, books ? BLOCK_SQL.renderedBooks : BLOCK_SQL.rendered, marketKey, lo, hi),
    restamp: (made) =>
      keepRenderings(
        db,
        renderVersion,
        made.map((r) => ({ market: marketKey, ...r })),
      ),
  };
}

async function fetchBlocks(
  db: Queryable,
  sql: string,
  marketKey: number,
  lo: number,
  hi: number,
): Promise<StoredBlock[]> {
  const { rows } = await db.query<ArrayRow>({ text: sql, values: [marketKey, lo, hi], rowMode: "array" });
  return rows.map((r) => blockOfRow(r, bytesOf));
}

export interface InsertState {
  blocks: boolean;
  rowsToMove: boolean;
}

/** Locks the markets and says where each one's snapshots go (see STATE_SQL). */
export async function lockForInsert(client: PoolClient, keys: number[]): Promise<Map<number, InsertState>> {
  const { rows } = await client.query<ArrayRow>({ text: STATE_SQL, values: [keys], rowMode: "array" });
  return new Map(rows.map((r) => [r[0] as number, { blocks: r[1] === true, rowsToMove: r[2] === true }]));
}

/** Merges rows into a market's blocks within the caller's transaction; returns how many were new. */
export async function mergeIntoBlocks(
  client: PoolClient,
  marketKey: number,
  rows: readonly SnapshotRow[],
  renderVersion: number,
  counted = true,
): Promise<number> {
  if (rows.length === 0) return 0;
  let lo = rows[0].time;
  let hi = lo;
  for (const r of rows) {
    if (r.time < lo) lo = r.time;
    if (r.time > hi) hi = r.time;
  }
  const src = blockSource(client, marketKey, renderVersion);
  const affected = affectedBlocks(await src.headers(), lo, hi);
  const stored: StoredBlock[] = [];
  for (const h of affected)
    stored.push(...(await fetchBlocks(client, blockSql(renderVersion).books, marketKey, h.first, h.first)));
  const merged = mergeRows(allRows(stored), rows);
  if (merged.added === 0) return 0;
  await replaceBlocks(client, marketKey, affected, merged.blocks, renderVersion);
  if (counted) {
    await client.query("UPDATE markets SET snapshot_count = snapshot_count + $1 WHERE id = $2", [
      merged.added,
      marketKey,
    ]);
  }
  return merged.added;
}

/** Removes a market's blocks' seconds at or after `from` within the caller's transaction; returns how many. */
export async function deleteBlocksFrom(
  client: PoolClient,
  marketKey: number,
  from: number,
  renderVersion: number,
): Promise<number> {
  const affected = blocksFrom(await blockSource(client, marketKey, renderVersion).headers(), from);
  if (affected.length === 0) return 0;
  const stored: StoredBlock[] = [];
  for (const h of affected)
    stored.push(...(await fetchBlocks(client, blockSql(renderVersion).books, marketKey, h.first, h.first)));
  const kept = rowsBefore(allRows(stored), from);
  await replaceBlocks(client, marketKey, affected, kept.blocks, renderVersion);
  return kept.removed;
}

/** The stored blocks `old` names deleted and `b` written, within the caller's transaction. */
async function replaceBlocks(
  client: PoolClient,
  marketKey: number,
  old: readonly { first: number }[],
  b: readonly EncodedBlock[],
  renderVersion: number,
): Promise<void> {
  if (old.length > 0) {
    await client.query("DELETE FROM snapshot_blocks WHERE market = $1 AND first_us = ANY($2::bigint[])", [
      marketKey,
      old.map((h) => h.first),
    ]);
  }
  if (b.length === 0) return;
  await client.query(INSERT_BLOCKS_SQL, [
    marketKey,
    b.map((x) => x.first),
    b.map((x) => x.last),
    b.map((x) => x.n),
    b.map((x) => Buffer.from(x.prices.buffer, x.prices.byteOffset, x.prices.byteLength)),
    b.map((x) => (x.books ? Buffer.from(x.books.buffer, x.books.byteOffset, x.books.byteLength) : null)),
    b.map((x) => Buffer.from(x.rendered.buffer, x.rendered.byteOffset, x.rendered.byteLength)),
    renderVersion,
  ]);
}

/** Moves a market's snapshots from the rows into its blocks within the caller's transaction. */
export async function sealRows(client: PoolClient, marketKey: number, renderVersion: number): Promise<void> {
  const { rows } = await client.query<ArrayRow>({ text: ROWS_SQL, values: [marketKey], rowMode: "array" });
  if (rows.length === 0) return;
  const snapshots: SnapshotRow[] = rows.map((r) => ({
    time: r[0] as number,
    coinPrice: r[1] as number,
    priceUp: r[2] as number,
    priceDown: r[3] as number,
    books: bytesOf(r[4]),
  }));
  await mergeIntoBlocks(client, marketKey, snapshots, renderVersion, false);
  await client.query("DELETE FROM snapshots WHERE market = $1", [marketKey]);
  await client.query("DELETE FROM snapshot_books WHERE market = $1", [marketKey]);
}

/** Renderings kept, stamped, each if its block still holds the prices it was rendered from. */
const SET_RENDERED_SQL = `UPDATE snapshot_blocks b SET rendered = u.rendered, render_version = $5::int
  FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::bytea[]) AS u(market, first_us, prices, rendered)
  WHERE b.market = u.market AND b.first_us = u.first_us AND b.prices = u.prices`;

const toBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

async function keepRenderings(
  db: Queryable,
  renderVersion: number,
  made: readonly (Rendering & { market: number })[],
): Promise<void> {
  await db.query(SET_RENDERED_SQL, [
    made.map((r) => r.market),
    made.map((r) => r.first),
    made.map((r) => toBuffer(r.prices)),
    made.map((r) => toBuffer(r.rendered)),
    renderVersion,
  ]);
}

/**
 * Renders the blocks whose rendering is stale (another render version's, or none: written before
 * version 8), a batch a statement in key order (migrate() runs it after the scripts), so that an
 * interrupted run resumes; a block rewritten meanwhile keeps its writer's rendering.
 */
export async function renderPendingBlocks(db: Queryable, renderVersion: number): Promise<number> {
  let done = 0;
  let after = [Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
  for (;;) {
    const { rows } = await db.query<ArrayRow>({
      text: blockSql(renderVersion).stale,
      values: after,
      rowMode: "array",
    });
    if (rows.length === 0) return done;
    const made = rows.map((r) => {
      const block = blockOfRow([r[1], r[2], r[3], r[4], null, null], bytesOf);
      return {
        market: r[0] as number,
        first: block.first,
        prices: block.prices,
        rendered: renderStored(block),
      };
    });
    await keepRenderings(db, renderVersion, made);
    after = [rows[rows.length - 1][0] as number, rows[rows.length - 1][1] as number];
    done += rows.length;
  }
}
