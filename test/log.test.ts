import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import Fastify from "fastify";
import { deferredLogger, type Logger, silentLogger, stderrLogger } from "../src/log.ts";

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
