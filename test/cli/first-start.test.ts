import assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, describe, test } from "node:test";
import { SqliteStore } from "../../src/store/dialects/sqlite/sqlite-store.ts";
import { BIN } from "../helpers/serve.ts";

// A first start killed while it seeds (issue 21): `updown serve` on a new SQLite file is killed with
// SIGKILL once it has said how far the seed is, then started again; the demo it serves must be the
// whole of it, as an uninterrupted seed over the same anchor writes it.

const run = promisify(execFile);

const COUNTS = "5m=20,15m=10,1h=4,4h=2,24h=1";
const COINS = "btc";

/** Starts `updown serve` (seeding) and resolves with the first stderr/stdout line `until` accepts. */
function serveUntil(
  env: NodeJS.ProcessEnv,
  until: RegExp,
): Promise<{ child: ChildProcess; line: string; out: () => string }> {
  const child = spawn(process.execPath, [BIN, "serve"], {
    env: { ...process.env, ...env, PORT: "0", LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = out.split("\n").find((l) => until.test(l));
      if (m !== undefined) {
        child.stdout.off("data", onData);
        child.stderr.off("data", onData);
        child.stdout.on("data", (c: Buffer) => (out += c.toString()));
        child.stderr.on("data", (c: Buffer) => (out += c.toString()));
        resolve({ child, line: m, out: () => out });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code, signal) =>
      reject(new Error(`serve exited (${code ?? signal}) first:\n${out}`)),
    );
  });
}

async function stopped(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  await exited;
}

/** Markets and snapshots per series, and the demo seed's mark, of a SQLite file. */
async function contents(path: string) {
  const store = new SqliteStore(path);
  try {
    const series = (await store.markets.seriesSummary(0)).map((s) => [
      s.coin,
      s.marketType,
      s.markets,
      s.snapshots,
    ]);
    return { markets: await store.markets.countMarkets(), series, mark: await store.markets.demoSeed() };
  } finally {
    await store.close();
  }
}

describe("a first start killed while it seeds", { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "updown-first-start-"));
  const children: ChildProcess[] = [];
  after(async () => {
    for (const c of children) await stopped(c, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  test("the next start finishes the seed: the same markets and snapshots as an uninterrupted seed", async () => {
    const path = join(dir, "db.sqlite");
    const env = { DATABASE_URL: `sqlite:${path}`, DEMO_COUNTS: COUNTS, COINS };

    // Killed as soon as it says how far the seed is (a line every few seconds while it seeds).
    const first = await serveUntil(env, /^Seeding demo data: [\d,]+ \/ [\d,]+ \(/);
    children.push(first.child);
    const [done, total] = /: ([\d,]+) \/ ([\d,]+)/
      .exec(first.line)!
      .slice(1)
      .map((n) => Number(n.replaceAll(",", "")));
    assert.ok(done < total, `the seed was over before it could be killed: ${first.line}`);
    await stopped(first.child, "SIGKILL");
    const killed = await contents(path);
    assert.ok(
      killed.mark !== null && killed.mark.completedAt === null,
      "the seed is marked begun, not complete",
    );

    // Started again: it finishes the seed, says so, and only then serves.
    const second = await serveUntil(env, /Serving http:\/\//);
    children.push(second.child);
    assert.match(second.out(), /the seed an interrupted start began, finished/);
    await stopped(second.child, "SIGTERM");
    const resumed = await contents(path);
    assert.ok(resumed.mark?.completedAt !== null, "the seed is marked complete");
    // The next start wrote what the killed one had not: markets, or (when the kill came after the
    // markets, as a fast seed's first progress line can) their snapshots.
    const written = (c: typeof killed) => [c.markets, c.series.reduce((n, s) => n + Number(s[3]), 0)];
    const [marketsBefore, snapshotsBefore] = written(killed);
    const [marketsAfter, snapshotsAfter] = written(resumed);
    assert.ok(
      marketsAfter > marketsBefore || snapshotsAfter > snapshotsBefore,
      `${marketsBefore} markets and ${snapshotsBefore} snapshots after the kill, ${marketsAfter} and ${snapshotsAfter} after`,
    );

    // The same demo, seeded in one go over the anchor the first start chose.
    const whole = join(dir, "whole.sqlite");
    const anchor = new Date(resumed.mark!.anchor * 1000).toISOString();
    await run(
      process.execPath,
      [BIN, "seed", "--seed", "1", "--anchor", anchor, "--counts", COUNTS, "--coins", COINS],
      {
        env: { ...process.env, DATABASE_URL: `sqlite:${whole}` },
      },
    );
    const reference = await contents(whole);
    assert.equal(resumed.markets, reference.markets);
    assert.deepEqual(resumed.series, reference.series);

    // A third start finds the seed complete and seeds nothing.
    const third = await serveUntil(env, /Serving http:\/\//);
    children.push(third.child);
    assert.doesNotMatch(third.out(), /Seeding demo data|demo data seeded/);
    await stopped(third.child, "SIGTERM");
  });
});
