import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { makeTestApp } from "../helpers/app.ts";
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
/**
 * How long each phase times requests, and how many rounds of an idle and a flooded phase. Short
 * phases, many rounds: the suite's other files load the machine in bursts of seconds, and the finer
 * the two kinds of phase interleave, the more evenly a burst falls on both (with 500 ms phases, one
 * CI run of six at a time measured an idle p99 of 34 ms and a flooded one of 76).
 */
const PHASE_MS = 250;
const ROUNDS = 16;

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

describe("a keyless flood, with real processes", () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "updown-flood-"));
    const databaseUrl = `sqlite:${join(dir, "flood.db")}`;
    updown(["seed", "--coins", "btc", "--counts", "5m=20,15m=5,1h=2,4h=0,24h=0"], databaseUrl);
    key = updown(["keys", "create", "--plan", "pro"], databaseUrl).trim();
    // The timed route is capped per key too; the cap is not what is measured here.
    server = await startServeProcess({
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: "warn",
      REDIS_URL: "",
      UNCOUNTED_REQUESTS_PER_MINUTE: "1000000",
    });
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

  interface Latencies {
    samples: number;
    p50: number;
    p99: number;
  }

  /** GET /v1/account one after another for `ms` (at least 20 of them): each one's milliseconds. */
  async function timings(ms: number): Promise<number[]> {
    const times: number[] = [];
    const start = performance.now();
    while (times.length < 20 || performance.now() - start < ms) times.push(await timedAccount());
    return times;
  }

  /** The server process's user and system CPU time so far, in ms (0 where /proc is not there). */
  function serverCpuMs(): number {
    try {
      const stat = readFileSync(`/proc/${server.child.pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // utime and stime, fields 14 and 15 of the line, in clock ticks of 10 ms.
      return (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      return 0;
    }
  }

  function percentiles(times: number[]): Latencies {
    const sorted = [...times].sort((a, b) => a - b);
    const at = (q: number) => Math.round(sorted[Math.floor(sorted.length * q)] * 100) / 100;
    return { samples: sorted.length, p50: at(0.5), p99: at(0.99) };
  }

  /** Each document once in each encoding: what the server renders once is rendered before timing. */
  async function warm(): Promise<void> {
    for (const path of ["/openapi.json", "/llms.txt"]) {
      for (const encoding of ["identity", "gzip", "br", "gzip, deflate, br"]) {
        const res = await fetch(`${server.url}${path}`, { headers: { "accept-encoding": encoding } });
        await res.arrayBuffer();
      }
    }
  }

  interface Flood {
    child: ChildProcess;
    /** Turns the flood on or off, resolving once the flood process has done it. */
    turn(command: "on" | "off"): Promise<void>;
    /** Stops the process: how many it sent and the statuses it got. */
    stop(): Promise<unknown>;
  }

  async function startFlood(): Promise<Flood> {
    // At the lowest priority: the flood's own CPU is the load generator's, not the server's to pay.
    const child = spawn(
      "nice",
      [
        "-n",
        "19",
        process.execPath,
        FLOOD,
        server.url,
        String(CONNECTIONS),
        String(RATE),
        "/openapi.json,/llms.txt",
      ],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    const lines = createInterface({ input: child.stdout! });
    const next = async () => {
      const [line] = (await once(lines, "line")) as [string];
      return line;
    };
    assert.equal(await next(), "ready");
    return {
      child,
      async turn(command) {
        child.stdin!.write(`${command}\n`);
        assert.equal(await next(), command);
      },
      async stop() {
        const summary = next();
        child.kill("SIGTERM");
        return JSON.parse(await summary) as unknown;
      },
    };
  }

  test("a keyless flood of /openapi.json and /llms.txt leaves GET /v1/account's p99 within twice its idle p99", async () => {
    await warm();
    await timings(200);
    const flood = await startFlood();
    // Idle and flooded phases alternate, so that whatever else loads the machine falls on both alike.
    const idle: number[] = [];
    const flooded: number[] = [];
    // The server's CPU time in each kind of phase (Linux): what the flood costs it, beside the latency.
    const cpuMs = { idle: 0, flooded: 0 };
    let counts: unknown;
    try {
      for (let round = 0; round < ROUNDS; round++) {
        let cpu = serverCpuMs();
        idle.push(...(await timings(PHASE_MS)));
        cpuMs.idle += serverCpuMs() - cpu;
        await flood.turn("on");
        cpu = serverCpuMs();
        flooded.push(...(await timings(PHASE_MS)));
        cpuMs.flooded += serverCpuMs() - cpu;
        await flood.turn("off");
      }
    } finally {
      counts = await flood.stop();
    }
    const idleP = percentiles(idle);
    const floodedP = percentiles(flooded);
    console.log(JSON.stringify({ idle: idleP, flooded: floodedP, flood: counts, serverCpuMs: cpuMs }));
    // An idle p99 under a millisecond is noise at this scale: the bound is at least 2 ms.
    assert.ok(
      floodedP.p99 <= 2 * Math.max(idleP.p99, 1),
      `p99 under the flood ${floodedP.p99} ms, idle ${idleP.p99} ms`,
    );
  });
});

describe("the per-address limit on what needs no key", () => {
  test("KEYLESS_REQUESTS_PER_MINUTE requests a minute from an address, then 429 with Retry-After until the minute ends", async () => {
    const t = await makeTestApp({ seed: false, config: { keylessRequestsPerMinute: 5 } });
    try {
      const from = (url: string, remoteAddress: string) => t.app.inject({ url, remoteAddress });
      for (const url of ["/openapi.json", "/llms.txt", "/docs/json", "/nothing-here", "/openapi.json"]) {
        assert.notEqual((await from(url, "192.0.2.1")).statusCode, 429, url);
      }
      const refused = await from("/llms.txt", "192.0.2.1");
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.headers["retry-after"], "26");
      assert.equal(refused.headers["access-control-allow-origin"], "*");
      assert.deepEqual(refused.json().error.details, {
        window: "minute",
        reason: "keyless_requests",
        limit: 5,
        retry_after: 26,
      });
      assert.equal((await from("/docs/static/swagger-ui.css", "192.0.2.1")).statusCode, 429);
      // The probes, the API with a key, and other addresses are not touched.
      assert.equal((await from("/healthz", "192.0.2.1")).statusCode, 200);
      assert.equal((await from("/readyz", "192.0.2.1")).statusCode, 200);
      const keyed = await t.app.inject({
        url: "/v1/account",
        headers: { "x-api-key": t.key },
        remoteAddress: "192.0.2.1",
      });
      assert.equal(keyed.statusCode, 200);
      assert.equal((await from("/openapi.json", "192.0.2.2")).statusCode, 200);
      // A preflight is answered before any limit.
      const preflight = await t.app.inject({
        method: "OPTIONS",
        url: "/openapi.json",
        headers: { origin: "https://a.example", "access-control-request-method": "GET" },
        remoteAddress: "192.0.2.1",
      });
      assert.equal(preflight.statusCode, 204);
      t.clock.advance(26e6);
      assert.equal((await from("/openapi.json", "192.0.2.1")).statusCode, 200);
    } finally {
      await t.close();
    }
  });
});
