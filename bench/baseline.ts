/**
 * The baseline of `npm run bench`: a plain node:http server (no framework, no routing, no logging) in
 * a process of its own, answering every request with the same bytes from memory. bench/run.ts forks
 * it and sends it each scenario's bytes (as a file path, with the headers to send beside them); the
 * API server runs in bench/run.ts's process and the load generator in a third, so neither server
 * shares its event loop with the load or with the other server.
 *
 * Messages from the parent: {type: "body", id, path, headers}; replies {type: "ok", id}.
 * To the parent, once listening: {type: "ready", port}.
 */
import { readFileSync } from "node:fs";
import http from "node:http";

let body = Buffer.alloc(0);
let headers: Record<string, string> = {};

const server = http.createServer((_req, res) => {
  res.writeHead(200, { ...headers, "content-length": String(body.length) });
  res.end(body);
});
server.keepAliveTimeout = 60_000;

process.on("message", (raw) => {
  const msg = raw as { type: string; id?: number; path?: string; headers?: Record<string, string> };
  if (msg.type === "body" && msg.path) {
    body = readFileSync(msg.path);
    headers = msg.headers ?? {};
    process.send?.({ type: "ok", id: msg.id });
  } else if (msg.type === "exit") {
    server.close();
    process.exit(0);
  }
});

server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.send?.({ type: "ready", port: typeof address === "object" && address ? address.port : 0 });
});
