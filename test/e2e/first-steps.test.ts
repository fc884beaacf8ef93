import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { BIN } from "../helpers/serve.ts";
import { ROOT } from "../helpers/paths.ts";

/**
 * A newcomer's first start, as the README tells it: `updown serve` in a fresh folder with nothing
 * configured (SQLite under ./data, demo data seeded), the banner with the demo keys on stdout, and the
 * README's curl examples (the MCP ones of "For AI agents" too) pasted into bash as written. Only the address changes: the server takes a
 * free port, and the examples' 127.0.0.1:8080 is rewritten to a recording proxy in front of it, which
 * sees the status of every request the examples make.
 */

const README = readFileSync(join(ROOT, "README.md"), "utf8");
/** Every setting the service reads from the environment, cleared so that the defaults apply. */
const SETTINGS =
  /^(PORT|HOST|DATABASE_URL|REDIS_URL|PLANS_FILE|LOG_LEVEL|SEED_DEMO|DEMO_COUNTS|PAGE_CACHE_MB|DRAIN_SECONDS|METRICS_TOKEN|TRUST_PROXY)$/;

let dir: string;
let server: ChildProcess;
let stdout = "";
let stderr = "";
let base: string;

function freshEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !SETTINGS.test(k)));
  // Fewer demo markets than the default, for time; the examples need only resolved BTC 5m markets.
  return { ...env, PORT: "0", DEMO_COUNTS: "5m=4,15m=2,1h=1,4h=1,24h=0", ...extra };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "updown-first-steps-"));
  server = spawn(process.execPath, [BIN, "serve"], {
    cwd: dir,
    env: freshEnv({}),
    stdio: ["ignore", "pipe", "pipe"],
  });
  server.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
  server.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  await printed(server, () => stdout, /Serving http:\/\/127\.0\.0\.1:\d+\/v1/);
  base = /Serving (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(stdout)![1];
});

after(async () => {
  const exited = new Promise((resolve) => server.once("exit", resolve));
  server.kill("SIGTERM");
  await exited;
  rmSync(dir, { recursive: true, force: true });
});

