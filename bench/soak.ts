/**
 * BENCH_ONLY=soak: one `updown serve` (SQLite, the default configuration: LOG_LEVEL=info, a 128 MB
 * page cache, the in-process limiter) under a steady mixed load for BENCH_SOAK_SECONDS (default 180)
 * after BENCH_SOAK_WARMUP_SECONDS (default 15) of the same load. The load: markets lists, market
 * records, snapshot pages with and without books (mostly distinct pages that miss the page cache and
 * keep it full and evicting, some repeated ones that hit it, some of live markets that it never
 * holds), /at lookups, small exports, and requests answered 404 and 400, in a fixed shuffled order.
 *
 * The server's resident memory is read from /proc/<pid>/status (VmRSS, and VmHWM for the peak) when
 * idle, after the warm-up, every BENCH_SOAK_SAMPLE_SECONDS (default 10) and at the end; requests by
 * status come from the load generator and from the server's own /metrics. A report, not a test: it
 * prints FAIL lines for any 5xx, any connection error or timeout, and resident memory at the end more
 * than BENCH_SOAK_RSS_TOLERANCE (default 0.5, +50%) above what it was after the warm-up.
 * BENCH_SOAK_PAGE_CACHE_MB sets the server's PAGE_CACHE_MB, to tell the page cache's share of the
 * memory from the rest (0: no page cache).
 */
import os from "node:os";
import { join } from "node:path";
import { Rng } from "../src/demo/demo.ts";
import type { StoredMarket } from "../src/store/market-store.ts";
import type { LoadJob, LoadResult } from "./load.ts";
import {
  type BenchData,
  enterpriseKey,
  fmt,
  mb,
  type Rss,
  rssOf,
  seed,
  ServeProcess,
  serviceEnv,
  sleep,
  sqliteMarkets,
} from "./processes.ts";

interface Load {
  sendList(name: string, paths: string[]): Promise<void>;
  run(job: LoadJob): Promise<LoadResult>;
}

export interface SoakOptions {
  data: BenchData;
  coldRows: number;
  seconds: number;
  warmupSeconds: number;
  sampleSeconds: number;
  /** FAIL when resident memory at the end exceeds (1 + rssTolerance) x what it was after the warm-up. */
  rssTolerance: number;
  /** PAGE_CACHE_MB for the server (BENCH_SOAK_PAGE_CACHE_MB); unset: the default. */
  pageCacheMb?: number;
  connections: number;
  load: Load;
  tmp: string;
  log: (line: string) => void;
}

interface Sample {
  /** Seconds since the warm-up began (0: idle, before any load). */
  t: number;
  label: string;
  rss: number;
  peak: number;
  /** Of rss, anonymous memory (RssAnon: the JS heap, buffers, SQLite's cache...). */
  anon: number;
  /** Requests the server counted (all routes but /metrics) since the previous sample, per second. */
  reqPerSec: number | null;
}

export interface SoakResult {
  at: string;
  cpus: number;
  cpuModel: string | null;
  seconds: number;
  warmupSeconds: number;
  sampleSeconds: number;
  connections: number;
  config: string;
  /** Share of each kind of request in the load, in percent. */
  mix: Record<string, number>;
  distinctPaths: number;
  warmup: LoadResult;
  result: LoadResult;
  /** Responses by status as the server counted them during the measured load (from /metrics). */
  serverStatusCounts: Record<string, number>;
  /** Routes that answered 5xx (server's count), during warm-up or the measured load. */
  fiveXxByRoute: Record<string, number>;
  samples: Sample[];
  rss: {
    idle: number;
    afterWarmup: number;
    end: number;
    endIdle: number;
    maxSampled: number;
    peak: number;
    /** end / afterWarmup - 1. */
    growth: number;
    tolerance: number;
    pass: boolean;
  };
  fiveXx: number;
  connectionErrors: number;
  logBytes: number;
  errorLogLines: number;
  fail: string[];
}

interface Kind {
  name: string;
  weight: number;
  expect: number;
  make: (rng: Rng) => string;
}

