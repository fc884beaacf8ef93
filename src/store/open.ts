import { ConfigError } from "../config.ts";
import { backendOf, knownSchemes } from "./backends.ts";
import type { StoreOptions } from "./ports/backend.ts";
import type { MigrationReport, Store } from "./ports/store.ts";

/** Opens and migrates the store a DATABASE_URL names. */
export async function openStore(databaseUrl: string, options: StoreOptions = {}): Promise<Store> {
  return (await openAndMigrate(databaseUrl, options)).store;
}

/** Opens the store a DATABASE_URL names and migrates it, saying what the migration did. */
export async function openAndMigrate(
  databaseUrl: string,
  options: StoreOptions = {},
): Promise<{ store: Store; migration: MigrationReport }> {
  const backend = backendOf(databaseUrl);
  if (backend === null) {
    throw new ConfigError(
      `DATABASE_URL must start with ${knownSchemes()} (got "${databaseUrl.split(":")[0]}:")`,
    );
  }
  const store = await backend.open(databaseUrl, options);
  try {
    return { store, migration: await store.migrate() };
  } catch (err) {
    await store.close();
    throw err;
  }
}
