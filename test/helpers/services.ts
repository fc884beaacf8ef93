import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Real PostgreSQL and Redis servers of a test's (or benchmark's) own, in throwaway directories on
 * loopback, that can be stopped and started again on the same port: what the failure tests need and
 * what CI's shared servers must not be used for.
 */

const PG_BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";

/** Why these servers cannot be started here, or null when they can. */
export function missingServerBinaries(): string | null {
  if (!existsSync(join(PG_BIN, "postgres"))) return `no PostgreSQL binaries in ${PG_BIN} (set PG_BIN)`;
  if (spawnSync("redis-server", ["--version"]).status !== 0) return "redis-server is not on PATH";
  return null;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface OwnServer {
  readonly url: string;
  /** Stops the server, as an outage would: SIGKILL for Redis, an immediate shutdown for PostgreSQL. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data directory. */
  start(): Promise<void>;
  /** Stops it for good and removes its directory. */
  remove(): Promise<void>;
}

function throwawayDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // PostgreSQL refuses to run as root; as root the server runs as the postgres user, who must own it.
  if (process.getuid?.() === 0) chownSync(dir, pgUid(), -1);
  return dir;
}

function pgUid(): number {
  return Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
}

/** Runs a PostgreSQL binary, as the postgres user when we are root. */
/** Where Debian keeps it, which a PATH without the sbin folders does not reach. */
const RUNUSER = existsSync("/usr/sbin/runuser") ? "/usr/sbin/runuser" : "runuser";

function pgCommand(binary: string, args: string[]): void {
  const command = join(PG_BIN, binary);
  const result =
    process.getuid?.() === 0
      ? spawnSync(RUNUSER, ["-u", "postgres", "--", command, ...args], { encoding: "utf8" })
      : spawnSync(command, args, { encoding: "utf8" });
  if (result.status !== 0) {
    // Not started at all (runuser or the binary not found): the spawn's own error says why.
    const why = result.error?.message ?? (result.stderr || result.stdout);
    throw new Error(`${binary} ${args.join(" ")} failed: ${why}`);
  }
}

export async function startOwnPostgres(database = "updown"): Promise<OwnServer> {
  const dir = throwawayDir("updown-pg-");
  const data = join(dir, "data");
  const port = await freePort();
  pgCommand("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = async () =>
    pgCommand("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-w", "-o", options, "start"]);
  const stop = async () => pgCommand("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
  await start();
  pgCommand("createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", database]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop,
    start,
    remove: async () => {
      if (existsSync(join(data, "postmaster.pid"))) await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface OwnRedis extends OwnServer {
  /** Sends the running server a signal: SIGSTOP freezes it (connections stay open, nothing answers), SIGCONT thaws it. */
  signal(signal: NodeJS.Signals): void;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const dir = throwawayDir("updown-redis-");
  const port = await freePort();
  let child: ReturnType<typeof spawn> | null = null;
  const start = async () => {
    const proc = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    child = proc;
    await new Promise<void>((resolve, reject) => {
      let out = "";
      proc.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("Ready to accept connections")) resolve();
      });
      proc.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
    });
  };
  const stop = async () => {
    const proc = child;
    if (!proc || proc.exitCode !== null) return;
    child = null;
    await new Promise<void>((resolve) => {
      proc.once("exit", () => resolve());
      proc.kill("SIGKILL");
    });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    stop,
    start,
    signal: (signal) => {
      const proc = child as ReturnType<typeof spawn> | null;
      if (!proc || proc.exitCode !== null) throw new Error("redis-server is not running");
      proc.kill(signal);
    },
    remove: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