function pick<T>(items: readonly T[], rng: Rng): T {
  return items[rng.int(0, items.length - 1)];
}

function isoOf(second: number): string {
  return new Date(second * 1000).toISOString().replace(".000Z", "Z");
}

/** What the load asks for, by weight; every kind has the status it must get. */
function kinds(markets: StoredMarket[], coldRows: number): Kind[] {
  const resolved = markets.filter((m) => m.winner !== null && m.snapshotCount > 0);
  const live = markets.filter((m) => m.winner === null && m.snapshotCount > 0);
  const withRows = [...resolved, ...live];
  const fiveMinute = resolved.filter((m) => m.marketType === "5m");
  const warm = resolved.filter((m) => m.coin === "btc" && m.marketType === "1h").slice(0, 2);
  const page = (m: StoredMarket, rng: Rng, books: boolean) => {
    const offset = rng.int(Math.max(0, m.snapshotCount - coldRows), m.snapshotCount - 1);
    const order = rng.next() < 0.2 ? "&order=asc" : "";
    return `/v1/markets/${m.slug}/snapshots?limit=1000&offset=${offset}${order}${books ? "&include_orderbook=true" : ""}`;
  };
  return [
    {
      name: "markets list",
      weight: 8,
      expect: 200,
      make: (rng) => {
        const filters = [
          "",
          `&coin=${pick(["btc", "eth", "sol"], rng)}`,
          `&coin=btc&market_type=${pick(["5m", "15m", "1h", "4h"], rng)}&resolved=true`,
          "&resolved=false",
        ];
        return `/v1/markets?limit=${pick([10, 50, 100], rng)}&offset=${rng.int(0, 200)}${pick(filters, rng)}`;
      },
    },
    {
      name: "market record",
      weight: 12,
      expect: 200,
      make: (rng) => `/v1/markets/${pick(markets, rng).slug}`,
    },
    { name: "page, no books", weight: 22, expect: 200, make: (rng) => page(pick(resolved, rng), rng, false) },
    { name: "page, books", weight: 8, expect: 200, make: (rng) => page(pick(resolved, rng), rng, true) },
    {
      name: "page of a live market",
      weight: 4,
      expect: 200,
      make: (rng) => page(pick(live, rng), rng, rng.next() < 0.5),
    },
    {
      name: "repeated page (cache hit)",
      weight: 8,
      expect: 200,
      make: (rng) =>
        `/v1/markets/${pick(warm, rng).slug}/snapshots?limit=1000${rng.next() < 0.5 ? "&include_orderbook=true" : ""}`,
    },
    {
      name: "at",
      weight: 12,
      expect: 200,
      make: (rng) => {
        const m = pick(withRows, rng);
        const second =
          m.startTime + rng.int(1, Math.max(1, Math.min(m.snapshotCount, m.endTime - m.startTime) - 1));
        return `/v1/markets/${m.slug}/snapshots/at?time=${isoOf(second)}${rng.next() < 0.5 ? "&include_orderbook=true" : ""}`;
      },
    },
    {
      name: "export (one 5m market)",
      weight: 2,
      expect: 200,
      make: (rng) =>
        `/v1/markets/${pick(fiveMinute, rng).slug}/snapshots/export?format=${pick(["ndjson", "csv"], rng)}`,
    },
    { name: "account", weight: 2, expect: 200, make: () => "/v1/account" },
    {
      name: "404",
      weight: 11,
      expect: 404,
      make: (rng) =>
        pick(
          [
            `/v1/markets/btc-updown-5m-${1600000000 + 300 * rng.int(0, 100_000)}`,
            `/v1/markets/eth-updown-1h-${1600000000 + 3600 * rng.int(0, 10_000)}/snapshots?limit=10`,
            "/v1/no-such-route",
          ],
          rng,
        ),
    },
    {
      name: "400",
      weight: 11,
      expect: 400,
      make: (rng) => {
        const m = pick(resolved, rng);
        return pick(
          [
            "/v1/markets?limit=1000",
            "/v1/markets?coin=doge",
            `/v1/markets/${m.slug}/snapshots?limit=0`,
            `/v1/markets/${m.slug}/snapshots?limit=1000&order=sideways`,
            `/v1/markets/${m.slug}/snapshots/at`,
            `/v1/markets/${m.slug}/snapshots/at?time=yesterday`,
          ],
          rng,
        );
      },
    },
  ];
}

