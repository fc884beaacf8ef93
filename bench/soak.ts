/**
 * BENCH_ONLY=soak: `updown serve` under a steady mixed load, once on SQLite and once on PostgreSQL with
 * Redis (servers of the run's own, test/helpers/services.ts; skipped, with the reason, without their
 * binaries). BENCH_SOAK_BACKENDS (default "sqlite,postgres") picks the backends. Loopback only; it
 * stops by itself.
 *
 * The load (bench/soak-mix.ts), closed-loop on BENCH_CONNECTIONS connections: what a paying client asks
 * (lists, records, coverage, snapshot pages with and without books, mostly distinct so that the page
 * cache stays full and evicting, repeated pages it answers, /at, exports, account, exchange routes) and
 * what must be refused: 404s, 400s, bad keys from 64 client addresses (401, then 429 per address) and
 * four starter keys asked far past their limits (403 on BTC markets past their history, 429). The
 * server runs with the default configuration but TRUST_PROXY=127.0.0.1: the bad keys name their client
 * address in X-Forwarded-For, so that their throttling falls on those addresses, not on every client
 * of the loopback.
 *
 * Phases per backend: idle; a warm-up in steps of 10 s that ends once it has run at least
 * BENCH_SOAK_WARMUP_SECONDS (30), the page cache is full and resident memory is level (grew under 2%
 * over the last 20 s), or at BENCH_SOAK_WARMUP_MAX_SECONDS (120); a pause; BENCH_SOAK_SECONDS (90)
 * measured in windows of BENCH_SOAK_WINDOW_SECONDS (30); a pause.
 *
 * Memory: the server is started with bench/memory-probe.ts, which answers the process's own reading of
 * its memory (and its page cache's size) over IPC. Resident memory (VmRSS, /proc) and the JS heap are
 * read when idle, after every warm-up step and window, and in the two pauses: after the warm-up and at
 * the end. In those two, resident memory is read first, then the heap after a full collection (what is
 * still reachable). Growth is end / after warm-up - 1, of both. Latency: p50 and p99 of the 2xx answers
 * (and of all answers) per window, the last window's against the first's, with the server's CPU time
 * per request and the machine's load average beside them, to tell a costlier server from a busier
 * machine.
 *
 * Targets (issue 11): memory growth under 10% after the warm-up (resident and heap), p99 in the last
 * window at most 1.5x the first, no 5xx (nor connection errors or timeouts). A report, not a test: it
 * prints PASS or FAIL per target and backend. BENCH_SOAK_PAGE_CACHE_MB sets the server's PAGE_CACHE_MB;
 * BENCH_SOAK_HEAP_SNAPSHOTS (a directory) writes heap snapshots after the warm-up and at the end
 * (writing one raises resident memory itself: use it to compare heaps, not with the memory target).
 */
import { mkdirSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { OPTIONS } from "../src/config/options.ts";
import {
  missingServerBinaries,
  type OwnServer,
  startOwnPostgres,
  startOwnRedis,
} from "../test/helpers/services.ts";
import type { ListEntry, LoadJob, LoadResult, LoadWindow } from "./load.ts";
import type { ProbedMemory } from "./memory-probe.ts";
import {
  type BenchData,
  cpuSecondsOf,
  createKey,
  fmt,
  mb,
  revokeKey,
  rssOf,
  seed,
  ServeProcess,
  serviceEnv,
  sleep,
  storeMarkets,
} from "./processes.ts";
import { buildMix, type Mix, type SoakKeys } from "./soak-mix.ts";

export const SOAK_TARGETS = { memoryGrowth: 0.1, p99Ratio: 1.5, fiveXx: 0 } as const;
export const SOAK_BACKENDS = ["sqlite", "postgres"] as const;
export type SoakBackend = (typeof SOAK_BACKENDS)[number];

interface Load {
  sendList(name: string, paths: ListEntry[]): Promise<void>;
  run(job: LoadJob): Promise<LoadResult>;
}

export interface SoakOptions {
  data: BenchData;
  coldRows: number;
  backends: SoakBackend[];
  /** Measured seconds per backend, after the warm-up. */
  seconds: number;
  /** The warm-up's least and most seconds (see warmUp). */
  warmupSeconds: number;
  warmupMaxSeconds: number;
  /** Latency is reported, and memory sampled, per window of this many seconds. */
  windowSeconds: number;
  /** PAGE_CACHE_MB for the server; unset: the default. */
  pageCacheMb?: number;
  /** A directory for heap snapshots after the warm-up and at the end; null: none. */
  heapSnapshots: string | null;
  connections: number;
  load: Load;
  tmp: string;
  log: (line: string) => void;
}

interface MemorySample {
  /** Seconds since the warm-up began (0: idle, before any load). */
  t: number;
  label: string;
  /** From /proc: resident memory, its peak so far (VmHWM), and its anonymous part (RssAnon). */
  rss: number;
  peak: number;
  anon: number;
  /** From the process itself (bench/memory-probe.ts); after a full collection when `collected`. */
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  collected: boolean;
  /** The page cache's bytes (its limit is PAGE_CACHE_MB). */
  pageCache: number;
  /** Requests the server counted (all routes but /metrics) since the previous sample, per second; null: none. */
  reqPerSec: number | null;
  /** The server's CPU time (user + system) per request since the previous sample, in ms. */
  cpuMsPerRequest: number | null;
  /** The server's CPU time since the previous sample over the time passed: cores it kept busy. */
  cpuCores: number | null;
  /** The machine's 1-minute load average: what else competes for its cores. */
  loadAverage: number;
}

interface WindowReport extends LoadWindow {
  /** Of the sample at the window's end. */
  cpuMsPerRequest: number | null;
  cpuCores: number | null;
  loadAverage: number;
  rss: number;
}

interface Growth {
  afterWarmup: number;
  end: number;
  /** end / afterWarmup - 1. */
  growth: number;
}

export interface BackendSoak {
  backend: SoakBackend;
  /** Why this backend did not run, or null. */
  skipped: string | null;
  config: string;
  warmup: Warmup | null;
  result: LoadResult | null;
  /** The measured load's windows: latency and statuses, with the server's CPU and memory at its end. */
  windows: WindowReport[];
  samples: MemorySample[];
  memory: {
    rss: Growth;
    /** Heap in use after a full collection. */
    heap: Growth;
    idleRss: number;
    maxRss: number;
    pass: boolean;
  } | null;
  latency: {
    first: WindowReport;
    last: WindowReport;
    /** last.p99Ms / first.p99Ms (2xx answers). */
    p99Ratio: number;
    pass: boolean;
    /** When the p99 target fails: what the server's CPU per request and the machine's load say of why. */
    note: string | null;
  } | null;
  /** Responses by status as the server counted them during the measured load (its /metrics). */
  serverStatusCounts: Record<string, number>;
  /** Routes that answered 5xx (server's count) during the warm-up or the measured load. */
  fiveXxByRoute: Record<string, number>;
  fiveXx: number;
  connectionErrors: number;
  noFiveXxPass: boolean;
  /** Kinds that got a status outside the ones they expect, with those statuses. */
  unexpected: Record<string, Record<string, number>>;
  logBytes: number;
  errorLogLines: number;
  heapSnapshots: string[];
  fail: string[];
}

export interface SoakResult {
  at: string;
  node: string;
  cpus: number;
  cpuModel: string | null;
  seconds: number;
  warmupSeconds: number;
  warmupMaxSeconds: number;
  windowSeconds: number;
  connections: number;
  targets: typeof SOAK_TARGETS;
  /** Share of each kind of request in the load, in percent. */
  mix: Record<string, number>;
  distinctPaths: number;
  backends: BackendSoak[];
}

// ---------------------------------------------------------------------------------------------------
// Setting a backend up

interface Setup {
  url: string;
  /** The server's environment beyond DATABASE_URL. */
  env: Record<string, string>;
  config: string;
  remove(): Promise<void>;
}

async function setUp(backend: SoakBackend, o: SoakOptions): Promise<Setup | string> {
  const pageCache: Record<string, string> =
    o.pageCacheMb === undefined ? {} : { PAGE_CACHE_MB: String(o.pageCacheMb) };
  const cacheText =
    o.pageCacheMb === undefined ? "PAGE_CACHE_MB=128 (default)" : `PAGE_CACHE_MB=${o.pageCacheMb}`;
  const common = "TRUST_PROXY=127.0.0.1, everything else default (LOG_LEVEL=info)";
  if (backend === "sqlite") {
    const url = `sqlite:${join(o.tmp, "soak.db")}`;
    seed(url, o.data);
    return {
      url,
      env: pageCache,
      config: `updown serve, DATABASE_URL=sqlite:<temp file>, no REDIS_URL, ${cacheText}, ${common}`,
      remove: async () => {},
    };
  }
  const missing = missingServerBinaries();
  if (missing) return missing;
  let pg: OwnServer | null = null;
  let redis: OwnServer | null = null;
  try {
    pg = await startOwnPostgres("soak");
    redis = await startOwnRedis();
    seed(pg.url, o.data);
  } catch (err) {
    await pg?.remove();
    await redis?.remove();
    throw err;
  }
  const [p, r] = [pg, redis];
  return {
    url: p.url,
    env: { ...pageCache, REDIS_URL: r.url },
    config: `updown serve, DATABASE_URL=postgres://<own server>, REDIS_URL=redis://<own server>, ${cacheText}, ${common}`,
    remove: async () => {
      await p.remove();
      await r.remove();
    },
  };
}

function makeKeys(url: string): SoakKeys {
  const revoked = createKey(url, "enterprise", "soak-revoked");
  revokeKey(url, revoked);
  return {
    enterprise: createKey(url, "enterprise", "soak"),
    // Each on its own account: a starter account holds at most two keys.
    starters: [1, 2, 3, 4].map((i) => createKey(url, "starter", `soak-starter-${i}`)),
    revoked,
  };
}

// ---------------------------------------------------------------------------------------------------
// Reading the server

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

function pct(x: number): string {
  return `${x >= 0 ? "+" : ""}${fmt(x * 100, 1)}%`;
}

/** Samples a server's memory and request rate, labelled by phase. */
class Sampler {
  readonly samples: MemorySample[] = [];
  private last: ServerCounts | null = null;
  private lastAt = 0;
  private lastCpu = 0;
  private loadStart = 0;
  private readonly server: ServeProcess;
  private readonly log: (line: string) => void;

  constructor(server: ServeProcess, log: (line: string) => void) {
    this.server = server;
    this.log = log;
  }

  /** From now on, sample times count from here. */
  startClock(): void {
    this.loadStart = this.lastAt = performance.now();
  }

  get counts(): ServerCounts | null {
    return this.last;
  }

  /** Resident memory from /proc first, then the process's own reading (after a full collection with `gc`). */
  async sample(label: string, gc: boolean): Promise<MemorySample> {
    const counts = await serverCounts(this.server.origin);
    const now = performance.now();
    const cpu = cpuSecondsOf([this.server.pid]);
    const r = rssOf(this.server.pid);
    if (!r) throw new Error(`soak: cannot read the memory of the server (running: ${this.server.running})`);
    const own: ProbedMemory = await this.server.memory(gc);
    const previous = this.last;
    const requests = previous ? counts.total - previous.total : 0;
    const s: MemorySample = {
      t: this.loadStart === 0 ? 0 : Math.round((now - this.loadStart) / 100) / 10,
      label,
      rss: r.rss,
      peak: r.peak,
      anon: r.anon,
      heapUsed: own.heapUsed,
      heapTotal: own.heapTotal,
      external: own.external,
      arrayBuffers: own.arrayBuffers,
      collected: own.collected,
      pageCache: own.pageCacheBytes,
      // A sample right after another (the pauses) has no rate of its own.
      reqPerSec: requests > 0 && this.loadStart > 0 ? (requests * 1000) / (now - this.lastAt) : null,
      cpuMsPerRequest: requests > 0 ? ((cpu - this.lastCpu) * 1000) / requests : null,
      cpuCores: requests > 0 ? ((cpu - this.lastCpu) * 1000) / (now - this.lastAt) : null,
      loadAverage: os.loadavg()[0],
    };
    this.last = counts;
    this.lastAt = now;
    this.lastCpu = cpu;
    this.samples.push(s);
    this.log(
      `  t=${fmt(s.t, 0).padStart(4)}s  RSS ${mb(s.rss).padStart(9)}  heap ${mb(s.heapUsed).padStart(8)}${s.collected ? " (after GC)" : "           "}` +
        ` of ${mb(s.heapTotal).padStart(8)}  buffers ${mb(s.arrayBuffers).padStart(8)} (page cache ${mb(s.pageCache).padStart(8)})` +
        `${s.reqPerSec === null ? "" : `  ${fmt(s.reqPerSec).padStart(6)} req/s`}` +
        `${s.cpuMsPerRequest === null ? "" : `  CPU ${fmt(s.cpuMsPerRequest, 2)} ms/req, ${fmt(s.cpuCores ?? Number.NaN, 2)} cores`}  load ${fmt(s.loadAverage, 1)}  (${label})`,
    );
    return s;
  }
}

/**
 * Runs the load, sampling at the end of each of its windows: during the run at every window's end but
 * the last, and once more when the run is over (the last window).
 */
async function runSampled(
  load: Load,
  job: LoadJob,
  sampler: Sampler,
  windowSeconds: number,
  label: string,
): Promise<LoadResult> {
  const started = performance.now();
  const run = load.run(job);
  let done = false;
  void run.then(
    () => (done = true),
    () => (done = true),
  );
  const windows = Math.ceil(job.seconds / windowSeconds);
  for (let k = 1; k < windows && !done; k++) {
    await Promise.race([run, sleep(Math.max(0, started + k * windowSeconds * 1000 - performance.now()))]);
    if (!done) await sampler.sample(label, false);
  }
  const result = await run;
  await sampler.sample(label, false);
  return result;
}

/** Results of consecutive runs of one job as one (percentiles: the last run's). */
function mergeResults(runs: LoadResult[]): LoadResult {
  const sum = (f: (r: LoadResult) => number) => runs.reduce((a, r) => a + f(r), 0);
  const addCounts = (into: Record<string, number>, counts: Record<string, number> | undefined) => {
    for (const [k, n] of Object.entries(counts ?? {})) into[k] = (into[k] ?? 0) + n;
    return into;
  };
  const statusCounts: Record<string, number> = {};
  const byKind: Record<string, Record<string, number>> = {};
  for (const r of runs) {
    addCounts(statusCounts, r.statusCounts);
    for (const [kind, counts] of Object.entries(r.byKind ?? {}))
      byKind[kind] = addCounts(byKind[kind] ?? {}, counts);
  }
  const last = runs[runs.length - 1];
  const seconds = sum((r) => r.seconds);
  return {
    requests: sum((r) => r.requests),
    seconds,
    reqPerSec: sum((r) => r.requests) / seconds,
    p50Ms: last.p50Ms,
    p99Ms: last.p99Ms,
    bytesPerSec: sum((r) => r.bytesPerSec * r.seconds) / seconds,
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    non2xx: sum((r) => r.non2xx),
    issued: sum((r) => r.issued),
    reissued: sum((r) => r.reissued),
    statusCounts,
    byKind,
  };
}

/** The warm-up runs in steps of this many seconds, with a look at memory after each. */
const WARMUP_STEP_SECONDS = 10;
/** Resident memory counts as level once it grew less than this over the last two steps. */
const LEVEL_GROWTH = 0.02;
/** The page cache counts as full from this share of its limit (it evicts to stay under it). */
const CACHE_FULL = 0.9;

interface Warmup {
  result: LoadResult;
  seconds: number;
  /** What ended it. */
  ended: string;
  /** Seconds into the warm-up at which the page cache was first seen full; null: never. */
  pageCacheFullAt: number | null;
}

/**
 * The load in steps until it has run at least warmupSeconds, the page cache is full and resident
 * memory is level (grew under LEVEL_GROWTH over the last 20 s), or until warmupMaxSeconds.
 */
async function warmUp(
  run: (seconds: number) => Promise<LoadResult>,
  sampler: Sampler,
  o: SoakOptions,
  pageCacheLimit: number,
): Promise<Warmup> {
  const steps: LoadResult[] = [];
  const rss: number[] = [];
  let fullAt: number | null = null;
  for (let elapsed = WARMUP_STEP_SECONDS; ; elapsed += WARMUP_STEP_SECONDS) {
    steps.push(await run(WARMUP_STEP_SECONDS));
    const s = await sampler.sample("warm-up", false);
    rss.push(s.rss);
    if (fullAt === null && s.pageCache >= CACHE_FULL * pageCacheLimit) fullAt = elapsed;
    const level = rss.length >= 3 && s.rss < rss[rss.length - 3] * (1 + LEVEL_GROWTH);
    if (elapsed >= o.warmupSeconds && fullAt !== null && level) {
      const ended = pageCacheLimit > 0 ? "page cache full, resident memory level" : "resident memory level";
      return { result: mergeResults(steps), seconds: elapsed, ended, pageCacheFullAt: fullAt };
    }
    if (elapsed >= o.warmupMaxSeconds) {
      const ended = `its cap (BENCH_SOAK_WARMUP_MAX_SECONDS=${o.warmupMaxSeconds})`;
      return { result: mergeResults(steps), seconds: elapsed, ended, pageCacheFullAt: fullAt };
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// One backend

/** Asks one example of each kind and says which got a status it should not. */
async function checkExamples(origin: string, mix: Mix, keys: SoakKeys): Promise<string[]> {
  const out: string[] = [];
  for (const [kind, entry] of mix.examples) {
    const e = typeof entry === "string" ? { path: entry } : entry;
    const res = await fetch(origin + e.path, { headers: e.headers ?? { "x-api-key": keys.enterprise } });
    await res.arrayBuffer();
    if (!kind.expect.includes(res.status)) {
      out.push(
        `WARNING: mix: ${kind.name} (${e.path}) answered ${res.status}, expected ${kind.expect.join(" or ")}`,
      );
    }
  }
  return out;
}

/** Kinds answered with a status they do not expect. */
function unexpectedStatuses(mix: Mix, results: LoadResult[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const r of results) {
    for (const [kind, counts] of Object.entries(r.byKind ?? {})) {
      for (const [status, n] of Object.entries(counts)) {
        if (mix.expect[kind]?.includes(Number(status))) continue;
        out[kind] ??= {};
        out[kind][status] = (out[kind][status] ?? 0) + n;
      }
    }
  }
  return out;
}

function fiveXxOf(results: LoadResult[]): number {
  let n = 0;
  for (const r of results)
    for (const [status, count] of Object.entries(r.statusCounts ?? {}))
      if (status.startsWith("5")) n += count;
  return n;
}

interface Phases {
  warmup: Warmup;
  result: LoadResult;
  idle: MemorySample;
  afterWarmup: MemorySample;
  end: MemorySample;
  start: ServerCounts;
  measuredFrom: ServerCounts;
  measuredTo: ServerCounts;
  heapSnapshots: string[];
}

/** Idle, warm-up, a pause, the measured load, a pause: the samples and results of each. */
async function runPhases(
  backend: SoakBackend,
  server: ServeProcess,
  sampler: Sampler,
  keys: SoakKeys,
  o: SoakOptions,
): Promise<Phases> {
  const job = (seconds: number, windows: boolean): LoadJob => ({
    origin: server.origin,
    headers: { "x-api-key": keys.enterprise },
    seconds,
    connections: o.connections,
    list: `soak ${backend}`,
    countStatuses: true,
    ...(windows ? { windowSeconds: o.windowSeconds } : {}),
  });
  const heapSnapshots: string[] = [];
  const snapshot = async (label: string) => {
    if (o.heapSnapshots === null) return;
    mkdirSync(o.heapSnapshots, { recursive: true });
    heapSnapshots.push(
      await server.heapSnapshot(join(o.heapSnapshots, `soak-${backend}-${label}.heapsnapshot`)),
    );
  };
  const idle = await sampler.sample("idle", true);
  const start = sampler.counts as ServerCounts;
  sampler.startClock();
  const pageCacheLimit = (o.pageCacheMb ?? OPTIONS.pageCacheMb.default) * 1024 * 1024;
  const warmup = await warmUp((seconds) => o.load.run(job(seconds, false)), sampler, o, pageCacheLimit);
  const afterWarmup = await sampler.sample("after warm-up, paused", true);
  await snapshot("after-warmup");
  const measuredFrom = sampler.counts as ServerCounts;
  const result = await runSampled(o.load, job(o.seconds, true), sampler, o.windowSeconds, "load");
  const end = await sampler.sample("end, paused", true);
  await snapshot("end");
  const measuredTo = sampler.counts as ServerCounts;
  return { warmup, result, idle, afterWarmup, end, start, measuredFrom, measuredTo, heapSnapshots };
}

function growth(afterWarmup: number, end: number): Growth {
  return { afterWarmup, end, growth: end / afterWarmup - 1 };
}

/** Latency windows of the measured load, each with the sample taken at its end. */
function windowReports(result: LoadResult, samples: MemorySample[]): WindowReport[] {
  const atEnds = samples.filter((x) => x.label === "load");
  return (result.windows ?? []).map((w, i) => ({
    ...w,
    cpuMsPerRequest: atEnds[i]?.cpuMsPerRequest ?? null,
    cpuCores: atEnds[i]?.cpuCores ?? null,
    loadAverage: atEnds[i]?.loadAverage ?? Number.NaN,
    rss: atEnds[i]?.rss ?? Number.NaN,
  }));
}

/** p99 of the last window against the first, and when it fails, whether the server or the machine slowed. */
function latencyVerdict(windows: WindowReport[]): NonNullable<BackendSoak["latency"]> {
  const [first, last] = [windows[0], windows[windows.length - 1]];
  const p99Ratio = last.p99Ms / first.p99Ms;
  const pass = p99Ratio <= SOAK_TARGETS.p99Ratio;
  let note: string | null = null;
  const cost = [first.cpuMsPerRequest, last.cpuMsPerRequest];
  const cores = [first.cpuCores, last.cpuCores];
  if (!pass && cost[0] !== null && cost[1] !== null && cores[0] !== null && cores[1] !== null) {
    const cpuRatio = cost[1] / cost[0];
    note =
      `the server's CPU per request went from ${fmt(cost[0], 2)} to ${fmt(cost[1], 2)} ms (${fmt(cpuRatio, 2)}x), ` +
      `the cores it kept busy from ${fmt(cores[0], 2)} to ${fmt(cores[1], 2)}, the machine's load average ` +
      `from ${fmt(first.loadAverage, 1)} to ${fmt(last.loadAverage, 1)}` +
      (cpuRatio < 1.15 && cores[1] < cores[0]
        ? ": the server did not get costlier per request; it got less of the CPU"
        : "");
  }
  return { first, last, p99Ratio, pass, note };
}

/** The targets' verdicts and the FAIL lines, from what the phases measured. */
function judge(
  backend: SoakBackend,
  config: string,
  p: Phases,
  server: ServeProcess,
  mix: Mix,
  samples: MemorySample[],
): BackendSoak {
  const rss = growth(p.afterWarmup.rss, p.end.rss);
  const heap = growth(p.afterWarmup.heapUsed, p.end.heapUsed);
  const memoryPass = rss.growth < SOAK_TARGETS.memoryGrowth && heap.growth < SOAK_TARGETS.memoryGrowth;
  const windows = windowReports(p.result, samples);
  const latency = latencyVerdict(windows);
  const loads = [p.warmup.result, p.result];
  const fiveXxByRoute = diff(p.start.fiveXxByRoute, p.measuredTo.fiveXxByRoute);
  const fiveXx = Math.max(
    fiveXxOf(loads),
    Object.values(fiveXxByRoute).reduce((a, b) => a + b, 0),
  );
  const connectionErrors = loads.reduce((n, r) => n + r.errors + r.timeouts, 0);
  const noFiveXxPass = fiveXx === 0 && connectionErrors === 0 && server.running;
  const unexpected = unexpectedStatuses(mix, loads);
  const name = backend === "sqlite" ? "SQLite" : "PostgreSQL + Redis";
  const fail: string[] = [];
  if (!memoryPass)
    fail.push(
      `FAIL: soak ${name}: memory grew ${pct(rss.growth)} (resident), ${pct(heap.growth)} (heap) after the warm-up`,
    );
  if (!latency.pass) {
    fail.push(
      `FAIL: soak ${name}: 2xx p99 ${fmt(latency.first.p99Ms, 1)} ms in the first window, ${fmt(latency.last.p99Ms, 1)} ms in the last (${fmt(latency.p99Ratio, 2)}x)` +
        (latency.note ? `; ${latency.note}` : ""),
    );
  }
  if (fiveXx > 0) fail.push(`FAIL: soak ${name}: ${fiveXx} answers 5xx (${JSON.stringify(fiveXxByRoute)})`);
  if (connectionErrors > 0)
    fail.push(`FAIL: soak ${name}: ${connectionErrors} connection errors or timeouts`);
  if (!server.running) fail.push(`FAIL: soak ${name}: the server exited: ${server.stderr}`);
  if (server.errorLines > 0)
    fail.push(
      `WARNING: soak ${name}: ${server.errorLines} log lines at level error, first: ${server.firstErrors[0]}`,
    );
  for (const [kind, counts] of Object.entries(unexpected))
    fail.push(
      `WARNING: soak ${name}: ${kind} answered ${statusText(counts)}, outside ${mix.expect[kind].join("/")}`,
    );
  return {
    backend,
    skipped: null,
    config,
    warmup: p.warmup,
    result: p.result,
    windows,
    samples,
    memory: {
      rss,
      heap,
      idleRss: p.idle.rss,
      maxRss: Math.max(...samples.map((x) => x.rss)),
      pass: memoryPass,
    },
    latency,
    serverStatusCounts: diff(p.measuredFrom.byStatus, p.measuredTo.byStatus),
    fiveXxByRoute,
    fiveXx,
    connectionErrors,
    noFiveXxPass,
    unexpected,
    logBytes: server.stdoutBytes,
    errorLogLines: server.errorLines,
    heapSnapshots: p.heapSnapshots,
    fail,
  };
}

function skippedBackend(backend: SoakBackend, reason: string): BackendSoak {
  return {
    backend,
    skipped: reason,
    config: "",
    warmup: null,
    result: null,
    windows: [],
    samples: [],
    memory: null,
    latency: null,
    serverStatusCounts: {},
    fiveXxByRoute: {},
    fiveXx: 0,
    connectionErrors: 0,
    noFiveXxPass: false,
    unexpected: {},
    logBytes: 0,
    errorLogLines: 0,
    heapSnapshots: [],
    fail: [],
  };
}

async function soakOne(
  backend: SoakBackend,
  o: SoakOptions,
): Promise<{ soak: BackendSoak; mix: Mix | null }> {
  const { log } = o;
  const name = backend === "sqlite" ? "SQLite" : "PostgreSQL + Redis";
  log(`\nsoak on ${name}: seeding (updown seed --seed ${o.data.seed})`);
  const setup = await setUp(backend, o);
  if (typeof setup === "string") {
    log(`soak on ${name}: skipped: ${setup}`);
    return { soak: skippedBackend(backend, setup), mix: null };
  }
  try {
    const keys = makeKeys(setup.url);
    const mix = buildMix(await storeMarkets(setup.url), keys, o.coldRows, 100_000, o.data.seed);
    await o.load.sendList(`soak ${backend}`, mix.entries);
    const server = await ServeProcess.start(
      serviceEnv({ DATABASE_URL: setup.url, TRUST_PROXY: "127.0.0.1", ...setup.env }),
      { probe: true },
    );
    try {
      log(`soak on ${name}: ${setup.config}`);
      const warnings = await checkExamples(server.origin, mix, keys);
      for (const line of warnings) log(`  ${line}`);
      const sampler = new Sampler(server, log);
      const phases = await runPhases(backend, server, sampler, keys, o);
      const soak = judge(backend, setup.config, phases, server, mix, sampler.samples);
      soak.fail.unshift(...warnings);
      reportBackend(name, soak, o, log);
      return { soak, mix };
    } finally {
      await server.stop();
    }
  } finally {
    await setup.remove();
  }
}

// ---------------------------------------------------------------------------------------------------
// Report

function verdict(pass: boolean): string {
  return pass ? "PASS" : "FAIL";
}

function windowLine(w: WindowReport): string {
  const cells = [
    `${fmt(w.from)}-${fmt(w.to)}s`.padEnd(9),
    fmt(w.responses).padStart(8),
    fmt(w.responses / Math.max(1e-9, w.to - w.from)).padStart(6),
    `${fmt(w.p50Ms, 1)}/${fmt(w.p99Ms, 1)}`.padStart(14),
    `${fmt(w.allP50Ms, 1)}/${fmt(w.allP99Ms, 1)}`.padStart(14),
    (w.cpuMsPerRequest === null ? "n/a" : fmt(w.cpuMsPerRequest, 2)).padStart(11),
    (w.cpuCores === null ? "n/a" : fmt(w.cpuCores, 2)).padStart(5),
    fmt(w.loadAverage, 1).padStart(5),
    mb(w.rss).padStart(9),
  ];
  return `  ${cells.join(" ")}  ${statusText(w.statusCounts)}`;
}

function reportBackend(name: string, s: BackendSoak, o: SoakOptions, log: (line: string) => void): void {
  if (!s.result || !s.warmup || !s.memory || !s.latency) return;
  const { rss, heap } = s.memory;
  const { first, last } = s.latency;
  const w = s.warmup;
  log("");
  log(
    `soak on ${name} (${o.seconds}s measured after ${w.seconds}s of warm-up, ${o.connections} connections)`,
  );
  log(
    `  warm-up: ${w.seconds}s, ended by ${w.ended}; page cache full ` +
      `${w.pageCacheFullAt === null ? "never" : `after ${w.pageCacheFullAt}s`}; ${fmt(w.result.reqPerSec)} req/s`,
  );
  log(
    `  memory: resident ${mb(rss.afterWarmup)} after the warm-up, ${mb(rss.end)} at the end (${pct(rss.growth)}); ` +
      `heap after GC ${mb(heap.afterWarmup)} -> ${mb(heap.end)} (${pct(heap.growth)}); idle ${mb(s.memory.idleRss)}, ` +
      `max sampled ${mb(s.memory.maxRss)}; target under +${fmt(SOAK_TARGETS.memoryGrowth * 100)}%: ${verdict(s.memory.pass)}`,
  );
  log(
    "  window     answers  req/s  2xx p50/p99 ms  all p50/p99 ms  CPU ms/req cores  load       RSS  statuses",
  );
  for (const win of s.windows) log(windowLine(win));
  log(
    `  latency: 2xx p99 ${fmt(first.p99Ms, 1)} ms in the first window, ${fmt(last.p99Ms, 1)} ms in the last ` +
      `(${fmt(s.latency.p99Ratio, 2)}x); target at most ${SOAK_TARGETS.p99Ratio}x: ${verdict(s.latency.pass)}`,
  );
  if (s.latency.note) log(`    ${s.latency.note}`);
  log(
    `  throughput: ${fmt(s.result.requests)} requests, ${fmt(s.result.reqPerSec)} req/s; ` +
      `2xx p50 ${fmt(s.result.p50Ms, 1)} ms, p99 ${fmt(s.result.p99Ms, 1)} ms`,
  );
  log(`  statuses (load generator): ${statusText(s.result.statusCounts)}`);
  log(`  statuses (server's /metrics): ${statusText(s.serverStatusCounts)}`);
  for (const [kind, counts] of Object.entries(s.result.byKind ?? {}))
    log(`    ${kind}: ${statusText(counts)}`);
  log(`  server log: ${mb(s.logBytes)} written, ${s.errorLogLines} lines at level error or fatal`);
  log(
    `  5xx: ${s.fiveXx}; connection errors and timeouts: ${s.connectionErrors}; target none: ${verdict(s.noFiveXxPass)}`,
  );
  for (const line of s.fail) log(`  ${line}`);
}

function summaryLine(name: string, b: BackendSoak): string {
  if (b.skipped !== null || !b.memory || !b.latency || !b.result)
    return `  ${name.padEnd(18)}  skipped: ${b.skipped ?? "no result"}`;
  const { memory, latency } = b;
  const failed = [memory.pass ? "" : "memory", latency.pass ? "" : "p99", b.noFiveXxPass ? "" : "5xx"].filter(
    Boolean,
  );
  const cells = [
    name.padEnd(18),
    fmt(b.result.reqPerSec).padStart(6),
    `${pct(memory.rss.growth)} / ${pct(memory.heap.growth)}`.padStart(17),
    `${fmt(latency.first.p50Ms, 1)} -> ${fmt(latency.last.p50Ms, 1)}`.padStart(13),
    `${fmt(latency.first.p99Ms, 1)} -> ${fmt(latency.last.p99Ms, 1)} (${fmt(latency.p99Ratio, 2)}x)`.padStart(
      22,
    ),
    String(b.fiveXx).padStart(4),
    failed.length === 0 ? "PASS" : `FAIL (${failed.join(", ")})`,
  ];
  return `  ${cells.join("  ")}`;
}

function reportSummary(r: SoakResult, log: (line: string) => void): void {
  log("");
  log(
    `soak: targets per backend: memory growth under ${fmt(SOAK_TARGETS.memoryGrowth * 100)}% (resident / heap after GC), ` +
      `2xx p99 in the last window at most ${SOAK_TARGETS.p99Ratio}x the first, no 5xx (${r.cpus} CPU cores shared by the server, its databases and the load)`,
  );
  log("  backend              req/s  resident / heap  2xx p50 (ms)  2xx p99 (ms), ratio   5xx  result");
  for (const b of r.backends) log(summaryLine(b.backend === "sqlite" ? "SQLite" : "PostgreSQL + Redis", b));
}

export async function measureSoak(o: SoakOptions): Promise<SoakResult> {
  const cpus = os.cpus();
  o.log(
    `soak: ${o.backends.join(" and ")}; per backend a warm-up of ${o.warmupSeconds} to ${o.warmupMaxSeconds}s, then ` +
      `${o.seconds}s measured in windows of ${o.windowSeconds}s; ${cpus.length} CPU cores`,
  );
  const backends: BackendSoak[] = [];
  let mix: Mix | null = null;
  for (const backend of o.backends) {
    const one = await soakOne(backend, o);
    backends.push(one.soak);
    mix ??= one.mix;
  }
  if (mix) {
    o.log(
      `\n  mix (% of requests): ${Object.entries(mix.shares)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}; ${fmt(mix.distinctPaths)} distinct paths in a rotation of ${fmt(mix.entries.length)}`,
    );
  }
  const result: SoakResult = {
    at: new Date().toISOString(),
    node: process.version,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? null,
    seconds: o.seconds,
    warmupSeconds: o.warmupSeconds,
    warmupMaxSeconds: o.warmupMaxSeconds,
    windowSeconds: o.windowSeconds,
    connections: o.connections,
    targets: SOAK_TARGETS,
    mix: mix?.shares ?? {},
    distinctPaths: mix?.distinctPaths ?? 0,
    backends,
  };
  reportSummary(result, o.log);
  return result;
}
