import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { promisify } from "node:util";
import { after, test } from "node:test";
import { BIN, type ServeProcess, startServeProcess } from "../../../helpers/serve.ts";

// `updown serve` over a SQLite file on a really full filesystem: a 2 MB tmpfs mounted by the test
// (as root), filled with a file, then emptied. Writes answer 503 with Retry-After (not 500), /readyz is
// not ready while they fail, the log names the disk-full error (not "cannot rollback"), and all
// recover once the filler is deleted. Where it cannot mount (not root, no tmpfs) it skips, except on
// CI (CI=true), where it fails.

const run = promisify(execFile);
const GENERATE = "/v1/backtest-ai/generate";

let dir: string | undefined;
let mountPoint: string | undefined;
let mounted = false;
let server: ServeProcess | undefined;

after(() => {
  if (server && server.child.exitCode === null) server.child.kill("SIGKILL");
  // Lazily: the killed server's files may still be closing.
  if (mounted && mountPoint) execFileSync("umount", ["-l", mountPoint]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Mounts a 2 MB tmpfs, or says why it cannot. */
function mountSmallFilesystem(): string | null {
  dir = mkdtempSync(join(tmpdir(), "updown-full-disk-"));
  mountPoint = join(dir, "fs");
  mkdirSync(mountPoint);
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint], { stdio: "pipe" });
  } catch (err) {
    return `cannot mount a tmpfs here (${String((err as { stderr?: unknown }).stderr ?? err).trim()})`;
  }
  mounted = true;
  return null;
}

/** Writes a file until the filesystem has no space left. */
function fill(path: string): void {
  const chunk = Buffer.alloc(16 * 1024, 1);
  for (;;) {
    try {
      appendFileSync(path, chunk);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOSPC") break;
      throw err;
    }
  }
  // The last partial chunk: byte by byte until not one more fits.
  const one = Buffer.alloc(1, 1);
  for (let i = 0; i < chunk.length; i++) {
    try {
      appendFileSync(path, one);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOSPC") break;
      throw err;
    }
  }
}

async function post(
  url: string,
  key: string,
): Promise<{ status: number; retryAfter: string | null; body: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ preset: "quick_scalp" }),
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text() };
}

test("SQLite on a full filesystem: writes 503 with Retry-After, /readyz not ready, the cause logged; recovery when space returns", async (t) => {
  const cannot = mountSmallFilesystem();
  if (cannot !== null) {
    if (process.env.CI === "true") throw new Error(`CI=true: ${cannot}`);
    t.skip(cannot);
    return;
  }
  const db = join(mountPoint!, "updown.db");
  const env = { ...process.env, DATABASE_URL: `sqlite:${db}` };
  const key = (await run(process.execPath, [BIN, "keys", "create", "--plan", "pro"], { env })).stdout.trim();
  server = await startServeProcess({ DATABASE_URL: `sqlite:${db}`, REDIS_URL: "", LOG_LEVEL: "warn" });
  const url = server.url;

  assert.equal((await post(`${url}${GENERATE}`, key)).status, 200);
  assert.equal((await fetch(`${url}/readyz`)).status, 200);

  // Every write from here must grow the WAL: emptied (another connection may checkpoint it), then
  // the filesystem filled.
  const side = new DatabaseSync(db);
  side.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  side.close();
  const filler = join(mountPoint!, "filler");
  fill(filler);

  for (let i = 0; i < 3; i++) {
    const answer = await post(`${url}${GENERATE}`, key);
    assert.equal(answer.status, 503, answer.body);
    assert.equal(answer.retryAfter, "5");
    assert.equal((JSON.parse(answer.body) as { error: { code: string } }).error.code, "SERVICE_UNAVAILABLE");
  }
  const notReady = await fetch(`${url}/readyz`);
  assert.equal(notReady.status, 503);
  assert.equal(notReady.headers.get("retry-after"), "5");
  // Reads still answer.
  assert.equal((await fetch(`${url}/v1/markets?limit=1`, { headers: { "x-api-key": key } })).status, 200);

  // The CLI says the cause too.
  const cli = await run(process.execPath, [BIN, "keys", "create", "--plan", "pro"], { env }).then(
    () => null,
    (err: { code: number; stderr: string }) => err,
  );
  assert.ok(cli !== null, "keys create succeeded on a full disk");
  assert.match(cli.stderr, /database or disk is full/);
  assert.doesNotMatch(cli.stderr, /cannot rollback/);

  unlinkSync(filler);
  const ready = await fetch(`${url}/readyz`);
  assert.equal(ready.status, 200, await ready.text());
  assert.equal((await post(`${url}${GENERATE}`, key)).status, 200);
  assert.match(
    (await run(process.execPath, [BIN, "keys", "create", "--plan", "pro"], { env })).stdout,
    /^ud_/,
  );

  // The log (flushed when serve stops) names the cause of the 503s.
  const exited = new Promise((resolve) => server!.child.once("exit", resolve));
  server.child.kill("SIGTERM");
  await exited;
  assert.match(server.output(), /"msg":"store unavailable"/);
  assert.match(server.output(), /database or disk is full/);
  assert.doesNotMatch(server.output(), /cannot rollback/);
});
