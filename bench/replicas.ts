/**
 * BENCH_ONLY=replicas: the snapshot pages of bench/run.ts (cold and warm, with and without books)
 * served by one `updown serve` on SQLite, and by two `updown serve` on one PostgreSQL with a shared
 * Redis, the load spread over both (autocannon given both origins: its connections alternate
 * between them). Ratio = pages/s of the two PostgreSQL replicas / pages/s of the one SQLite process,
 * the SQLite process measured right before and right after (their mean is used).
 *
 * Both stores get the same rows from `updown seed` with the same options, and an enterprise key from
 * `updown keys create` (metering on, nothing refused); the processes run with the caller's environment
 * minus the service's own variables, LOG_LEVEL=warn (the log is not what is measured), and REDIS_URL
 * only for the PostgreSQL pair. PostgreSQL and Redis are servers of this run's own
 * (test/helpers/services.ts), never REDIS_URL or a CI server; without their binaries the scenario
 * is skipped. Everything shares this machine's cores: the replicas, PostgreSQL, Redis and the load.
 */
import { createHash } from "node:crypto";
import os from "node:os";
import { join } from "node:path";
import type { MarketType } from "../src/domain/market.ts";
import { Rng } from "../src/demo/demo.ts";
import type { StoredMarket } from "../src/store/ports/market-store.ts";
import {
  missingServerBinaries,
  type OwnServer,
  startOwnPostgres,
  startOwnRedis,
} from "../test/helpers/services.ts";
import type { LoadJob, LoadResult } from "./load.ts";
import {
  type BenchData,
  cpuSecondsOf,
  enterpriseKey,
  fmt,
  pidsByCommandLine,
  seed,
  ServeProcess,
  serviceEnv,
  sqliteMarkets,
} from "./processes.ts";

interface Load {
  sendList(name: string, paths: string[]): Promise<void>;
  run(job: LoadJob): Promise<LoadResult>;
}

/** CPU seconds a side used during a measurement, per process group, and per 1000 pages. */
interface CpuUse {
  seconds: Record<string, number>;
  msPerPage: number;
}

interface Measurement extends LoadResult {
  cpu: CpuUse;
}

export interface ReplicasWorkload {
  workload: string;
  /** The page requested (warm), or "(rotating)" through distinct pages (cold). */
  path: string;
  sqliteBefore: Measurement;
  postgres: Measurement;
  sqliteAfter: Measurement;
  /** Mean of the SQLite measurements before and after. */
  sqlitePagesPerSec: number;
  postgresPagesPerSec: number;
  /** postgresPagesPerSec / sqlitePagesPerSec. */
  ratio: number;
}

export interface ReplicasResult {
  at: string;
  skipped: string | null;
  cpus: number;
  cpuModel: string | null;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  setup: {
    sqliteSeedMs: number;
    postgresSeedMs: number;
    coldDistinctPages: number;
    /** Responses fetched from both setups before measuring, and how many had the same body. */
    sameBodies: { checked: number; identical: number };
  } | null;
  workloads: ReplicasWorkload[];
}

export interface ReplicasOptions {
  data: BenchData;
  /** Cold pages take the last coldRows offsets of each market (as in bench/run.ts). */
  coldRows: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  load: Load;
  tmp: string;
  log: (line: string) => void;
}

function pagePath(slug: string, offset: number, books: boolean): string {
  return `/v1/markets/${slug}/snapshots?limit=1000&offset=${offset}${books ? "&include_orderbook=true" : ""}`;
}

function shuffle<T>(items: T[], rng: Rng): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

function portOf(url: string): string {
  return new URL(url).port;
}

