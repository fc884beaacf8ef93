import type { MigrationReport } from "../../store/ports/store.ts";
import { defineCommand, openDatabase } from "../command.ts";
import { displayUrl } from "../messages.ts";

/** What a migration did, in one line: a new schema, an upgrade, or nothing to do. */
export function describeMigration(databaseUrl: string, m: MigrationReport): string {
  const where = displayUrl(databaseUrl);
  if (m.applied.length === 0)
    return `${where}: the schema is already at version ${m.version}; nothing to do.`;
  const tables = `tables: ${m.tables.join(", ")}`;
  if (m.applied[0] === 1) return `${where}: created the schema at version ${m.version} (${tables}).`;
  return `${where}: upgraded the schema to version ${m.version}, applying ${m.applied.join(", ")} (${tables}).`;
}

export const migrateCommand = defineCommand({
  name: "migrate",
  summary: "Create or upgrade the database schema",
  help: `updown migrate [--database-url URL]

Creates or upgrades the schema and says which: "created the schema at version N (tables: ...)",
"upgraded the schema to version N", or "already at version N". serve and every other command also
do this on start.`,
  options: ["databaseUrl"],
  run: async (values) => {
    const { store, migration } = await openDatabase(values.databaseUrl);
    await store.close();
    process.stdout.write(`${describeMigration(values.databaseUrl, migration)}\n`);
  },
});
