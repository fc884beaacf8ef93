import { UpdownClient, UpdownError } from "../../../client/src/index.ts";
import { defineCommand, UsageError } from "../command.ts";
import { displayUrl, oneLine } from "../messages.ts";

const HELP = `updown mcp [--url URL]

Serves the MCP tools over stdio, for an MCP client that starts it as a process (Claude Desktop, an
IDE, an agent framework): list_series, list_markets, market_summary, market_chart, book_at,
price_order, market_events and run_backtest. Each tool reads the API of the service at UPDOWN_URL with the key in
UPDOWN_API_KEY, so every read counts against that key's limits and the key's plan decides what it
may read, as over HTTP. stdout carries only the protocol; messages go to stderr.

At start it checks the key (GET /v1/account, which counts nothing): a refused key stops it with one
line on stderr and exit status 2, before any tool is offered; a service that cannot be reached yet is
a warning, and each tool call answers an error naming it until the service answers. It stops when
its stdin closes.`;

function say(line: string): void {
  process.stderr.write(`updown mcp: ${line}\n`);
}

/** Refuses a missing or refused key at once; a service not reachable yet is only worth a warning. */
async function checkKey(url: string, apiKey: string, tools: number): Promise<void> {
  const probe = new UpdownClient({ baseUrl: url, apiKey, maxRetries: 0, timeoutMs: 10_000 });
  try {
    const account = await probe.account();
    say(`serving ${tools} tools over stdio for a ${account.plan} key at ${displayUrl(url)}`);
  } catch (err) {
    if (err instanceof UpdownError && err.code === "UNAUTHORIZED") {
      throw new UsageError(`UPDOWN_API_KEY was refused by ${displayUrl(url)}: ${err.message}`);
    }
    say(`warning: cannot check the key at ${displayUrl(url)} now (${oneLine(err)}); serving anyway`);
  }
}

export const mcpCommand = defineCommand({
  name: "mcp",
  summary: "Serve the MCP tools over stdio for an AI agent (key from UPDOWN_API_KEY)",
  help: HELP,
  options: ["serviceUrl", "apiKey"],
  run: async ({ serviceUrl, apiKey }) => {
    if (apiKey === null) {
      throw new UsageError("UPDOWN_API_KEY is required: the API key the tools read with (X-API-Key)");
    }
    // Imported here, not above: `updown --help` loads this module, not the MCP SDK.
    const [{ buildMcpServer, TOOLS }, { serveOverStdio }] = await Promise.all([
      import("../../mcp/mcp-server.ts"),
      import("../../mcp/stdio.ts"),
    ]);
    await checkKey(serviceUrl, apiKey, TOOLS.length);
    // Retries for what passes (a 503, a dropped connection); a long Retry-After (a day's limit) goes
    // back to the agent as the tool's error instead of holding the call.
    const client = new UpdownClient({ baseUrl: serviceUrl, apiKey, maxRetries: 2, retryMaxMs: 10_000 });
    await serveOverStdio(buildMcpServer(client));
  },
});
