import { type TObject, type TProperties, type TSchema, Type } from "typebox";
import { EXCHANGE_WIRE_SCHEMAS } from "../wire/exchange-wire.ts";
import { Nullable, WIRE_SCHEMAS } from "../wire/wire-schemas.ts";
import { ERROR_STATUS } from "./errors.ts";

/**
 * The parts of the HTTP contract that routes share: the named components of /openapi.json, the error
 * envelope, the headers every answer carries, and the builder of a route's declared responses. A
 * route's schema (built from these) is the contract: Fastify validates input with it, handler types
 * derive from it (TypeBox), and /openapi.json is generated from it.
 */

export { Nullable };

export const ErrorSchema = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object(
      {
        code: Type.Enum(Object.keys(ERROR_STATUS), { description: "One of the codes of DESIGN 3.1" }),
        message: Type.String(),
        details: Type.Optional(Type.Object({}, { additionalProperties: true })),
      },
      { additionalProperties: false },
    ),
    request_id: Type.String(),
    timestamp: Type.String({ format: "date-time" }),
  },
  { $id: "Error", additionalProperties: false, description: "The one envelope of every error" },
);

/** Every named component of the document, added to the app once (refs name them by $id). */
export const COMPONENT_SCHEMAS: TSchema[] = [...WIRE_SCHEMAS, ...EXCHANGE_WIRE_SCHEMAS, ErrorSchema];

export const ref = (id: string) => Type.Ref(id);

/**
 * Headers of the contract, by the answers that carry them. `required` marks the ones every such answer
 * has; it moves from the schema to the header object when the document is built (openapi.ts).
 */
const REQUEST_ID = {
  "X-Request-Id": {
    type: "string",
    required: true,
    description: "The request's id: the caller's own X-Request-Id when valid, else a generated one",
  },
};

const RATE_LIMIT = {
  "X-RateLimit-Limit": {
    type: "string",
    required: true,
    description: "Requests allowed per day, or `unlimited`",
  },
  "X-RateLimit-Remaining": {
    type: "string",
    required: true,
    description: "Requests left today, or `unlimited`",
  },
  "X-RateLimit-Reset": { type: "string", required: true, description: "Unix seconds of the next 00:00 UTC" },
  "X-Tier": { type: "string", required: true, description: "The key's plan" },
  "RateLimit-Policy": {
    type: "string",
    required: true,
    description:
      "IETF draft: the quota of the minute and the day window (999999999999999 for a window without a limit)",
  },
  RateLimit: {
    type: "string",
    required: true,
    description: "IETF draft: what is left of each window, and seconds until it resets",
  },
};

const RETRY_AFTER = {
  "Retry-After": {
    type: "string",
    required: true,
    description: "Whole seconds to wait before retrying (at least 1)",
  },
};

/** Every JSON answer (compression.ts): compressed when the request accepts an encoding. */
const COMPRESSION = {
  "Content-Encoding": {
    type: "string",
    enum: ["br", "zstd", "gzip"],
    description: "The encoding the body is compressed in, when Accept-Encoding allows one (DESIGN 3.8)",
  },
  Vary: { type: "string", required: true, description: "`Accept-Encoding`: the body depends on it" },
};

/** Whether a declared answer is JSON (a streamed file declares its own content; a 304 has no body). */
function isJsonAnswer(schema: object): boolean {
  return !("content" in schema) && (schema as { type?: unknown }).type !== "null";
}

const ERROR_DESCRIPTIONS: Record<ErrorStatus, string> = {
  400: "VALIDATION_ERROR: a parameter breaks its rule (the message and details.parameter name it); BAD_REQUEST: a request this API does not read (a body on GET, no Host)",
  401: "UNAUTHORIZED: the key is missing, unknown or revoked",
  403: "TIER_ACCESS_DENIED: the plan does not open this; details.required_plan names one that does",
  404: "RESOURCE_NOT_FOUND: no such market, coin, venue, record or route",
  422: "GENERATION_FAILED: no strategy could be generated from the prompt (details.reason; details.clauses quotes each clause not made part of it); nothing was charged",
  429: "RATE_LIMIT_EXCEEDED (details.window: minute or day); details.reason, when present, names a limit of the server's own (authentication_failures, keyless_requests, uncounted_requests)",
  500: "INTERNAL_ERROR: nothing internal leaks",
  503: "SERVICE_UNAVAILABLE: a backing store is unreachable",
};

/** The 429 of the backtest routes, which also meter a monthly quota and runs in flight. */
const QUOTA_429 =
  "BACKTEST_AI_QUOTA_EXCEEDED: the month's backtest generations are used (Retry-After: the next UTC month); or " +
  "RATE_LIMIT_EXCEEDED: a request window is full (details.window), or too many runs are in flight for the key or " +
  "its account (details.reason runs_in_flight, details.scope key or account)";

/** The 403 of the backtest-ai routes (PolyHistorical's code). */
const BACKTEST_AI_403 =
  "BACKTEST_AI_REQUIRED: the plan includes no backtests; details.required_plan names one that does";