describe("a newcomer's first start", () => {
  test("the banner with the three demo keys is on stdout after the listening line, and each key works", async () => {
    const keys = JSON.parse(readFileSync(join(dir, "data", "demo-keys.json"), "utf8")) as Record<
      string,
      string
    >;
    const rule = "=".repeat(78);
    const banner = stdout.slice(stdout.indexOf(rule), stdout.lastIndexOf(rule) + rule.length);
    assert.ok(stdout.indexOf("Server listening") < stdout.indexOf(rule), "after the listening line");
    for (const plan of ["starter", "pro", "enterprise"]) {
      assert.match(banner, new RegExp(` {3}${plan} +${keys[plan]}\\n`));
      assert.ok(!stderr.includes(keys[plan]), "keys go to stdout only");
      const res = await fetch(`${base}/v1/account`, { headers: { "x-api-key": keys[plan] } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("x-tier"), plan);
    }
    assert.match(banner, /Demo API keys, one per plan \(also in data\/demo-keys\.json\):/);

    // The banner's own first request works as printed.
    // Its answer ends its line (-w '\n'), so that the prompt does not follow it on the same line.
    const tryLine = /curl -w '\\n' -H "X-API-Key: (\S+)" '(\S+)'\n/.exec(banner)!;
    const res = await fetch(tryLine[2], { headers: { "x-api-key": tryLine[1] } });
    assert.equal(res.status, 200);

    assert.ok(stdout.includes(`Serving ${base}/v1 (docs: ${base}/docs)`));
  });

  test("the README's curl examples answer 200 with JSON, pasted as written", async () => {
    const proxy = await recordingProxy(base);
    try {
      const blocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)]
        .map((m) => m[1])
        .filter((b) => /^\s*curl /m.test(b) || /\$\(curl /.test(b));
      assert.ok(blocks.length > 0 && blocks.every((b) => b.includes("127.0.0.1:8080")));
      let curls = 0;
      for (const block of blocks) {
        const commands = block
          .replace(/\\\n/g, " ")
          .split("\n")
          .filter((l) => l.trim() !== "");
        const outputs = await runInBash(commands.map((l) => l.replaceAll("127.0.0.1:8080", proxy.host)));
        commands.forEach((command, i) => {
          if (!command.startsWith("curl ")) return;
          assert.ok(outputs[i].endsWith("\n"), `${command} ends its answer with a newline`);
          // /llms.txt is the one page in markdown; everything else answers JSON.
          if (command.includes("/llms.txt")) assert.match(outputs[i], /^# Up or Down history API\n/, command);
          else assert.doesNotThrow(() => JSON.parse(outputs[i]), `${command} printed JSON: ${outputs[i]}`);
        });
        curls += block.match(/curl /g)!.length;
      }
      assert.equal(proxy.seen.length, curls, "every curl reached the server");
      for (const s of proxy.seen) {
        assert.equal(s.status, 200, s.url);
        assert.match(s.type, s.url === "/llms.txt" ? /^text\/plain/ : /^application\/json/, s.url);
      }
    } finally {
      await proxy.close();
    }
  });
});

test("at the default level each request is logged, with its id, on stdout", async () => {
  const child = spawn(process.execPath, [BIN, "serve"], {
    cwd: dir,
    env: freshEnv({}),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  try {
    await printed(child, () => out, /Serving /);
    assert.ok(!out.includes("Demo API keys"), "a second start prints no banner");
    const url = /Serving (\S+)\/v1/.exec(out)![1];
    await (await fetch(`${url}/healthz`, { headers: { "x-request-id": "first-steps-1" } })).arrayBuffer();
    await printed(child, () => out, /"msg":"request completed"/);
    const lines = out.split("\n").filter((l) => l.includes('"reqId":"first-steps-1"'));
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { level: number; msg: string }).msg),
      // One line a request (the async request log replaces Fastify's two).
      ["request completed"],
    );
    assert.ok(
      lines.every((l) => (JSON.parse(l) as { level: number }).level === 30),
      "at info",
    );
  } finally {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
});

/**
 * Resolves once `output()` matches `pattern`, fails if the process exits first. A first start seeds its
 * demo data before it listens, which takes as long as the machine makes it: the wait is for the line,
 * not for a time.
 */
function printed(child: ChildProcess, output: () => string, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const look = () => {
      if (!pattern.test(output())) return;
      child.stdout!.off("data", look);
      child.off("exit", exited);
      resolve();
    };
    const exited = (code: number | null) =>
      reject(new Error(`serve exited (${code}) before printing ${pattern}:\n${output()}`));
    // After the test's own listener, which appends the chunk to the output.
    child.stdout!.on("data", look);
    child.once("exit", exited);
    look();
  });
}

/**
 * Runs the commands in one bash, in the server's folder; resolves with what each printed on stdout.
 * Not spawnSync: the proxy the commands call lives in this process and must keep answering.
 */
async function runInBash(commands: string[]): Promise<string[]> {
  const mark = (i: number) => `@@first-steps ${i}@@`;
  // The mark on a line of its own only if the command ended its output with a newline: an answer
  // that runs into the next prompt is caught by the caller.
  const script = commands.map((c, i) => `${c}\nprintf '%s\\n' '${mark(i)}'`).join("\n");
  const bash = spawn("bash", ["-e", "-c", script], {
    cwd: dir,
    // `node -p` in the examples: the one running this test, whatever else is on PATH.
    env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}` },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  bash.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  bash.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise((resolve) => bash.once("close", resolve));
  assert.equal(code, 0, `${script}\n${stderr}`);
  const outputs: string[] = [];
  let rest = stdout;
  commands.forEach((_c, i) => {
    const at = rest.indexOf(`${mark(i)}\n`);
    outputs.push(rest.slice(0, at));
    rest = rest.slice(at + mark(i).length + 1);
  });
  return outputs;
}

interface Seen {
  url: string;
  status: number;
  type: string;
}

/** A proxy in front of the server that notes the status and content type of every answer. */
async function recordingProxy(
  target: string,
): Promise<{ host: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const proxy: Server = createServer((req, res) => {
    const upstream = request(
      `${target}${req.url}`,
      { method: req.method, headers: req.headers },
      (answer) => {
        seen.push({
          url: req.url ?? "",
          status: answer.statusCode ?? 0,
          type: answer.headers["content-type"] ?? "",
        });
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return {
    host: `127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
