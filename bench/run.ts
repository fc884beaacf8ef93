/**
 * `npm run bench`: throughput of GET /v1/markets/{slug}/snapshots on resolved markets, each scenario
 * as a ratio to a baseline measured in the same run, plus stored bytes per snapshot.
 *
 * The server (buildApp over a temporary, seeded SQLite file) runs in this process. The page scenarios
 * are driven by `wrk` (bench/wrk.ts: Debian's wrk, one thread, 8 connections; installed with apt-get
 * when missing), a C load generator that is not the bottleneck of the baseline it is compared with.
 * The baseline of each scenario is a plain node:http server in a process of its own (bench/baseline.ts)
 * sending the scenario's bytes from memory: ratio = scenario req/s / baseline req/s, with the
 * baseline measured right before and right after the scenario (their mean is used). The other parts
 * (exports, metering, backtests, replicas, soak) use autocannon in a child process (bench/load.ts).
 *
 * Environment:
 *   BENCH_SECONDS         seconds per measurement (default 5)
 *   BENCH_WARMUP_SECONDS  seconds of warm-up before each measurement (default 1; 0 for none)
 *   BENCH_CONNECTIONS     concurrent connections of the autocannon parts (default 10; the page
 *                         scenarios always use wrk's 8)
 *   BENCH_LOAD            "child" (default): autocannon in a child process; "inprocess": in the server's
 *                         own process and event loop (for comparison); the page scenarios use wrk either way
 *   BENCH_ONLY            run only the scenarios whose names contain this text (e.g. "cold, books"), or
 *                         "pages" for the five page scenarios and nothing else
 *   BENCH_CPU_PROF        a directory: write a CPU profile of the server per scenario there, and one of
 *                         its main thread while the backtest part's heavy runs are in flight
 *                         ("1" means bench/results/profiles); summarize with bench/profile-summary.ts
 *
 * Then the cost of authentication and rate limiting (bench/metering.ts): a small endpoint metered with
 * the memory limiter and with Redis (REDIS_URL, else a redis-server of its own when one is on PATH), as
 * ratios to the same endpoint unmetered. BENCH_ONLY=metering runs only that part.
 *
 * Then recording (bench/recording.ts): snapshots per second while the collector follows 300 live
 * markets, against a bulk insert of the same rows. BENCH_ONLY=recording runs only that part.
 * Then event recording (bench/event-recording.ts): the same live tick with events on, as a ratio to
 * events off. BENCH_ONLY=event-recording runs only that part (and writes only its section).
 *
 * Then replay (bench/replay.ts): a market's events replayed over /v1/replay/ws at speed=max to a
 * WebSocket client in a process of its own, as a ratio to reading and decoding them from the store.
 * BENCH_ONLY=replay runs only that part.
 *
 * Then backtests (bench/backtest.ts): snapshots replayed per second by threshold strategies over 100
 * resolved markets, as a ratio to only reading and decoding them, and the p99 of small requests while
 * runs are in flight against idle. BENCH_ONLY=backtest runs only that part (and writes only its section).
 * Then sweeps (bench/sweep.ts): a 100-combination sweep over 100 markets, seconds per combination as a
 * ratio to a single replay of the same definition (target <= 1.2). BENCH_ONLY=sweep runs only that part.
 *
 * Then event storage (bench/event-storage.ts): stored bytes per market-channel event against the same
 * events as PMXT-shaped Parquet with ZSTD 9. BENCH_ONLY=event-storage runs only that part.
 * Then `import pmxt` (bench/pmxt-import.ts): rows per second of the import of a generated PMXT hour
 * file against DuckDB reading the same columns, as a ratio (target 0.3), in a process of its own as
 * `updown import pmxt` runs. BENCH_ONLY=pmxt-import runs only that part.
 * Then a keyless flood (bench/keyless-flood.ts): the p99 of GET /v1/account from `updown serve` under a
 * flood of keyless requests against idle (target <= 2). BENCH_ONLY=keyless-flood runs only that part.
 *
 * Two scenarios run only when asked for, as they take longer than all of the above (README, Benchmarks):
 *   BENCH_ONLY=replicas  the same snapshot pages from one `updown serve` on SQLite and from two on one
 *                        PostgreSQL with a shared Redis (bench/replicas.ts; needs PostgreSQL and Redis
 *                        binaries, else skipped)
 *   BENCH_ONLY=soak      `updown serve` on SQLite and on PostgreSQL + Redis, each under a steady mixed
 *                        load (errors included): a warm-up of 30 to 120 s, then BENCH_SOAK_SECONDS (90)
 *                        measured; memory growth, p99 over time, req/s, statuses, against the targets
 *                        (bench/soak.ts)
 * Each writes its own section of bench/results/latest.json and keeps the rest; a default run keeps
 * their last sections.
 *
 * Always exits 0 once it has run, whether targets pass or fail; non-zero only if it crashed.
 */
// The service's V8 flags (src/v8.ts) first, so that the bench measures the engine as it serves.
import "../src/v8.ts";
import { type ChildProcess, fork } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import http from "node:http";
import { Session } from "node:inspector/promises";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { KeyService } from "../src/access/keys.ts";
import { loadPlans } from "../src/access/plans.ts";
import type { MarketType } from "../src/domain/market.ts";
import { systemClock } from "../src/domain/time.ts";
import { buildApp, serverOver } from "../src/http/app.ts";
import { buildContext } from "../src/http/context.ts";
import { serverLog } from "../src/log.ts";
import { Rng } from "../src/demo/demo.ts";
import { seedDemo } from "../src/demo/seed.ts";
import { SqliteStore } from "../src/store/dialects/sqlite/sqlite-store.ts";
import type { SnapshotQuery, StoredMarket } from "../src/store/ports/market-store.ts";
import { type ListEntry, type LoadJob, type LoadResult, runLoad, setList } from "./load.ts";
import { ensureWrk, WRK_CONNECTIONS, WRK_THREADS, WrkLoad } from "./wrk.ts";
import { type MeteringResult, measureMetering } from "./metering.ts";
import { measureRecording, type RecordingResult } from "./recording.ts";
import { measureReplay, type ReplayBenchResult } from "./replay.ts";
import { measureEventRecording } from "./event-recording.ts";
import { eventStorageSection } from "./event-storage.ts";
import { measurePmxtImportApart } from "./pmxt-import.ts";
import { measureReplicas } from "./replicas.ts";
import { measureSoak, SOAK_BACKENDS, type SoakBackend } from "./soak.ts";
import { type BacktestBenchResult, measureBacktest } from "./backtest.ts";
import { measureSweep, type SweepBenchResult } from "./sweep.ts";
import { measureKeylessFlood } from "./keyless-flood.ts";

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));

