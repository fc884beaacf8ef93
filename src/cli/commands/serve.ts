import { loadPlans } from "../../access/plans.ts";
import { type Config, toConfig } from "../../config.ts";
import type { Plans } from "../../domain/plan.ts";
import { type Clock, shiftedClock } from "../../domain/time.ts";
import type { Logger } from "../../log.ts";
import type { Store } from "../../store/ports/store.ts";
import { defineCommand, openDatabase } from "../command.ts";
import { type FirstStart, firstStartBanner, prepareFirstStart } from "../first-start.ts";
import { Progress } from "../progress.ts";

/** Seeds an empty database and makes demo keys for a keyless one, with progress on stderr. */
async function firstStart(store: Store, config: Config, plans: Plans, clock: Clock): Promise<FirstStart> {
  const progress = new Progress("Seeding demo data");
  const made = await prepareFirstStart(store, {
    counts: config.demoCounts,
    coins: config.coins,
    databaseUrl: config.databaseUrl,
    plans,
    clock,
    onProgress: (done, total) => progress.update(done, total),
  });
  if (made.seeded) {
    progress.done(
      `${made.seeded.markets} markets, ${made.seeded.snapshots.toLocaleString("en-US")} snapshots`,
    );
  }
  return made;
}

/**
 * The composition root of the service: the store, the first start, the limiter and the plans, made
 * into the app's context once, handed to the runner.
 */
async function serveCommandRun(config: Config): Promise<void> {
  // Imported here, not above: `updown --help` and a usage error load this module, not the server.
  const [{ deferredLogger, stderrLogger }, { openLimiter }, { buildContext }, { serve }] = await Promise.all([
    import("../../log.ts"),
    import("../../access/limiter/open.ts"),
    import("../../http/context.ts"),
    import("../../server.ts"),
  ]);
  const plans = loadPlans(config.plansFile);
  const clock = shiftedClock(config.clockOffsetMs);
  const { store } = await openDatabase(config.databaseUrl, config.storeTimeouts);
  const made: FirstStart = config.seedDemo
    ? await firstStart(store, config, plans, clock)
    : { seeded: null, demoKeys: null };
  // The limiter logs through the app's logger once there is one (it connects before the app exists).
  let log: Logger = stderrLogger({ level: config.logLevel });
  const limiter = await openLimiter(
    config,
    deferredLogger(() => log),
  );
  const context = buildContext({ store, config, plans, limiter, clock });
  const { app, base } = await serve(context);
  log = app.log;
  // After the listening line, so that the keys are the last thing on screen until requests come.
  const banner = firstStartBanner(made, base);
  process.stdout.write(`${banner ? `\n${banner}\n\n` : ""}Serving ${base}/v1 (docs: ${base}/docs)\n`);
}

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
    "pgStatementTimeoutMs",
    "pgAcquireTimeoutMs",
    "redisUrl",
    "redisCommandTimeoutMs",
    "redisBreakerOpenMs",
    "clockOffsetMs",
    "plansFile",
    "authFailuresPerMinute",
    "keylessRequestsPerMinute",
    "uncountedRequestsPerMinute",
    "bodyLimitKb",
    "headersTimeoutMs",
    "requestTimeoutMs",
    "trustProxy",
    "publicBaseUrl",
    "metricsToken",
    "logLevel",
    "pageCacheMb",
    "pageReaders",
    "exportsPerKey",
    "exportsPerProcess",
    "coins",
    "seedDemo",
    "demoCounts",
    "snapshotIntervalMs",
    "drainSeconds",
    "backtestWorkers",
    "backtestPriority",
    "backtestRunsPerKey",
    "backtestRunsPerAccount",
    "backtestLeaseS",
    "llmBaseUrl",
    "llmApiKey",
    "llmModel",
    "llmTimeoutMs",
  ],
  run: (values) => serveCommandRun(toConfig(values)),
});
