import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { BIN, type ServeProcess, startServeProcess } from "../helpers/serve.ts";

/**
 * A keyless flood of the documents (issue 21, finding 1), with real processes: `updown serve`, the
 * flood (test/helpers/keyless-flood.ts, 32 keep-alive connections asking for /openapi.json and
 * /llms.txt in turn) and this test, which times GET /v1/account one request after another, idle and
 * under the flood. The flood must not move the authenticated request's p99 past twice its idle p99.
 */

const FLOOD = join(import.meta.dirname, "..", "helpers", "keyless-flood.ts");
const CONNECTIONS = 32;
/** Requests a second in all: above the 116 a second that took the server's CPU in the finding. */
const RATE = 200;
const SAMPLES = 400;

let dir: string;
let server: ServeProcess;
let key: string;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function updown(args: string[], databaseUrl: string): string {
  const res = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: "utf8",
  });
  assert.equal(res.status, 0, res.stderr);
  return res.stdout;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "updown-flood-"));
  const databaseUrl = `sqlite:${join(dir, "flood.db")}`;
  updown(["seed", "--coins", "btc", "--counts", "5m=20,15m=5,1h=2,4h=0,24h=0"], databaseUrl);
  key = updown(["keys", "create", "--plan", "pro"], databaseUrl).trim();
  server = await startServeProcess({ DATABASE_URL: databaseUrl, LOG_LEVEL: "warn", REDIS_URL: "" });
});

after(async () => {
  agent.destroy();
  server.child.kill("SIGTERM");
  await once(server.child, "exit");
  rmSync(dir, { recursive: true, force: true });
});

function timedAccount(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(`${server.url}/v1/account`, { agent, headers: { "x-api-key": key } }, (res) => {
      res.resume();
      res.on("end", () => {
        if (res.statusCode !== 200) reject(new Error(`/v1/account answered ${res.statusCode}`));
        else resolve(performance.now() - t0);
      });
    });
    req.on("error", reject);
    req.end();
  });
}

async function latencies(n: number): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) times.push(await timedAccount());
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(n * 0.5)], p99: times[Math.floor(n * 0.99)] };
}

async function startFlood(): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [FLOOD, server.url, String(CONNECTIONS), String(RATE), "/openapi.json,/llms.txt"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const [first] = (await once(child.stdout!, "data")) as [Buffer];
  assert.match(first.toString(), /flooding/);
  return child;
}

async function stopFlood(child: ChildProcess): Promise<unknown> {
  let out = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.kill("SIGTERM");
  await once(child, "exit");
  return JSON.parse(out.trim()) as unknown;
}

test("a keyless flood of /openapi.json and /llms.txt leaves GET /v1/account's p99 within twice its idle p99", async () => {
  await latencies(50); // warm: the first requests compile routes and fill caches
  const idle = await latencies(SAMPLES);
  const flood = await startFlood();
  let flooded: { p50: number; p99: number };
  try {
    await latencies(20);
    flooded = await latencies(SAMPLES);
  } finally {
    const counts = await stopFlood(flood);
    console.log(JSON.stringify({ idle, flooded: flooded!, flood: counts }));
  }
  // An idle p99 under a millisecond is noise at this scale: the bound is at least 2 ms.
  assert.ok(
    flooded.p99 <= 2 * Math.max(idle.p99, 1),
    `p99 under the flood ${flooded.p99.toFixed(1)} ms, idle ${idle.p99.toFixed(1)} ms`,
  );
});