function envNumber(name: string, fallback: number, min: number): number {
  const text = process.env[name];
  if (text === undefined || text === "") return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min}, got "${text}"`);
  return n;
}

/** BENCH_SOAK_BACKENDS: a comma-separated list of sqlite and postgres (default both). */
function soakBackends(): SoakBackend[] {
  const text = process.env.BENCH_SOAK_BACKENDS || SOAK_BACKENDS.join(",");
  const names = text.split(",").map((t) => t.trim());
  const unknown = names.filter((n) => !(SOAK_BACKENDS as readonly string[]).includes(n));
  if (unknown.length > 0 || names.length === 0) {
    throw new Error(`BENCH_SOAK_BACKENDS must list ${SOAK_BACKENDS.join(" and/or ")}, got "${text}"`);
  }
  return names as SoakBackend[];
}

const SECONDS = envNumber("BENCH_SECONDS", 5, 1);
const WARMUP_SECONDS = envNumber("BENCH_WARMUP_SECONDS", 1, 0);
const CONNECTIONS = Math.floor(envNumber("BENCH_CONNECTIONS", 10, 1));
const ONLY = process.env.BENCH_ONLY || null;
const LOAD_MODE = process.env.BENCH_LOAD === "inprocess" ? "inprocess" : "child";
const PROFILE_DIR =
  process.env.BENCH_CPU_PROF === "1"
    ? join(BENCH_DIR, "results", "profiles")
    : process.env.BENCH_CPU_PROF || null;

const SEED = 42;
/** 2026-07-24T00:20:34Z. */
const ANCHOR = 1784852434;
const COUNTS: Record<MarketType, number> = { "5m": 60, "15m": 30, "1h": 4, "4h": 1, "24h": 0 };
const COINS = ["btc", "eth", "sol"] as const;
/** Cold pages take the last COLD_ROWS offsets of each market: 1..COLD_ROWS rows each, like a 5m market's offsets 0..299. */
const COLD_ROWS = 300;

/** Pages of 1000 snapshots (the default limit); page scenarios use the 1h and 4h markets of PAGE_COUNTS. */
const PAGE = 1000;
const PAGE_COUNTS: Record<MarketType, number> = { "5m": 60, "15m": 30, "1h": 8, "4h": 2, "24h": 0 };

const TARGETS = {
  "warm, no books": 0.6,
  "warm, books": 0.9,
  "cold, no books": 0.2,
  "cold, books": 0.3,
  "warm, books, br": 0.6,
} as const;
/** br bytes on the wire per snapshot with books, against its JSON. */
const WIRE_TARGET = 1 / 8;
/** Snapshots per second of a Parquet bulk export, against the NDJSON one. */
const EXPORT_TARGET = 0.5;

const STORAGE_TARGET = 1 / 8;

type ScenarioName = keyof typeof TARGETS;

// ---------------------------------------------------------------------------------------------------
// The load generator

interface LoadGenerator {
  sendList(name: string, paths: ListEntry[]): Promise<void>;
  run(job: LoadJob): Promise<LoadResult>;
  close(): void;
}

/** autocannon in this process: it shares the server's event loop (BENCH_LOAD=inprocess). */
class InProcessLoad implements LoadGenerator {
  async sendList(name: string, paths: ListEntry[]): Promise<void> {
    setList(name, paths);
  }
  run(job: LoadJob): Promise<LoadResult> {
    return runLoad(job);
  }
  close(): void {}
}

class LoadChild implements LoadGenerator {
  private readonly child: ChildProcess;
  private readonly pending = new Map<
    number,
    { resolve: (r: LoadResult) => void; reject: (e: Error) => void }
  >();
  private nextId = 1;
  private readonly ready: Promise<void>;

  constructor() {
    // No inherited execArgv: `node --cpu-prof bench/run.ts` profiles the server, not the load.
    this.child = fork(join(BENCH_DIR, "load.ts"), [], {
      execArgv: [],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.ready = new Promise((resolve, reject) => {
      this.child.on("message", (raw) => {
        const msg = raw as { type: string; id?: number; result?: LoadResult; error?: string };
        if (msg.type === "ready") resolve();
        if (msg.type !== "result" || msg.id === undefined) return;
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error !== undefined) p?.reject(new Error(`load child: ${msg.error}`));
        else if (msg.result) p?.resolve(msg.result);
      });
      this.child.on("exit", (code) => {
        const err = new Error(`load child exited (${code})`);
        reject(err);
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
      });
    });
  }

  async sendList(name: string, paths: ListEntry[]): Promise<void> {
    await this.ready;
    this.child.send({ type: "list", name, paths });
  }

  async run(job: LoadJob): Promise<LoadResult> {
    await this.ready;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ type: "run", id, job });
    });
  }

  close(): void {
    if (this.child.connected) this.child.send({ type: "exit" });
    const pid = this.child.pid;
    setTimeout(() => {
      if (this.child.exitCode === null && pid !== undefined) process.kill(pid);
    }, 2000).unref();
  }
}

// ---------------------------------------------------------------------------------------------------
// Results

const RESULTS = join(BENCH_DIR, "results", "latest.json");
/** Sections of latest.json written only by their own scenario (BENCH_ONLY=...), kept by every other run. */
const OWN_SECTIONS = ["replicas", "soak"] as const;

function previousResults(): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(RESULTS, "utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function writeResults(results: Record<string, unknown>): void {
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nresults: ${RESULTS}`);
}

