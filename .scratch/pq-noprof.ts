import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
import { buildApp } from "../src/http/app.ts";
import { openStore } from "../src/store/open.ts";
import { KeyService } from "../src/access/keys.ts";
import { systemClock } from "../src/domain/time.ts";
import { loadPlans } from "../src/access/plans.ts";
import { fork } from "node:child_process";
const child = fork("bench/load.ts", [], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
await new Promise<void>((r) => child.on("message", (m: any) => { if (m.type === "ready") r(); }));
let nextId = 1;
const runLoad = (job: unknown) => new Promise<unknown>((resolve) => { const id = nextId++; const h = (m: any) => { if (m.type === "result" && m.id === id) { child.off("message", h); resolve(m.result); } }; child.on("message", h); child.send({ type: "run", id, job }); });
const store = await openStore("sqlite:/tmp/pq/db.sqlite");
const { markets } = await store.markets.listMarkets({ coin: "btc", limit: 10, offset: 0 } as never);
const m = markets.find((x) => x.snapshotCount >= 3600)!;
const app = await buildApp({ store, logger: false });
const { key } = await new KeyService(store.keys, systemClock, loadPlans()).create({ plan: "enterprise", account: "bench" });
await app.listen({ host: "127.0.0.1", port: 0 });
const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
const range = `coin=btc&market_type=1h&start_time=${m.startTime * 1000}&end_time=${m.endTime * 1000 - 1}`;
const headers = { "x-api-key": key };
const session = new Session(); session.connect();
for (const format of (process.argv[2] ?? "parquet,ndjson").split(",")) {
  const path = `/v1/snapshots/export?${range}&format=${format}&include_orderbook=true`;
  await runLoad({ origin, headers, seconds: 2, connections: 1, path } as never);
  
  const cpu0 = process.cpuUsage();
  const r = await runLoad({ origin, headers, seconds: 5, connections: 1, path } as never) as never as { reqPerSec: number; requests: number };
  const cpu = process.cpuUsage(cpu0);
  
  
  console.log(format, Math.round(r.reqPerSec * 3600), "snap/s", ((cpu.user + cpu.system) / (r.reqPerSec * 5) / 1000).toFixed(1), "ms CPU/answer", "user", (cpu.user/1e6).toFixed(2), "sys", (cpu.system/1e6).toFixed(2));
}
child.kill(); process.exit(0);
