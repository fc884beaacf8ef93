/**
 * What the process-level scenarios (bench/replicas.ts, bench/soak.ts) share: the `updown` command run
 * as a user would run it, `updown serve` processes with a clean configuration, and what /proc says
 * about a process's memory and CPU time.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OPTIONS, type Option } from "../src/config/options.ts";
import type { MarketType } from "../src/domain/market.ts";
import { openStore } from "../src/store/open.ts";
import type { StoredMarket } from "../src/store/ports/market-store.ts";
import type { ProbedMemory } from "./memory-probe.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const UPDOWN = join(ROOT, "bin", "updown.mjs");
const MEMORY_PROBE = join(ROOT, "bench", "memory-probe.ts");

/** The demo data every scenario uses: `updown seed` with these options gives the same rows in any store. */
export interface BenchData {
  seed: number;
  /** Unix seconds. */
  anchor: number;
  counts: Record<MarketType, number>;
  coins: readonly string[];
}

/** Every variable the service reads (src/config/options.ts): none leaks in from the caller's shell (a CI REDIS_URL...). */
const CONFIG_VARIABLES = Object.values(OPTIONS).flatMap((o: Option<unknown>) => (o.env ? [o.env] : []));

/** The caller's environment without the service's configuration, plus `set`. */
export function serviceEnv(set: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of CONFIG_VARIABLES) delete env[name];
  return { ...env, ...set };
}

/** Runs `updown ARGS` with this Node; its stdout, or an error with its stderr. */
export function updown(args: string[], env: NodeJS.ProcessEnv = serviceEnv({})): string {
  const r = spawnSync(process.execPath, [UPDOWN, ...args], { cwd: ROOT, env, encoding: "utf8" });
  if (r.status !== 0) {
    throw new Error(`updown ${args.join(" ")} exited ${r.status ?? r.signal}: ${r.stderr || r.stdout}`);
  }
  return r.stdout;
}

/** `updown seed` into DATABASE_URL `url` with the bench's data. */
export function seed(url: string, data: BenchData): void {
  const counts = Object.entries(data.counts)
    .map(([type, n]) => `${type}=${n}`)
    .join(",");
  updown([
    "seed",
    "--database-url",
    url,
    "--seed",
    String(data.seed),
    "--anchor",
    new Date(data.anchor * 1000).toISOString(),
    "--counts",
    counts,
    "--coins",
    data.coins.join(","),
  ]);
}

/** A new key of `plan` for `account` in the database at `url`. */
export function createKey(url: string, plan: "starter" | "pro" | "enterprise", account: string): string {
  return updown(["keys", "create", "--plan", plan, "--account", account, "--database-url", url]).trim();
}

/** A new enterprise key (no limits: every request is counted, none refused) in the database at `url`. */
export function enterpriseKey(url: string, account: string): string {
  return createKey(url, "enterprise", account);
}

/** Revokes `key` in the database at `url`. */
export function revokeKey(url: string, key: string): void {
  updown(["keys", "revoke", key, "--database-url", url]);
}

/** Every market of a SQLite file, newest first. */
export async function sqliteMarkets(path: string): Promise<StoredMarket[]> {
  return storeMarkets(`sqlite:${path}`);
}

/** Every market of the database at `url` (SQLite or PostgreSQL), newest first. */
export async function storeMarkets(url: string): Promise<StoredMarket[]> {
  const store = await openStore(url);
  try {
    return (await store.markets.listMarkets({ limit: 100_000, offset: 0 })).markets;
  } finally {
    await store.close();
  }
}

/** One `updown serve` process on a port of its choosing. */
export class ServeProcess {
  readonly origin: string;
  readonly pid: number;
  private readonly child: ChildProcess;
  /** Bytes the process wrote to stdout (its log, at LOG_LEVEL=info one or two lines a request). */
  stdoutBytes = 0;
  /** Log lines at level error or fatal (pino's 50 and 60), the first few kept. */
  errorLines = 0;
  readonly firstErrors: string[] = [];
  private stderrTail = "";

  private constructor(child: ChildProcess, origin: string) {
    this.child = child;
    this.origin = origin;
    if (child.pid === undefined) throw new Error("serve has no pid");
    this.pid = child.pid;
  }

