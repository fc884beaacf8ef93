import type { FastifyInstance } from "fastify";
import { openLimiter } from "./access/limiter/open.ts";
import { deferredLogger, errorMessage, type Logger, serverLog, stderrLogger } from "./log.ts";
import { loadPlans } from "./access/plans.ts";
import { openDatabase, UsageError } from "./cli/command.ts";
import { Progress } from "./cli/progress.ts";
import type { Config } from "./config.ts";
import type { Plans } from "./domain/plan.ts";
import type { Clock } from "./domain/time.ts";
import { shiftedClock } from "./domain/time.ts";
import { buildApp } from "./http/app.ts";
import { type FirstStart, firstStartBanner, prepareFirstStart } from "./cli/first-start.ts";
import type { Store } from "./store/ports/store.ts";

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

/** How much longer than the drain a stop may take to close the database and Redis before exit 1. */
const CLOSE_GRACE_MS = 5000;

/**
 * On SIGTERM or SIGINT: stop accepting connections and close the idle ones, let requests in flight
 * finish (each answered with `Connection: close`) for up to `drainMs`, then cut every connection still
 * open (a slow reader of an export, a half-sent request), close the limiter and the store (SQLite
 * checkpoints its WAL and closes; PostgreSQL's pool ends) and exit 0. A second signal cuts at once.
 * Not Fastify's own close for the drain: it answers requests arriving while it closes with a 503 body
 * of its own, outside the API's error envelope, where these are served as usual.
 */
function drainOnSignals(app: FastifyInstance, drainMs: number, flushLogSync: () => void): void {
  let draining = false;
  app.addHook("onRequest", (_req, reply, done) => {
    if (draining) reply.header("connection", "close");
    done();
  });
  // A connection busy when the drain began is idle once its answer is out, and is closed then.
  app.addHook("onResponse", (_req, _reply, done) => {
    if (draining) app.server.closeIdleConnections();
    done();
  });
  let cut = false;
  const cutConnections = (why: string) => {
    if (cut) return;
    cut = true;
    app.server.getConnections((_err, open) => {
      if (open > 0) app.log.warn({ connections: open }, `${why}; cutting ${open} connections still open`);
      app.server.closeAllConnections();
    });
    setTimeout(() => {
      app.log.error({}, `the database or Redis did not close within ${CLOSE_GRACE_MS / 1000} s; exiting`);
      // The asynchronous log's buffer (the requests answered before the cut among it) goes out first.
      flushLogSync();
      process.exit(1);
    }, CLOSE_GRACE_MS);
  };
  const drain = async () => {
    const deadline = setTimeout(
      () => cutConnections(`drain deadline of ${drainMs / 1000} s passed`),
      drainMs,
    );
    await new Promise<void>((resolve) => app.server.close(() => resolve()));
    clearTimeout(deadline);
    await app.close();
    process.exit(0);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (draining) return cutConnections(`a second ${signal}`);
    draining = true;
    app.log.info(
      { signal, drainMs },
      `${signal}: finishing requests in flight, for up to ${drainMs / 1000} s`,
    );
    // A failed shutdown must still end the process loudly, not as an unheard rejection.
    drain().catch((err: unknown) => {
      process.stderr.write(`shutdown failed: ${errorMessage(err)}\n`);
      process.exit(1);
    });
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

/** Listens where the configuration says; an address in use or not allowed is one line, not a stack. */
async function listen(app: FastifyInstance, config: Config): Promise<string> {
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code !== "EADDRINUSE" && code !== "EACCES" && code !== "EADDRNOTAVAIL") throw err;
    await app.close();
    const why = code === "EADDRINUSE" ? "the port is in use (another server? set PORT)" : errorMessage(err);
    throw new UsageError(`cannot listen on ${config.host}:${config.port}: ${why}`);
  }
  return `http://${config.host}:${(app.server.address() as { port: number }).port}`;
}

/** The thin runner: open the store, build the app, listen, and drain and close on SIGTERM/SIGINT. */
export async function serve(config: Config): Promise<FastifyInstance> {
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
  const requestLog = serverLog(config.logLevel);
  const app = await buildApp({ store, config, plans, limiter, clock, loggerInstance: requestLog.logger });
  log = app.log;
  app.addHook("onClose", async () => {
    await limiter.close();
    await store.close();
    // Last: every request has been answered (and logged) by now.
    await requestLog.flush();
  });
  // Before listening, so that a signal during start-up also closes the store cleanly.
  drainOnSignals(app, config.drainMs, requestLog.flushSync);
  const base = await listen(app, config);
  // The start-up lines wait in the asynchronous log's buffer: out before the banner, not under it.
  await requestLog.flush();
  // After the listening line, so that the keys are the last thing on screen until requests come.
  const banner = firstStartBanner(made, base);
  process.stdout.write(`${banner ? `\n${banner}\n\n` : ""}Serving ${base}/v1 (docs: ${base}/docs)\n`);
  return app;
}
