import { type ApiKeyRecord, generateKey, keyIdOf, keyMatches, type PlanName } from "../domain/api-key.ts";
import type { Clock } from "../domain/time.ts";
import type { Store } from "../store/store.ts";

export interface CreatedKey {
  /** The key itself: shown once, never stored. */
  key: string;
  record: ApiKeyRecord;
}

/** Issues, finds and revokes API keys. The key itself exists only in the caller's hands. */
export class KeyService {
  private readonly store: Store;
  private readonly clock: Clock;
  constructor(store: Store, clock: Clock) {
    this.store = store;
    this.clock = clock;
  }

  async create(
    plan: PlanName,
    name: string | null = null,
    perMinuteLimit: number | null = null,
  ): Promise<CreatedKey> {
    const { key, id, hash } = generateKey();
    const record: ApiKeyRecord = {
      id,
      hash,
      plan,
      name,
      createdAt: this.clock.nowMicros(),
      revokedAt: null,
      perMinuteLimit,
    };
    await this.store.insertApiKey(record);
    return { key, record };
  }

  /** The active record behind a presented key, or null for a missing, malformed, unknown or revoked one. */
  async authenticate(presented: string | undefined): Promise<ApiKeyRecord | null> {
    if (!presented) return null;
    const id = keyIdOf(presented);
    if (!id) return null;
    const record = await this.store.findApiKey(id);
    if (!record || !keyMatches(presented, record) || record.revokedAt !== null) return null;
    return record;
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.store.listApiKeys();
  }

  revoke(id: string): Promise<boolean> {
    return this.store.revokeApiKey(id, this.clock.nowMicros());
  }
}