export async function measureReplicas(o: ReplicasOptions): Promise<ReplicasResult> {
  const { log } = o;
  const cpus = os.cpus();
  const result: ReplicasResult = {
    at: new Date().toISOString(),
    skipped: null,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? null,
    seconds: o.seconds,
    warmupSeconds: o.warmupSeconds,
    connections: o.connections,
    setup: null,
    workloads: [],
  };
  log(
    `replicas: this machine has ${cpus.length} CPU cores (${result.cpuModel ?? "unknown model"}); the PostgreSQL pair's ` +
      `two replicas, PostgreSQL, Redis and the load generator all share them`,
  );
  const missing = missingServerBinaries();
  if (missing) {
    result.skipped = missing;
    log(`replicas: skipped: ${missing}`);
    return result;
  }

  let pg: OwnServer | null = null;
  let redis: OwnServer | null = null;
  const serves: ServeProcess[] = [];
  try {
    // ---- the same data in both stores
    const sqlitePath = join(o.tmp, "replicas.db");
    const sqliteUrl = `sqlite:${sqlitePath}`;
    let t0 = performance.now();
    seed(sqliteUrl, o.data);
    const sqliteSeedMs = performance.now() - t0;
    pg = await startOwnPostgres();
    redis = await startOwnRedis();
    t0 = performance.now();
    seed(pg.url, o.data);
    const postgresSeedMs = performance.now() - t0;
    const sqliteKey = enterpriseKey(sqliteUrl, "bench-replicas");
    const pgKey = enterpriseKey(pg.url, "bench-replicas");
    log(
      `  seeded SQLite in ${fmt(sqliteSeedMs)} ms and PostgreSQL in ${fmt(postgresSeedMs)} ms (updown seed --seed ${o.data.seed}, same options)`,
    );

    // ---- the pages, chosen as bench/run.ts chooses them
    const resolved = (await sqliteMarkets(sqlitePath)).filter((m) => m.winner !== null);
    const pick = (type: MarketType): StoredMarket => {
      const m = resolved.find((x) => x.coin === "btc" && x.marketType === type);
      if (!m) throw new Error(`no resolved btc ${type} market`);
      return m;
    };
    const warmMarket = pick("1h");
    const sample = pick("5m");
    const coldPairs: [string, number][] = [];
    for (const m of resolved) {
      if (m === warmMarket || m === sample) continue;
      for (let offset = Math.max(0, m.snapshotCount - o.coldRows); offset < m.snapshotCount; offset++) {
        coldPairs.push([m.slug, offset]);
      }
    }
    const coldList = (books: boolean) =>
      shuffle(
        coldPairs.map(([slug, offset]) => pagePath(slug, offset, books)),
        Rng.named(o.data.seed, books ? "bench:cold-books" : "bench:cold"),
      );
    // One list per setup, same order: each setup reads the same pages in the same order, none twice.
    for (const books of [false, true]) {
      const list = coldList(books);
      const name = books ? "cold, books" : "cold, no books";
      await o.load.sendList(`replicas sqlite: ${name}`, list);
      await o.load.sendList(`replicas postgres: ${name}`, list);
    }

    // ---- the processes
    const env = { LOG_LEVEL: "warn", SEED_DEMO: "0" };
    const sqliteServe = await ServeProcess.start(serviceEnv({ ...env, DATABASE_URL: sqliteUrl }));
    serves.push(sqliteServe);
    const pgServes = [
      await ServeProcess.start(serviceEnv({ ...env, DATABASE_URL: pg.url, REDIS_URL: redis.url })),
      await ServeProcess.start(serviceEnv({ ...env, DATABASE_URL: pg.url, REDIS_URL: redis.url })),
    ];
    serves.push(...pgServes);
    const postgresPids = pidsByCommandLine(new RegExp(`bin/postgres .*-p ${portOf(pg.url)}( |$)`));
    const redisPids = pidsByCommandLine(new RegExp(`redis-server .*:${portOf(redis.url)}( |$)`));
    for (const s of pgServes) {
      const ready = await fetch(`${s.origin}/readyz`);
      const body = (await ready.json()) as { store?: string; limiter?: string };
      if (ready.status !== 200 || body.store !== "postgres" || body.limiter !== "redis") {
        throw new Error(`replica ${s.origin} not ready on postgres + redis: ${JSON.stringify(body)}`);
      }
    }

    // ---- same data: the same responses from both setups (pages outside the cold lists)
    const checks = [
      "/v1/markets?limit=100",
      pagePath(warmMarket.slug, 0, false),
      pagePath(warmMarket.slug, 0, true),
      pagePath(sample.slug, sample.snapshotCount - o.coldRows / 2, false),
      pagePath(sample.slug, sample.snapshotCount - o.coldRows / 2, true),
    ];
    const digest = async (origin: string, key: string, path: string) => {
      const res = await fetch(origin + path, { headers: { "x-api-key": key } });
      if (res.status !== 200) throw new Error(`${origin}${path}: ${res.status} ${await res.text()}`);
      return createHash("sha256")
        .update(Buffer.from(await res.arrayBuffer()))
        .digest("hex");
    };
    let identical = 0;
    for (const path of checks) {
      const a = await digest(sqliteServe.origin, sqliteKey, path);
      const b = await digest(pgServes[0].origin, pgKey, path);
      const c = await digest(pgServes[1].origin, pgKey, path);
      if (a === b && b === c) identical++;
      else log(`  WARNING: ${path}: the SQLite and PostgreSQL setups answer different bodies`);
    }
    result.setup = {
      sqliteSeedMs,
      postgresSeedMs,
      coldDistinctPages: coldPairs.length,
      sameBodies: { checked: checks.length, identical },
    };
    log(
      `  same body from both setups on ${identical} of ${checks.length} sample responses; cold lists: ${fmt(coldPairs.length)} distinct pages each`,
    );

    // ---- measurements
    const sides = {
      sqlite: {
        origin: sqliteServe.origin as string | string[],
        headers: { "x-api-key": sqliteKey },
        groups: { server: [sqliteServe.pid] } as Record<string, number[]>,
      },
      postgres: {
        origin: pgServes.map((s) => s.origin),
        headers: { "x-api-key": pgKey },
        groups: {
          replicas: pgServes.map((s) => s.pid),
          postgres: postgresPids,
          redis: redisPids,
        } as Record<string, number[]>,
      },
    };
    const measure = async (
      side: keyof typeof sides,
      target: { path?: string; list?: string },
    ): Promise<Measurement> => {
      const s = sides[side];
      const job = (seconds: number): LoadJob => ({
        origin: s.origin,
        headers: s.headers,
        seconds,
        connections: o.connections,
        ...target,
      });
      if (o.warmupSeconds > 0) await o.load.run(job(o.warmupSeconds));
      const cpu0 = Object.fromEntries(Object.entries(s.groups).map(([g, pids]) => [g, cpuSecondsOf(pids)]));
      const r = await o.load.run(job(o.seconds));
      const seconds = Object.fromEntries(
        Object.entries(s.groups).map(([g, pids]) => [g, cpuSecondsOf(pids) - cpu0[g]]),
      );
      const total = Object.values(seconds).reduce((a, b) => a + b, 0);
      return { ...r, cpu: { seconds, msPerPage: r.requests > 0 ? (total * 1000) / r.requests : 0 } };
    };

    const workloads: {
      name: string;
      path: string;
      target: (side: string) => { path?: string; list?: string };
    }[] = [
      {
        name: "cold, no books",
        path: "(rotating)",
        target: (side) => ({ list: `replicas ${side}: cold, no books` }),
      },
      {
        name: "cold, books",
        path: "(rotating)",
        target: (side) => ({ list: `replicas ${side}: cold, books` }),
      },
      { name: "warm, no books", path: checks[1], target: () => ({ path: checks[1] }) },
      { name: "warm, books", path: checks[2], target: () => ({ path: checks[2] }) },
    ];
    for (const w of workloads) {
      const sqliteBefore = await measure("sqlite", w.target("sqlite"));
      const postgres = await measure("postgres", w.target("postgres"));
      const sqliteAfter = await measure("sqlite", w.target("sqlite"));
      const sqlitePagesPerSec = (sqliteBefore.reqPerSec + sqliteAfter.reqPerSec) / 2;
      const ratio = postgres.reqPerSec / sqlitePagesPerSec;
      result.workloads.push({
        workload: w.name,
        path: w.path,
        sqliteBefore,
        postgres,
        sqliteAfter,
        sqlitePagesPerSec,
        postgresPagesPerSec: postgres.reqPerSec,
        ratio,
      });
      log(
        `  ${w.name}: 2 replicas on PostgreSQL ${fmt(postgres.reqPerSec)} pages/s vs 1 on SQLite ${fmt(sqliteBefore.reqPerSec)} / ${fmt(sqliteAfter.reqPerSec)} -> ${fmt(ratio, 3)}`,
      );
      for (const [label, m] of [
        ["SQLite before", sqliteBefore],
        ["PostgreSQL", postgres],
        ["SQLite after", sqliteAfter],
      ] as const) {
        const bad = m.errors + m.timeouts + m.non2xx;
        if (bad > 0) log(`  WARNING: ${w.name}, ${label}: ${bad} errors/timeouts/non-2xx responses`);
        if (m.reissued > 0) log(`  WARNING: ${w.name}, ${label}: ${m.reissued} cold pages requested again`);
      }
    }
    for (const s of serves) {
      if (s.errorLines > 0)
        log(`  WARNING: ${s.origin} logged ${s.errorLines} errors, first: ${s.firstErrors[0]}`);
    }
  } finally {
    for (const s of serves) await s.stop();
    await pg?.remove();
    await redis?.remove();
  }
  report(result, log);
  return result;
}

