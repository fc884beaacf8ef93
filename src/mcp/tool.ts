import type { McpServer, ToolCallback } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import { type UpdownClient, UpdownError } from "../../client/src/index.ts";

/**
 * One MCP tool: its name, what it tells a model (including what it costs), its input and answer
 * schemas, and its work over an UpdownClient. The same definitions serve both transports: `updown
 * mcp` over stdio (the client over real fetch) and `/mcp` in the server (the client through the app
 * itself, with the caller's key).
 */
export interface ToolSpec<Shape extends z.ZodRawShape, Out extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  /** False for a tool that stores something or spends quota (run_backtest). */
  readOnly: boolean;
  input: Shape;
  output: Out;
  run(
    client: UpdownClient,
    args: z.infer<z.ZodObject<Shape>>,
    signal: AbortSignal,
  ): Promise<{ structured: z.infer<Out>; text: string }>;
}

/** A tool ready to be put on a server; its types stay inside (the list of tools mixes shapes). */
export interface Tool {
  readonly name: string;
  register(server: McpServer, client: UpdownClient): void;
}

/** A failure that is the caller's to fix (a missing argument), answered as a tool error. */
export class ToolInputError extends Error {}

function requiredPlanOf(details: unknown): string | null {
  const plan = (details as { required_plan?: unknown } | undefined)?.required_plan;
  return typeof plan === "string" ? plan : null;
}

/** What a model reads of a failure: the service's code and message, and what to do next where known. */
export function errorText(err: unknown): string {
  if (err instanceof ToolInputError) return err.message;
  if (!(err instanceof UpdownError)) return `Failed: ${err instanceof Error ? err.message : String(err)}`;
  const status = err.status === null ? "" : ` (HTTP ${err.status})`;
  const parts = [`${err.code}${status}: ${err.message}`];
  const plan = requiredPlanOf(err.details);
  const planRefusal = err.code === "TIER_ACCESS_DENIED" || err.code === "BACKTEST_AI_REQUIRED";
  if (planRefusal && plan !== null) parts.push(`Required plan: ${plan}.`);
  if (err.retryAfterSeconds !== null) parts.push(`Retry after ${err.retryAfterSeconds} s.`);
  if (err.requestId !== null) parts.push(`Request id: ${err.requestId}.`);
  return parts.join(" ");
}

function toolError(err: unknown): CallToolResult {
  return { isError: true, content: [{ type: "text", text: errorText(err) }] };
}

/** A tool from its spec: API errors become tool errors (`isError`) naming the service's code, never a crash. */
export function defineTool<Shape extends z.ZodRawShape, Out extends z.ZodObject>(
  spec: ToolSpec<Shape, Out>,
): Tool {
  return {
    name: spec.name,
    register(server, client) {
      const callback = async (args: z.infer<z.ZodObject<Shape>>, extra: { signal: AbortSignal }) => {
        try {
          const answer = await spec.run(client, args, extra.signal);
          return {
            structuredContent: answer.structured as Record<string, unknown>,
            content: [{ type: "text" as const, text: answer.text }],
          };
        } catch (err) {
          return toolError(err);
        }
      };
      server.registerTool(
        spec.name,
        {
          title: spec.title,
          description: spec.description,
          inputSchema: spec.input,
          outputSchema: spec.output,
          annotations: { readOnlyHint: spec.readOnly, openWorldHint: false },
        },
        // The SDK hands the callback the arguments parsed by `input`; its callback type is a conditional
        // type over the shape, which TypeScript cannot resolve for a generic one, hence the cast.
        callback as unknown as ToolCallback<Shape>,
      );
    },
  };
}
