import { ConfigError } from "../config.ts";
import { SqliteStore, sqlitePathOf } from "./sqlite/sqlite-store.ts";
import type { Store } from "./store.ts";

/** Opens and migrates the store a DATABASE_URL names. */
export async function openStore(databaseUrl: string): Promise<Store> {
  if (!databaseUrl.startsWith("sqlite:")) {
    throw new ConfigError(`DATABASE_URL must start with sqlite: (got "${databaseUrl.split(":")[0]}:")`);
  }
  const store = new SqliteStore(sqlitePathOf(databaseUrl));
  await store.migrate();
  return store;
}
