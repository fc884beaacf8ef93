import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { postgresTestUrl, ScratchSchemas } from "./helpers/postgres.ts";
import { until } from "./helpers/polymarket-upstream.ts";
import { BIN, type ServeProcess, startServeProcess } from "./helpers/serve.ts";

/**
 * SIGTERM on a real `updown serve` with DRAIN_SECONDS=2 and clients that would hold it open for a
 * minute or more: a slow reader of a large export, a half-sent request, an idle kept-alive connection.
 * The process exits 0 within the deadline and a small margin, a request begun before the signal is
 * still answered in full, and the database is closed cleanly (SQLite: integrity ok, WAL checkpointed
 * away; PostgreSQL: no connection left).
 */

const DRAIN_SECONDS = 2;
/** Room for a loaded machine between the deadline and the exit (closing, process teardown). */
const MARGIN_MS = 2500;

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "updown-drain-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function updown(args: string[], databaseUrl: string): string {
  const res = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: "utf8",
  });
  assert.equal(res.status, 0, res.stderr);
  return res.stdout;
}

/** Three hourly BTC markets with books, two resolved (an export of one is megabytes), and a pro key. */
function prepare(databaseUrl: string): string {
  const counts = "5m=0,15m=0,1h=3,4h=0,24h=0";
  updown(["seed", "--coins", "btc", "--counts", counts], databaseUrl);
  return updown(["keys", "create", "--plan", "pro"], databaseUrl).trim();
}

/** A raw connection, so that the test decides when each byte of a request is sent and read. */
interface Raw {
  socket: Socket;
  /** Everything received so far. */
  received(): string;
  closed: Promise<number>;
}

async function rawConnection(port: number): Promise<Raw> {
  const socket = connect(port, "127.0.0.1");
  await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  let received = "";
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString("latin1");
  });
  socket.on("error", () => {});
  const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(Date.now())));
  return { socket, received: () => received, closed };
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED"));
  });
}

async function resolvedSlug(server: ServeProcess, key: string): Promise<string> {
  const res = await fetch(`${server.url}/v1/markets?coin=btc&market_type=1h&resolved=true&limit=1`, {
    headers: { "x-api-key": key },
  });
  return ((await res.json()) as { markets: { slug: string }[] }).markets[0].slug;
}

/**
 * The clients, SIGTERM, and what each sees; resolves with the exit code and the milliseconds from
 * the signal to the exit.
 */
async function drainAgainstSlowClients(server: ServeProcess, key: string): Promise<[number | null, number]> {
  const slug = await resolvedSlug(server, key);
  const { port } = server;

  // A slow reader: takes the first bytes of a large export, then reads nothing more.
  const slow = await rawConnection(port);
  slow.socket.write(
    `GET /v1/markets/${slug}/snapshots/export?include_orderbook=true HTTP/1.1\r\nHost: x\r\n` +
      `X-API-Key: ${key}\r\nAccept-Encoding: identity\r\n\r\n`,
  );
  await until(() => slow.received().includes("200 OK"), "the export to begin");
  slow.socket.pause();

  // An idle kept-alive connection, its one request answered.
  const idle = await rawConnection(port);
  idle.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  await until(() => idle.received().includes('{"status":"ok"}'), "the health answer");

  // A request whose head never ends, and one whose head ends only after the signal.
  const stalled = await rawConnection(port);
  stalled.socket.write("GET /v1/account HTTP/1.1\r\nHost: x\r\n");
  const begun = await rawConnection(port);
  begun.socket.write(`GET /v1/markets?coin=btc&limit=2 HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n`);
  // The server has read both partial heads once it answers a request sent after them: loopback
  // delivers a write at once, and one turn of the server's event loop reads every socket then ready.
  idle.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  await until(() => idle.received().split('{"status":"ok"}').length === 3, "a second health answer");

  const exited = new Promise<[number | null, number]>((resolve) =>
    server.child.once("exit", (code) => resolve([code, Date.now()])),
  );
  // A server that would wait for its clients forever fails the test instead of holding it.
  const killer = setTimeout(() => server.child.kill("SIGKILL"), DRAIN_SECONDS * 1000 + MARGIN_MS + 5000);
  void exited.then(() => clearTimeout(killer));
  const signalled = Date.now();
  server.child.kill("SIGTERM");
  let isRefused = false;
  await until(
    () => isRefused,
    "new connections refused",
    5000,
    async () => {
      isRefused = await refused(port);
    },
  );
  begun.socket.write("\r\n");
  await until(() => begun.received().includes('"total"'), "the begun request's answer", 5000);

  const idleClosedAt = await idle.closed;
  assert.ok(idleClosedAt - signalled < 1000, "the idle connection is closed at once");
  const [code, exitedAt] = await exited;
  const answer = begun.received();
  assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(answer, /\r\nconnection: close\r\n/i);
  const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as { markets: unknown[] };
  assert.equal(body.markets.length, 2, "the answer is whole");
  assert.ok((await stalled.closed) <= exitedAt + 100, "the half-sent request is cut before the exit");
  assert.equal(stalled.received(), "", "and never answered");
  // A paused socket reports its end only once what it holds is read.
  slow.socket.resume();
  await slow.closed;
  assert.ok(!slow.received().endsWith("\r\n0\r\n\r\n"), "the slow export is cut, not finished");
  return [code, exitedAt - signalled];
}

