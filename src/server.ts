import type { FastifyInstance } from "fastify";
import { errorMessage, serverLog } from "./log.ts";
import { type AppContext, serverOver } from "./http/app.ts";

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

/** An address the server cannot listen on: one line for the command line, not a stack. */
export class ListenError extends Error {}

/** Listens where the configuration says; an address in use or not allowed is one line, not a stack. */
async function listen(app: FastifyInstance, config: AppContext["config"]): Promise<string> {
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code !== "EADDRINUSE" && code !== "EACCES" && code !== "EADDRNOTAVAIL") throw err;
    await app.close();
    const why = code === "EADDRINUSE" ? "the port is in use (another server? set PORT)" : errorMessage(err);
    throw new ListenError(`cannot listen on ${config.host}:${config.port}: ${why}`);
  }
  return `http://${config.host}:${(app.server.address() as { port: number }).port}`;
}

/**
 * The thin runner over a context its caller built (the serve command, the composition root): the
 * server around the app, logging on an asynchronous destination, the limiter and the store closed
 * with it, drained and closed on SIGTERM/SIGINT; it listens and answers where it serves.
 */
export async function serve(context: AppContext): Promise<{ app: FastifyInstance; base: string }> {
  const { config } = context;
  const requestLog = serverLog(config.logLevel);
  const app = await serverOver(context, { loggerInstance: requestLog.logger });
  app.addHook("onClose", async () => {
    await context.limiter.close();
    await context.store.close();
    // Last: every request has been answered (and logged) by now.
    await requestLog.flush();
  });
  // Before listening, so that a signal during start-up also closes the store cleanly.
  drainOnSignals(app, config.drainMs, requestLog.flushSync);
  const base = await listen(app, config);
  // The start-up lines wait in the asynchronous log's buffer: out before the caller's banner.
  await requestLog.flush();
  return { app, base };
}
