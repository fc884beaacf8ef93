import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Market } from "../../src/domain/market.ts";
import { HAND_MARKET } from "./app.ts";
import { BIN, ROOT } from "./paths.ts";
import type { PmxtRow } from "./pmxt-parquet.ts";
import { ARCHIVE_MIX, conditionIdOf, marketStream, Rng, rowOf } from "./pmxt-stream.ts";

/**
 * A synthetic PMXT hour for the import's process tests and its bench: six BTC 5-minute markets (the
 * ones kept) and rows of markets the store does not hold, about 95 % of them as in the archive,
 * where the configured coins' series are a small part of every Polymarket market.
 */

export const HOUR = 1_784_851_200;

function market(n: number, start: number): Market {
  return {
    ...HAND_MARKET,
    slug: `btc-updown-5m-${start}`,
    polymarketSlug: null,
    coin: "btc",
    marketType: "5m",
    marketId: String(n),
    eventId: String(n),
    startTime: start,
    endTime: start + 300,
    conditionId: conditionIdOf(n),
    clobTokenUp: `${n}1`,
    clobTokenDown: `${n}2`,
    winner: null,
    coinPriceStart: null,
    coinPriceEnd: null,
    finalVolume: null,
    finalLiquidity: null,
    resolvedAt: null,
  };
}

export const HOUR_MARKETS: readonly Market[] = Array.from({ length: 6 }, (_, k) =>
  market(1000 + k, HOUR + 300 * k),
);

/** The kept markets' rows: each market's stream from `leadS` before its start to a minute after its end. */
export function keptRows(seed: number, stepMs: number, leadS = 60): PmxtRow[] {
  return HOUR_MARKETS.flatMap((m, k) =>
    marketStream(m, seed + k, (m.startTime - leadS) * 1000, (m.endTime + 10) * 1000, stepMs).map(rowOf),
  );
}

/**
 * An hour as the archive's files are (DESIGN 3.11), for the import's bench: the hour's twelve BTC
 * 5-minute markets kept, their rows in the archive's mix of types (99.7 % price_change) and, as their
 * condition ids are random, spread among the other markets' rows (every `spacing`-th stranger market
 * of strangerRows(..., spacing) sorts next to a kept one) rather than together.
 */
export function archiveHour(
  stepMs: number,
  leadS: number,
  group = 0,
): { markets: Market[]; rows: PmxtRow[] } {
  // Group g (a row group of a file of many): its own ids and the next twelve 5-minute intervals.
  const markets = Array.from({ length: 12 }, (_, k) =>
    market(STRANGER_BASE + GROUP_IDS * group + 1 + 34 * k, HOUR + 300 * (12 * group + k)),
  );
  const rows = markets.flatMap((m, k) =>
    marketStream(
      m,
      40 + 12 * group + k,
      (m.startTime - leadS) * 1000,
      (m.endTime + 10) * 1000,
      stepMs,
      true,
      ARCHIVE_MIX,
    ).map(rowOf),
  );
  return { markets, rows };
}

const STRANGER_BASE = 50_000;
/** "0.10" to "0.99" by cent (PRICE_TEXTS[c] is `0.${c}`), shared by strangerRows' rows. */
const PRICE_TEXTS = Array.from({ length: 100 }, (_, c) => `0.${c}`);
/** Condition ids a group of archiveHour and strangerRows takes (a row group's 200 strangers, spaced by 2). */
const GROUP_IDS = 1_000;

/**
 * Rows of markets not in the store, cheaply: `price_change` rows of made-up condition ids, 5000 rows
 * a market; `spacing` 2 leaves a free id between two, where archiveHour's markets sort.
 */
export function strangerRows(count: number, seed: number, spacing = 1, group = 0): PmxtRow[] {
  const rng = new Rng(seed);
  const rows: PmxtRow[] = [];
  // A market's texts are made once and shared by its rows: a million rows of their own strings took
  // more of the memory test's time in the garbage collector than in anything else.
  let market = "";
  let assets = ["", ""];
  for (let i = 0; i < count; i++) {
    const n = STRANGER_BASE + GROUP_IDS * group + Math.floor(i / 5000) * spacing;
    if (i % 5000 === 0) {
      market = conditionIdOf(n);
      assets = [`${n}0`, `${n}1`];
    }
    rows.push({
      timestampReceived: HOUR * 1000 + rng.int(0, 3_599_999),
      timestamp: HOUR * 1000 + rng.int(0, 3_599_999),
      market,
      eventType: "price_change",
      assetId: assets[i % 2],
      price: PRICE_TEXTS[rng.int(10, 99)],
      size: `${rng.int(0, 9999)}.${rng.int(10, 99)}`,
      side: rng.next() < 0.5 ? "BUY" : "SELL",
      bestBid: "0.5",
      bestAsk: "0.51",
    });
  }
  return rows;
}

/** A Chainlink feed file (the upstream importer's columns) over the hour (or `hours`), a tick a second. */
export function writeHourFeed(path: string, hours = 1): void {
  const lines = ["feed_ts_ms,value,full_accuracy_value,server_ts_ms,recv_ms"];
  for (let s = HOUR - 600; s < HOUR + 3600 * hours; s++) {
    const value = 60_000 + (s % 101);
    lines.push(`${s * 1000},${value},${value}000000000000000000,${s * 1000},${s * 1000 + 5}`);
  }
  writeFileSync(path, `${lines.join("\n")}\n`);
}

/** What `updown import pmxt` printed and how much memory it took, run as a process. */
export interface ImportPmxtProcess {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Peak resident memory (test/helpers/max-rss.mjs), MiB. */
  peakMiB: number;
  seconds: number;
}

/** `updown import pmxt FILE --feed btc:FEED --coins btc --json` into the SQLite file `db`, as a process. */
export async function importPmxtProcess(file: string, feed: string, db: string): Promise<ImportPmxtProcess> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      "--import",
      join(ROOT, "test/helpers/max-rss.mjs"),
      BIN,
      ...["import", "pmxt", file, "--feed", `btc:${feed}`, "--coins", "btc", "--json"],
      ...["--database-url", `sqlite:${db}`],
    ],
    { cwd: ROOT },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  const kib = Number(/max-rss-kib (\d+)/.exec(stderr)?.[1]);
  return { code, stdout, stderr, peakMiB: kib / 1024, seconds: (performance.now() - started) / 1000 };
}
