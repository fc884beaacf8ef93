import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import type { AddressInfo } from "node:net";
import { loadPlans } from "../../../src/access/plans.ts";
import { seedDemo } from "../../../src/demo/seed.ts";
import { ANCHOR, makeTestApp, type TestApp } from "../../helpers/app.ts";
import { BIN, type ServeProcess, startServeProcess } from "../../helpers/serve.ts";

// Bulk exports with bounded memory (issue 21): a real `updown serve`, 40 clients that ask for a bulk
// export with books in brotli and then stop reading (their sockets paused, as a reader of a byte a
// second is), the server's resident memory read from /proc/PID/status.

const run = promisify(execFile);

const READERS = 40;
const EXPORT = "/v1/snapshots/export?coin=btc&market_type=4h&include_orderbook=true";

/** A field of /proc/PID/status in MB (VmRSS: resident now; VmHWM: the peak since the start). */
function procMb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  assert.ok(m, `no ${field} in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

/** The process's CPU time so far, in clock ticks (user + system, /proc/PID/stat fields 14 and 15). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * Resolves once the server has stopped working: its CPU time unchanged across consecutive looks. Every
 * export is then waiting on a reader that does not read (the event this waits for is the server idle).
 */
async function serverIdle(pid: number): Promise<boolean> {
  let last = cpuTicks(pid);
  let still = 0;
  for (let i = 0; i < 60 && still < 3; i++) {
    await sleep(250);
    const now = cpuTicks(pid);
    still = now === last ? still + 1 : 0;
    last = now;
  }
  return still === 3;
}

/**
 * A full garbage collection in the server, asked for through its inspector (opened by SIGUSR1 on the
 * port NODE_OPTIONS=--inspect-port=0 lets the system choose, which the process prints on stderr).
 */
async function fullGc(server: ServeProcess): Promise<void> {
  server.child.kill("SIGUSR1");
  let url: string | undefined;
  for (let i = 0; i < 200 && url === undefined; i++) {
    url = /Debugger listening on (ws:\/\/\S+)/.exec(server.output())?.[1];
    if (url === undefined) await sleep(25);
  }
  assert.ok(url, "the server's inspector did not open");
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve);
    ws.addEventListener("error", reject);
  });
  const answered = new Promise((resolve) => ws.addEventListener("message", resolve));
  ws.send(JSON.stringify({ id: 1, method: "HeapProfiler.collectGarbage" }));
  await answered;
  ws.close();
}

/**
 * Resolves once the server has given back the closed readers' slots: a HEAD costs nothing to ask, but
 * a GET beyond the cap is refused, so an empty CSV range is asked for until it is served.
 */
async function waitForSlotsFree(server: ServeProcess, key: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const res = await fetch(
      `${server.url}${EXPORT}&format=csv&start_time=2020-01-01T00:00:00Z&end_time=2020-01-01T00:00:01Z`,
      {
        headers: { "x-api-key": key },
      },
    );
    await res.arrayBuffer();
    if (res.status === 200) return;
    assert.equal(res.status, 503);
    await sleep(25);
  }
  assert.fail("the closed readers' export slots were never given back");
}

interface Reader {
  socket: Socket;
  /** The status line and headers, once they have come. */
  head: Promise<string>;
}

/** A client that asks for the export, takes the head and the first bytes of the body, then stops reading. */
function slowReader(port: number, key: string, path = EXPORT, encoding = "br"): Reader {
  const socket = connect(port, "127.0.0.1");
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\nAccept-Encoding: ${encoding}\r\n\r\n`,
  );
  const head = new Promise<string>((resolve, reject) => {
    let got = "";
    const onData = (chunk: Buffer) => {
      got += chunk.toString("latin1");
      const end = got.indexOf("\r\n\r\n");
      if (end < 0) return;
      socket.off("data", onData);
      socket.pause();
      resolve(got.slice(0, end));
    };
    socket.on("data", onData);
    socket.once("error", reject);
    socket.once("close", () => reject(new Error(`closed before the head: ${got}`)));
  });
  head.catch(() => {});
  return { socket, head };
}

