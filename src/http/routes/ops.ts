import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppContext } from "../app.ts";
import { ApiError, notFound, storeUnavailable } from "../errors.ts";

const LOOPBACK = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

function tokenMatches(req: FastifyRequest, token: string): boolean {
  const given = Buffer.from(req.headers.authorization ?? "");
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Operations endpoints, outside /v1 and without an API key: liveness, readiness and metrics. A load
 * balancer polls /readyz to take a replica out while its database is unreachable.
 */
export function opsRoutes(app: FastifyInstance, ctx: AppContext): void {
  const hidden = { schema: { hide: true } };

  app.get("/healthz", hidden, async () => ({ status: "ok" }));

  app.get("/readyz", hidden, async () => {
    try {
      await ctx.store.markets.countMarkets();
    } catch {
      throw storeUnavailable();
    }
    const limiter =
      ctx.limiter.kind === "redis" && ctx.limiter.degraded ? "redis-unreachable" : ctx.limiter.kind;
    return { status: "ready", store: ctx.store.kind, limiter };
  });

  // With METRICS_TOKEN, callers present it as a bearer token; without, only this machine may read them.
  app.get("/metrics", hidden, async (req, reply) => {
    const token = ctx.config.metricsToken;
    if (token !== null ? !tokenMatches(req, token) : !LOOPBACK.has(req.socket.remoteAddress ?? "")) {
      throw token !== null
        ? new ApiError("UNAUTHORIZED", "/metrics needs METRICS_TOKEN in an Authorization: Bearer header.")
        : notFound("No route GET /metrics. The API lives under /v1.");
    }
    return reply.type("text/plain; version=0.0.4; charset=utf-8").send(ctx.metrics.render());
  });
}
