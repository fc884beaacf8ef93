import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/**
 * Headers every answer carries and the CORS policy (docs/api.md, "Browsers and CORS"). The API is
 * read-only and authenticated by a key in a header, never by cookies, so any origin may call it: a
 * page learns nothing the key's holder could not fetch anyway. `*` is only ever sent without
 * credentials, and it does not vary with the request, so caches need no `Vary: Origin`.
 */

/** On every answer, errors and raw parser-level answers included. */
export const ALWAYS_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
};

/** What a browser lets a page read, beyond the CORS-safelisted headers. */
const EXPOSED_HEADERS = [
  "X-Request-Id",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "X-Tier",
  "RateLimit-Policy",
  "RateLimit",
  "Retry-After",
  "ETag",
  "Content-Disposition",
];

/** On every answer a page may read: everything but /metrics (see corsApplies). */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": EXPOSED_HEADERS.join(", "),
};

/** The methods a page may use on the API; POST is for the backtest routes. */
const ALLOWED_METHODS = "GET, HEAD, POST, OPTIONS";

/**
 * Request headers a page may send (If-None-Match to revalidate a page by its ETag; MCP-Protocol-Version,
 * which MCP clients send to /mcp after initialization).
 */
const ALLOWED_HEADERS =
  "X-API-Key, Authorization, X-Request-Id, Content-Type, Idempotency-Key, If-None-Match, MCP-Protocol-Version";

/** Seconds a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE = "86400";

/**
 * /metrics answers callers on this machine without a token; a page from any origin open in a browser
 * on that machine could read it if it carried CORS headers, so it never does. Judged by the route the
 * router matched, which it found from the decoded path: `/%6detrics` is /metrics too (issue 21).
 */
function corsApplies(req: FastifyRequest): boolean {
  return routeOf(req) !== "/metrics";
}

/**
 * The route a request reached as the router saw it: the matched route's pattern, or for a path no
 * route serves, the path decoded. Judging a request by its raw `url` instead lets `/%6detrics` pass
 * for another path than the one it is served as.
 */
export function routeOf(req: FastifyRequest): string {
  if (req.routeOptions.url !== undefined) return req.routeOptions.url;
  const path = req.url.split("?")[0];
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * The request id, the server's own headers and the CORS policy on every answer; OPTIONS answered here,
 * without a key. `allowedOf` gives the methods a path answers (none for a path nothing serves).
 */
export function corsAndSafeHeaders(app: FastifyInstance, allowedOf: (path: string) => string[]): void {
  // A callback hook, not an async one: every request passes it, and all but OPTIONS go on at once,
  // without a promise and a microtask for it. An OPTIONS is answered here and does not go on.
  app.addHook("onRequest", (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header("x-request-id", req.id);
    reply.headers(ALWAYS_HEADERS);
    const cors = corsApplies(req);
    if (cors) reply.headers(CORS_HEADERS);
    if (req.method !== "OPTIONS") return done();
    // A preflight (and any OPTIONS): answered before authentication, so it needs no key and counts nothing.
    const allowed = allowedOf(req.url.split("?")[0]);
    if (allowed.length > 0) reply.header("allow", allowed.join(", "));
    if (cors && req.headers["access-control-request-method"] !== undefined) {
      reply.headers({
        "access-control-allow-methods": ALLOWED_METHODS,
        "access-control-allow-headers": ALLOWED_HEADERS,
        "access-control-max-age": PREFLIGHT_MAX_AGE,
      });
    }
    reply.code(204).send();
  });
}
