import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { KeyService } from "../access/keys.ts";
import { PLAN_NAMES, type PlanName } from "../domain/api-key.ts";
import type { Coin, MarketType } from "../domain/market.ts";
import type { Plans } from "../domain/plan.ts";
import type { Clock } from "../domain/time.ts";
import type { Store } from "../store/ports/store.ts";

/** What a first start found missing and made. */
export interface FirstStart {
  seeded: { markets: number; snapshots: number } | null;
  /** The seed finished one an earlier start began and did not complete (it was killed). */
  resumed?: boolean;
  demoKeys: { path: string; keys: Record<PlanName, string> } | null;
}

export interface FirstStartOptions {
  counts: Record<MarketType, number>;
  /** The configured coins; each gets the series Polymarket runs for it. */
  coins: readonly Coin[];
  /** Where the demo keys file goes depends on it (demoKeysPath). */
  databaseUrl: string;
  plans: Plans;
  clock: Clock;
  onProgress?: (done: number, total: number) => void;
}

/** Where demo keys are written: beside the SQLite file, or in the working directory otherwise. */
export function demoKeysPath(databaseUrl: string): string {
  if (databaseUrl.startsWith("sqlite:") && !databaseUrl.endsWith(":memory:")) {
    return join(dirname(databaseUrl.slice("sqlite:".length)), "demo-keys.json");
  }
  return "demo-keys.json";
}

/**
 * Fills an empty database with demo markets (the latest of each series live at this moment), and a
 * keyless one with one demo key per plan, written to demoKeysPath (mode 0600). The seed is marked
 * begun (with its anchor) before its first market and complete after its last, in the database
 * itself: a start that finds it begun and not complete (the first one was killed) seeds it again over
 * the same anchor, which writes what is missing, so the demo served is always the whole of it.
 */
export async function prepareFirstStart(store: Store, options: FirstStartOptions): Promise<FirstStart> {
  const made: FirstStart = { seeded: null, demoKeys: null };
  const mark = await store.markets.demoSeed();
  const interrupted = mark !== null && mark.completedAt === null;
  if (interrupted || (mark === null && (await store.markets.countMarkets()) === 0)) {
    const anchor = mark?.anchor ?? Math.floor(options.clock.nowMicros() / 1e6);
    await store.markets.beginDemoSeed(anchor);
    // Imported here: the demo's generator is loaded by the start that seeds, not by every start.
    const { seedDemo } = await import("../demo/seed.ts");
    made.seeded = await seedDemo(store, {
      seed: 1,
      anchor,
      counts: options.counts,
      coins: [...options.coins],
      exchange: true,
      onProgress: options.onProgress,
    });
    await store.markets.completeDemoSeed(options.clock.nowMicros());
    made.resumed = interrupted;
  }
  if ((await store.keys.listApiKeys()).length === 0) {
    const service = new KeyService(store.keys, options.clock, options.plans);
    const keys = {} as Record<PlanName, string>;
    for (const plan of PLAN_NAMES) {
      keys[plan] = (await service.create({ plan, account: "demo", name: `demo ${plan}` })).key;
    }
    const path = demoKeysPath(options.databaseUrl);
    writeFileSync(path, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
    made.demoKeys = { path, keys };
  }
  return made;
}

/**
 * What a first start made, between two rules so that it stands out from the log lines around it: the
 * demo data, the demo keys, and a first request to paste (no side borders, which a copy would take
 * along). Printed once the server listens, so that the URL is the real one.
 */
export function firstStartBanner(made: FirstStart, base: string): string | null {
  const lines: string[] = [];
  if (made.seeded) {
    const snapshots = made.seeded.snapshots.toLocaleString("en-US");
    const what = made.resumed
      ? "demo data seeded (the seed an interrupted start began, finished:"
      : "demo data seeded (";
    lines.push(`First start: ${what}${made.seeded.markets} markets, ${snapshots} snapshots).`);
  }
  if (made.demoKeys) {
    const { keys, path } = made.demoKeys;
    lines.push(`Demo API keys, one per plan (also in ${path}):`);
    for (const plan of PLAN_NAMES) lines.push(`  ${plan.padEnd(11)} ${keys[plan]}`);
    lines.push("Try:", `  curl -w '\\n' -H "X-API-Key: ${keys.pro}" '${base}/v1/markets?coin=btc&limit=2'`);
  }
  if (lines.length === 0) return null;
  lines.push(
    `Web page: ${base}/ (paste a key)`,
    `Docs: ${base}/docs`,
    `For AI agents: ${base}/llms.txt, MCP at ${base}/mcp or \`updown mcp\``,
  );
  const rule = "=".repeat(78);
  return [rule, ...lines.map((l) => ` ${l}`), rule].join("\n");
}
