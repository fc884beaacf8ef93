import type { FastifyReply, FastifyRequest } from "fastify";
import { MinuteCounts } from "../access/minute-counts.ts";
import type { Clock } from "../domain/time.ts";
import { routeOf } from "./cors.ts";
import { ApiError, secondsUntil } from "./errors.ts";
import type { Metrics } from "./metrics.ts";

/**
 * The per-address limit on what needs no key (docs/plans-and-limits.md, "Without a key"): the
 * documents, /docs, the page and its assets, /metrics, paths nothing serves. Without it, one client
 * with no key could take the CPU every authenticated request needs (issue 21). /v1 and /mcp are
 * metered by key instead (a request without a valid key there is a failed authentication, throttled
 * on its own), and the probes a load balancer polls are never refused, or it would take the replica
 * out for someone else's flood.
 */

const UNLIMITED = new Set(["/healthz", "/readyz"]);

/** Whether the request is limited here: not metered by key, not a probe. */
export function needsNoKey(req: FastifyRequest): boolean {
  const path = routeOf(req);
  if (UNLIMITED.has(path) || path === "/mcp") return false;
  return !(path === "/v1" || path.startsWith("/v1/"));
}

export interface KeylessLimitOptions {
  clock: Clock;
  perMinute: number;
  metrics: Metrics;
}

/**
 * An onRequest hook: 429 with Retry-After for an address past its minute's requests without a key. A
 * callback hook, not an async one: every request passes it, and most (those under /v1) only pass.
 */
export function keylessLimit(options: KeylessLimitOptions) {
  const counts = new MinuteCounts();
  return (req: FastifyRequest, _reply: FastifyReply, done: () => void): void => {
    if (req.method === "OPTIONS" || !needsNoKey(req)) return done();
    const nowMs = Math.floor(options.clock.nowMicros() / 1000);
    const count = counts.take(req.ip, options.perMinute, nowMs);
    if (count.admitted) return done();
    options.metrics.limiterDecisions.inc({ result: "keyless_throttled", limiter: "memory" });
    const retryAfter = secondsUntil(count.resetAtMs / 1000, nowMs);
    throw new ApiError(
      "RATE_LIMIT_EXCEEDED",
      `Too many requests without a key from this address: ${options.perMinute} a minute are answered; retry after ${retryAfter} s.`,
      { window: "minute", reason: "keyless_requests", limit: options.perMinute, retry_after: retryAfter },
      { "retry-after": String(retryAfter) },
    );
  };
}