function assertWithinDeadline(ms: number): void {
  assert.ok(ms >= DRAIN_SECONDS * 1000 - 200, `waited for the deadline (${ms} ms)`);
  assert.ok(ms <= DRAIN_SECONDS * 1000 + MARGIN_MS, `exited ${ms} ms after SIGTERM`);
}

describe("SIGTERM drain deadline", () => {
  test("SQLite: slow clients are cut at DRAIN_SECONDS, a begun request is answered, exit 0, database intact", async () => {
    const path = join(dir, "drain.db");
    const databaseUrl = `sqlite:${path}`;
    const key = prepare(databaseUrl);
    const stored = () => {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        const counts = db.prepare(
          "SELECT (SELECT count(*) FROM markets) AS m, (SELECT count(*) FROM snapshots) AS s",
        );
        return counts.get();
      } finally {
        db.close();
      }
    };
    const before = stored();
    const server = await startServeProcess({
      DATABASE_URL: databaseUrl,
      DRAIN_SECONDS: String(DRAIN_SECONDS),
    });
    const [code, ms] = await drainAgainstSlowClients(server, key);
    assert.equal(code, 0, server.output());
    assertWithinDeadline(ms);
    assert.match(server.output(), /drain deadline of 2 s passed; cutting 2 connections still open/);

    assert.ok(!existsSync(`${path}-wal`) || statSync(`${path}-wal`).size === 0, "the WAL was checkpointed");
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      assert.equal(db.prepare("PRAGMA integrity_check").get()?.integrity_check, "ok");
    } finally {
      db.close();
    }
    assert.deepEqual(stored(), before, "every market and snapshot is still there");
  });

  const pgUrl = postgresTestUrl();
  test(
    "PostgreSQL: the same, and the pool is ended",
    { skip: pgUrl ? false : "DATABASE_URL names no PostgreSQL" },
    async () => {
      const schemas = new ScratchSchemas(pgUrl!);
      // A name of its own, so that connections of test files running beside this one are not counted.
      const application = `drain_${process.pid}_${Date.now()}`;
      const scratch = new URL(await schemas.create());
      scratch.searchParams.set("application_name", application);
      const databaseUrl = scratch.toString();
      const admin = new pg.Client({ connectionString: pgUrl! });
      await admin.connect();
      try {
        const key = prepare(databaseUrl);
        const server = await startServeProcess({
          DATABASE_URL: databaseUrl,
          DRAIN_SECONDS: String(DRAIN_SECONDS),
          REDIS_URL: "",
        });
        const [code, ms] = await drainAgainstSlowClients(server, key);
        assert.equal(code, 0, server.output());
        assertWithinDeadline(ms);
        const left = await admin.query(
          `SELECT count(*) AS n FROM pg_stat_activity
           WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
             AND application_name = $1`,
          [application],
        );
        assert.equal(Number(left.rows[0].n), 0, "no connection of the server left");
      } finally {
        await admin.end();
        await schemas.dropAll();
      }
    },
  );
});
