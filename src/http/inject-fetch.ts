import type { FastifyInstance, LightMyRequestResponse } from "fastify";

/**
 * A `fetch` that answers from the app itself (`app.inject`), for the MCP tools served at /mcp: each
 * API read a tool makes goes through the whole request pipeline (authentication, counting, plan checks,
 * the route, the error envelope) with the caller's own key, exactly as the same read over HTTP would.
 */

export interface InProcessCaller {
  /** The caller's address, so that a read is throttled like the caller's own requests. */
  remoteAddress: string;
  /** The Host the caller used. */
  host: string | undefined;
  /** The /mcp request's id; reads get `<id>.1`, `<id>.2`, ... (when that fits the id's rule). */
  requestId: string;
  /** Told of every answer, in order (the /mcp answer takes the latest limit headers from it). */
  onAnswer(answer: LightMyRequestResponse): void;
}

/** Statuses whose answers have no body, which `new Response` refuses one for. */
const NO_BODY = new Set([101, 204, 205, 304]);

function headersOf(answer: LightMyRequestResponse): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
  }
  return headers;
}

export function injectFetch(app: FastifyInstance, caller: InProcessCaller): typeof fetch {
  let reads = 0;
  return async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const headers: Record<string, string> = Object.fromEntries(request.headers);
    // The answer stays in this process: compressing it would only cost time.
    delete headers["accept-encoding"];
    if (caller.host !== undefined) headers.host = caller.host;
    const readId = `${caller.requestId}.${++reads}`;
    if (headers["x-request-id"] === undefined && readId.length <= 128) headers["x-request-id"] = readId;
    const payload = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
    const answer = await app.inject({
      method: request.method as "GET" | "POST",
      url: url.pathname + url.search,
      headers,
      payload,
      remoteAddress: caller.remoteAddress,
      signal: init?.signal ?? undefined,
    });
    caller.onAnswer(answer);
    const body = NO_BODY.has(answer.statusCode) ? null : new Uint8Array(answer.rawPayload);
    return new Response(body, { status: answer.statusCode, headers: headersOf(answer) });
  };
}