  /**
   * Starts `updown serve --port 0` with `env` (see serviceEnv) and waits until it listens. With `probe`,
   * the process also loads bench/memory-probe.ts (and --expose-gc) for memory() and heapSnapshot().
   */
  static async start(
    env: NodeJS.ProcessEnv,
    { timeoutMs = 60_000, probe = false }: { timeoutMs?: number; probe?: boolean } = {},
  ): Promise<ServeProcess> {
    const probeArgs = probe ? ["--expose-gc", "--import", MEMORY_PROBE] : [];
    const args = [...probeArgs, UPDOWN, "serve", "--port", "0", "--host", "127.0.0.1"];
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe", ...(probe ? (["ipc"] as const) : [])],
    });
    let stderr = "";
    const origin = await new Promise<string>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`serve did not listen within ${timeoutMs} ms: ${stderr || out}`));
      }, timeoutMs);
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        const m = /Serving (http:\/\/[^/\s]+)\/v1/.exec(out);
        if (m) {
          clearTimeout(timer);
          child.stdout?.off("data", onData);
          resolve(m[1]);
        }
      };
      child.stdout?.on("data", onData);
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-4000);
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`serve exited (${code ?? signal}) before listening: ${stderr || out}`));
      });
    });
    const proc = new ServeProcess(child, origin);
    proc.stderrTail = stderr;
    const errorMarks = [Buffer.from('"level":50'), Buffer.from('"level":60')];
    child.stdout?.on("data", (chunk: Buffer) => {
      proc.stdoutBytes += chunk.length;
      for (const mark of errorMarks) {
        for (let at = chunk.indexOf(mark); at >= 0; at = chunk.indexOf(mark, at + 1)) {
          proc.errorLines++;
          if (proc.firstErrors.length < 5) {
            const start = chunk.lastIndexOf(10, at) + 1;
            const end = chunk.indexOf(10, at);
            proc.firstErrors.push(
              chunk
                .subarray(start, end < 0 ? chunk.length : end)
                .toString()
                .slice(0, 1000),
            );
          }
        }
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      proc.stderrTail = (proc.stderrTail + chunk.toString()).slice(-4000);
    });
    return proc;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The process's own reading of its memory (needs `probe`); with `gc`, after a full collection. */
  memory(gc: boolean): Promise<ProbedMemory> {
    return this.ask({ type: "memory", gc }, "memory").then((m) => (m as { memory: ProbedMemory }).memory);
  }

  /** Writes a heap snapshot of the process to `path` (needs `probe`); its path. */
  heapSnapshot(path: string): Promise<string> {
    return this.ask({ type: "heap-snapshot", path }, "heap-snapshot").then(
      (m) => (m as { path: string }).path,
    );
  }

  private ask(message: object, reply: string): Promise<unknown> {
    const child = this.child;
    if (!child.send) return Promise.reject(new Error("serve was started without the memory probe"));
    return new Promise((resolve, reject) => {
      const onMessage = (raw: unknown) => {
        if ((raw as { type?: string }).type !== reply) return;
        child.off("message", onMessage);
        child.off("exit", onExit);
        resolve(raw);
      };
      const onExit = () => {
        child.off("message", onMessage);
        reject(new Error(`serve exited: ${this.stderrTail}`));
      };
      child.on("message", onMessage);
      child.once("exit", onExit);
      child.send(message);
    });
  }

  /** What the process wrote to stderr lately. */
  get stderr(): string {
    return this.stderrTail;
  }

  /** SIGTERM (a clean shutdown), SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
      this.child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      this.child.kill("SIGTERM");
    });
  }
}

// ---------------------------------------------------------------------------------------------------
// /proc

export interface Rss {
  /** Resident set size now, in bytes. */
  rss: number;
  /** The highest resident set size so far (VmHWM), in bytes. */
  peak: number;
  /** Of rss, anonymous memory (heap, buffers: RssAnon), in bytes; NaN where unknown. */
  anon: number;
}

/** A process's resident memory from /proc/<pid>/status (Linux), else from `ps` (no peak there). */
export function rssOf(pid: number): Rss | null {
  const status = `/proc/${pid}/status`;
  if (existsSync(status)) {
    const text = readFileSync(status, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s*(\\d+) kB`, "m").exec(text)?.[1] ?? NaN);
    const rss = kb("VmRSS") * 1024;
    return Number.isFinite(rss) ? { rss, peak: kb("VmHWM") * 1024, anon: kb("RssAnon") * 1024 } : null;
  }
  const r = spawnSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" });
  const kb = Number(r.stdout.trim());
  return r.status === 0 && Number.isFinite(kb)
    ? { rss: kb * 1024, peak: Number.NaN, anon: Number.NaN }
    : null;
}

/** Clock ticks a second of /proc/<pid>/stat's CPU times (USER_HZ, 100 on every Linux we run on). */
const TICKS_PER_SECOND = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) || 100;

interface ProcStat {
  pid: number;
  ppid: number;
  /** User plus system CPU seconds, its own and its waited-for children's. */
  cpu: number;
}

function procStat(pid: number): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may contain spaces: split after its last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return {
      pid,
      ppid: Number(fields[1]),
      // utime + stime, and cutime + cstime: the children it has waited for (exited backends) stay counted.
      cpu:
        (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) /
        TICKS_PER_SECOND,
    };
  } catch {
    return null;
  }
}

function allProcesses(): ProcStat[] {
  if (!existsSync("/proc/self/stat")) return [];
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => procStat(Number(name)))
    .filter((s): s is ProcStat => s !== null);
}

/** Pids of the processes whose command line (arguments joined by spaces) matches `pattern` (no /proc: none). */
export function pidsByCommandLine(pattern: RegExp): number[] {
  if (!existsSync("/proc/self/cmdline")) return [];
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ");
      if (pattern.test(cmd)) found.push(Number(name));
    } catch {
      // Gone since the listing.
    }
  }
  return found;
}

/**
 * CPU seconds used so far by the processes `roots` and their descendants (PostgreSQL's backends are
 * children of its postmaster), those alive now and those exited and waited for by a parent in the
 * tree; NaN without /proc.
 */
export function cpuSecondsOf(roots: number[]): number {
  const procs = allProcesses();
  if (procs.length === 0) return Number.NaN;
  const children = new Map<number, ProcStat[]>();
  for (const p of procs) {
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  let total = 0;
  const seen = new Set<number>();
  const visit = (p: ProcStat | undefined) => {
    if (!p || seen.has(p.pid)) return;
    seen.add(p.pid);
    total += p.cpu;
    for (const c of children.get(p.pid) ?? []) visit(c);
  };
  for (const pid of roots) visit(byPid.get(pid));
  return total;
}

// ---------------------------------------------------------------------------------------------------
// Formatting

export function fmt(n: number, digits = 0): string {
  if (!Number.isFinite(n)) return "n/a";
  return n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function mb(bytes: number): string {
  return `${fmt(bytes / 1048576, 1)} MB`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