/** The load's paths in a fixed random order, and one example of each kind. */
function buildMix(
  ks: Kind[],
  size: number,
  seedValue: number,
): { paths: string[]; examples: [Kind, string][] } {
  const rng = Rng.named(seedValue, "bench:soak");
  const total = ks.reduce((s, k) => s + k.weight, 0);
  const paths: string[] = [];
  for (let i = 0; i < size; i++) {
    let x = rng.next() * total;
    const k = ks.find((kind) => (x -= kind.weight) < 0) ?? ks[ks.length - 1];
    paths.push(k.make(rng));
  }
  const examples = ks.map((k): [Kind, string] => [k, k.make(Rng.named(seedValue, `bench:soak:${k.name}`))]);
  return { paths, examples };
}

interface ServerCounts {
  total: number;
  byStatus: Map<string, number>;
  fiveXxByRoute: Map<string, number>;
}

/** Requests the server counted, from /metrics (its own requests to /metrics left out). */
async function serverCounts(origin: string): Promise<ServerCounts> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const counts: ServerCounts = { total: 0, byStatus: new Map(), fiveXxByRoute: new Map() };
  for (const line of text.split("\n")) {
    if (!line.startsWith("updown_http_requests_total{")) continue;
    const route = /route="([^"]*)"/.exec(line)?.[1] ?? "";
    const status = /status="([^"]*)"/.exec(line)?.[1] ?? "";
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (route === "/metrics") continue;
    counts.total += value;
    counts.byStatus.set(status, (counts.byStatus.get(status) ?? 0) + value);
    if (status.startsWith("5"))
      counts.fiveXxByRoute.set(route, (counts.fiveXxByRoute.get(route) ?? 0) + value);
  }
  return counts;
}

function diff(a: Map<string, number>, b: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of [...b].sort()) if (v - (a.get(k) ?? 0) > 0) out[k] = v - (a.get(k) ?? 0);
  return out;
}

function statusText(counts: Record<string, number> | undefined): string {
  return Object.entries(counts ?? {})
    .map(([s, n]) => `${s}: ${fmt(n)}`)
    .join(", ");
}

