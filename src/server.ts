import type { FastifyInstance } from "fastify";
import { openLimiter } from "./access/limiter/open.ts";
import { deferredLogger, type Logger, serverLog, stderrLogger } from "./log.ts";
import { loadPlans } from "./access/plans.ts";
import { Progress } from "./cli/progress.ts";
import type { Config } from "./config.ts";
import { PLAN_NAMES } from "./domain/api-key.ts";
import type { Plans } from "./domain/plan.ts";
import { systemClock } from "./domain/time.ts";
import { buildApp } from "./http/app.ts";
import { prepareFirstStart } from "./cli/first-start.ts";
import { openStore } from "./store/open.ts";
import type { Store } from "./store/store.ts";

/** Seeds an empty database and makes demo keys for a keyless one, saying what it did. */
async function firstStart(store: Store, config: Config, plans: Plans): Promise<void> {
  const progress = new Progress("Seeding demo data");
  const made = await prepareFirstStart(store, {
    counts: config.demoCounts,
    databaseUrl: config.databaseUrl,
    plans,
    clock: systemClock,
    onProgress: (done, total) => progress.update(done, total),
  });
  if (made.seeded) {
    progress.done(
      `${made.seeded.markets} markets, ${made.seeded.snapshots.toLocaleString("en-US")} snapshots`,
    );
  }
  if (made.demoKeys) {
    process.stdout.write(`\nDemo API keys (also in ${made.demoKeys.path}):\n`);
    for (const plan of PLAN_NAMES) process.stdout.write(`  ${plan.padEnd(10)} ${made.demoKeys.keys[plan]}\n`);
    process.stdout.write("\n");
  }
}

/** The thin runner: open the store, build the app, listen, and close cleanly on SIGTERM/SIGINT. */
export async function serve(config: Config): Promise<FastifyInstance> {
  const plans = loadPlans(config.plansFile);
  const store = await openStore(config.databaseUrl);
  if (config.seedDemo) await firstStart(store, config, plans);
  // The limiter logs through the app's logger once there is one (it connects before the app exists).
  let log: Logger = stderrLogger({ level: config.logLevel });
  const limiter = await openLimiter(
    config.redisUrl,
    deferredLogger(() => log),
  );
  const requestLog = serverLog(config.logLevel);
  const app = await buildApp({ store, config, plans, limiter, loggerInstance: requestLog.logger });
  log = app.log;
  app.addHook("onClose", async () => {
    await limiter.close();
    await store.close();
    // Last: every request has been answered (and logged) by now.
    await requestLog.flush();
  });
  // Handlers first, so that a signal during start-up also closes the store cleanly.
  let closing = false;
  // Closing closes the connections idle at that moment; one whose request is still in flight stays open
  // after its answer (keep-alive), and Node would hold it, and the exit, for keepAliveTimeout (72 s).
  app.addHook("onResponse", (_req, _reply, done) => {
    if (closing) app.server.closeIdleConnections();
    done();
  });
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await app.close();
    process.exit(0);
  };
  // A failed shutdown must still end the process loudly, not as an unheard rejection.
  const onSignal = () =>
    void shutdown().catch((err: unknown) => {
      process.stderr.write(`shutdown failed: ${String(err)}\n`);
      process.exit(1);
    });
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  await app.listen({ port: config.port, host: config.host });
  const base = `http://${config.host}:${(app.server.address() as { port: number }).port}`;
  process.stdout.write(`Serving ${base}/v1 (docs: ${base}/docs)\n`);
  return app;
}
