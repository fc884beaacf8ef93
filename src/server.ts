import { writeFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { KeyService } from "./access/keys.ts";
import { openLimiter } from "./access/limiter/open.ts";
import { loadPlans } from "./access/plans.ts";
import { Progress } from "./cli/progress.ts";
import { type Config, demoKeysPath } from "./config.ts";
import { PLAN_NAMES, type PlanName } from "./domain/api-key.ts";
import { COINS } from "./domain/market.ts";
import type { Plans } from "./domain/plan.ts";
import { systemClock } from "./domain/time.ts";
import { buildApp } from "./http/app.ts";
import { deferredLogger, type Logger, stderrLogger } from "./log.ts";
import { seedDemo } from "./demo/demo.ts";
import { openStore } from "./store/open.ts";
import type { Store } from "./store/store.ts";

/** Fills an empty database with demo markets, and a keyless one with one demo key per plan. */
async function prepareFirstStart(store: Store, config: Config, plans: Plans): Promise<void> {
  if ((await store.markets.countMarkets()) === 0) {
    const progress = new Progress("Seeding demo data");
    const result = await seedDemo(store, {
      seed: 1,
      anchor: Math.floor(systemClock.nowMicros() / 1e6),
      counts: config.demoCounts,
      coins: [...COINS],
      exchange: true,
      onProgress: (done, total) => progress.update(done, total),
    });
    progress.done(`${result.markets} markets, ${result.snapshots.toLocaleString("en-US")} snapshots`);
  }
  if ((await store.keys.listApiKeys()).length === 0) {
    const keys = new KeyService(store.keys, systemClock, plans);
    const demo = {} as Record<PlanName, string>;
    for (const plan of PLAN_NAMES) {
      demo[plan] = (await keys.create({ plan, account: "demo", name: `demo ${plan}` })).key;
    }
    const path = demoKeysPath(config.databaseUrl);
    writeFileSync(path, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
    process.stdout.write(`\nDemo API keys (also in ${path}):\n`);
    for (const plan of PLAN_NAMES) process.stdout.write(`  ${plan.padEnd(10)} ${demo[plan]}\n`);
    process.stdout.write("\n");
  }
}

/** The thin runner: open the store, build the app, listen, and close cleanly on SIGTERM/SIGINT. */
export async function serve(config: Config): Promise<FastifyInstance> {
  const plans = loadPlans(config.plansFile);
  const store = await openStore(config.databaseUrl);
  if (config.seedDemo) await prepareFirstStart(store, config, plans);
  // The limiter logs through the app's logger once there is one (it connects before the app exists).
  let log: Logger = stderrLogger({ level: config.logLevel });
  const limiter = await openLimiter(
    config.redisUrl,
    deferredLogger(() => log),
  );
  const app = await buildApp({ store, config, plans, limiter, logger: { level: config.logLevel } });
  log = app.log;
  app.addHook("onClose", async () => {
    await limiter.close();
    await store.close();
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
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
  await app.listen({ port: config.port, host: config.host });
  const base = `http://${config.host}:${(app.server.address() as { port: number }).port}`;
  process.stdout.write(`Serving ${base}/v1 (docs: ${base}/docs)\n`);
  return app;
}