// ---------------------------------------------------------------------------------------------------
// Storage: bytes per stored snapshot with books against its JSON size

interface StorageResult {
  snapshots: number;
  fileBytes: number;
  bytesPerSnapshot: number;
  jsonBytesPerSnapshot: number;
  /** The whole file against the JSON with books (reported; issue 14 bounds the books, below). */
  ratio: number;
  /** Book bytes stored (their blobs) per snapshot, and their JSON (orderbook_up and _down) per snapshot. */
  bookBytesPerSnapshot: number;
  bookJsonBytesPerSnapshot: number;
  /** Books on disk against their JSON: the target of issue 14 ("books at most 1/8 of their JSON"). */
  bookRatio: number;
  target: number;
  pass: boolean;
  /** Bytes per table and index, when SQLite has the dbstat table. */
  tables: Record<string, number> | null;
}

function fileSize(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

/** Bytes the snapshots of a served page take: the array's text less the commas between snapshots. */
function snapshotBytesOf(body: Buffer, count: number): number {
  const open = Buffer.from('"snapshots":[');
  const start = body.indexOf(open);
  const end = body.lastIndexOf(Buffer.from('],"total":'));
  if (start < 0 || end < start) throw new Error("unexpected page shape");
  return end - (start + open.length) - Math.max(count - 1, 0);
}

async function measureStorage(dir: string): Promise<StorageResult> {
  const path = join(dir, "storage.db");
  const store = new SqliteStore(path);
  try {
    await store.migrate();
    await seedDemo(store, {
      seed: SEED,
      anchor: ANCHOR,
      counts: { "5m": 20, "15m": 0, "1h": 0, "4h": 0, "24h": 0 },
      coins: ["btc"],
    });
    // Resolved markets keep their snapshots in blocks, the live one in the row tables: count both ways.
    const count = (sql: string) => (store.db.prepare(sql).get() as { n: number }).n;
    const snapshots = count("SELECT sum(snapshot_count) AS n FROM markets");
    store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    store.db.exec("VACUUM");
    store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const fileBytes = fileSize(path) + fileSize(`${path}-wal`);
    let tables: Record<string, number> | null = null;
    try {
      const rows = store.db.prepare("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name").all() as {
        name: string;
        bytes: number;
      }[];
      tables = Object.fromEntries(rows.map((r) => [r.name, r.bytes]));
    } catch {
      // SQLite built without dbstat.
    }

    // The JSON as served: every snapshot of every market, through the real route.
    const app = await buildApp({ store, logger: false });
    const { key } = await new KeyService(store.keys, systemClock, loadPlans()).create({
      plan: "enterprise",
      account: "bench",
    });
    let jsonBytes = 0;
    let bareJsonBytes = 0;
    let served = 0;
    for (const m of (await store.markets.listMarkets({ limit: 1000, offset: 0 })).markets) {
      for (let offset = 0; offset < m.snapshotCount; offset += 1000) {
        for (const books of [true, false]) {
          const res = await app.inject({
            method: "GET",
            url: `/v1/markets/${m.slug}/snapshots?limit=1000&offset=${offset}&include_orderbook=${books}`,
            headers: { "x-api-key": key },
          });
          if (res.statusCode !== 200)
            throw new Error(`storage page: ${res.statusCode} ${res.body.slice(0, 200)}`);
          const n = (res.json() as { snapshots: unknown[] }).snapshots.length;
          if (books) {
            jsonBytes += snapshotBytesOf(res.rawPayload, n);
            served += n;
          } else {
            bareJsonBytes += snapshotBytesOf(res.rawPayload, n);
          }
        }
      }
    }
    await app.close();
    // The books' own bytes: their blobs in the blocks, and the live market's book rows (keys included).
    const bookBytes =
      count("SELECT coalesce(sum(length(books)), 0) AS n FROM snapshot_blocks") +
      (tables?.snapshot_books ?? count("SELECT coalesce(sum(length(books)), 0) AS n FROM snapshot_books"));
    if (served !== snapshots) throw new Error(`served ${served} of ${snapshots} snapshots`);
    const bytesPerSnapshot = fileBytes / snapshots;
    const jsonBytesPerSnapshot = jsonBytes / served;
    const ratio = bytesPerSnapshot / jsonBytesPerSnapshot;
    const bookBytesPerSnapshot = bookBytes / snapshots;
    const bookJsonBytesPerSnapshot = (jsonBytes - bareJsonBytes) / served;
    const bookRatio = bookBytesPerSnapshot / bookJsonBytesPerSnapshot;
    return {
      snapshots,
      fileBytes,
      bytesPerSnapshot,
      jsonBytesPerSnapshot,
      ratio,
      bookBytesPerSnapshot,
      bookJsonBytesPerSnapshot,
      bookRatio,
      target: STORAGE_TARGET,
      pass: bookRatio <= STORAGE_TARGET,
      tables,
    };
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// Throughput

interface Measured extends LoadResult {
  /** Average bytes per response, headers included. */
  bytesPerResponse: number;
}

interface ScenarioResult {
  scenario: ScenarioName;
  path: string;
  /** Bytes of the body the baseline serves, captured from this scenario. */
  baselineBodyBytes: number;
  result: Measured;
  baselineBefore: Measured;
  baselineAfter: Measured;
  baselineReqPerSec: number;
  ratio: number;
  target: number;
  pass: boolean;
  /** Page reads the store did during the measurement (0 when every request came from the page cache). */
  storePageReads: number;
  /** Of those, reads of a page read before in this run (must be 0 for cold scenarios). */
  storePageRereads: number;
  /** Paths the load generator handed out from the cold list more than once in the whole run. */
  reissuedPaths: number;
  /**
   * CPU time (user and system) per answer of the server's process during the measurement, and of the
   * baseline's (the mean of before and after; null where /proc cannot be read): steadier than req/s
   * on a machine others load too.
   */
  cpuUsPerAnswer: number;
  baselineCpuUsPerAnswer: number | null;
  profile: string | null;
}

function measured(r: LoadResult): Measured {
  return { ...r, bytesPerResponse: r.requests > 0 ? r.bytesPerSec / r.reqPerSec : 0 };
}

/** Deterministic Fisher-Yates. */
function shuffle<T>(items: T[], rng: Rng): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/** A page as users ask for it: the default limit (1000). */
function pagePath(slug: string, offset: number, books: boolean): string {
  return `/v1/markets/${slug}/snapshots?offset=${offset}${books ? "&include_orderbook=true" : ""}`;
}

/** An answer's raw bytes (never decompressed) and the headers a baseline must send with them. */
function capture(
  url: string,
  headers: Record<string, string>,
): Promise<{ body: Buffer; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          if (res.statusCode !== 200) return reject(new Error(`${url}: ${res.statusCode}`));
          const sent: Record<string, string> = { "content-type": String(res.headers["content-type"]) };
          if (res.headers["content-encoding"]) sent["content-encoding"] = res.headers["content-encoding"];
          resolve({ body: Buffer.concat(chunks), headers: sent });
        });
      })
      .on("error", reject);
  });
}

