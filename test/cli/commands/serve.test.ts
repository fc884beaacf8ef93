import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { KEYS_HEADER, runUpdown } from "../../helpers/cli.ts";
import { BIN } from "../../helpers/paths.ts";

let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "updown-cli-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** `updown` run to its end, over a SQLite database in this file's folder unless `env` names another. */
function updown(args: string[], env: Record<string, string> = {}) {
  return runUpdown(args, { DATABASE_URL: `sqlite:${join(dir, "cli.db")}`, ...env });
}

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const m = pattern.exec(seen);
      if (m) resolve(m[0]);
    });
    child.once("exit", (code) => reject(new Error(`exited ${code} before ${pattern}: ${seen}`)));
  });
}

describe("updown serve", () => {
  test("first start seeds demo data, prints and writes demo keys, serves them, and stops cleanly on SIGTERM", async () => {
    const dataDir = join(dir, "serve");
    const env = {
      ...process.env,
      DATABASE_URL: `sqlite:${join(dataDir, "updown.db")}`,
      PORT: "0",
      LOG_LEVEL: "warn",
      DEMO_COUNTS: "5m=2,15m=1,1h=1,4h=0,24h=0",
    };
    const start = async () => {
      const child = spawn(process.execPath, [BIN, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString();
      });
      const url = (await waitForLine(child, /http:\/\/127\.0\.0\.1:\d+/)).trim();
      return { child, url, output: () => out };
    };

    const first = await start();
    const keysFile = join(dataDir, "demo-keys.json");
    assert.ok(existsSync(keysFile));
    const keys = JSON.parse(readFileSync(keysFile, "utf8")) as Record<string, string>;
    assert.deepEqual(Object.keys(keys), ["starter", "pro", "enterprise"]);
    for (const k of Object.values(keys)) assert.ok(first.output().includes(k), "each demo key is printed");
    const res = await fetch(`${first.url}/v1/markets?coin=btc`, { headers: { "x-api-key": keys.starter } });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { total: number }).total, 4);
    const exited = new Promise((r) => first.child.once("exit", r));
    first.child.kill("SIGTERM");
    assert.equal(await exited, 0);

    const second = await start();
    assert.ok(!second.output().includes("Demo API keys"), "a second start neither seeds nor makes keys");
    const again = await fetch(`${second.url}/v1/markets?coin=btc`, { headers: { "x-api-key": keys.pro } });
    assert.equal(((await again.json()) as { total: number }).total, 4);

    // A long export in flight when SIGTERM arrives is finished before the process exits 0.
    const hourly = (await (
      await fetch(`${second.url}/v1/markets?coin=btc&market_type=1h`, { headers: { "x-api-key": keys.pro } })
    ).json()) as { markets: { slug: string }[] };
    const slug = hourly.markets[0].slug;
    const detail = await fetch(`${second.url}/v1/markets/${slug}/snapshots?limit=1`, {
      headers: { "x-api-key": keys.pro },
    });
    const total = ((await detail.json()) as { total: number }).total;
    const exportRes = await fetch(
      `${second.url}/v1/markets/${slug}/snapshots/export?include_orderbook=true`,
      {
        headers: { "x-api-key": keys.pro, "accept-encoding": "identity" },
      },
    );
    const reader = exportRes.body!.getReader();
    const firstChunk = await reader.read();
    const stopped = new Promise((r) => second.child.once("exit", r));
    second.child.kill("SIGTERM");
    let bytes = Buffer.from(firstChunk.value ?? []);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      bytes = Buffer.concat([bytes, chunk.value]);
    }
    assert.equal(
      bytes.toString().trimEnd().split("\n").length,
      1 + total,
      "the market line and every second",
    );
    assert.equal(await stopped, 0);
  });

  test("serve --no-seed leaves an empty database empty and makes no keys", async () => {
    const env = {
      ...process.env,
      DATABASE_URL: `sqlite:${join(dir, "empty", "updown.db")}`,
      PORT: "0",
      LOG_LEVEL: "warn",
    };
    const child = spawn(process.execPath, [BIN, "serve", "--no-seed"], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    await waitForLine(child, /http:\/\/127\.0\.0\.1:\d+/);
    const stopped = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    assert.equal(await stopped, 0);
    assert.ok(!out.includes("Demo API keys"));
    assert.ok(!existsSync(join(dir, "empty", "demo-keys.json")));
    assert.equal(updown(["keys", "list"], { DATABASE_URL: env.DATABASE_URL }).stdout, KEYS_HEADER);
  });
});
