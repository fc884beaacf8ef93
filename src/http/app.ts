import { randomUUID } from "node:crypto";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import { KeyService } from "../access/keys.ts";
import type { LimitDecision, RateLimiter } from "../access/limiter/limiter.ts";
import { MemoryLimiter } from "../access/limiter/memory.ts";
import { MarketAccess } from "../access/market-access.ts";
import { loadPlans } from "../access/plans.ts";
import { QuotaService } from "../access/quota.ts";
import { type Config, DEFAULT_CONFIG } from "../config.ts";
import type { ApiKeyRecord } from "../domain/api-key.ts";
import type { Plans } from "../domain/plan.ts";
import { type Clock, isoMicros, systemClock } from "../domain/time.ts";
import type { Store } from "../store/store.ts";
import { isStoreUnavailable } from "../store/errors.ts";
import { ApiError, errorEnvelope, notFound, storeUnavailable, validationError } from "./errors.ts";
import { Metering } from "./metering.ts";
import { Metrics } from "./metrics.ts";
import { PageCache } from "./page-cache.ts";
import { accountRoutes } from "./routes/account.ts";
import { exportRoutes } from "./routes/export.ts";
import { opsRoutes } from "./routes/ops.ts";
import { exchangeRoutes } from "./routes/exchange.ts";
import { marketRoutes } from "./routes/markets.ts";
import { coverageRoutes } from "./routes/coverage.ts";
import { snapshotRoutes } from "./routes/snapshots.ts";
import { errorSchema, marketSchema, snapshotSchema } from "./schemas.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The caller's key record, set by authentication on /v1 routes. */
    apiKey: ApiKeyRecord | null;
    /** The caller's windows after this request was counted (or looked at, if unmetered). */
    limitDecision: LimitDecision | null;
  }
}

export interface AppOptions {
  store: Store;
  clock?: Clock;
  config?: Partial<Config>;
  /** Fastify logger setting; false in tests. */
  logger?: boolean | { level: string };
  /** Default: read from `config.plansFile` over config/plans.json. */
  plans?: Plans;
  /** Default: an in-process limiter owned (and closed) by the app. */
  limiter?: RateLimiter;
  /**
   * Benchmarks only, never reachable from configuration: no authentication and no counting, every
   * request served as an enterprise key would be. The baseline that metering's cost is measured by.
   */
  unmetered?: boolean;
}

/** The caller every request of an unmetered app is taken to be. */
const UNMETERED_CALLER: ApiKeyRecord = {
  id: "unmetered",
  hash: "",
  plan: "enterprise",
  account: "unmetered",
  name: null,
  createdAt: 0,
  revokedAt: null,
  perMinuteLimit: null,
  perDayLimit: null,
};

