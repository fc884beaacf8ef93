import type { IncomingHttpHeaders } from "node:http";
import { ApiError } from "./errors.ts";

/**
 * Where a request presents its API key (DESIGN 3.7): `X-API-Key`, or `Authorization: Bearer <key>`,
 * the way PolyHistorical's clients send it. Both may be given when they carry the same key; two
 * different keys are refused (401, before either is looked at: it tells nothing of either key) rather
 * than one silently chosen. An Authorization header of another scheme presents no key.
 */

const BEARER_RE = /^bearer[ \t]+(\S+)[ \t]*$/i;

export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers["x-api-key"];
  const apiKey = typeof header === "string" ? header : undefined;
  const authorization = headers.authorization;
  const bearer = typeof authorization === "string" ? BEARER_RE.exec(authorization)?.[1] : undefined;
  if (apiKey !== undefined && bearer !== undefined && apiKey !== bearer) {
    throw new ApiError(
      "UNAUTHORIZED",
      "X-API-Key and Authorization: Bearer carry two different keys; send one key, in either header.",
      { reason: "two_keys" },
    );
  }
  return apiKey ?? bearer;
}
