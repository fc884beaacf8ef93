import { timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { BACKENDS } from "../../store/backends.ts";
import type { Api, AppContext } from "../context.ts";
import { ApiError, notFound, storeUnavailable } from "../errors.ts";
import { answer, opsResponses } from "../schemas.ts";

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
const Health = Type.Object({ status: Type.Literal("ok") }, { additionalProperties: false });

const Readiness = Type.Object(
  {
    status: Type.Literal("ready"),
    store: Type.Enum(BACKENDS.map((b) => b.name)),
    limiter: Type.Enum(["memory", "redis", "redis-unreachable"], {
      description: "redis-unreachable: limiting in this process until Redis answers again",
    }),
  },
  { additionalProperties: false },
);

const NO_KEY = { tags: ["operations"], security: [] };

const healthSchema = {
  ...NO_KEY,
  operationId: "getHealth",
  summary: "Liveness: the process answers",
  response: opsResponses({ 200: answer(Health, "Alive") }, [500]),
};

const readySchema = {
  ...NO_KEY,
  operationId: "getReadiness",
  summary: "Readiness: the store answers (a load balancer takes the replica out on 503)",
  response: opsResponses({ 200: answer(Readiness, "Ready") }, [500, 503]),
};

const metricsSchema = {
  ...NO_KEY,
  operationId: "getMetrics",
  summary: "Prometheus metrics: loopback callers only, or a bearer token when METRICS_TOKEN is set",
  response: opsResponses(
    {
      200: answer(
        { content: { "text/plain": { schema: { type: "string" } } } },
        "Prometheus text format 0.0.4",
      ),
    },
    [401, 404, 429, 500],
  ),
};

export function opsRoutes(app: Api, ctx: AppContext): void {
  app.get("/healthz", { schema: healthSchema }, async () => ({ status: "ok" as const }));

  app.get("/readyz", { schema: readySchema }, async () => {
    try {
      await ctx.store.ready();
    } catch {
      throw storeUnavailable();
    }
    const limiter =
      ctx.limiter.kind === "redis" && ctx.limiter.degraded ? "redis-unreachable" : ctx.limiter.kind;
    return { status: "ready" as const, store: ctx.store.kind, limiter };
  });

  // With METRICS_TOKEN, callers present it as a bearer token; without, only this machine may read them.
  app.get("/metrics", { schema: metricsSchema }, async (req, reply) => {
    const token = ctx.config.metricsToken;
    if (token !== null ? !tokenMatches(req, token) : !LOOPBACK.has(req.socket.remoteAddress ?? "")) {
      throw token !== null
        ? new ApiError("UNAUTHORIZED", "/metrics needs METRICS_TOKEN in an Authorization: Bearer header.")
        : notFound("No route GET /metrics. The API lives under /v1.");
    }
    return reply.type("text/plain; version=0.0.4; charset=utf-8").send(ctx.metrics.render());
  });
}
