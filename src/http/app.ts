import { maxHeaderSize } from "node:http";
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
import { clientErrorHandler, connectRefusal, frameworkErrorHandler } from "./client-errors.ts";
import { compressAnswers } from "./compression.ts";
import { type AppContext, type AppOptions, buildContext } from "./context.ts";
import { corsAndSafeHeaders } from "./cors.ts";
import {
  ApiError,
  badRequest,
  errorEnvelope,
  notFound,
  storeUnavailable,
  validationError,
} from "./errors.ts";
import { documentRoutes } from "./documents.ts";
import { keylessLimit } from "./keyless-limit.ts";
import { renderLlmsTxt } from "./llms-txt.ts";
import { Metering } from "./metering.ts";
import { answerCachedPages } from "./cached-page-answers.ts";
import { requestIdOf } from "./request-id.ts";
import { requestCompleted } from "./request-log.ts";
import { mcpRoutes } from "./routes/mcp.ts";
import { openApiOptions } from "./openapi.ts";
import { accountRoutes } from "./routes/account.ts";
import { coverageRoutes } from "./routes/coverage.ts";
import { exchangeRoutes, futuresOnlyHint } from "./routes/exchange.ts";
import { exportRoutes } from "./routes/export.ts";
import { marketRoutes } from "./routes/markets.ts";
import { opsRoutes } from "./routes/ops.ts";
import { marketSeriesComponents, marketSeriesRoutes } from "./routes/market-series.ts";
import { snapshotRoutes } from "./routes/snapshots.ts";
import { accountComponents } from "./routes/account.ts";
import { coverageComponents } from "./routes/coverage.ts";
import { exchangeComponents } from "./routes/exchange.ts";
import { marketComponents } from "./routes/markets.ts";
import { snapshotComponents } from "./routes/snapshots.ts";
import { RouteTable } from "./route-table.ts";
import { compileOncePerSchema } from "./serializers.ts";
import { COMPONENT_SCHEMAS } from "./schemas.ts";
import { strictInput } from "./strict-input.ts";
import { coinSchema } from "../wire/wire-schemas.ts";
import { seriesComponents, seriesRoutes } from "./routes/series.ts";
import { tradeComponents, tradeRoutes } from "./routes/trades.ts";
import { eventComponents, eventRoutes } from "./routes/events.ts";
import { replayRoutes } from "./routes/replay.ts";
import { bookComponents, bookRoutes } from "./routes/book.ts";
import { BACKTEST_SCHEMAS } from "../backtest/wire.ts";
import { runComponents, runRoutes } from "./routes/backtest-runs.ts";
import { exportComponents, exportRoutes as backtestExportRoutes } from "./routes/backtest-exports.ts";
import { replayComponents, replayRoutes as backtestReplayRoutes } from "./routes/backtest-replay.ts";
import { strategyComponents, strategyRoutes } from "./routes/backtest-strategies.ts";
import { executionPriceComponents, executionPriceRoutes } from "./routes/execution-price.ts";
import { webPageRoutes } from "./web-page.ts";

export type { AppContext, AppOptions } from "./context.ts";

/** The app plugin's options: the context every route is given, built once by its caller. */
export interface AppPluginOptions {
  context: AppContext;
  /** Where the web page's source is (default: the repository's web/). */
  webDir?: string;
}

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

/** 405 with Allow for a served path asked with another method; 404 for a path nothing serves. */
const routeNotFound =
  (sendError: ErrorSender, routes: RouteTable) => (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split("?")[0];
    const allowed = routes.allowed(path);
    if (allowed.length > 0) {
      reply.header("allow", allowed.join(", "));
      const message = `${req.method} is not allowed on ${path}; it answers ${allowed.join(", ")}.`;
      return sendError(new ApiError("METHOD_NOT_ALLOWED", message), req, reply);
    }
    const message = futuresOnlyHint(path) ?? `No route ${req.method} ${path}. The API lives under /v1.`;
    return sendError(notFound(message), req, reply);
  };

/** Fastify's own 4xx errors (body parsing, mostly) in the envelope, under the status they mean. */
function frameworkClientError(err: FastifyError, bodyLimit: number): ApiError {
  if (err.statusCode === 404) return notFound(err.message);
  if (err.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return new ApiError("PAYLOAD_TOO_LARGE", `The body exceeds the limit of ${bodyLimit} bytes.`);
  }
  if (err.code === "FST_ERR_CTP_INVALID_JSON_BODY" || err.code === "FST_ERR_CTP_EMPTY_JSON_BODY") {
    return validationError(err.message, { parameter: "body", rule: "json", in: "body" });
  }
  return badRequest(err.message);
}

