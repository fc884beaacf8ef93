import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { encodeBooks } from "../../src/wire/book-codec.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { HAND_MARKET } from "../helpers/app.ts";
import { ControlledLimiter, serveTestApp, type ServedApp } from "../helpers/client.ts";

/**
 * The Python client's tests run in a python3 process against a test app served on a loopback port.
 * What a Python test cannot do over the API it asks of this process through a small control server
 * (UPDOWN_CONTROL_URL): count the requests the app received, advance the app's clock (the injected
 * sleep of a retry calls it, so a 429's Retry-After is waited out on the app's clock, not the wall's),
 * create keys with tiny limits, break the limiter (503, 500), and drop the answer of the next POST
 * after the app has handled it (the connection is cut where the answer would be written).
 */

export const ROOT = resolve(import.meta.dirname, "..", "..");
export const PYTHON_DIR = join(ROOT, "python");

/** Debian's python3 (the one CI installs with python3-pandas), else the first python3 on PATH. */
export const PYTHON =
  process.env.UPDOWN_PYTHON ?? (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");

/** Null when python3 with pandas runs, else why not. */
export function pythonMissing(): string | null {
  const probe = spawnSync(PYTHON, ["-c", "import sys, pandas; assert sys.version_info >= (3, 9)"], {
    encoding: "utf8",
  });
  if (probe.error) return `${PYTHON}: ${probe.error.message}`;
  if (probe.status !== 0) return `${PYTHON} without pandas (or older than 3.9): ${probe.stderr.trim()}`;
  return null;
}

/** 2026-07-23T22:00:00Z: a resolved 1h market two hours before the test clock. */
const LONG_START = 1784844000;

/** A resolved hour recorded every second (3600 snapshots, every tenth with books): a long market. */
export async function insertLongMarket(
  store: Store,
  start = LONG_START,
  seconds = 3600,
  every = 10,
): Promise<string> {
  const type = seconds > 3600 ? "24h" : "1h";
  const slug = `btc-updown-${type}-${start}`;
  const m = await store.markets.upsertMarket({
    ...HAND_MARKET,
    slug,
    coin: "btc",
    marketType: type,
    marketId: String(4_000_000 + (start % 100_000)),
    conditionId: `0x${(start % 256).toString(16).padStart(2, "0").repeat(32)}`,
    startTime: start,
    endTime: start + seconds,
    resolvedAt: start + seconds + 20,
  });
  const book = (mid: number) => ({
    bids: Array.from({ length: 10 }, (_, i) => ({
      price: Math.round((mid - 0.01 * (i + 1)) * 100) / 100,
      size: 10 + i,
    })),
    asks: Array.from({ length: 10 }, (_, i) => ({
      price: Math.round((mid + 0.01 * (i + 1)) * 100) / 100,
      size: 4 + i,
    })),
  });
  for (let from = 0; from < seconds; from += 3600) {
    const rows = Array.from({ length: Math.min(3600, seconds - from) }, (_, j) => {
      const i = from + j;
      const up = 0.5 + (i % 40) / 100;
      return {
        time: (start + i) * 1e6 + 250_000,
        coinPrice: 65_000 + i / 10,
        priceUp: up,
        priceDown: Math.round((1 - up) * 100) / 100,
        books: i % every === 0 ? encodeBooks(book(0.5), book(0.5)) : null,
      };
    });
    await store.markets.insertSnapshots(m.key, rows);
  }
  return slug;
}

export interface PythonHarness {
  served: ServedApp;
  limiter: ControlledLimiter;
  controlUrl: string;
  /** The environment a python3 process needs to reach the app and the control server. */
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = "";
  for await (const chunk of req) text += String(chunk);
  return text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
}

/** The app (demo data with exchange series, plus a long resolved market) and the control server. */
export async function startPythonHarness(
  extra: (s: ServedApp) => Promise<NodeJS.ProcessEnv> = async () => ({}),
): Promise<PythonHarness> {
  const limiter = new ControlledLimiter();
  const served = await serveTestApp({ exchange: true, limiter });
  const longSlug = await insertLongMarket(served.t.store);
  let dropNextPost = false;
  let held: (() => void) | null = null;
  served.t.app.server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (!dropNextPost || req.method !== "POST" || !req.url?.startsWith("/v1")) return;
    dropNextPost = false;
    // The app handles the request to the end; its answer never leaves: the connection is cut instead.
    res.end = (() => {
      req.socket.destroy();
      return res;
    }) as typeof res.end;
  });
  const control: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://control");
      const body = req.method === "POST" ? await bodyOf(req) : {};
      switch (url.pathname) {
        case "/seen": {
          const since = Number(url.searchParams.get("since") ?? 0);
          return json(res, 200, { count: served.seen.length, requests: served.seen.slice(since) });
        }
        case "/advance":
          served.t.clock.advance(Math.round(Number(body.seconds) * 1e6));
          return json(res, 200, { now_us: served.t.clock.nowMicros() });
        case "/now":
          return json(res, 200, { now_us: served.t.clock.nowMicros() });
        case "/key": {
          const plan = String(body.plan ?? "pro") as "starter" | "pro" | "enterprise";
          if (body.per_minute_limit === undefined && body.per_day_limit === undefined)
            return json(res, 200, { key: await served.t.keyFor(plan) });
          const { key } = await served.t.keys.create({
            plan,
            account: `python-${served.seen.length}-${Math.random()}`,
            perMinuteLimit: (body.per_minute_limit as number | undefined) ?? null,
            perDayLimit: (body.per_day_limit as number | undefined) ?? null,
          });
          return json(res, 200, { key });
        }
        case "/limiter":
          limiter.failure = (body.failure as ControlledLimiter["failure"]) ?? null;
          return json(res, 200, { failure: limiter.failure });
        case "/hold":
          held = limiter.hold().release;
          return json(res, 200, { held: true });
        case "/release":
          held?.();
          held = null;
          return json(res, 200, { held: false });
        case "/drop-next-post":
          dropNextPost = true;
          return json(res, 200, { armed: true });
        default:
          return json(res, 404, { error: "unknown control" });
      }
    })().catch((err: unknown) => json(res, 500, { error: String(err) }));
  });
  await new Promise<void>((done) => control.listen(0, "127.0.0.1", done));
  const controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}`;
  // An enterprise key without limits: the app's clock stands still, so a per-minute window of a
  // pro key (300) would never reset under the hundreds of requests of the suite.
  const { key } = await served.t.keys.create({ plan: "enterprise", account: "python-tests" });
  const env: NodeJS.ProcessEnv = {
    UPDOWN_BASE_URL: served.baseUrl,
    UPDOWN_API_KEY: key,
    UPDOWN_CONTROL_URL: controlUrl,
    UPDOWN_LONG_SLUG: longSlug,
    PYTHONPATH: PYTHON_DIR,
    PYTHONDONTWRITEBYTECODE: "1",
    ...(await extra(served)),
  };
  return {
    served,
    limiter,
    controlUrl,
    env,
    close: async () => {
      held?.();
      control.closeAllConnections();
      await new Promise<void>((done) => control.close(() => done()));
      await served.close();
    },
  };
}

/** Runs python3 with `args` in python/ and the harness's environment; its exit code and output. */
export function runPython(
  h: PythonHarness,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 300_000,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(PYTHON, args, {
    cwd: PYTHON_DIR,
    env: { ...process.env, ...h.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  // UPDOWN_PYTHON_ECHO=1 shows the Python output as it comes (to see where a run stands).
  const echo = process.env.UPDOWN_PYTHON_ECHO === "1";
  const collect = (c: Buffer) => {
    output += c.toString();
    if (echo) process.stderr.write(c);
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  // A hung Python test ends the run (with its output so far) instead of holding it.
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return new Promise((done, fail) => {
    child.once("error", fail);
    child.once("close", () => clearTimeout(timer));
    child.once("close", (code) => done({ code, output }));
  });
}
