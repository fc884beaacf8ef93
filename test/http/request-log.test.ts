import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { startServeProcess } from "../helpers/serve.ts";

// The server logs through an asynchronous destination that holds lines in memory (4 KiB or more at a
// time): a real process, stopped with SIGTERM right after its last answer, must still write every line.

test("every request leaves one log line, none lost when SIGTERM stops the server", async () => {
  const dir = mkdtempSync(join(os.tmpdir(), "updown-log-"));
  try {
    const server = await startServeProcess({
      DATABASE_URL: `sqlite:${join(dir, "log.db")}`,
      LOG_LEVEL: "info",
    });
    let stdout = "";
    server.child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    const N = 137;
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      const id = `log-test-${i}`;
      ids.push(id);
      const path = i % 3 === 0 ? "/v1/markets" : i % 3 === 1 ? "/healthz" : "/nowhere";
      const res = await fetch(server.url + path, { headers: { "x-request-id": id } });
      await res.arrayBuffer();
    }
    const exited = once(server.child, "exit");
    server.child.kill("SIGTERM");
    const [code] = (await exited) as [number | null];
    assert.equal(code, 0);
    const lines = stdout
      .split("\n")
      .filter((l) => l.includes('"msg":"request completed"'))
      .map((l) => JSON.parse(l) as { reqId: string; statusCode: number; url: string; method: string });
    assert.equal(lines.length, N, "one line per request, the buffered ones written at SIGTERM");
    assert.deepEqual(
      lines.map((l) => l.reqId),
      ids,
    );
    assert.deepEqual(
      lines.slice(0, 3).map((l) => [l.method, l.url, l.statusCode]),
      [
        ["GET", "/v1/markets", 401],
        ["GET", "/healthz", 200],
        ["GET", "/nowhere", 404],
      ],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