/** The one error handler: every error leaves in the envelope of DESIGN 3.1. */
function errorHandling(app: FastifyInstance, ctx: AppContext, routes: RouteTable): void {
  const sendError = errorSender(ctx);
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof ApiError) return sendError(err, req, reply);
    if (err.validation) return sendError(describeValidation(err), req, reply);
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return sendError(frameworkClientError(err, app.initialConfig.bodyLimit ?? 0), req, reply);
    }
    if (isStoreUnavailable(err)) {
      ctx.metrics.storeErrors.inc({ kind: "unavailable" });
      req.log.warn({ err: { message: err.message, code: err.code } }, "store unavailable");
      return sendError(storeUnavailable(), req, reply);
    }
    req.log.error({ err }, "request failed");
    return sendError(new ApiError("INTERNAL_ERROR", "An internal error occurred."), req, reply);
  });
  app.setNotFoundHandler(routeNotFound(sendError, routes));
}

/**
 * Request ids, the server's own headers and CORS on every answer (cors.ts), input checks, the request
 * metrics.
 */
function requestHooks(app: FastifyInstance, ctx: AppContext, routes: RouteTable): void {
  app.decorateRequest("apiKey", null);
  app.decorateRequest("limitDecision", null);
  // The hooks every request passes are callbacks, not async functions: a promise and a microtask
  // each is a measurable part of a cached page's cost (bench/page-profile.ts).
  corsAndSafeHeaders(app, (path) => routes.allowed(path));
  // After authentication (so that a counted request's 400 carries its limit headers), before the schema.
  app.addHook("preValidation", strictInput);
  app.addHook("onResponse", (req, reply, done) => {
    requestCompleted(req.log, ctx.metrics, {
      route: req.routeOptions.url ?? "unmatched",
      method: req.method,
      url: req.url,
      statusCode: reply.statusCode,
      elapsedMs: reply.elapsedTime,
    });
    done();
  });
  ctx.metrics.gauge(
    "updown_rate_limiter_degraded",
    "1 while the shared rate limiter cannot reach Redis and limits in this process instead.",
    () => (ctx.limiter.degraded ? 1 : 0),
  );
  if (ctx.ownsLimiter) app.addHook("onClose", () => ctx.limiter.close());
}

/**
 * The backtest scheduler lives as long as the app: it starts (taking over runs a dead process left)
 * when the app is ready, and stops its workers when the app closes.
 */
function backtestJobs(app: FastifyInstance, ctx: AppContext): void {
  const scheduler = ctx.backtests.scheduler;
  scheduler.useLogger(app.log);
  app.addHook("onReady", () => scheduler.start());
  app.addHook("onClose", () => scheduler.close());
}

/**
 * The page reader threads live as long as the app: each starts at the first read asked of it (pages
 * are read on the request thread until it is ready; a server that never reads one never pays a
 * thread's 50 MB), and stops when the app closes.
 */
function pageReaders(app: FastifyInstance, ctx: AppContext): void {
  ctx.pageReaders.useLogger(app.log);
  app.addHook("onClose", () => ctx.pageReaders.close());
}