export type ErrorStatus = 400 | 401 | 403 | 404 | 422 | 429 | 500 | 503;

/** The statuses any /v1 route can answer: a malformed request, no key, limits, the server's own failures. */
const V1_ERRORS: ErrorStatus[] = [400, 401, 429, 500, 503];

interface ResponseOptions {
  /** Statuses the route answers beyond 400, 401, 429, 500 and 503. */
  errors?: ErrorStatus[];
  /** Metered answers carry the rate-limit headers (every /v1 answer to a valid key does). */
  metered?: boolean;
  /** The route spends the monthly backtest quota: its 429 may be BACKTEST_AI_QUOTA_EXCEEDED. */
  quota?: boolean;
  /** A backtest-ai route: its 403 is BACKTEST_AI_REQUIRED. */
  backtestAi?: boolean;
}

/** A declared answer: its schema and the headers it carries. */
export function answer(schema: object, description: string, headers: object = {}): object {
  return { ...schema, description, headers: { ...REQUEST_ID, ...headers } };
}

/**
 * The responses of a /v1 route: its successes as given, and every error status it can answer in the
 * error envelope, each with the headers it carries.
 */
export function v1Responses(
  successes: Record<number, object>,
  { errors = [], metered = true, quota = false, backtestAi = false }: ResponseOptions = {},
): Record<number, object> {
  const limitHeaders = metered ? RATE_LIMIT : {};
  const out: Record<number, object> = {};
  for (const [status, schema] of Object.entries(successes)) {
    const own = (schema as { headers?: object }).headers ?? {};
    const compression = isJsonAnswer(schema) ? COMPRESSION : {};
    out[Number(status)] = { ...schema, headers: { ...REQUEST_ID, ...limitHeaders, ...own, ...compression } };
  }
  const statuses = [...new Set([...errors, ...V1_ERRORS])].sort((a, b) => a - b);
  for (const status of statuses) {
    const description =
      quota && status === 429
        ? QUOTA_429
        : backtestAi && status === 403
          ? BACKTEST_AI_403
          : ERROR_DESCRIPTIONS[status];
    const headers = { ...errorHeaders(status, limitHeaders), ...COMPRESSION };
    out[status] = answer(ref("Error"), description, headers);
  }
  return out;
}

/**
 * The headers an error surely carries. A 401, a 429 for failed keys and a 500 or 503 can come before
 * the key is counted, so only the errors of a counted request promise the limit headers.
 */
function errorHeaders(status: ErrorStatus, limitHeaders: object): object {
  if (status === 429 || status === 503) return RETRY_AFTER;
  if (status === 401 || status === 500) return {};
  return limitHeaders;
}

/** Errors an endpoint outside /v1 can answer, 400 (a malformed request) always among them. */
export function opsResponses(
  successes: Record<number, object>,
  errors: ErrorStatus[],
): Record<number, object> {
  const out: Record<number, object> = {};
  for (const [status, schema] of Object.entries(successes)) {
    const own = (schema as { headers?: object }).headers ?? {};
    const compression = isJsonAnswer(schema) ? COMPRESSION : {};
    out[Number(status)] = { ...schema, headers: { ...REQUEST_ID, ...own, ...compression } };
  }
  for (const status of [...new Set<ErrorStatus>([400, ...errors])].sort((a, b) => a - b)) {
    const headers = { ...(status === 503 || status === 429 ? RETRY_AFTER : {}), ...COMPRESSION };
    out[status] = answer(ref("Error"), ERROR_DESCRIPTIONS[status], headers);
  }
  return out;
}

/**
 * A query string's schema. A parameter with a default is optional to the caller but always present to
 * the handler (Fastify fills the default in): so its type stays required while the schema, and so the
 * document, lists only the parameters without a default as required.
 */
export function Query<P extends TProperties>(properties: P): TObject<P> {
  const schema = Type.Object(properties);
  const declared = (schema.required ?? []) as string[];
  const required = declared.filter((name) => !("default" in (properties[name] as object)));
  return { ...schema, required } as TObject<P>;
}

export const SlugParams = Type.Object({
  slug: Type.String({
    maxLength: 200,
    description: "Our slug (`btc-updown-5m-1784851200`) or Polymarket's alias of an hourly or daily market",
  }),
});

export const TimeParam = (description: string) =>
  Type.String({ maxLength: 40, description: `${description}: ISO 8601, or epoch milliseconds` });

export const Limit = (maximum: number, defaultValue: number) =>
  Type.Integer({ minimum: 1, maximum, default: defaultValue });

export const Offset = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 });

export const Order = Type.Enum(["desc", "asc"], { default: "desc" });

export const IncludeOrderbook = Type.Boolean({
  default: false,
  description: "Include orderbook_up and orderbook_down (best first) on every snapshot",
});

/** `{data, total, limit, offset}`: a page of a series. */
export const PageOf = (item: TSchema) =>
  Type.Object(
    {
      data: Type.Array(item),
      total: Type.Integer({ description: "Records in the range; page until offset reaches it" }),
      limit: Type.Integer(),
      offset: Type.Integer(),
    },
    { additionalProperties: false },
  );