describe("40 slow brotli readers of a bulk export (a real serve process)", { timeout: 240_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "updown-export-"));
  const env = {
    DATABASE_URL: `sqlite:${join(dir, "db.sqlite")}`,
    LOG_LEVEL: "warn",
    // Room for the 40 readers of one key and more; the 41st export is beyond the process's cap.
    EXPORTS_PER_KEY: String(READERS + 1),
    EXPORTS_PER_PROCESS: String(READERS),
    // The test asks the server for a full collection through its inspector (fullGc).
    NODE_OPTIONS: "--inspect-port=0",
  };
  let server: ServeProcess;
  let key: string;
  const updown = async (...args: string[]) =>
    (await run(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } })).stdout.trim();

  before(async () => {
    // Six 4h markets with books: 73,235 snapshots, 160 MB of NDJSON; pages of thousands of rows.
    await updown(
      "seed",
      "--counts",
      "5m=0,15m=0,1h=0,4h=6,24h=0",
      "--coins",
      "btc",
      "--anchor",
      "2026-07-24T00:20:34Z",
    );
    key = await updown("keys", "create", "--plan", "pro");
    server = await startServeProcess(env);
  });

  after(async () => {
    if (server && server.child.exitCode === null) {
      const exited = new Promise((resolve) => server.child.once("exit", resolve));
      server.child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test("raise the server's RSS by less than 200 MB, which falls back once they close; the 41st is refused", async () => {
    const pid = server.child.pid as number;
    // One whole export first, read at full speed, so that the baseline has every code path loaded.
    const warm = await fetch(`${server.url}${EXPORT}`, {
      headers: { "x-api-key": key, "accept-encoding": "br" },
    });
    assert.equal(warm.status, 200);
    await warm.arrayBuffer();
    await serverIdle(pid);
    const baseline = procMb(pid, "VmRSS");
    const peakBefore = procMb(pid, "VmHWM");

    const readers = Array.from({ length: READERS }, () => slowReader(server.port, key));
    const heads = await Promise.all(readers.map((r) => r.head));
    for (const h of heads) assert.match(h, /^HTTP\/1\.1 200 /);
    for (const h of heads) assert.match(h, /\r\ncontent-encoding: br\r\n/i);
    await serverIdle(pid);
    const held = procMb(pid, "VmRSS");
    // The peak since the start, when the readers set it (the warm-up's otherwise, which says nothing).
    const peak = procMb(pid, "VmHWM") > peakBefore ? procMb(pid, "VmHWM") : held;

    // Beyond the process's cap: 503 with Retry-After, in the error envelope, while the 40 are open.
    const beyond = await fetch(`${server.url}${EXPORT}`, { headers: { "x-api-key": key } });
    const beyondBody = beyond.status === 503 ? await beyond.text() : "";
    if (beyond.status !== 503) await beyond.body?.cancel();

    for (const r of readers) r.socket.destroy();
    // What the exports held is garbage once they have ended: the next full collection gives it back.
    // V8 runs one when it sees fit (its memory reducer, or the next allocations); the test asks for one.
    await waitForSlotsFree(server, key);
    const closed = procMb(pid, "VmRSS");
    await fullGc(server);
    const collected = procMb(pid, "VmRSS");
    const figures =
      `baseline ${baseline.toFixed(0)} MB, with ${READERS} readers ${held.toFixed(0)} MB ` +
      `(peak ${peak.toFixed(0)} MB, raise ${(held - baseline).toFixed(0)} MB), ` +
      `once they closed ${closed.toFixed(0)} MB, after a full GC ${collected.toFixed(0)} MB`;
    console.log(`# export memory: ${figures}`);
    assert.ok(held - baseline < 200, figures);
    assert.ok(peak - baseline < 200, figures);

    assert.equal(beyond.status, 503, beyondBody);
    assert.ok(Number(beyond.headers.get("retry-after")) >= 1);
    const error = JSON.parse(beyondBody).error;
    assert.equal(error.code, "SERVICE_UNAVAILABLE");
    assert.deepEqual([error.details.reason, error.details.limit], ["exports_in_flight", READERS]);

    assert.ok(collected - baseline <= 50, figures);
  });
});

describe("the caps on exports streaming at once (EXPORTS_PER_KEY, EXPORTS_PER_PROCESS)", () => {
  let t: TestApp;
  let port: number;
  const readers: Reader[] = [];
  // Six btc 4h markets with books, uncompressed: 160 MB, far more than the sockets between can hold.
  const BIG = "/v1/snapshots/export?coin=btc&market_type=4h&include_orderbook=true";
  before(async () => {
    t = await makeTestApp({ seed: false, config: { exports: { perKey: 2, perProcess: 3 } } });
    await seedDemo(t.store, {
      seed: 1,
      anchor: ANCHOR,
      counts: { "5m": 3, "15m": 0, "1h": 0, "4h": 6, "24h": 0 },
      coins: ["btc"],
    });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    port = (t.app.server.address() as AddressInfo).port;
  });
  after(async () => {
    for (const r of readers) r.socket.destroy();
    await t.close();
  });
  const open = async (key: string) => {
    const reader = slowReader(port, key, BIG, "identity");
    readers.push(reader);
    assert.match(await reader.head, /^HTTP\/1\.1 200 /);
    return reader;
  };
  const get = (path: string, key: string, method = "GET") =>
    t.app.inject({ method, url: path, headers: { "x-api-key": key } });

  test("a key's third is 429, the process's fourth 503, both with Retry-After; HEAD takes no slot; a closed one is given back", async () => {
    const [a, b, c] = [t.key, await t.keyFor("pro"), await t.keyFor("pro")];
    const first = await open(a);
    await open(a);

    const third = await get(BIG, a);
    assert.equal(third.statusCode, 429);
    assert.equal(third.headers["retry-after"], "10");
    assert.equal(third.json().error.code, "RATE_LIMIT_EXCEEDED");
    assert.deepEqual(
      [
        third.json().error.details.reason,
        third.json().error.details.in_flight,
        third.json().error.details.limit,
      ],
      ["exports_in_flight", 2, 2],
    );
    const single = await get("/v1/markets/btc-updown-5m-1784852100/snapshots/export", a);
    assert.equal(single.statusCode, 429, "one market's export takes a slot too");

    const head = await get(BIG, a, "HEAD");
    assert.equal(head.statusCode, 200, "HEAD reads nothing and takes no slot");
    assert.equal(head.headers["x-export-markets"], "6");

    await open(b);
    const fourth = await get(BIG, c);
    assert.equal(fourth.statusCode, 503);
    assert.equal(fourth.headers["retry-after"], "10");
    assert.equal(fourth.json().error.code, "SERVICE_UNAVAILABLE");
    assert.deepEqual(
      [fourth.json().error.details.reason, fourth.json().error.details.limit],
      ["exports_in_flight", 3],
    );

    // The reader goes away: its export ends, and its slot is the key's again (an event on the server's
    // side of the socket, so asked until it has come).
    first.socket.destroy();
    let again = await get("/v1/markets/btc-updown-5m-1784852100/snapshots/export", a);
    for (let i = 0; i < 400 && again.statusCode !== 200; i++) {
      await sleep(10);
      again = await get("/v1/markets/btc-updown-5m-1784852100/snapshots/export", a);
    }
    assert.equal(again.statusCode, 200);
    // Sequential exports never meet the cap: each gives its slot back as it ends.
    for (let i = 0; i < 5; i++) {
      assert.equal((await get("/v1/snapshots/export?coin=btc&market_type=5m&format=csv", c)).statusCode, 200);
    }
  });
});

describe("HEAD on a bulk export", () => {
  test("costs one request, not the markets it covers; the headers are the GET's", async () => {
    const plans = loadPlans();
    const tight = await makeTestApp({
      plans: { ...plans, starter: { ...plans.starter, requestsPerDay: 4 } },
    });
    try {
      const key = await tight.keyFor("starter");
      const as = { "x-api-key": key };
      const usedToday = async () => (await tight.get("/v1/account", as)).json().usage.day.used as number;
      const url = "/v1/snapshots/export?coin=btc&market_type=5m&format=csv";
      const head = await tight.app.inject({
        method: "HEAD",
        url,
        headers: { ...as, "accept-encoding": "br" },
      });
      assert.equal(head.statusCode, 200);
      assert.equal(head.body, "");
      assert.equal(head.headers["x-export-markets"], "3");
      assert.equal(head.headers["content-type"], "text/csv; charset=utf-8");
      assert.equal(head.headers["content-encoding"], "br");
      assert.equal(head.headers["x-ratelimit-remaining"], "3");
      assert.equal(await usedToday(), 1);
      // The GET then costs its three markets, and fits in the three left.
      const get = await tight.get(url, as);
      assert.equal(get.statusCode, 200);
      assert.equal(get.headers["x-export-markets"], "3");
      assert.equal(await usedToday(), 4);
    } finally {
      await tight.close();
    }
  });
});
