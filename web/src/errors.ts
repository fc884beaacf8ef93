import { UpdownError } from "./api.ts";
import { el } from "./dom.ts";
import { utc, waitText } from "./format.ts";

/**
 * Errors said plainly (DESIGN 3.9): what happened and what to do. A 401 says the key is wrong, a 403
 * names the plan that opens the thing, a 429 says when to retry (its Retry-After).
 */

function detailsOf(err: UpdownError): Record<string, unknown> {
  return typeof err.details === "object" && err.details !== null
    ? (err.details as Record<string, unknown>)
    : {};
}

/** When to retry, from Retry-After: "in 26 s (at 21:05:00 UTC)". */
export function retryText(seconds: number, now = Date.now()): string {
  const at = new Date(now + seconds * 1000).toISOString();
  return `in ${waitText(seconds)} (at ${utc(at)})`;
}

function rateLimited(err: UpdownError): string {
  const d = detailsOf(err);
  const when = err.retryAfterSeconds === null ? "later" : retryText(err.retryAfterSeconds);
  if (err.code === "QUOTA_EXCEEDED" || err.code === "BACKTEST_AI_QUOTA_EXCEEDED") {
    const resets = typeof d.resets_at === "string" ? ` They renew ${utc(d.resets_at)}.` : "";
    return `This month's backtest generations are used up (${String(d.used ?? "?")} of ${String(d.limit ?? "?")}).${resets} Retry ${when}, or run a definition (it spends none).`;
  }
  if (d.reason === "runs_in_flight") {
    const whose = d.scope === "account" ? "this key's account" : "this key";
    return `Too many backtests of ${whose} are queued or running. Retry ${when}.`;
  }
  const window = typeof d.window === "string" ? ` (the ${d.window} window is full)` : "";
  return `Too many requests${window}. Retry ${when}.`;
}

/** What the page says for a failed call. */
export function describeError(err: unknown): string {
  if (!(err instanceof UpdownError))
    return `Something went wrong: ${err instanceof Error ? err.message : String(err)}`;
  const d = detailsOf(err);
  const id = err.requestId ? ` (request ${err.requestId})` : "";
  switch (err.code) {
    case "UNAUTHORIZED":
      return "The key was refused (401): it is wrong, unknown or revoked. Check the key field.";
    case "TIER_ACCESS_DENIED":
    case "BACKTEST_AI_REQUIRED": {
      const plan = typeof d.required_plan === "string" ? d.required_plan : "a higher";
      return `Your plan does not open this (403): it needs the ${plan} plan. ${err.message}`;
    }
    case "RATE_LIMIT_EXCEEDED":
    case "QUOTA_EXCEEDED":
    case "BACKTEST_AI_QUOTA_EXCEEDED":
      return rateLimited(err);
    case "VALIDATION_ERROR": {
      const where = typeof d.pointer === "string" ? ` at ${d.pointer}` : "";
      return `The request was refused (400)${where}: ${err.message}`;
    }
    case "NETWORK":
    case "TIMEOUT":
      return `The server could not be reached (${err.code.toLowerCase()}): ${err.message}`;
    default:
      return `${err.message}${err.status ? ` (${err.status} ${err.code})` : ""}${id}`;
  }
}

/** An alert element for an error (role=alert: read out when it appears). */
export function errorBox(err: unknown): HTMLElement {
  return el("p", { class: "error", role: "alert" }, describeError(err));
}
