/**
 * One page scenario of `npm run bench` on its own, for profiling: the same server (buildApp over a
 * seeded SQLite file, request log at info to a file, an enterprise key) and the same baseline
 * (bench/baseline.ts, sent the page's bytes), each driven by wrk as the bench drives them
 * (bench/wrk.ts), baseline before and after. Run the server under the profiler with
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/page-profile.ts [books] [br] [seconds=5]
 *
 * and summarize with bench/profile-summary.ts; `routed` sends every request through Fastify's routing
 * (cached-page-answers.ts leaves a conditional request to the app). Warm pages only (the first page of a resolved 1h
 * market, from the page cache): the cold ones need the bench's lists.
 */
// The service's V8 flags (src/v8.ts) first, so that the bench measures the engine as it serves.
import "../src/v8.ts";
import { fork } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { Session } from "node:inspector/promises";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { KeyService } from "../src/access/keys.ts";
import { loadPlans } from "../src/access/plans.ts";
import { systemClock } from "../src/domain/time.ts";
import { seedDemo } from "../src/demo/seed.ts";
import { buildApp } from "../src/http/app.ts";
import { serverLog } from "../src/log.ts";
import { SqliteStore } from "../src/store/dialects/sqlite/sqlite-store.ts";
import { ensureWrk, WrkLoad } from "./wrk.ts";

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const books = args.includes("books");
const br = args.includes("br");
const seconds = Number(args.find((a) => /^\d+$/.test(a)) ?? 5);
const profileFile = args.find((a) => a.startsWith("profile="))?.slice("profile=".length) ?? null;

function get(
  url: string,
  headers: Record<string, string>,
): Promise<{ body: Buffer; type: string; enc?: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            body: Buffer.concat(chunks),
            type: String(res.headers["content-type"]),
            enc: res.headers["content-encoding"],
          }),
        );
      })
      .on("error", reject);
  });
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(join(os.tmpdir(), "updown-page-profile-"));
  const store = new SqliteStore(join(tmp, "bench.db"));
  await store.migrate();
  await seedDemo(store, {
    seed: 42,
    anchor: 1784852434,
    counts: { "5m": 0, "15m": 0, "1h": 2, "4h": 0, "24h": 0 },
    coins: ["btc"],
  });
  // For finding where the time goes: log=warn (no request lines), unmetered (no key, no limiter).
  const level = args.find((a) => a.startsWith("log="))?.slice(4) ?? "info";
  const log = serverLog(level, openSync(join(tmp, "requests.log"), "w"));
  const app = await buildApp({ store, loggerInstance: log.logger, unmetered: args.includes("unmetered") });
  const { key } = await new KeyService(store.keys, systemClock, loadPlans()).create({
    plan: "enterprise",
    account: "bench",
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (!address || typeof address === "string") throw new Error("no address");
  const origin = `http://127.0.0.1:${address.port}`;
  const [market] = (await store.markets.listMarkets({ resolved: true, limit: 1, offset: 0 })).markets;
  const path = `/v1/markets/${market.slug}/snapshots?offset=0${books ? "&include_orderbook=true" : ""}`;
  const headers: Record<string, string> = { "x-api-key": key, ...(br ? { "accept-encoding": "br" } : {}) };
  // `routed`: every request through Fastify's routing (an If-None-Match that matches nothing is left
  // to the app by cached-page-answers.ts), to see what a request costs that the direct answer skips.
  if (args.includes("routed")) headers["if-none-match"] = '"none"';
  const page = await get(origin + path, headers);
  await get(origin + path, headers);

  const baseline = fork(join(BENCH_DIR, "baseline.ts"), [], {
    execArgv: [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const port = await new Promise<number>((resolve) =>
    baseline.once("message", (m) => resolve((m as { port: number }).port)),
  );
  const file = join(tmp, "baseline.body");
  writeFileSync(file, page.body);
  const sent: Record<string, string> = {
    "content-type": page.type,
    ...(page.enc ? { "content-encoding": page.enc } : {}),
  };
  await new Promise<void>((resolve) => {
    baseline.once("message", () => resolve());
    baseline.send({ type: "body", id: 1, path: file, headers: sent });
  });

  const wrk = new WrkLoad(ensureWrk((l) => console.log(l)));
  const base = `http://127.0.0.1:${port}`;
  const run = (o: string, p: string, s: number) => wrk.run({ origin: o, headers, seconds: s, path: p });
  // CPU time per answer, of each server's process: steadier than req/s on a machine others load too.
  // user and system (the kernel's share: mostly copying the body into the socket) apart, in µs.
  const cpuOf = (pid: number) => {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return { user: (Number(f[11]) / 100) * 1e6, sys: (Number(f[12]) / 100) * 1e6 };
  };
  const perAnswer = async (o: string, p: string, pid: number) => {
    const cpu0 = cpuOf(pid);
    const r = await run(o, p, seconds);
    const cpu1 = cpuOf(pid);
    const userUs = (cpu1.user - cpu0.user) / r.requests;
    const sysUs = (cpu1.sys - cpu0.sys) / r.requests;
    return { ...r, cpuUs: userUs + sysUs, userUs, sysUs };
  };
  await run(base, "/", 1);
  const before = await perAnswer(base, "/", baseline.pid ?? 0);
  await run(origin, path, 1);
  const session = profileFile ? new Session() : null;
  session?.connect();
  await session?.post("Profiler.enable");
  await session?.post("Profiler.setSamplingInterval", { interval: 200 });
  await session?.post("Profiler.start");
  const main = await perAnswer(origin, path, process.pid);
  if (session && profileFile) {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(profileFile, JSON.stringify(profile));
    session.disconnect();
  }
  const after = await perAnswer(base, "/", baseline.pid ?? 0);
  const mean = (before.reqPerSec + after.reqPerSec) / 2;
  console.log(
    `${books ? "books" : "no books"}${br ? ", br" : ""}: ${main.reqPerSec.toFixed(0)} req/s vs baseline ${before.reqPerSec.toFixed(0)} / ${after.reqPerSec.toFixed(0)} -> ${(main.reqPerSec / mean).toFixed(3)} (${page.body.length} B body; errors ${main.errors + main.non2xx}); ` +
      `CPU per answer ${main.cpuUs.toFixed(0)} µs (user ${main.userUs.toFixed(0)}, sys ${main.sysUs.toFixed(0)}) vs baseline ${before.cpuUs.toFixed(0)} / ${after.cpuUs.toFixed(0)} µs (user ${before.userUs.toFixed(0)} / ${after.userUs.toFixed(0)})`,
  );
  baseline.send({ type: "exit" });
  await app.close();
  await store.close();
  rmSync(tmp, { recursive: true, force: true });
}

await main();
