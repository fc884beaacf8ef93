/** The one map of error codes to HTTP statuses (DESIGN 3.1). */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  TIER_ACCESS_DENIED: 403,
  /** The backtest-ai routes' TIER_ACCESS_DENIED, in PolyHistorical's words (DESIGN 3.7). */
  BACKTEST_AI_REQUIRED: 403,
  RESOURCE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  GENERATION_FAILED: 422,
  RATE_LIMIT_EXCEEDED: 429,
  QUOTA_EXCEEDED: 429,
  /** The backtest-ai routes' exhausted monthly quota, in PolyHistorical's words (DESIGN 3.7). */
  BACKTEST_AI_QUOTA_EXCEEDED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** An error meant for the client: its code, message and details are sent as they are. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string>;
  constructor(
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const validationError = (message: string, details?: Record<string, unknown>) =>
  new ApiError("VALIDATION_ERROR", message, details);

export const notFound = (message: string) => new ApiError("RESOURCE_NOT_FOUND", message);

/** A request that is not well-formed HTTP, or not one this API reads (a body on GET). */
export const badRequest = (message: string, details?: Record<string, unknown>) =>
  new ApiError("BAD_REQUEST", message, details);

/** One answer for a missing, unknown or revoked key, so that a caller learns nothing from it. */
export const unauthorized = () =>
  new ApiError("UNAUTHORIZED", "A valid API key is required in the X-API-Key header.");

export interface ErrorEnvelope {
  success: false;
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
  request_id: string;
  timestamp: string;
}

export function errorEnvelope(err: ApiError, requestId: string, timestamp: string): ErrorEnvelope {
  const error: ErrorEnvelope["error"] = { code: err.code, message: err.message };
  if (err.details !== undefined) error.details = err.details;
  return { success: false, error, request_id: requestId, timestamp };
}

/** Seconds a client is asked to wait when a backing store is unreachable. */
const STORE_RETRY_AFTER_SECONDS = 5;

export const storeUnavailable = () =>
  new ApiError(
    "SERVICE_UNAVAILABLE",
    "The service cannot reach its database right now; retry shortly.",
    { retry_after: STORE_RETRY_AFTER_SECONDS },
    { "retry-after": String(STORE_RETRY_AFTER_SECONDS) },
  );

export const tierAccessDenied = (message: string, requiredPlan: string | null) =>
  new ApiError("TIER_ACCESS_DENIED", message, { required_plan: requiredPlan });

/** Whole seconds until `resetAt` (Unix seconds), at least 1: what Retry-After carries. */
export function secondsUntil(resetAt: number, nowMs: number): number {
  return Math.max(1, Math.ceil(resetAt - nowMs / 1000));
}
