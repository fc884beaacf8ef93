import { randomUUID } from "node:crypto";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import fp from "fastify-plugin";
import type { LimitDecision } from "../access/limiter/limiter.ts";
import type { ApiKeyRecord } from "../domain/api-key.ts";
import { isoMicros } from "../domain/time.ts";
import { isStoreUnavailable } from "../store/errors.ts";
import { compressAnswers } from "./compression.ts";
import { type AppContext, type AppOptions, buildContext } from "./context.ts";
import { ApiError, errorEnvelope, notFound, storeUnavailable, validationError } from "./errors.ts";
import { Metering } from "./metering.ts";
import { openApiOptions } from "./openapi.ts";
import { accountRoutes } from "./routes/account.ts";
import { coverageRoutes } from "./routes/coverage.ts";
import { exchangeRoutes, futuresOnlyHint } from "./routes/exchange.ts";
import { exportRoutes } from "./routes/export.ts";
import { marketRoutes } from "./routes/markets.ts";
import { opsRoutes } from "./routes/ops.ts";
import { seriesComponents, seriesRoutes } from "./routes/series.ts";
import { snapshotRoutes } from "./routes/snapshots.ts";
import { accountComponents } from "./routes/account.ts";
import { coverageComponents } from "./routes/coverage.ts";
import { exchangeComponents } from "./routes/exchange.ts";
import { marketComponents } from "./routes/markets.ts";
import { snapshotComponents } from "./routes/snapshots.ts";
import { COMPONENT_SCHEMAS } from "./schemas.ts";

export type { Api, AppContext, AppOptions } from "./context.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The caller's key record, set by authentication on /v1 routes. */
    apiKey: ApiKeyRecord | null;
    /** The caller's windows after this request was counted (or looked at, if unmetered). */
    limitDecision: LimitDecision | null;
  }
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

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

function requestIdOf(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID_RE.test(given) ? given : randomUUID();
}