/** The plain node:http baseline (bench/baseline.ts) in a child process of its own. */
class BaselineChild {
  readonly origin: string;
  private readonly child: ChildProcess;
  private nextId = 1;

  private constructor(child: ChildProcess, port: number) {
    this.child = child;
    this.origin = `http://127.0.0.1:${port}`;
  }

  static start(): Promise<BaselineChild> {
    const child = fork(join(BENCH_DIR, "baseline.ts"), [], {
      execArgv: [],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    return new Promise((resolve, reject) => {
      child.once("message", (raw) => {
        const msg = raw as { type: string; port: number };
        if (msg.type === "ready") resolve(new BaselineChild(child, msg.port));
      });
      child.once("exit", (code) => reject(new Error(`baseline exited (${code})`)));
    });
  }

  /** The baseline process's CPU time so far (user and system), in µs; null where /proc cannot be read. */
  cpuUs(): number | null {
    try {
      const fields = readFileSync(`/proc/${this.child.pid}/stat`, "utf8").split(") ")[1].split(" ");
      const ticksPerSecond = 100;
      return ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1e6;
    } catch {
      return null;
    }
  }

  /** From now on every answer is `body` with `headers` (Content-Length added). */
  serve(body: Buffer, headers: Record<string, string>, file: string): Promise<void> {
    writeFileSync(file, body);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const onMessage = (raw: unknown) => {
        const msg = raw as { type: string; id: number };
        if (msg.type !== "ok" || msg.id !== id) return;
        this.child.off("message", onMessage);
        resolve();
      };
      this.child.on("message", onMessage);
      this.child.send({ type: "body", id, path: file, headers });
    });
  }

  close(): void {
    if (this.child.connected) this.child.send({ type: "exit" });
  }
}

interface ExportResult {
  books: boolean;
  snapshotsPerExport: number;
  ndjson: Measured;
  parquet: Measured;
  ndjsonBytes: number;
  parquetBytes: number;
  ndjsonSnapshotsPerSec: number;
  parquetSnapshotsPerSec: number;
  ratio: number;
  target: number;
  pass: boolean;
}

