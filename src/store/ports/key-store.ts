import type { ApiKeyRecord, PlanName } from "../../domain/api-key.ts";
import type { Micros } from "../../domain/time.ts";

/**
 * API key records. Implementations: dialects/sqlite/key-store.ts and dialects/postgres/key-store.ts; one contract suite
 * (test/contracts/key-store.ts) runs against each.
 *
 * Invariants every implementation keeps:
 * - keys are stored only as SHA-256 hashes, found by their public id;
 * - counting an account's active keys of a plan and inserting one are one atomic step, so that an
 *   account never holds more than the limit it was given, whatever the concurrency;
 * - a revocation is never undone, not even by putApiKey.
 */
export interface KeyStore {
  /**
   * Stores a new key unless its account already holds `maxActive` active keys of its plan (null: no
   * limit); counting and inserting are one atomic step. Returns false when refused.
   */
  insertApiKey(record: ApiKeyRecord, maxActive?: number | null): Promise<boolean>;
  countActiveKeys(account: string, plan: PlanName): Promise<number>;
  findApiKey(id: string): Promise<ApiKeyRecord | null>;
  listApiKeys(): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked; false when there is no such key or it was already revoked. */
  revokeApiKey(id: string, at: Micros): Promise<boolean>;
  /**
   * Stores a key record as given, for copying between stores (`updown copy`): inserts it, or
   * overwrites the record with the same id, except that a key revoked on either side stays revoked
   * (the earlier revocation time is kept). No keys-per-account limit applies. Repeating it changes
   * nothing.
   */
  putApiKey(record: ApiKeyRecord): Promise<void>;
}
