import type { FastifyInstance, FastifyReply, FastifyRequest, LightMyRequestResponse } from "fastify";
import { presentedKey } from "../api-key-header.ts";
import { ApiError } from "../errors.ts";
import { injectFetch } from "../inject-fetch.ts";

/**
 * The MCP server over streamable HTTP at POST /mcp (stateless: a fresh server and transport per
 * request, JSON answers, no session). The route sits behind the same metering hook as /v1, so the call
 * itself needs a key and counts once; its tools read the API through the app itself with the caller's
 * key, so every read counts as the same read over HTTP would. GET (a stream of server-initiated
 * messages, which a stateless server never sends) and DELETE (sessions) are not served: 405.
 */

/** The limit headers the /mcp answer takes from the latest read its tools made. */
const LIMIT_HEADERS = [
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "x-tier",
  "ratelimit-policy",
  "ratelimit",
];

/**
 * The MCP SDK, zod and the tools, loaded on the first call to /mcp: about 250 modules that a process
 * never calling it (most test processes, a replica no agent talks to) does not pay to load at start.
 */
let mcpModules: Promise<
  [
    typeof import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    typeof import("../../mcp/mcp-server.ts"),
  ]
> | null = null;

function loadMcp() {
  mcpModules ??= Promise.all([
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("../../mcp/mcp-server.ts"),
  ]);
  return mcpModules;
}

/** Headers of the transport's answer the reply leaves to Fastify. */
const FRAMING = new Set(["content-length", "transfer-encoding", "connection"]);

/** The request as the SDK's web-standard transport reads it; the body goes separately, parsed. */
function webRequestOf(req: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || FRAMING.has(name) || name === "host") continue;
    headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  // The transport reads only the path of the URL; the request's Host is never trusted to write one.
  return new Request(new URL(req.url, "http://localhost"), { method: req.method, headers });
}

/** The transport's own refusals (a wrong Accept or Content-Type, a message that is not JSON-RPC) in the envelope. */
async function refusal(response: Response): Promise<ApiError> {
  const text = await response.text();
  let message = `The MCP transport refused the request (HTTP ${response.status}).`;
  let jsonrpcCode: unknown = null;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.message === "string") message = `MCP: ${body.error.message}`;
    jsonrpcCode = body.error?.code ?? null;
  } catch {
    // Not JSON: the status says enough.
  }
  return new ApiError("BAD_REQUEST", message, {
    in: "mcp",
    status: response.status,
    jsonrpc_code: jsonrpcCode,
  });
}

async function send(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  if (response.status >= 400 && response.status < 500) throw await refusal(response);
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    if (!FRAMING.has(name)) reply.header(name, value);
  });
  const body = await response.text();
  return reply.send(body === "" ? undefined : body);
}

function handler(root: FastifyInstance) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const [{ WebStandardStreamableHTTPServerTransport }, { answerInvalidParams, inProcessMcpServer }] =
      await loadMcp();
    const reads: { latest: LightMyRequestResponse | null } = { latest: null };
    const key = presentedKey(req.headers);
    const fetch = injectFetch(root, {
      remoteAddress: req.ip,
      host: req.headers.host,
      requestId: req.id,
      onAnswer: (answer) => {
        reads.latest = answer;
      },
    });
    const server = inProcessMcpServer(fetch, key);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    answerInvalidParams(transport);
    try {
      const response = await transport.handleRequest(webRequestOf(req), { parsedBody: req.body });
      // The counts after the call and every read it made, not only after the call itself.
      const last = reads.latest;
      if (last !== null) {
        for (const name of LIMIT_HEADERS) {
          const value = last.headers[name];
          if (value !== undefined) reply.header(name, value);
        }
      }
      return await send(reply, response);
    } finally {
      await server.close();
    }
  };
}

/**
 * Registers POST /mcp under `meter` (the metering hook of /v1) in a scope of its own. `root` is the
 * server the tools' reads are injected into.
 */
export function mcpRoutes(
  root: FastifyInstance,
  meter: (req: FastifyRequest, reply: FastifyReply) => Promise<void>,
) {
  return async (scope: FastifyInstance) => {
    scope.addHook("onRequest", meter);
    scope.post("/mcp", { schema: { hide: true } }, handler(root));
  };
}