export async function measureSoak(o: SoakOptions): Promise<SoakResult> {
  const { log } = o;
  const cpus = os.cpus();
  const dbPath = join(o.tmp, "soak.db");
  const url = `sqlite:${dbPath}`;
  seed(url, o.data);
  const key = enterpriseKey(url, "bench-soak");
  const markets = await sqliteMarkets(dbPath);
  const ks = kinds(markets, o.coldRows);
  const { paths, examples } = buildMix(ks, 100_000, o.data.seed);
  const totalWeight = ks.reduce((s, k) => s + k.weight, 0);
  const mix = Object.fromEntries(ks.map((k) => [k.name, Math.round((1000 * k.weight) / totalWeight) / 10]));
  await o.load.sendList("soak", paths);

  // The default configuration: only the database and the port are set (serve seeds nothing, as the
  // database has markets and a key).
  const pageCache: Record<string, string> =
    o.pageCacheMb === undefined ? {} : { PAGE_CACHE_MB: String(o.pageCacheMb) };
  const config =
    o.pageCacheMb === undefined
      ? "updown serve, DATABASE_URL=sqlite:<temp file>, everything else default (LOG_LEVEL=info, PAGE_CACHE_MB=128, no REDIS_URL)"
      : `updown serve, DATABASE_URL=sqlite:<temp file>, PAGE_CACHE_MB=${o.pageCacheMb}, everything else default (LOG_LEVEL=info, no REDIS_URL)`;
  const server = await ServeProcess.start(serviceEnv({ DATABASE_URL: url, ...pageCache }));
  const fail: string[] = [];
  try {
    log(
      `soak: ${config}; ${cpus.length} CPU cores; ${o.connections} connections, ${o.warmupSeconds}s warm-up then ${o.seconds}s, ` +
        `RSS sampled every ${o.sampleSeconds}s`,
    );
    log(
      `  mix (% of requests): ${Object.entries(mix)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`,
    );
    log(`  ${fmt(new Set(paths).size)} distinct paths in a rotation of ${fmt(paths.length)}`);
    const headers = { "x-api-key": key };
    for (const [k, path] of examples) {
      const res = await fetch(server.origin + path, { headers });
      await res.arrayBuffer();
      if (res.status !== k.expect) {
        const line = `WARNING: mix: ${k.name} (${path}) answered ${res.status}, expected ${k.expect}`;
        log(`  ${line}`);
        fail.push(line);
      }
    }

    const rss = (): Rss => {
      const r = rssOf(server.pid);
      if (!r) {
        throw new Error(
          server.running
            ? `cannot read the resident memory of pid ${server.pid}`
            : `FAIL: soak: the server exited: ${server.stderr}`,
        );
      }
      return r;
    };
    const samples: Sample[] = [];
    let lastCount = await serverCounts(server.origin);
    let lastAt = performance.now();
    let loadStart = performance.now();
    const sample = async (label: string): Promise<Sample> => {
      const counts = await serverCounts(server.origin);
      const now = performance.now();
      const r = rss();
      const s: Sample = {
        t: Math.round((now - loadStart) / 100) / 10,
        label,
        rss: r.rss,
        peak: r.peak,
        anon: r.anon,
        reqPerSec: label === "idle" ? null : ((counts.total - lastCount.total) * 1000) / (now - lastAt),
      };
      lastCount = counts;
      lastAt = now;
      samples.push(s);
      log(
        `  t=${fmt(s.t, 0).padStart(4)}s  RSS ${mb(s.rss).padStart(9)} (anon ${mb(s.anon).padStart(9)})  peak ${mb(s.peak).padStart(9)}` +
          `${s.reqPerSec === null ? "" : `  ${fmt(s.reqPerSec).padStart(6)} req/s since last`}  (${label})`,
      );
      return s;
    };
    const job = (seconds: number): LoadJob => ({
      origin: server.origin,
      headers,
      seconds,
      connections: o.connections,
      list: "soak",
      countStatuses: true,
    });
    /** Runs the load for `seconds`, sampling every sampleSeconds while it runs. */
    const runSampled = async (seconds: number, label: string): Promise<LoadResult> => {
      const run = o.load.run(job(seconds));
      let done = false;
      void run.then(
        () => (done = true),
        () => (done = true),
      );
      for (;;) {
        await Promise.race([run, sleep(o.sampleSeconds * 1000)]);
        if (done) break;
        await sample(label);
      }
      return run;
    };

    const idle = await sample("idle");
    const start = lastCount;
    lastAt = loadStart = performance.now();
    const warmup = await runSampled(o.warmupSeconds, "warm-up");
    const afterWarmup = await sample("after warm-up");
    const measuredFrom = lastCount;
    const result = await runSampled(o.seconds, "load");
    const end = await sample("end of load");
    const measuredTo = lastCount;
    await sleep(5000);
    const endIdle = await sample("idle 5 s after");

    const serverStatusCounts = diff(measuredFrom.byStatus, measuredTo.byStatus);
    const fiveXxByRoute = diff(start.fiveXxByRoute, measuredTo.fiveXxByRoute);
    const loadFiveXx = [warmup, result].reduce(
      (s, r) =>
        s +
        Object.entries(r.statusCounts ?? {})
          .filter(([code]) => code.startsWith("5"))
          .reduce((a, [, n]) => a + n, 0),
      0,
    );
    const fiveXx = Math.max(
      loadFiveXx,
      Object.values(fiveXxByRoute).reduce((a, b) => a + b, 0),
    );
    const connectionErrors = warmup.errors + warmup.timeouts + result.errors + result.timeouts;
    const loadSamples = samples.filter((s) => s.label !== "idle");
    const maxSampled = Math.max(...loadSamples.map((s) => s.rss));
    const growth = end.rss / afterWarmup.rss - 1;
    const rssPass = growth <= o.rssTolerance;

    if (fiveXx > 0)
      fail.push(`FAIL: soak: ${fiveXx} responses with status 5xx (${JSON.stringify(fiveXxByRoute)})`);
    if (connectionErrors > 0) fail.push(`FAIL: soak: ${connectionErrors} connection errors or timeouts`);
    if (!rssPass) {
      fail.push(
        `FAIL: soak: resident memory grew ${fmt(growth * 100, 1)}% from after the warm-up to the end (tolerance +${fmt(o.rssTolerance * 100)}%)`,
      );
    }
    if (server.errorLines > 0)
      fail.push(`FAIL: soak: the server logged ${server.errorLines} errors, first: ${server.firstErrors[0]}`);
    if (!server.running) fail.push(`FAIL: soak: the server exited: ${server.stderr}`);
    const unexpected = Object.keys(result.statusCounts ?? {}).filter(
      (s) => !["200", "400", "404"].includes(s),
    );
    if (unexpected.length > 0)
      fail.push(`WARNING: soak: statuses outside the mix's 200, 400, 404: ${unexpected.join(", ")}`);

    const rates = loadSamples
      .filter((s) => s.label === "load" && s.reqPerSec !== null)
      .map((s) => s.reqPerSec as number);
    log("");
    log(
      `soak (${o.seconds}s after ${o.warmupSeconds}s warm-up, ${o.connections} connections, ${cpus.length} CPU cores)`,
    );
    log(
      `  memory (RSS): idle ${mb(idle.rss)}, after warm-up ${mb(afterWarmup.rss)}, end ${mb(end.rss)} ` +
        `(${growth >= 0 ? "+" : ""}${fmt(growth * 100, 1)}%), 5 s later ${mb(endIdle.rss)}; max sampled ${mb(maxSampled)}, ` +
        `peak (VmHWM) ${mb(endIdle.peak)}; tolerance +${fmt(o.rssTolerance * 100)}%: ${rssPass ? "PASS" : "FAIL"}`,
    );
    log(
      `  throughput: ${fmt(result.requests)} requests, ${fmt(result.reqPerSec)} req/s` +
        (rates.length
          ? ` (per ${o.sampleSeconds}s interval: ${fmt(Math.min(...rates))} to ${fmt(Math.max(...rates))})`
          : "") +
        `; 2xx latency p50 ${fmt(result.p50Ms, 2)} ms, p99 ${fmt(result.p99Ms, 2)} ms`,
    );
    log(
      `  statuses (load generator): ${statusText(result.statusCounts)}; warm-up: ${statusText(warmup.statusCounts)}`,
    );
    log(`  statuses (server's /metrics): ${statusText(serverStatusCounts)}`);
    log(
      `  server log: ${mb(server.stdoutBytes)} written, ${server.errorLines} lines at level error or fatal`,
    );
    log(`  5xx: ${fiveXx}; connection errors and timeouts: ${connectionErrors}`);
    for (const line of fail) log(`  ${line}`);
    if (fail.length === 0) log("  no 5xx, no connection errors, memory within tolerance");

    return {
      at: new Date().toISOString(),
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? null,
      seconds: o.seconds,
      warmupSeconds: o.warmupSeconds,
      sampleSeconds: o.sampleSeconds,
      connections: o.connections,
      config,
      mix,
      distinctPaths: new Set(paths).size,
      warmup,
      result,
      serverStatusCounts,
      fiveXxByRoute,
      samples,
      rss: {
        idle: idle.rss,
        afterWarmup: afterWarmup.rss,
        end: end.rss,
        endIdle: endIdle.rss,
        maxSampled,
        peak: endIdle.peak,
        growth,
        tolerance: o.rssTolerance,
        pass: rssPass,
      },
      fiveXx,
      connectionErrors,
      logBytes: server.stdoutBytes,
      errorLogLines: server.errorLines,
      fail,
    };
  } finally {
    await server.stop();
  }
}
