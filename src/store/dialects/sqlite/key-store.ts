import type { SQLInputValue, SQLOutputValue } from "node:sqlite";
import type { ApiKeyRecord, PlanName } from "../../../domain/api-key.ts";
import type { Micros } from "../../../domain/time.ts";
import type { KeyStore } from "../../ports/key-store.ts";
import { KEY_COLUMNS, keyFromArray, keyValues } from "../../sql/rows.ts";
import type { SqliteConnection } from "./connection.ts";

type Row = Record<string, SQLInputValue>;
type ArrayRow = SQLOutputValue[];

const FIND_API_KEY_SQL = `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`;
const INSERT_API_KEY_SQL = `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * A key record as given. min() of SQLite is NULL when either side is; coalesce then takes the one
 * revocation there is, so a revocation on either side stays.
 */
const PUT_API_KEY_SQL = `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, plan = excluded.plan, account = excluded.account,
    name = excluded.name, created_at = excluded.created_at,
    revoked_at = coalesce(min(api_keys.revoked_at, excluded.revoked_at), api_keys.revoked_at, excluded.revoked_at),
    per_minute_limit = excluded.per_minute_limit, per_day_limit = excluded.per_day_limit`;

/** API key records in the embedded store (see KeyStore); a write transaction makes count-and-insert atomic. */
export class SqliteKeyStore implements KeyStore {
  private readonly conn: SqliteConnection;

  constructor(conn: SqliteConnection) {
    this.conn = conn;
  }

  async insertApiKey(k: ApiKeyRecord, maxActive: number | null = null): Promise<boolean> {
    return this.conn.transaction(() => {
      if (maxActive !== null && this.activeKeys(k.account, k.plan) >= maxActive) return false;
      this.conn.stmt(INSERT_API_KEY_SQL).run(...keyValues(k));
      return true;
    });
  }

  private activeKeys(account: string, plan: PlanName): number {
    const row = this.conn
      .stmt("SELECT count(*) AS n FROM api_keys WHERE account = ? AND plan = ? AND revoked_at IS NULL")
      .get(account, plan) as Row;
    return row.n as number;
  }

  async countActiveKeys(account: string, plan: PlanName): Promise<number> {
    return this.activeKeys(account, plan);
  }

  async findApiKey(id: string): Promise<ApiKeyRecord | null> {
    const r = this.conn.arrayStmt(FIND_API_KEY_SQL).get(id) as unknown as ArrayRow | undefined;
    return r ? keyFromArray(r) : null;
  }

  async listApiKeys(): Promise<ApiKeyRecord[]> {
    const rows = this.conn.arrayStmt(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`).all();
    return (rows as unknown as ArrayRow[]).map(keyFromArray);
  }

  async revokeApiKey(id: string, at: Micros): Promise<boolean> {
    const revoke = this.conn.stmt("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL");
    return revoke.run(at, id).changes > 0;
  }

  async putApiKey(k: ApiKeyRecord): Promise<void> {
    this.conn.stmt(PUT_API_KEY_SQL).run(...keyValues(k));
  }
}
