/**
 * The load of the page scenarios of `npm run bench`: Debian's `wrk` (C, epoll), one thread and 8
 * connections, so that the load generator is never the bottleneck of the baseline it is compared
 * with (autocannon, in Node, capped the baseline near its own speed and flattered every ratio).
 *
 * A fixed path is requested over and over; a rotation list (the cold pages) is a file of paths, one a
 * line, read by bench/wrk-list.lua from a cursor that this module keeps across runs: every path is
 * sent at most once in the whole run, and a run that exhausts its list stops rather than send one
 * again (counted in `reissued`, which the bench reports and expects to be 0).
 */
import { spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LoadResult } from "./load.ts";

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const LIST_SCRIPT = join(BENCH_DIR, "wrk-list.lua");
const FIXED_SCRIPT = join(BENCH_DIR, "wrk-fixed.lua");

/** One thread, 8 connections: the method of issue 20 (data-out targets measured this way). */
export const WRK_THREADS = 1;
export const WRK_CONNECTIONS = 8;

/** The wrk binary: on PATH, else installed with `apt-get install -y wrk`, else a clear failure. */
export function ensureWrk(log: (line: string) => void): string {
  if (works("wrk")) return "wrk";
  log("wrk not found: installing it (apt-get install -y wrk)");
  const sudo = process.getuid?.() === 0 ? [] : ["sudo", "-n"];
  const [cmd, ...args] = [...sudo, "apt-get", "install", "-y", "wrk"];
  const installed = spawnSync(cmd, args, {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (installed.status === 0 && works("wrk")) return "wrk";
  throw new Error(
    "the page scenarios need wrk (https://github.com/wg/wrk), and `apt-get install -y wrk` failed; " +
      "install it (Debian/Ubuntu: apt-get install wrk; macOS: brew install wrk) and run the bench again",
  );
}

function works(bin: string): boolean {
  // `wrk -v` prints its version and usage and exits 1; only a missing binary is an error.
  return spawnSync(bin, ["-v"], { stdio: "ignore" }).error === undefined;
}

export interface WrkJob {
  origin: string;
  headers: Record<string, string>;
  seconds: number;
  /** A fixed path, or the name of a list given to `setList`. */
  path?: string;
  list?: string;
}

interface WrkSummary {
  requests: number;
  durationUs: number;
  bytes: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  p50Us: number;
  p99Us: number;
  issued: number;
  exhausted: number;
}

/** Runs wrk with the page scenarios' method; rotation lists are files with a cursor kept here. */
export class WrkLoad {
  private readonly bin: string;
  private readonly lists = new Map<string, { file: string; length: number; cursor: number }>();

  constructor(bin: string) {
    this.bin = bin;
  }

  /** Writes a rotation list to `file` (one path a line); runs naming it carry on where the last stopped. */
  setList(name: string, paths: readonly string[], file: string): void {
    if (paths.some((p) => p.includes("\n"))) throw new Error(`list ${name}: a path with a newline`);
    writeFileSync(file, `${paths.join("\n")}\n`);
    this.lists.set(name, { file, length: paths.length, cursor: 0 });
  }

  async run(job: WrkJob): Promise<LoadResult> {
    const list = job.list === undefined ? null : this.lists.get(job.list);
    if (job.list !== undefined && !list) throw new Error(`no list ${job.list}`);
    const args = [
      `-t${WRK_THREADS}`,
      `-c${WRK_CONNECTIONS}`,
      `-d${job.seconds}s`,
      "--timeout",
      "10s",
      ...Object.entries(job.headers).flatMap(([k, v]) => ["-H", `${k}: ${v}`]),
      "-s",
      list ? LIST_SCRIPT : FIXED_SCRIPT,
      job.origin + (job.path ?? "/"),
      ...(list ? ["--", list.file, String(list.cursor)] : []),
    ];
    const s = await this.wrk(args);
    if (list) list.cursor += s.issued;
    return resultOf(s);
  }

  private wrk(args: string[]): Promise<WrkSummary> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.bin, args, { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      child.on("error", reject);
      child.on("exit", (code) => {
        const line = out.split("\n").find((l) => l.startsWith("WRK_SUMMARY "));
        if (code !== 0 || !line) return reject(new Error(`wrk exited ${code}: ${out.slice(-500)}`));
        resolve(JSON.parse(line.slice("WRK_SUMMARY ".length)) as WrkSummary);
      });
    });
  }
}

function resultOf(s: WrkSummary): LoadResult {
  const seconds = s.durationUs / 1e6;
  return {
    requests: s.requests,
    seconds,
    reqPerSec: s.requests / seconds,
    // wrk's histogram holds every answer's latency (2xx or not: a non-2xx fails the run's check anyway).
    p50Ms: s.p50Us / 1000,
    p99Ms: s.p99Us / 1000,
    bytesPerSec: s.bytes / seconds,
    errors: s.errors.connect + s.errors.read + s.errors.write,
    timeouts: s.errors.timeout,
    non2xx: s.errors.status,
    issued: s.issued,
    reissued: s.exhausted,
  };
}
