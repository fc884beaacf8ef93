import type { FastifyBaseLogger } from "fastify";
import type { Metrics } from "./metrics.ts";

/** A request as answered: the route it reached (its pattern), what it asked and how it was answered. */
export interface Completed {
  route: string;
  method: string;
  url: string;
  statusCode: number;
  elapsedMs: number;
}

/**
 * What every answered request leaves: one log line (Fastify's own request logging, two lines, is off)
 * and its counts in the metrics. Fastify's request logger binds the request id; a caller without one
 * (cached-page-answers.ts) gives it as `reqId`, which then comes first among the line's fields too.
 */
export function requestCompleted(
  log: FastifyBaseLogger,
  metrics: Metrics,
  c: Completed,
  reqId?: string,
): void {
  const line = { method: c.method, url: c.url, statusCode: c.statusCode, responseTime: c.elapsedMs };
  log.info(reqId === undefined ? line : { reqId, ...line }, "request completed");
  metrics.requests.inc({ route: c.route, method: c.method, status: String(c.statusCode) });
  metrics.latency.observe({ route: c.route }, c.elapsedMs / 1000);
}