type OnRequest = (req: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** An unmetered app takes every caller for an enterprise key. */
const unmeteredCaller: OnRequest = async (req) => {
  req.apiKey = UNMETERED_CALLER;
};

/**
 * Authentication and counting (DESIGN 3.2), one for /v1 and /mcp alike, with one memory of the
 * addresses that keep failing; none for an unmetered app.
 */
function meteringOf(ctx: AppContext): Metering | null {
  if (ctx.unmetered) return null;
  return new Metering({
    keys: ctx.keys,
    limiter: ctx.limiter,
    plans: ctx.plans,
    clock: ctx.clock,
    authFailuresPerMinute: ctx.config.authFailuresPerMinute,
    uncountedPerMinute: ctx.config.uncountedRequestsPerMinute,
    metrics: ctx.metrics,
  });
}

/** The /v1 API: every route behind authentication and counting (DESIGN 3.2). */
function v1Api(ctx: AppContext, routes: RouteTable, meter: OnRequest): FastifyPluginAsync {
  return async (v1) => {
    const api = v1.withTypeProvider<TypeBoxTypeProvider>();
    api.addHook("onRequest", meter);
    // Unknown routes under /v1 pass the same hook: they need a key and count like any request.
    api.setNotFoundHandler(routeNotFound(errorSender(ctx), routes));
    for (const routes of [
      accountRoutes,
      marketRoutes,
      snapshotRoutes,
      marketSeriesRoutes,
      tradeRoutes,
      eventRoutes,
      bookRoutes,
      replayRoutes,
      coverageRoutes,
      seriesRoutes,
      exportRoutes,
      exchangeRoutes,
      executionPriceRoutes,
      strategyRoutes,
      runRoutes,
      backtestExportRoutes,
      backtestReplayRoutes,
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
export const updownApp = fp<AppPluginOptions>(
  async (app, options) => {
    const ctx = options.context;
    const routes = new RouteTable();
    app.addHook("onRoute", (route) => routes.add(route.url, route.method));
    requestHooks(app, ctx, routes);
    backtestJobs(app, ctx);
    pageReaders(app, ctx);
    errorHandling(app, ctx, routes);
    compressAnswers(app);
    if (!ctx.unmetered) {
      const perMinute = ctx.config.keylessRequestsPerMinute;
      app.addHook("onRequest", keylessLimit({ clock: ctx.clock, perMinute, metrics: ctx.metrics }));
    }
    for (const schema of [
      coinSchema(ctx.config.coins),
      ...COMPONENT_SCHEMAS,
      ...marketComponents,
      ...snapshotComponents,
      ...marketSeriesComponents,
      ...coverageComponents,
      ...tradeComponents,
      ...eventComponents,
      ...bookComponents,
      ...seriesComponents,
      ...accountComponents,
      ...exchangeComponents,
      ...executionPriceComponents,
      ...strategyComponents,
      ...runComponents,
      ...exportComponents,
      ...replayComponents,
      ...BACKTEST_SCHEMAS,
    ]) {
      app.addSchema(schema);
    }
    await app.register(swagger, openApiOptions);
    await app.register(swaggerUi, { routePrefix: "/docs" });
    documentRoutes(app, {
      openApi: () => JSON.stringify(app.swagger()),
      openApiYaml: () => app.swagger({ yaml: true }),
      llmsTxt: () => renderLlmsTxt(app.swagger(), ctx.config.publicBaseUrl ?? "", ctx.plans),
    });
    webPageRoutes(app, options.webDir);
    opsRoutes(app.withTypeProvider<TypeBoxTypeProvider>(), ctx);
    const metering = meteringOf(ctx);
    const meter = metering?.onRequest ?? unmeteredCaller;
    await app.register(v1Api(ctx, routes, meter), { prefix: "/v1" });
    await app.register(mcpRoutes(app, meter));
    if (metering) answerCachedPages(app, ctx, metering);
  },
  { name: "updown-app", fastify: "5.x" },
);

/**
 * Node checks its connections' header and request deadlines on a timer; a quarter of the shorter
 * deadline keeps the overshoot small (Node's own default is every 30 s).
 */
function deadlineCheckInterval(headersTimeoutMs: number): number {
  return Math.min(1000, Math.max(10, Math.floor(headersTimeoutMs / 4)));
}

/**
 * TRUST_PROXY as Fastify takes it. A hop count trusts that many proxies nearest the server whoever
 * they are (Fastify's own number form trusts none, since it cannot check the peer): it is for a server
 * only its proxies can reach (docs/plans-and-limits.md).
 */
function trustedProxies(
  trust: false | number | string,
): false | string | ((address: string, hop: number) => boolean) {
  return typeof trust === "number" ? (_address, hop) => hop < trust : trust;
}

/** The server: Fastify with the app registered over a context built from `options` (tests, tools). */
export function buildApp(options: AppOptions): Promise<FastifyInstance> {
  return serverOver(buildContext(options), options);
}

/** How the server around the app logs and where the web page's source is. */
export type ServerOptions = Pick<AppOptions, "logger" | "loggerInstance" | "webDir">;

/** The server: Fastify with the app registered over a context already built (serve builds its own). */
export async function serverOver(ctx: AppContext, options: ServerOptions): Promise<FastifyInstance> {
  const { config, clock } = ctx;
  // Node refuses a headers deadline past the request deadline: the shorter one governs both.
  const headersTimeout = Math.min(config.headersTimeoutMs, config.requestTimeoutMs);
  const logging = options.loggerInstance
    ? { loggerInstance: options.loggerInstance }
    : { logger: options.logger ?? false };
  const app = Fastify({
    ...logging,
    // One line a request, from the onResponse hook, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: requestIdOf,
    requestIdHeader: false,
    trustProxy: trustedProxies(config.trustProxy),
    ajv: { customOptions: { coerceTypes: true, allErrors: false, removeAdditional: false } },
    schemaController: { compilersFactory: { buildSerializer: compileOncePerSchema } },
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    http: {
      // Given here as well as below, so that Node checks the pair against each other as configured.
      requestTimeout: config.requestTimeoutMs,
      headersTimeout,
      connectionsCheckingInterval: deadlineCheckInterval(headersTimeout),
      // Checked by the app instead (strict-input.ts), so that the answer is the envelope.
      requireHostHeader: false,
    },
    // Longer than any request line Node reads: a long path parameter meets its schema's maxLength (400).
    routerOptions: { maxParamLength: maxHeaderSize },
    clientErrorHandler: clientErrorHandler(clock),
    frameworkErrors: frameworkErrorHandler(clock),
  });
  app.server.on("connect", connectRefusal(clock));
  await app.register(updownApp, { context: ctx, webDir: options.webDir });
  return app;
}
