import { ConfigError } from "../config.ts";
import { PostgresStore } from "./dialects/postgres/pg-store.ts";
import { SqliteStore, sqlitePathOf } from "./dialects/sqlite/sqlite-store.ts";
import type { MigrationReport, Store } from "./ports/store.ts";

/** `postgres://` and `postgresql://`, the two schemes PostgreSQL's own clients accept. */
function isPostgresUrl(url: string): boolean {
  return url.startsWith("postgres://") || url.startsWith("postgresql://");
}

/** Opens and migrates the store a DATABASE_URL names. */
export async function openStore(databaseUrl: string): Promise<Store> {
  return (await openAndMigrate(databaseUrl)).store;
}

/** Opens the store a DATABASE_URL names and migrates it, saying what the migration did. */
export async function openAndMigrate(
  databaseUrl: string,
): Promise<{ store: Store; migration: MigrationReport }> {
  let store: Store;
  if (databaseUrl.startsWith("sqlite:")) store = new SqliteStore(sqlitePathOf(databaseUrl));
  else if (isPostgresUrl(databaseUrl)) store = new PostgresStore(databaseUrl);
  else {
    throw new ConfigError(
      `DATABASE_URL must start with sqlite:, postgres:// or postgresql:// (got "${databaseUrl.split(":")[0]}:")`,
    );
  }
  try {
    return { store, migration: await store.migrate() };
  } catch (err) {
    await store.close();
    throw err;
  }
}