/** A bulk export of one 1h market's range, as NDJSON and as Parquet, one connection at a time. */
async function measureExports(
  load: LoadGenerator,
  origin: string,
  headers: Record<string, string>,
  market: StoredMarket,
): Promise<ExportResult[]> {
  const range = `coin=${market.coin}&market_type=${market.marketType}&start_time=${market.startTime * 1000}&end_time=${market.endTime * 1000 - 1}`;
  const out: ExportResult[] = [];
  for (const books of [true, false]) {
    const path = (format: string) =>
      `/v1/snapshots/export?${range}&format=${format}${books ? "&include_orderbook=true" : ""}`;
    const bytes: Record<string, number> = {};
    const runs: Record<string, Measured> = {};
    for (const format of ["ndjson", "parquet"]) {
      bytes[format] = (await capture(origin + path(format), headers)).body.length;
      const job = { origin, headers, seconds: SECONDS, connections: 1, path: path(format) };
      if (WARMUP_SECONDS > 0) await load.run({ ...job, seconds: WARMUP_SECONDS });
      runs[format] = measured(await load.run(job));
    }
    const n = market.snapshotCount;
    const ratio = runs.parquet.reqPerSec / runs.ndjson.reqPerSec;
    out.push({
      books,
      snapshotsPerExport: n,
      ndjson: runs.ndjson,
      parquet: runs.parquet,
      ndjsonBytes: bytes.ndjson,
      parquetBytes: bytes.parquet,
      ndjsonSnapshotsPerSec: runs.ndjson.reqPerSec * n,
      parquetSnapshotsPerSec: runs.parquet.reqPerSec * n,
      ratio,
      target: EXPORT_TARGET,
      pass: ratio >= EXPORT_TARGET,
    });
    console.log(
      `  ${books ? "with" : "without"} books: NDJSON ${fmt(runs.ndjson.reqPerSec * n)} snapshots/s, Parquet ${fmt(runs.parquet.reqPerSec * n)} -> ${fmt(ratio, 3)}`,
    );
  }
  return out;
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function pad(text: string, width: number, left = false): string {
  return left ? text.padEnd(width) : text.padStart(width);
}

/** br bytes per snapshot with books against the JSON's, from the warm pages' bodies. */
function wireBytes(results: readonly ScenarioResult[]) {
  const json = results.find((r) => r.scenario === "warm, books");
  const br = results.find((r) => r.scenario === "warm, books, br");
  if (!json || !br) return null;
  const ratio = br.baselineBodyBytes / json.baselineBodyBytes;
  return {
    brPerSnapshot: br.baselineBodyBytes / PAGE,
    jsonPerSnapshot: json.baselineBodyBytes / PAGE,
    ratio,
    target: WIRE_TARGET,
    pass: ratio <= WIRE_TARGET,
  };
}

function backtestSection(tmp: string, load: LoadGenerator): Promise<BacktestBenchResult> {
  return measureBacktest({
    tmp,
    load,
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    connections: CONNECTIONS,
    profileDir: PROFILE_DIR,
    log: (line) => console.log(line),
  });
}

function sweepSection(tmp: string): Promise<SweepBenchResult> {
  return measureSweep({ tmp, log: (line) => console.log(line) });
}

function keylessFloodSection(tmp: string): ReturnType<typeof measureKeylessFlood> {
  return measureKeylessFlood({ tmp, seconds: SECONDS, log: (line) => console.log(line) });
}

/**
 * Writes the cold lists for wrk (files in `tmp`, one path a line): every (market, offset) with a full
 * page, shuffled, once without books and once with; returns how many pages each list has. The server's
 * heap (this process) keeps none of them once written: `updown serve` would not carry a few hundred
 * thousand path strings that every major collection would otherwise mark.
 */
function writeColdLists(wrk: WrkLoad, tmp: string, markets: readonly StoredMarket[]): number {
  const pairs: [string, number][] = [];
  for (const m of markets) {
    for (let offset = 0; offset + PAGE <= m.snapshotCount; offset++) pairs.push([m.slug, offset]);
  }
  const noBooks = shuffle(
    pairs.map(([slug, offset]) => pagePath(slug, offset, false)),
    Rng.named(SEED, "bench:cold"),
  );
  if (new Set(noBooks).size !== pairs.length) throw new Error("cold list repeats a path");
  wrk.setList("cold, no books", noBooks, join(tmp, "cold-no-books.paths"));
  wrk.setList(
    "cold, books",
    shuffle(
      pairs.map(([slug, offset]) => pagePath(slug, offset, true)),
      Rng.named(SEED, "bench:cold-books"),
    ),
    join(tmp, "cold-books.paths"),
  );
  return pairs.length;
}

/** Prints the replay's figures (bench/replay.ts) and answers them. */
function reportReplay(r: ReplayBenchResult): ReplayBenchResult {
  console.log(
    `\nreplay: ${fmt(r.events)} events over /v1/replay/ws at speed=max: ${fmt(r.replayPerSecond)} messages/s to a ` +
      `WebSocket client vs ${fmt(r.readPerSecond)} events/s read and decoded from the store -> ${fmt(r.ratio, 3)}, ` +
      `target >= ${r.target}: ${r.pass ? "PASS" : "FAIL"}`,
  );
  return r;
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(join(os.tmpdir(), "updown-bench-"));
  let load: LoadGenerator | null = null;
  let baseline: BaselineChild | null = null;
  const cleanup = () => rmSync(tmp, { recursive: true, force: true });
  process.once("SIGINT", () => {
    cleanup();
    process.exit(130);
  });
  try {
    console.log(
      `bench: node ${process.version}, ${os.cpus().length} CPUs, ${SECONDS}s per measurement (+${WARMUP_SECONDS}s warm-up), ${CONNECTIONS} connections`,
    );
    console.log(
      LOAD_MODE === "child"
        ? "load: autocannon in a child process (bench/load.ts) but for the page scenarios; server in this process"
        : "load: autocannon in this process, sharing the server's event loop (BENCH_LOAD=inprocess), but for the page scenarios",
    );

    if (ONLY === "replicas" || ONLY === "soak") {
      load = LOAD_MODE === "child" ? new LoadChild() : new InProcessLoad();
      const options = {
        data: { seed: SEED, anchor: ANCHOR, counts: COUNTS, coins: COINS },
        coldRows: COLD_ROWS,
        connections: CONNECTIONS,
        load,
        tmp,
        log: (line: string) => console.log(line),
      };
      const section =
        ONLY === "replicas"
          ? await measureReplicas({ ...options, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS })
          : await measureSoak({
              ...options,
              backends: soakBackends(),
              seconds: envNumber("BENCH_SOAK_SECONDS", 90, 1),
              warmupSeconds: envNumber("BENCH_SOAK_WARMUP_SECONDS", 30, 0),
              warmupMaxSeconds: envNumber(
                "BENCH_SOAK_WARMUP_MAX_SECONDS",
                120,
                envNumber("BENCH_SOAK_WARMUP_SECONDS", 30, 0),
              ),
              windowSeconds: envNumber("BENCH_SOAK_WINDOW_SECONDS", 30, 1),
              pageCacheMb: process.env.BENCH_SOAK_PAGE_CACHE_MB
                ? envNumber("BENCH_SOAK_PAGE_CACHE_MB", 128, 0)
                : undefined,
              heapSnapshots: process.env.BENCH_SOAK_HEAP_SNAPSHOTS || null,
            });
      writeResults({ ...previousResults(), [ONLY]: section });
      return;
    }

    if (ONLY === "event-recording") {
      writeResults({
        ...previousResults(),
        eventRecording: await measureEventRecording({ tmp, log: console.log }),
      });
      return;
    }

    if (ONLY === "event-storage") {
      writeResults({ ...previousResults(), eventStorage: await eventStorageSection(tmp) });
      return;
    }

    if (ONLY === "pmxt-import") {
      writeResults({ ...previousResults(), pmxtImport: await measurePmxtImportApart(tmp) });
      return;
    }

    if (ONLY === "replay") {
      writeResults({ ...previousResults(), replay: reportReplay(await measureReplay({ tmp })) });
      return;
    }

    if (ONLY === "sweep") {
      writeResults({ ...previousResults(), sweep: await sweepSection(tmp) });
      return;
    }

    if (ONLY === "keyless-flood") {
      writeResults({ ...previousResults(), keylessFlood: await keylessFloodSection(tmp) });
      return;
    }

    if (ONLY === "backtest") {
      load = LOAD_MODE === "child" ? new LoadChild() : new InProcessLoad();
      const section = await backtestSection(tmp, load);
      writeResults({ ...previousResults(), backtest: section });
      return;
    }

    let t0 = performance.now();
    const storage = await measureStorage(tmp);
    console.log(`storage measured (${fmt(performance.now() - t0)} ms)`);

    t0 = performance.now();
    const dbPath = join(tmp, "bench.db");
    const store = new SqliteStore(dbPath);
    await store.migrate();
    const seeded = await seedDemo(store, {
      seed: SEED,
      anchor: ANCHOR,
      counts: PAGE_COUNTS,
      coins: [...COINS],
    });
    console.log(
      `seeded ${seeded.markets} markets, ${fmt(seeded.snapshots)} snapshots (${fmt(performance.now() - t0)} ms)`,
    );

    // Count the store's page reads, and re-reads of a page already read: a cold request must never
    // be served from the page cache, nor repeat a page.
    let pageReads = 0;
    let pageRereads = 0;
    const pagesRead = new Set<string>();
    const countRead = (marketKey: number, q: SnapshotQuery) => {
      pageReads++;
      const k = `${marketKey}:${q.order}:${q.limit}:${q.offset}:${q.from}:${q.to}:${q.books}`;
      if (pagesRead.has(k)) pageRereads++;
      else pagesRead.add(k);
    };
    // A resolved market's page is read through renderedPage; snapshotPage serves the rest.
    const snapshotPage = store.markets.snapshotPage.bind(store.markets);
    store.markets.snapshotPage = (marketKey, q) => {
      countRead(marketKey, q);
      return snapshotPage(marketKey, q);
    };
    const renderedPage = store.markets.renderedPage.bind(store.markets);
    store.markets.renderedPage = (marketKey, q) => {
      countRead(marketKey, q);
      return renderedPage(marketKey, q);
    };

    // The API server as `updown serve` runs it: request logging at info through the asynchronous
    // destination (to a file here, so that the report stays readable; lines counted at the end).
    const logPath = join(tmp, "requests.log");
    const requestLog = serverLog("info", openSync(logPath, "w"));
    const ctx = buildContext({ store });
    // A page read on a page reader thread is read through that thread's own connection.
    const readElsewhere = ctx.pageReaders.read.bind(ctx.pageReaders);
    ctx.pageReaders.read = (market, ask) => {
      const reading = readElsewhere(market, ask);
      if (reading !== null) {
        const total = market.snapshotCount;
        countRead(market.key, { ...ask, total });
      }
      return reading;
    };
    const app = await serverOver(ctx, { loggerInstance: requestLog.logger });
    const { key } = await new KeyService(store.keys, systemClock, loadPlans()).create({
      plan: "enterprise",
      account: "bench",
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const address = app.server.address();
    if (!address || typeof address === "string") throw new Error("no server address");
    const origin = `http://127.0.0.1:${address.port}`;
    const headers = { "x-api-key": key };
    baseline = await BaselineChild.start();
    console.log(
      `baseline: a plain node:http server in a process of its own (bench/baseline.ts), ${baseline.origin}`,
    );

    // Pages of 1000 (the default limit) of resolved 1h and 4h markets: the warm page is the first page
    // of one 1h market; the cold lists are every (market, offset) with a full page of the others, but
    // for one market kept out for the cold baseline's bytes.
    const resolved = (await store.markets.listMarkets({ resolved: true, limit: 10_000, offset: 0 })).markets;
    const long = resolved.filter((m) => m.snapshotCount >= 2 * PAGE);
    const warmMarket = long.find((m) => m.coin === "btc" && m.marketType === "1h");
    const coldSample = long.find((m) => m.coin === "eth" && m.marketType === "1h");
    if (!warmMarket || !coldSample) throw new Error("no resolved 1h markets");
    load = LOAD_MODE === "child" ? new LoadChild() : new InProcessLoad();
    const wrk = new WrkLoad(ensureWrk((line) => console.log(line)));
    console.log(
      `page scenarios: wrk, ${WRK_THREADS} thread, ${WRK_CONNECTIONS} connections, against the server and the baseline alike`,
    );
    console.log(
      `page reader threads: ${ctx.pageReaders.size} (the server's default; cold pages are read on them, src/http/page-readers.ts)`,
    );
    const coldPages = writeColdLists(
      wrk,
      tmp,
      long.filter((m) => m !== warmMarket && m !== coldSample),
    );
    console.log(
      `cold lists: ${fmt(coldPages)} distinct pages each (${long.length - 2} resolved 1h and 4h markets, every page 1000 snapshots)`,
    );

    const session = PROFILE_DIR ? new Session() : null;
    if (session && PROFILE_DIR) {
      mkdirSync(PROFILE_DIR, { recursive: true });
      session.connect();
      await session.post("Profiler.enable");
    }

    const br = { "accept-encoding": "br" };
    const warmPath = (books: boolean) => pagePath(warmMarket.slug, 0, books);
    const scenarios: {
      name: ScenarioName;
      path: string;
      capture: string;
      list?: string;
      extra?: Record<string, string>;
    }[] = [
      { name: "warm, no books", path: warmPath(false), capture: warmPath(false) },
      { name: "warm, books", path: warmPath(true), capture: warmPath(true) },
      {
        name: "cold, no books",
        path: "(rotating)",
        capture: pagePath(coldSample.slug, 500, false),
        list: "cold, no books",
      },
      {
        name: "cold, books",
        path: "(rotating)",
        capture: pagePath(coldSample.slug, 500, true),
        list: "cold, books",
      },
      { name: "warm, books, br", path: warmPath(true), capture: warmPath(true), extra: br },
    ];

    const job = (
      o: string,
      seconds: number,
      target: { path?: string; list?: string },
      extra: Record<string, string> = {},
    ) => ({ origin: o, headers: { ...headers, ...extra }, seconds, ...target });
    const results: ScenarioResult[] = [];
    let reissuedTotal = 0;
    for (const s of scenarios) {
      if (ONLY !== null && ONLY !== "pages" && !s.name.includes(ONLY)) continue;
      // The scenario's own bytes and headers, captured from the server (this also puts a warm page in
      // the cache); the baseline sends the same body with the same Content-Type and Content-Encoding.
      const captured = await capture(origin + s.capture, { ...headers, ...s.extra });
      await baseline.serve(captured.body, captured.headers, join(tmp, "baseline.body"));
      const target = s.list !== undefined ? { list: s.list } : { path: s.path };

      // CPU per answer of the baseline's process over one measurement (null without /proc).
      const baselineRun = async () => {
        const cpu0 = baseline?.cpuUs() ?? null;
        const m = measured(await wrk.run(job(baseline?.origin ?? "", SECONDS, { path: "/" }, s.extra)));
        const cpu1 = baseline?.cpuUs() ?? null;
        const cpuUs = cpu0 === null || cpu1 === null || m.requests === 0 ? null : (cpu1 - cpu0) / m.requests;
        return { m, cpuUs };
      };
      if (WARMUP_SECONDS > 0) await wrk.run(job(baseline.origin, WARMUP_SECONDS, { path: "/" }, s.extra));
      const { m: before, cpuUs: cpuBefore } = await baselineRun();
      if (WARMUP_SECONDS > 0) await wrk.run(job(origin, WARMUP_SECONDS, target, s.extra));
      const reads0 = pageReads;
      const rereads0 = pageRereads;
      if (session) await session.post("Profiler.start");
      const cpu0 = process.cpuUsage();
      const main = measured(await wrk.run(job(origin, SECONDS, target, s.extra)));
      const cpu = process.cpuUsage(cpu0);
      const cpuUsPerAnswer = main.requests > 0 ? (cpu.user + cpu.system) / main.requests : 0;
      let profile: string | null = null;
      if (session && PROFILE_DIR) {
        const { profile: p } = await session.post("Profiler.stop");
        profile = join(PROFILE_DIR, `${s.name.replace(/[^a-z]+/g, "-")}.cpuprofile`);
        writeFileSync(profile, JSON.stringify(p));
      }
      const reads = pageReads - reads0;
      const rereads = pageRereads - rereads0;
      const { m: after, cpuUs: cpuAfter } = await baselineRun();
      reissuedTotal += main.reissued;
      const baselineCpuUsPerAnswer =
        cpuBefore === null || cpuAfter === null ? null : (cpuBefore + cpuAfter) / 2;

      const baselineReqPerSec = (before.reqPerSec + after.reqPerSec) / 2;
      const ratio = main.reqPerSec / baselineReqPerSec;
      const r: ScenarioResult = {
        scenario: s.name,
        path: s.path,
        baselineBodyBytes: captured.body.length,
        result: main,
        baselineBefore: before,
        baselineAfter: after,
        baselineReqPerSec,
        ratio,
        target: TARGETS[s.name],
        pass: ratio >= TARGETS[s.name],
        storePageReads: reads,
        storePageRereads: rereads,
        reissuedPaths: main.reissued,
        cpuUsPerAnswer,
        baselineCpuUsPerAnswer,
        profile,
      };
      results.push(r);
      const cpuText = `CPU per answer ${fmt(cpuUsPerAnswer)} µs vs ${baselineCpuUsPerAnswer === null ? "?" : fmt(baselineCpuUsPerAnswer)} µs baseline`;
      console.log(
        `  ${s.name}: ${fmt(main.reqPerSec)} req/s vs ${fmt(before.reqPerSec)} / ${fmt(after.reqPerSec)} baseline -> ${fmt(ratio, 3)}; ${cpuText}`,
      );
      const bad = main.errors + main.timeouts + main.non2xx + before.non2xx + after.non2xx;
      if (bad > 0) console.log(`  WARNING: ${s.name}: errors/timeouts/non-2xx responses: ${bad}`);
    }
    session?.disconnect();

    let exports: ExportResult[] = [];
    if (ONLY === null || ONLY.startsWith("export")) {
      console.log("\nbulk export of one 1h market (GET /v1/snapshots/export), one connection");
      exports = await measureExports(load, origin, headers, warmMarket);
    }

    let metering: MeteringResult[] = [];
    if (ONLY === null || ONLY.startsWith("metering")) {
      metering = await measureMetering({
        store,
        slug: coldSample.slug,
        load,
        seconds: SECONDS,
        warmupSeconds: WARMUP_SECONDS,
        connections: CONNECTIONS,
        log: (text) => console.log(text),
      });
    }
    let recording: RecordingResult | null = null;
    if (ONLY === null || ONLY.startsWith("recording")) {
      console.log("\nrecording: the collector following 300 live markets, 30 ticks");
      recording = await measureRecording({ tmp, markets: 300, ticks: 30 });
    }
    const eventRecording = ONLY === null ? await measureEventRecording({ tmp, log: console.log }) : null;
    let backtest: BacktestBenchResult | null = null;
    if (ONLY === null) backtest = await backtestSection(tmp, load);
    const sweep = ONLY === null ? await sweepSection(tmp) : null;
    const replay = ONLY === null ? reportReplay(await measureReplay({ tmp })) : null;
    const eventStorage = ONLY === null ? await eventStorageSection(tmp) : null;
    const pmxtImport = ONLY === null ? await measurePmxtImportApart(tmp) : null;
    const keylessFlood = ONLY === null ? await keylessFloodSection(tmp) : null;
    load.close();
    load = null;
    baseline.close();
    baseline = null;
    await app.close();
    await store.close();
    const logLines = readFileSync(logPath, "utf8")
      .split("\n")
      .filter((l) => l.includes('"request completed"')).length;

    // ---- report
    const cols: [string, number][] = [
      ["scenario", 16],
      ["req/s", 9],
      ["baseline req/s", 15],
      ["ratio", 7],
      ["target", 8],
      ["result", 7],
      ["p50 ms", 7],
      ["p99 ms", 7],
      ["base p50/p99", 13],
      ["body bytes", 11],
    ];
    const line = (cells: string[]) => cells.map((c, i) => pad(c, cols[i][1], i === 0)).join("  ");
    console.log("");
    console.log(line(cols.map((c) => c[0])));
    console.log(line(cols.map((c) => "-".repeat(c[1]))));
    for (const r of results) {
      const base = (r.baselineBefore.p50Ms + r.baselineAfter.p50Ms) / 2;
      const base99 = (r.baselineBefore.p99Ms + r.baselineAfter.p99Ms) / 2;
      console.log(
        line([
          r.scenario,
          fmt(r.result.reqPerSec),
          fmt(r.baselineReqPerSec),
          fmt(r.ratio, 3),
          `>= ${r.target}`,
          r.pass ? "PASS" : "FAIL",
          fmt(r.result.p50Ms, 2),
          fmt(r.result.p99Ms, 2),
          `${fmt(base, 2)}/${fmt(base99, 2)}`,
          fmt(r.baselineBodyBytes),
        ]),
      );
    }
    console.log("");
    console.log(
      "body bytes: the body the baseline serves, a page of 1000 snapshots (warm: the page itself; cold: another page of 1000, outside the lists; br: the page's br bytes)",
    );
    for (const r of results.filter((x) => x.scenario.startsWith("cold"))) {
      console.log(
        `${r.scenario}: ${fmt(r.result.requests)} answers, ${fmt(r.storePageReads)} store page reads during the measurement, ${r.storePageRereads} of a page read before; ` +
          `avg response ${fmt(r.result.bytesPerResponse)} B vs baseline ${fmt(r.baselineBefore.bytesPerResponse)} B`,
      );
    }
    console.log(`cold paths handed out more than once in the run: ${reissuedTotal}`);
    console.log(`request log lines written at info during the run: ${fmt(logLines)}`);
    const wire = wireBytes(results);
    if (wire) {
      console.log(
        `br on the wire: ${fmt(wire.brPerSnapshot, 1)} B/snapshot with books vs ${fmt(wire.jsonPerSnapshot, 1)} B/snapshot as JSON -> ` +
          `1/${fmt(1 / wire.ratio, 1)}, target <= 1/8: ${wire.pass ? "PASS" : "FAIL"}`,
      );
    }
    for (const e of exports) {
      console.log(
        `bulk export ${e.books ? "with" : "without"} books (${fmt(e.snapshotsPerExport)} snapshots; NDJSON ${fmt(e.ndjsonBytes)} B, Parquet ${fmt(e.parquetBytes)} B): ` +
          `Parquet ${fmt(e.parquetSnapshotsPerSec)} snapshots/s vs NDJSON ${fmt(e.ndjsonSnapshotsPerSec)} -> ${fmt(e.ratio, 3)}, target >= ${e.target}: ${e.pass ? "PASS" : "FAIL"}`,
      );
    }

    if (metering.length > 0) {
      console.log("");
      console.log(
        "authentication and rate limiting: GET /v1/markets/{slug} metered vs unmetered (same store)",
      );
      for (const m of metering) {
        console.log(
          `  ${pad(m.limiter, 7, true)} ${fmt(m.reqPerSec)} req/s (p99 ${fmt(m.p99Ms, 2)} ms) vs ${fmt((m.unmeteredBefore + m.unmeteredAfter) / 2)} unmetered -> ` +
            `${fmt(m.ratio, 3)}, target >= ${m.target}: ${m.pass ? "PASS" : "FAIL"}${m.non2xx ? ` (${m.non2xx} non-2xx!)` : ""}`,
        );
      }
    }
    if (recording) {
      console.log("");
      console.log(
        `recording: ${fmt(recording.snapshots)} snapshots of ${recording.markets} markets in ${recording.ticks} ticks: ` +
          `${fmt(recording.recordingPerSecond)} snapshots/s while recording vs ${fmt(recording.bulkPerSecond)}/s bulk insert ` +
          `of the same rows -> ${fmt(recording.ratio, 3)}; a tick took ${recording.tickP50Ms} ms (p50), ${recording.tickMaxMs} ms (max)`,
      );
    }
    console.log("");
    console.log(
      "storage (btc 5m x 20 markets, every snapshot with books; after wal_checkpoint(TRUNCATE) and VACUUM)",
    );
    console.log(
      `  books: ${fmt(storage.bookBytesPerSnapshot, 1)} B/snapshot stored vs ${fmt(storage.bookJsonBytesPerSnapshot, 1)} B/snapshot as JSON -> ` +
        `${fmt(storage.bookRatio, 4)} (1/${fmt(1 / storage.bookRatio, 1)}), target <= 1/8: ${storage.pass ? "PASS" : "FAIL"}`,
    );
    console.log(
      `  whole file: ${fmt(storage.snapshots)} snapshots, ${fmt(storage.fileBytes)} B: ${fmt(storage.bytesPerSnapshot, 1)} B/snapshot stored, ` +
        `${fmt(storage.jsonBytesPerSnapshot, 1)} B/snapshot as JSON with books -> ${fmt(storage.ratio, 4)} (1/${fmt(1 / storage.ratio, 1)}; ` +
        `prices are also kept rendered, see docs/decisions.md)`,
    );
    if (storage.tables) {
      const big = Object.entries(storage.tables)
        .filter(([, bytes]) => bytes >= storage.snapshots)
        .sort((a, b) => b[1] - a[1]);
      const rest = storage.fileBytes - big.reduce((sum, [, bytes]) => sum + bytes, 0);
      const parts = [...big, ["everything else", rest] as const].map(
        ([name, bytes]) => `${name} ${fmt(bytes / storage.snapshots, 1)}`,
      );
      console.log(`  B/snapshot by table: ${parts.join(", ")}`);
    }

    const previous = previousResults();
    writeResults({
      at: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? null,
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      connections: CONNECTIONS,
      load: {
        pages: `wrk, ${WRK_THREADS} thread, ${WRK_CONNECTIONS} connections (a process of its own)`,
        rest:
          LOAD_MODE === "child"
            ? "autocannon in a child process; server in the parent"
            : "autocannon in the server's process and event loop",
      },
      data: { seed: SEED, anchor: ANCHOR, counts: PAGE_COUNTS, coins: COINS, ...seeded },
      baseline: "a plain node:http server in a child process of its own (bench/baseline.ts)",
      coldDistinctPages: coldPages,
      scenarios: results,
      requestLogLines: logLines,
      wire: wireBytes(results),
      exports,
      metering,
      recording,
      eventRecording,
      storage,
      backtest,
      sweep,
      replay,
      eventStorage,
      pmxtImport,
      keylessFlood,
      ...Object.fromEntries(OWN_SECTIONS.filter((k) => k in previous).map((k) => [k, previous[k]])),
    });
  } finally {
    load?.close();
    baseline?.close();
    cleanup();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
