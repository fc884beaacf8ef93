import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import Fastify from "fastify";
import { deferredLogger, LineBatch, type Logger, serverLog, silentLogger, stderrLogger } from "../src/log.ts";

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}

test("the stderr logger writes one JSON object a line: pino's level, time and msg around the fields", () => {
  const lines: string[] = [];
  const log = stderrLogger({ write: (line) => lines.push(line), now: () => 1784852434000 });
  log.info({ socket: "clob", url: "ws://x" }, "clob: connected to ws://x");
  log.warn({}, "a tick took longer than the snapshot interval; skipping one");
  log.debug({}, "not at info");
  assert.deepEqual(lines, [
    '{"level":30,"time":1784852434000,"socket":"clob","url":"ws://x","msg":"clob: connected to ws://x"}\n',
    '{"level":40,"time":1784852434000,"msg":"a tick took longer than the snapshot interval; skipping one"}\n',
  ]);
});

test("the stderr logger keeps to LOG_LEVEL's words", () => {
  const lines: string[] = [];
  const at = (level: string) => stderrLogger({ level, write: (line) => lines.push(line) });
  at("warn").info({}, "dropped");
  at("warn").error({}, "kept");
  at("debug").debug({}, "kept too");
  at("silent").error({}, "dropped too");
  assert.deepEqual(
    lines.map((l) => (JSON.parse(l) as { msg: string }).msg),
    ["kept", "kept too"],
  );
});

test("Fastify's logger is a Logger as it is, and writes the same shape of line", async () => {
  const { lines, stream } = capture();
  const app = Fastify({ logger: { level: "info", stream } });
  const log: Logger = app.log;
  log.warn({ err: "ECONNREFUSED" }, "rate limiter: Redis unreachable (ECONNREFUSED)");
  await app.close();
  const line = JSON.parse(lines.at(-1) as string) as Record<string, unknown>;
  assert.equal(line.level, 40);
  assert.equal(line.err, "ECONNREFUSED");
  assert.equal(line.msg, "rate limiter: Redis unreachable (ECONNREFUSED)");
  assert.equal(typeof line.time, "number");
});

test("a deferred logger writes through whichever logger is current at each line", () => {
  const seen: string[] = [];
  let current: Logger = silentLogger;
  const log = deferredLogger(() => current);
  log.info({}, "before");
  current = { ...silentLogger, info: (_fields, message) => seen.push(message) };
  log.info({}, "after");
  assert.deepEqual(seen, ["after"]);
});

test("the server log's batch hands lines on in order, once 4 KiB have gathered or when asked", () => {
  const written: string[] = [];
  const batch = new LineBatch({ write: (text) => written.push(text) > 0 }, 100);
  const line = (n: number) => `${JSON.stringify({ n, pad: "x".repeat(30) })}\n`;
  batch.write(line(1));
  batch.write(line(2));
  assert.deepEqual(written, [], "under the batch's size, nothing is handed on");
  batch.write(line(3));
  assert.deepEqual(written, [line(1) + line(2) + line(3)]);
  batch.write(line(4));
  batch.handOn();
  batch.handOn();
  assert.deepEqual(written, [line(1) + line(2) + line(3), line(4)], "a flush hands on what gathered, once");
  batch.write(line(5));
  assert.equal(batch.take(), line(5));
  assert.equal(batch.take(), "");
});

test("the server log writes every line, in order: flushed when asked, and at an exit that does not wait", () => {
  const dir = mkdtempSync(join(tmpdir(), "updown-log-"));
  try {
    const file = join(dir, "server.log");
    // 5,000 lines (about 400 KiB): many batches, some in sonic-boom's hands, some still gathering at exit.
    const script = `
      import { openSync } from "node:fs";
      import { serverLog } from ${JSON.stringify(pathToFileURL(join(import.meta.dirname, "../src/log.ts")).href)};
      const log = serverLog("info", openSync(${JSON.stringify(file)}, "w"));
      for (let n = 0; n < 5000; n++) log.logger.info({ n }, "line");
      log.logger.debug({ n: -1 }, "below the level");
      process.exit(0);
    `;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    assert.equal(child.status, 0, child.stderr);
    const lines = readFileSync(file, "utf8").split("\n");
    assert.equal(lines.pop(), "", "the file ends with a whole line");
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { n: number }).n),
      Array.from({ length: 5000 }, (_, n) => n),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the server log's flush writes what gathered, and the line is pino's", async () => {
  const dir = mkdtempSync(join(tmpdir(), "updown-log-"));
  try {
    const file = join(dir, "server.log");
    const log = serverLog("info", openSync(file, "w"));
    log.logger.info({ reqId: "r-1", url: "/v1/markets", statusCode: 200 }, "request completed");
    await log.flush();
    const [line, rest] = readFileSync(file, "utf8").split("\n");
    assert.equal(rest, "");
    assert.match(
      line,
      /^\{"level":30,"time":\d+,"pid":\d+,"hostname":"[^"]*","reqId":"r-1","url":"\/v1\/markets","statusCode":200,"msg":"request completed"\}$/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a quiet server's line is written within a second, without a flush", async (t) => {
  t.mock.timers.enable({ apis: ["setInterval"] });
  const dir = mkdtempSync(join(tmpdir(), "updown-log-"));
  try {
    const file = join(dir, "server.log");
    const fd = openSync(file, "w");
    const log = serverLog("info", fd);
    log.logger.info({ n: 1 }, "a quiet line");
    // The write happens on libuv's thread pool: wait turns of the event loop for it, not time.
    const written = async () => {
      for (let turn = 0; turn < 1000; turn++) {
        const text = readFileSync(file, "utf8");
        if (text !== "") return text;
        await new Promise((resolve) => setImmediate(resolve));
      }
      return "";
    };
    assert.equal(await written(), "", "held while the second has not passed");
    t.mock.timers.tick(1000);
    assert.match(await written(), /"n":1,"msg":"a quiet line"\}\n$/);
    closeSync(fd);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
