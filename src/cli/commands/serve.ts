import { toConfig } from "../../config.ts";
import { serve } from "../../server.ts";
import { defineCommand } from "../command.ts";

export const serveCommand = defineCommand({
  name: "serve",
  summary: "Run the HTTP API (what npm start runs)",
  help: `updown serve [--port N] [--host H] [--database-url URL] [--no-seed] [--redis-url URL] [...]

Serves the API, /docs and /openapi.json on one port. On first start with an empty database it seeds
demo data and creates one demo key per plan (printed, and written to demo-keys.json beside the SQLite
file). --no-seed (or SEED_DEMO=0) skips both. SIGTERM or Ctrl-C stops it: no new connections, requests
in flight finish for up to DRAIN_SECONDS (default 5), then connections still open are cut, the
database is closed cleanly and it exits 0. Every setting below can also come from its environment
variable; the flag wins.`,
  options: [
    "port",
    "host",
    "databaseUrl",
    "redisUrl",
    "plansFile",
    "authFailuresPerMinute",
    "bodyLimitKb",
    "headersTimeoutMs",
    "requestTimeoutMs",
    "trustProxy",
    "metricsToken",
    "logLevel",
    "pageCacheMb",
    "exportsPerKey",
    "exportsPerProcess",
    "coins",
    "seedDemo",
    "demoCounts",
    "snapshotIntervalMs",
    "drainSeconds",
    "backtestWorkers",
    "backtestLeaseS",
    "llmBaseUrl",
    "llmApiKey",
    "llmModel",
    "llmTimeoutMs",
  ],
  run: async (values) => {
    await serve(toConfig(values));
  },
});
