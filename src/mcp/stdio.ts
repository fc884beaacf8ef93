import type { Readable, Writable } from "node:stream";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { answerInvalidParams } from "./mcp-server.ts";

/**
 * The SDK's stdio transport, told when stdin has ended, that closes only once every request read
 * before then has been answered: a client that writes its last call and closes its end of the pipe
 * still gets the answer, which the tool's reads may take a while to make.
 */
class DrainingStdio implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  readonly #inner: StdioServerTransport;
  readonly #unanswered = new Set<RequestId>();
  #ended = false;

  constructor(stdin: Readable, stdout: Writable) {
    this.#inner = new StdioServerTransport(stdin, stdout);
    stdin.once("end", () => {
      this.#ended = true;
      this.#closeWhenAnswered();
    });
  }

  async start(): Promise<void> {
    this.#inner.onmessage = (message: JSONRPCMessage) => {
      if (isJSONRPCRequest(message)) this.#unanswered.add(message.id);
      this.onmessage?.(message);
    };
    this.#inner.onclose = () => this.onclose?.();
    this.#inner.onerror = (error) => this.onerror?.(error);
    await this.#inner.start();
  }

  async send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    await this.#inner.send(message);
    if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id !== undefined) {
      this.#unanswered.delete(message.id);
      this.#closeWhenAnswered();
    }
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  #closeWhenAnswered(): void {
    if (this.#ended && this.#unanswered.size === 0) void this.close();
  }
}

/** Serves `server` on this process's stdin and stdout until stdin ends and every request is answered. */
export async function serveOverStdio(server: McpServer): Promise<void> {
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = resolve;
  });
  const transport = new DrainingStdio(process.stdin, process.stdout);
  await server.connect(transport);
  answerInvalidParams(transport);
  await closed;
}