/** What every route gets: the app's dependencies, built once. */
export interface AppContext {
  store: Store;
  clock: Clock;
  config: Config;
  plans: Plans;
  keys: KeyService;
  limiter: RateLimiter;
  access: MarketAccess;
  quota: QuotaService;
  pageCache: PageCache;
  metrics: Metrics;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

function requestIdOf(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID_RE.test(given) ? given : randomUUID();
}

/** Turns Fastify's schema-validation error into a message naming the parameter and its rule. */
function describeValidation(err: FastifyError): ApiError {
  const first = err.validation?.[0];
  if (!first) return validationError(err.message);
  const missing = (first.params as { missingProperty?: string }).missingProperty;
  const parameter = missing ?? first.instancePath.replace(/^\//, "").replaceAll("/", ".");
  const message = missing
    ? `${parameter} is required`
    : `${parameter || err.validationContext} ${first.message}`;
  return validationError(message, { parameter, rule: first.keyword, in: err.validationContext });
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const config: Config = { ...DEFAULT_CONFIG, ...options.config };
  const clock = options.clock ?? systemClock;
  const plans = options.plans ?? loadPlans(config.plansFile);
  const store = options.store;
  const ctx: AppContext = {
    store,
    clock,
    config,
    plans,
    keys: new KeyService(store.keys, clock, plans),
    limiter: options.limiter ?? new MemoryLimiter(),
    access: new MarketAccess(store.markets, plans, clock),
    quota: new QuotaService(store.quota, clock, plans),
    pageCache: new PageCache(config.pageCacheBytes),
    metrics: new Metrics(),
  };
  const metering = new Metering({
    keys: ctx.keys,
    limiter: ctx.limiter,
    plans,
    clock,
    authFailuresPerMinute: config.authFailuresPerMinute,
    metrics: ctx.metrics,
  });
  ctx.metrics.gauge(
    "updown_rate_limiter_degraded",
    "1 while the shared rate limiter cannot reach Redis and limits in this process instead.",
    () => (ctx.limiter.degraded ? 1 : 0),
  );

  const app = Fastify({
    logger: options.logger ?? false,
    genReqId: requestIdOf,
    requestIdHeader: false,
    trustProxy: config.trustProxy,
    ajv: { customOptions: { coerceTypes: true, allErrors: false, removeAdditional: false } },
  });
  app.decorateRequest("apiKey", null);
  app.decorateRequest("limitDecision", null);
  if (!options.limiter) app.addHook("onClose", () => ctx.limiter.close());

  app.addHook("onRequest", async (req, reply) => {
    reply.header("x-request-id", req.id);
  });
  app.addHook("onResponse", async (req, reply) => {
    const route = req.routeOptions.url ?? "unmatched";
    ctx.metrics.requests.inc({ route, method: req.method, status: String(reply.statusCode) });
    ctx.metrics.latency.observe({ route }, reply.elapsedTime / 1000);
  });

  const sendError = (err: ApiError, req: FastifyRequest, reply: FastifyReply) => {
    for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
    return reply.code(err.status).send(errorEnvelope(err, req.id, isoMicros(clock.nowMicros())));
  };

  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof ApiError) return sendError(err, req, reply);
    if (err.validation) return sendError(describeValidation(err), req, reply);
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      const apiErr = err.statusCode === 404 ? notFound(err.message) : validationError(err.message);
      return sendError(apiErr, req, reply);
    }
    if (isStoreUnavailable(err)) {
      ctx.metrics.storeErrors.inc({ kind: "unavailable" });
      req.log.warn({ err: { message: err.message, code: err.code } }, "store unavailable");
      return sendError(storeUnavailable(), req, reply);
    }
    req.log.error({ err }, "request failed");
    return sendError(new ApiError("INTERNAL_ERROR", "An internal error occurred."), req, reply);
  });

  const routeNotFound = (req: FastifyRequest, reply: FastifyReply) =>
    sendError(
      notFound(`No route ${req.method} ${req.url.split("?")[0]}. The API lives under /v1.`),
      req,
      reply,
    );
  app.setNotFoundHandler(routeNotFound);

  for (const schema of [marketSchema, snapshotSchema, errorSchema]) app.addSchema(schema);

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Up or Down history API",
        version: "1.0.0",
        description:
          "Recorded history of Polymarket's short-interval crypto Up or Down markets: market records and per-second snapshots with order books.",
      },
      components: { securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "X-API-Key" } } },
      security: [{ apiKey: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  opsRoutes(app, ctx);

  await app.register(
    async (v1) => {
      if (options.unmetered) {
        v1.addHook("onRequest", async (req) => {
          req.apiKey = UNMETERED_CALLER;
        });
      } else {
        v1.addHook("onRequest", metering.onRequest);
      }
      // Unknown routes under /v1 pass the same hook: they need a key and count like any request.
      v1.setNotFoundHandler(routeNotFound);
      await v1.register(async (scope) => accountRoutes(scope, ctx));
      await v1.register(async (scope) => marketRoutes(scope, ctx));
      await v1.register(async (scope) => snapshotRoutes(scope, ctx));
      await v1.register(async (scope) => coverageRoutes(scope, ctx));
      await v1.register(async (scope) => exportRoutes(scope, ctx));
      await v1.register(async (scope) => exchangeRoutes(scope, ctx));
    },
    { prefix: "/v1" },
  );

  return app;
}
