import type { Pool } from "pg";
import type { ApiKeyRecord, PlanName } from "../../../domain/api-key.ts";
import type { Micros } from "../../../domain/time.ts";
import type { KeyStore } from "../../ports/key-store.ts";
import { KEY_COLUMNS, keyFromArray, keyValues } from "../../sql/rows.ts";
import { ACCOUNT_KEYS_LOCK_NAMESPACE, inTransaction, type Queryable } from "./pg-util.ts";

type Row = Record<string, unknown>;
type ArrayRow = unknown[];

const INSERT_API_KEY_SQL = `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`;

/** A key record as given; a revocation on either side stays (LEAST ignores a NULL). */
const PUT_API_KEY_SQL = `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
  ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, plan = excluded.plan, account = excluded.account,
    name = excluded.name, created_at = excluded.created_at,
    revoked_at = LEAST(api_keys.revoked_at, excluded.revoked_at),
    per_minute_limit = excluded.per_minute_limit, per_day_limit = excluded.per_day_limit`;

/** API key records in PostgreSQL (see KeyStore). */
export class PostgresKeyStore implements KeyStore {
  private readonly pool: Pool;

  constructor(pool: Pool) {
    this.pool = pool;
  }

  /**
   * With a limit, counting the account's keys and inserting one happen under a lock on the (account,
   * plan): two concurrent inserts cannot both see room for one more.
   */
  async insertApiKey(k: ApiKeyRecord, maxActive: number | null = null): Promise<boolean> {
    const values = keyValues(k);
    if (maxActive === null) {
      await this.pool.query<Row>(INSERT_API_KEY_SQL, values);
      return true;
    }
    return inTransaction(this.pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2::text || '/' || $3::text))", [
        ACCOUNT_KEYS_LOCK_NAMESPACE,
        k.account,
        k.plan,
      ]);
      if ((await activeKeys(client, k.account, k.plan)) >= maxActive) return false;
      await client.query(INSERT_API_KEY_SQL, values);
      return true;
    });
  }

  async countActiveKeys(account: string, plan: PlanName): Promise<number> {
    return activeKeys(this.pool, account, plan);
  }

  async findApiKey(id: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.pool.query<ArrayRow>({
      text: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`,
      values: [id],
      rowMode: "array",
    });
    return rows.length ? keyFromArray(rows[0]) : null;
  }

  async listApiKeys(): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<ArrayRow>({
      text: `SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`,
      rowMode: "array",
    });
    return rows.map(keyFromArray);
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
}

async function activeKeys(db: Queryable, account: string, plan: PlanName): Promise<number> {
  const { rows } = await db.query<Row>(
    "SELECT count(*) AS n FROM api_keys WHERE account = $1 AND plan = $2 AND revoked_at IS NULL",
    [account, plan],
  );
  return (rows[0] as Row).n as number;
}