/** Turns Fastify's schema-validation error into a message naming the parameter and its rule. */
function describeValidation(err: FastifyError): ApiError {
  const first = err.validation?.[0] as
    (NonNullable<FastifyError["validation"]>[number] & { data?: unknown }) | undefined;
  if (!first) return validationError(err.message);
  const missing = (first.params as { missingProperty?: string }).missingProperty;
  const parameter = missing ?? first.instancePath.replace(/^\//, "").replaceAll("/", ".");
  // A path segment outside its enum names nothing: an unknown path, as for any other.
  if (err.validationContext === "params" && first.keyword === "enum") {
    return notFound(
      `No ${parameter} ${String(first.data)}; ${parameter} is one of ${allowedOf(first.params)}.`,
    );
  }
  const message = missing
    ? `${parameter} is required`
    : `${parameter || err.validationContext} ${first.message}`;
  return validationError(message, { parameter, rule: first.keyword, in: err.validationContext });
}

function allowedOf(params: Record<string, unknown>): string {
  const allowed = params.allowedValues;
  return Array.isArray(allowed) ? allowed.join(", ") : "";
}

type ErrorSender = (err: ApiError, req: FastifyRequest, reply: FastifyReply) => FastifyReply;

const errorSender =
  (ctx: AppContext): ErrorSender =>
  (err, req, reply) => {
    for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
    return reply.code(err.status).send(errorEnvelope(err, req.id, isoMicros(ctx.clock.nowMicros())));
  };

const routeNotFound = (sendError: ErrorSender) => (req: FastifyRequest, reply: FastifyReply) => {
  const path = req.url.split("?")[0];
  const message = futuresOnlyHint(path) ?? `No route ${req.method} ${path}. The API lives under /v1.`;
  return sendError(notFound(message), req, reply);
};

/** The one error handler: every error leaves in the envelope of DESIGN 3.1. */
function errorHandling(app: FastifyInstance, ctx: AppContext): void {
  const sendError = errorSender(ctx);
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
  app.setNotFoundHandler(routeNotFound(sendError));
}

/** Request ids on every answer, and the request metrics. */
function requestHooks(app: FastifyInstance, ctx: AppContext): void {
  app.decorateRequest("apiKey", null);
  app.decorateRequest("limitDecision", null);
  app.addHook("onRequest", async (req, reply) => {
    reply.header("x-request-id", req.id);
  });
  app.addHook("onResponse", async (req, reply) => {
    // One line a request (Fastify's own request logging, two lines, is off).
    req.log.info(
      { method: req.method, url: req.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime },
      "request completed",
    );
    const route = req.routeOptions.url ?? "unmatched";
    ctx.metrics.requests.inc({ route, method: req.method, status: String(reply.statusCode) });
    ctx.metrics.latency.observe({ route }, reply.elapsedTime / 1000);
  });
  ctx.metrics.gauge(
    "updown_rate_limiter_degraded",
    "1 while the shared rate limiter cannot reach Redis and limits in this process instead.",
    () => (ctx.limiter.degraded ? 1 : 0),
  );
  if (ctx.ownsLimiter) app.addHook("onClose", () => ctx.limiter.close());
}

/** The /v1 API: every route behind authentication and counting (DESIGN 3.2). */
function v1Api(ctx: AppContext): FastifyPluginAsync {
  const metering = new Metering({
    keys: ctx.keys,
    limiter: ctx.limiter,
    plans: ctx.plans,
    clock: ctx.clock,
    authFailuresPerMinute: ctx.config.authFailuresPerMinute,
    metrics: ctx.metrics,
  });
  return async (v1) => {
    const api = v1.withTypeProvider<TypeBoxTypeProvider>();
    if (ctx.unmetered) {
      api.addHook("onRequest", async (req) => {
        req.apiKey = UNMETERED_CALLER;
      });
    } else {
      api.addHook("onRequest", metering.onRequest);
    }
    // Unknown routes under /v1 pass the same hook: they need a key and count like any request.
    api.setNotFoundHandler(routeNotFound(errorSender(ctx)));
    for (const routes of [
      accountRoutes,
      marketRoutes,
      snapshotRoutes,
      seriesRoutes,
      coverageRoutes,
      exportRoutes,
      exchangeRoutes,
    ]) {
      await api.register(async (scope) => routes(scope, ctx));
    }
  };
}

/**
 * The service as a Fastify plugin: its error envelope, request ids, /openapi.json and /docs, the
 * operations endpoints and the /v1 API, over the dependencies in `options`. Registered without
 * encapsulation (fastify-plugin), so its error and not-found handlers are the server's own.
 */
export const updownApp = fp<AppOptions>(
  async (app, options) => {
    const ctx = buildContext(options);
    requestHooks(app, ctx);
    errorHandling(app, ctx);
    compressAnswers(app);
    for (const schema of [
      ...COMPONENT_SCHEMAS,
      ...marketComponents,
      ...snapshotComponents,
      ...seriesComponents,
      ...coverageComponents,
      ...accountComponents,
      ...exchangeComponents,
    ]) {
      app.addSchema(schema);
    }
    await app.register(swagger, openApiOptions);
    await app.register(swaggerUi, { routePrefix: "/docs" });
    app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
    opsRoutes(app.withTypeProvider<TypeBoxTypeProvider>(), ctx);
    await app.register(v1Api(ctx), { prefix: "/v1" });
  },
  { name: "updown-app", fastify: "5.x" },
);

/** The server: Fastify with the app registered. Tests and `serve` both build it here. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const config = options.config ?? {};
  const logging = options.loggerInstance
    ? { loggerInstance: options.loggerInstance }
    : { logger: options.logger ?? false };
  const app = Fastify({
    ...logging,
    // One line a request, from the onResponse hook, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: requestIdOf,
    requestIdHeader: false,
    trustProxy: config.trustProxy ?? false,
    ajv: { customOptions: { coerceTypes: true, allErrors: false, removeAdditional: false } },
  });
  await app.register(updownApp, options);
  return app;
}
