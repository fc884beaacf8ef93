import type { SQLInputValue, SQLOutputValue } from "node:sqlite";
import type { Micros } from "../../../domain/time.ts";
import type {
  QuotaCharge,
  QuotaChargeRecord,
  QuotaChargeResult,
  QuotaLedger,
} from "../../ports/quota-ledger.ts";
import { QUOTA_CHARGE_COLUMNS, quotaChargeFromArray } from "../../sql/rows.ts";
import { chargeFlow, type LedgerSteps, refundFlow, runFlow } from "../../rules/quota-flow.ts";
import type { SqliteConnection } from "./connection.ts";

type Row = Record<string, SQLInputValue>;
type ArrayRow = SQLOutputValue[];

const QUOTA_USED_SQL = "SELECT used FROM quota_usage WHERE key_id = ? AND month = ?";

const PUT_QUOTA_CHARGE_SQL = `INSERT INTO quota_charges (${QUOTA_CHARGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET key_id = excluded.key_id, month = excluded.month,
    idempotency_key = excluded.idempotency_key, charged_at = excluded.charged_at,
    refunded_at = coalesce(min(quota_charges.refunded_at, excluded.refunded_at), quota_charges.refunded_at,
      excluded.refunded_at),
    result = coalesce(excluded.result, quota_charges.result)`;

const RECOUNT_QUOTA_SQL = `INSERT INTO quota_usage (key_id, month, used)
  SELECT ?1, ?2, count(*) FROM quota_charges WHERE key_id = ?1 AND month = ?2 AND refunded_at IS NULL
  ON CONFLICT (key_id, month) DO UPDATE SET used = excluded.used`;

/** The quota ledger in the embedded store (see QuotaLedger); one write transaction a charge or refund. */
export class SqliteQuotaLedger implements QuotaLedger {
  private readonly conn: SqliteConnection;
  private readonly steps: LedgerSteps;

  constructor(conn: SqliteConnection) {
    this.conn = conn;
    this.steps = sqliteLedgerSteps(conn);
  }

  async chargeQuota(c: QuotaCharge): Promise<QuotaChargeResult> {
    return this.conn.transaction(() => runFlow(chargeFlow(c), this.steps));
  }

  async refundQuota(keyId: string, chargeId: string, at: Micros): Promise<boolean> {
    return this.conn.transaction(() => runFlow(refundFlow(keyId, chargeId, at), this.steps));
  }

  async recordChargeResult(keyId: string, chargeId: string, result: string): Promise<void> {
    this.steps.recordResult(keyId, chargeId, result);
  }

  async quotaUsed(keyId: string, month: string): Promise<number> {
    return this.steps.used(keyId, month);
  }

  async listQuotaCharges(afterId: string | null, limit: number): Promise<QuotaChargeRecord[]> {
    const rows = (afterId === null
      ? this.conn
          .arrayStmt(`SELECT ${QUOTA_CHARGE_COLUMNS} FROM quota_charges ORDER BY id LIMIT ?`)
          .all(limit)
      : this.conn
          .arrayStmt(`SELECT ${QUOTA_CHARGE_COLUMNS} FROM quota_charges WHERE id > ? ORDER BY id LIMIT ?`)
          .all(afterId, limit)) as unknown as ArrayRow[];
    return rows.map(quotaChargeFromArray);
  }

  async putQuotaCharges(charges: QuotaChargeRecord[]): Promise<void> {
    if (charges.length === 0) return;
    const dropOther = this.conn.stmt(
      "DELETE FROM quota_charges WHERE key_id = ? AND idempotency_key = ? AND id <> ?",
    );
    const put = this.conn.stmt(PUT_QUOTA_CHARGE_SQL);
    const recount = this.conn.stmt(RECOUNT_QUOTA_SQL);
    this.conn.transaction(() => {
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

/**
 * The quota flows' reads and writes on the connection; the ledger runs them inside its transactions,
 * and so does the backtest store, which charges in the transaction that stores a strategy.
 */
export function sqliteLedgerSteps(conn: SqliteConnection): LedgerSteps {
  return {
    chargeWithIdempotencyKey(keyId, idempotencyKey) {
      const row = conn
        .stmt(
          "SELECT id, month, refunded_at, result FROM quota_charges WHERE key_id = ? AND idempotency_key = ?",
        )
        .get(keyId, idempotencyKey) as Row | undefined;
      if (!row) return null;
      return {
        id: row.id as string,
        month: row.month as string,
        refunded: row.refunded_at !== null,
        result: row.result as string | null,
      };
    },
    dropCharge(chargeId) {
      conn.stmt("DELETE FROM quota_charges WHERE id = ?").run(chargeId);
    },
    used(keyId, month) {
      const row = conn.stmt(QUOTA_USED_SQL).get(keyId, month) as Row | undefined;
      return (row?.used as number | undefined) ?? 0;
    },
    addCharge(c) {
      conn
        .stmt(
          `INSERT INTO quota_usage (key_id, month, used) VALUES (?, ?, 1)
           ON CONFLICT (key_id, month) DO UPDATE SET used = used + 1`,
        )
        .run(c.keyId, c.month);
      conn
        .stmt(
          "INSERT INTO quota_charges (id, key_id, month, idempotency_key, charged_at) VALUES (?, ?, ?, ?, ?)",
        )
        .run(c.chargeId, c.keyId, c.month, c.idempotencyKey, c.at);
    },
    markRefunded(keyId, chargeId, at) {
      const row = conn
        .stmt(
          `UPDATE quota_charges SET refunded_at = ? WHERE id = ? AND key_id = ? AND refunded_at IS NULL
           RETURNING month`,
        )
        .get(at, chargeId, keyId) as Row | undefined;
      return (row?.month as string | undefined) ?? null;
    },
    releaseUnit(keyId, month) {
      conn.stmt("UPDATE quota_usage SET used = used - 1 WHERE key_id = ? AND month = ?").run(keyId, month);
    },
    recordResult(keyId, chargeId, result) {
      conn
        .stmt("UPDATE quota_charges SET result = ? WHERE id = ? AND key_id = ?")
        .run(result, chargeId, keyId);
    },
  };
}
