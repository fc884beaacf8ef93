import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ClientRequestSchema, ErrorCode, type JSONRPCError } from "@modelcontextprotocol/sdk/types.js";
import { UpdownClient } from "../../client/src/index.ts";
import { TOOLS } from "./tools.ts";

export { TOOLS } from "./tools.ts";

export const MCP_SERVER_NAME = "updown-history";
/** The API's version (openapi.json's info.version), which the tools speak for. */
export const MCP_SERVER_VERSION = "1.0.0";

const INSTRUCTIONS =
  "Recorded history of Polymarket's short-interval crypto Up or Down markets (BTC, ETH, SOL, ... in 5m, " +
  "15m, 1h, 4h and 24h series): list_series and list_markets to find markets, market_summary and " +
  "market_chart for one market, book_at and price_order for its order books at a moment, run_backtest " +
  "to replay a strategy. Every API read a tool makes counts against the key's limits.";

/** An MCP server whose tools answer through `client` (a key's view of the API). */
export function buildMcpServer(client: UpdownClient): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION },
    { instructions: INSTRUCTIONS },
  );
  for (const tool of TOOLS) tool.register(server, client);
  return server;
}

/**
 * The server /mcp answers with: its tools read through `fetch` (the app itself) with the caller's
 * key. No retries: a 429 or 503 goes back to the agent at once, with its Retry-After, instead of
 * holding the /mcp request open and counting again.
 */
export function inProcessMcpServer(fetch: typeof globalThis.fetch, apiKey: string | undefined): McpServer {
  const client = new UpdownClient({ baseUrl: "http://in-process", apiKey, fetch, maxRetries: 0 });
  return buildMcpServer(client);
}

/** The SDK's schema of each request a client may send, by method. */
const REQUEST_SCHEMAS = new Map<string, (typeof ClientRequestSchema.options)[number]>(
  ClientRequestSchema.options.map((schema) => [schema.shape.method.value, schema]),
);

/**
 * For a JSON-RPC request of a known method whose params break the method's schema (a tool name that is
 * not a string, arguments that are not an object): the invalid-params error (-32602) to answer it
 * with. The SDK itself answers those -32603, an internal error, as if the server had failed. Null for
 * anything else, which the SDK answers itself.
 */
export function invalidParams(message: unknown): JSONRPCError | null {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return null;
  const { id, method } = message as { id?: unknown; method?: unknown };
  if (typeof method !== "string" || (typeof id !== "string" && typeof id !== "number")) return null;
  const schema = REQUEST_SCHEMAS.get(method);
  if (schema === undefined) return null;
  const parsed = schema.safeParse(message);
  if (parsed.success) return null;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  return {
    jsonrpc: "2.0",
    id,
    error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${method}: ${problems.join("; ")}` },
  };
}

/**
 * Has `transport` (once the server is connected to it) answer a request with invalid params itself,
 * with -32602, instead of handing it to the server, which would answer -32603. Every message of a
 * batch is judged on its own.
 */
export function answerInvalidParams(transport: Transport): void {
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const invalid = invalidParams(message);
    if (invalid === null) return deliver?.(message, extra);
    transport
      .send(invalid, { relatedRequestId: invalid.id })
      .catch((err: unknown) => transport.onerror?.(err as Error));
  };
}