function report(r: ReplicasResult, log: (line: string) => void): void {
  if (r.workloads.length === 0) return;
  const cols: [string, number][] = [
    ["workload", 15],
    ["1 SQLite pages/s", 16],
    ["2 PG pages/s", 12],
    ["ratio", 6],
    ["SQLite p50/p99", 14],
    ["PG p50/p99", 12],
    ["CPU ms/page SQLite", 18],
    ["CPU ms/page PG (replicas+pg+redis)", 34],
  ];
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(cols[i][1]) : c.padStart(cols[i][1]))).join("  ");
  log("");
  log(
    `replicas: pages/s of one serve on SQLite vs two serve on one PostgreSQL + Redis (${r.cpus} CPU cores shared by everything; ` +
      `${r.connections} connections, ${r.seconds}s per measurement)`,
  );
  log(line(cols.map((c) => c[0])));
  log(line(cols.map((c) => "-".repeat(c[1]))));
  for (const w of r.workloads) {
    const sq = [w.sqliteBefore, w.sqliteAfter];
    const mean = (f: (m: Measurement) => number) => (f(sq[0]) + f(sq[1])) / 2;
    const pgCpu = w.postgres.cpu.seconds;
    const perPage = (s: number) => (w.postgres.requests > 0 ? (s * 1000) / w.postgres.requests : 0);
    log(
      line([
        w.workload,
        fmt(w.sqlitePagesPerSec),
        fmt(w.postgresPagesPerSec),
        fmt(w.ratio, 3),
        `${fmt(
          mean((m) => m.p50Ms),
          1,
        )}/${fmt(
          mean((m) => m.p99Ms),
          1,
        )}`,
        `${fmt(w.postgres.p50Ms, 1)}/${fmt(w.postgres.p99Ms, 1)}`,
        fmt(
          mean((m) => m.cpu.msPerPage),
          2,
        ),
        `${fmt(w.postgres.cpu.msPerPage, 2)} (${fmt(perPage(pgCpu.replicas), 2)}+${fmt(perPage(pgCpu.postgres), 2)}+${fmt(perPage(pgCpu.redis), 2)})`,
      ]),
    );
  }
  log(
    "CPU ms/page: CPU time of the serving processes (and PostgreSQL's backends, Redis) during the measurement per page served; the load generator not counted",
  );
}
