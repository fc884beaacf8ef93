import { defineCommand, withStore } from "../command.ts";

export const migrateCommand = defineCommand({
  name: "migrate",
  summary: "Create or upgrade the database schema",
  help: `updown migrate [--database-url URL]

Creates or upgrades the schema. serve and every other command also do this on start.`,
  options: ["databaseUrl"],
  run: async (values) => {
    await withStore(values.databaseUrl, async () => process.stdout.write("Schema is up to date.\n"));
  },
});
