import type { ApiErrorCode, ErrorEnvelope } from "./types.ts";

/**
 * Codes of failures that never reached an answer from the API, or got one it could not read:
 * - `TIMEOUT`: an attempt took longer than `timeoutMs` (after the last retry);
 * - `NETWORK`: the connection failed (DNS, refused, reset, CORS refused in a browser);
 * - `ABORTED`: the caller's AbortSignal fired (the signal's reason is the error's `cause`);
 * - `UNEXPECTED_RESPONSE`: an answer that is not the API's JSON (a proxy's HTML page, a cut body).
 */
export type ClientErrorCode = "TIMEOUT" | "NETWORK" | "ABORTED" | "UNEXPECTED_RESPONSE";

export type UpdownErrorCode = ApiErrorCode | ClientErrorCode;

export interface UpdownErrorInit {
  code: UpdownErrorCode;
  message: string;
  status?: number | null;
  requestId?: string | null;
  details?: unknown;
  retryAfterSeconds?: number | null;
  cause?: unknown;
}

/**
 * Every failure of a client call. `code` is the discriminant: the server's own code (from its error
 * envelope: `VALIDATION_ERROR`, `UNAUTHORIZED`, `TIER_ACCESS_DENIED`, `RESOURCE_NOT_FOUND`,
 * `RATE_LIMIT_EXCEEDED`, `QUOTA_EXCEEDED`, `SERVICE_UNAVAILABLE`, ...) or one of the client's own.
 */
export class UpdownError extends Error {
  readonly code: UpdownErrorCode;
  /** The HTTP status, or null when no answer came. */
  readonly status: number | null;
  /** The X-Request-Id the server sent (quote it when reporting a problem), or null. */
  readonly requestId: string | null;
  /** The envelope's `details` (e.g. `parameter` and `rule` of a 400, `required_plan` of a 403). */
  readonly details?: unknown;
  /** Seconds the server asked to wait (Retry-After), or null. */
  readonly retryAfterSeconds: number | null;

  constructor(init: UpdownErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "UpdownError";
    this.code = init.code;
    this.status = init.status ?? null;
    this.requestId = init.requestId ?? null;
    if (init.details !== undefined) this.details = init.details;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
  }

  /** A 429: the minute or day window (RATE_LIMIT_EXCEEDED) or the monthly backtest quota (QUOTA_EXCEEDED). */
  get isRateLimited(): boolean {
    return this.status === 429;
  }
}

function isEnvelope(body: unknown): body is ErrorEnvelope {
  if (typeof body !== "object" || body === null) return false;
  const error = (body as { error?: unknown }).error;
  return (
    typeof error === "object" &&
    error !== null &&
    typeof (error as { code?: unknown }).code === "string" &&
    typeof (error as { message?: unknown }).message === "string"
  );
}

/** The error of a non-2xx answer, from the server's envelope when it sent one. */
export function errorFromAnswer(
  status: number,
  body: unknown,
  requestIdHeader: string | null,
  retryAfterSeconds: number | null,
): UpdownError {
  if (isEnvelope(body)) {
    return new UpdownError({
      code: body.error.code,
      message: body.error.message,
      status,
      requestId: requestIdHeader ?? body.request_id ?? null,
      details: body.error.details,
      retryAfterSeconds,
    });
  }
  return new UpdownError({
    code: "UNEXPECTED_RESPONSE",
    message: `HTTP ${status} without the API's error envelope`,
    status,
    requestId: requestIdHeader,
    details: body === undefined ? undefined : { body },
    retryAfterSeconds,
  });
}
