import type { Pool, PoolClient } from "pg";
import type { Micros } from "../../../domain/time.ts";
import type {
  QuotaCharge,
  QuotaChargeRecord,
  QuotaChargeResult,
  QuotaLedger,
} from "../../ports/quota-ledger.ts";
import { QUOTA_CHARGE_COLUMNS, quotaChargeFromArray } from "../../sql/rows.ts";
import { type AsyncLedgerSteps, chargeFlow, refundFlow, runFlowAsync } from "../../rules/quota-flow.ts";
import { inTransaction, QUOTA_LOCK_NAMESPACE, type Queryable } from "./pg-util.ts";

type Row = Record<string, unknown>;
type ArrayRow = unknown[];

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
 * The quota ledger in PostgreSQL (see QuotaLedger). Charges and refunds of one key run one at a time,
 * under a lock on the key taken before anything is read: in READ COMMITTED each later statement then
 * sees every charge committed before it, and a charge never decides on one being refunded.
 */
export class PostgresQuotaLedger implements QuotaLedger {
  private readonly pool: Pool;

  constructor(pool: Pool) {
    this.pool = pool;
  }

  async chargeQuota(c: QuotaCharge): Promise<QuotaChargeResult> {
    return inTransaction(this.pool, async (client) => {
      await lockQuotaOf(client, c.keyId);
      return runFlowAsync(chargeFlow(c), postgresLedgerSteps(client));
    });
  }

  async refundQuota(keyId: string, chargeId: string, at: Micros): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      await lockQuotaOf(client, keyId);
      return runFlowAsync(refundFlow(keyId, chargeId, at), postgresLedgerSteps(client));
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

/**
 * The quota flows' reads and writes on a client holding the key's lock in its transaction (the
 * ledger's, or the backtest store's, which charges in the transaction that stores a strategy).
 */
export function postgresLedgerSteps(client: PoolClient): AsyncLedgerSteps {
  return {
    async chargeWithIdempotencyKey(keyId, idempotencyKey) {
      const { rows } = await client.query<Row>(
        "SELECT id, month, refunded_at, result FROM quota_charges WHERE key_id = $1 AND idempotency_key = $2",
        [keyId, idempotencyKey],
      );
      const row = rows[0];
      if (!row) return null;
      return {
        id: row.id as string,
        month: row.month as string,
        refunded: row.refunded_at !== null,
        result: row.result as string | null,
      };
    },
    async dropCharge(chargeId) {
      await client.query("DELETE FROM quota_charges WHERE id = $1", [chargeId]);
    },
    used: (keyId, month) => quotaUsedIn(client, keyId, month),
    async addCharge(c) {
      await client.query<Row>(
        `INSERT INTO quota_usage (key_id, month, used) VALUES ($1, $2, 1)
         ON CONFLICT (key_id, month) DO UPDATE SET used = quota_usage.used + 1`,
        [c.keyId, c.month],
      );
      await client.query<Row>(
        "INSERT INTO quota_charges (id, key_id, month, idempotency_key, charged_at) VALUES ($1, $2, $3, $4, $5)",
        [c.chargeId, c.keyId, c.month, c.idempotencyKey, c.at],
      );
    },
    async markRefunded(keyId, chargeId, at) {
      // Conditional on its not being refunded yet, so only one refund of a charge wins.
      const { rows } = await client.query<Row>(
        `UPDATE quota_charges SET refunded_at = $1 WHERE id = $2 AND key_id = $3 AND refunded_at IS NULL
         RETURNING month`,
        [at, chargeId, keyId],
      );
      return (rows[0]?.month as string | undefined) ?? null;
    },
    async releaseUnit(keyId, month) {
      await client.query("UPDATE quota_usage SET used = used - 1 WHERE key_id = $1 AND month = $2", [
        keyId,
        month,
      ]);
    },
    async recordResult(keyId, chargeId, result) {
      await client.query("UPDATE quota_charges SET result = $1 WHERE id = $2 AND key_id = $3", [
        result,
        chargeId,
        keyId,
      ]);
    },
  };
}

/** Serializes a key's charges (and its backtest runs' admission) across connections and processes. */
export async function lockQuotaOf(client: PoolClient, keyId: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [QUOTA_LOCK_NAMESPACE, keyId]);
}

async function quotaUsedIn(db: Queryable, keyId: string, month: string): Promise<number> {
  const { rows } = await db.query<Row>("SELECT used FROM quota_usage WHERE key_id = $1 AND month = $2", [
    keyId,
    month,
  ]);
  return ((rows[0] as Row | undefined)?.used as number | undefined) ?? 0;
}
