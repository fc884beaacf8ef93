import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { measureRecording, type RecordingResult } from "./recording.ts";

/**
 * The cost of keeping events (DESIGN 3.10): the recording bench's live tick of 300 markets
 * (bench/recording.ts: 20 levels a side, a tenth of the tokens changing every second, a SQLite file),
 * run with events off and with events on, each in a fresh file; the cost is the ticks' wall time with
 * events over that without (1.0: free). Runs alternate off, on, off, on so that a warming machine
 * favours neither; each side's ticks are pooled.
 */

export interface EventRecordingResult {
  markets: number;
  ticks: number;
  /** Ticks' wall time with events on over with events off. */
  costRatio: number;
  offTickP50Ms: number;
  onTickP50Ms: number;
  offSnapshotsPerSecond: number;
  onSnapshotsPerSecond: number;
  /** Market events and coin-price updates written per tick with events on. */
  eventsPerTick: number;
}

export async function measureEventRecording(opts: {
  tmp: string;
  markets?: number;
  ticks?: number;
  rounds?: number;
  log?: (line: string) => void;
}): Promise<EventRecordingResult> {
  const markets = opts.markets ?? 300;
  const ticks = opts.ticks ?? 30;
  const log = opts.log ?? (() => {});
  const runs: Record<"off" | "on", RecordingResult[]> = { off: [], on: [] };
  for (let round = 0; round < (opts.rounds ?? 2); round++) {
    for (const side of ["off", "on"] as const) {
      const tmp = join(opts.tmp, `event-recording-${side}-${round}`);
      mkdirSync(tmp, { recursive: true });
      runs[side].push(await measureRecording({ tmp, markets, ticks, events: side === "on" }));
    }
  }
  // Per-second rates pooled over the rounds: snapshots over the ticks' summed wall time.
  const rate = (rs: RecordingResult[]) =>
    rs.reduce((s, r) => s + r.snapshots, 0) / rs.reduce((s, r) => s + r.snapshots / r.recordingPerSecond, 0);
  const p50 = (rs: RecordingResult[]) =>
    rs.map((r) => r.tickP50Ms).toSorted((a, b) => a - b)[Math.floor(rs.length / 2)];
  const off = rate(runs.off);
  const on = rate(runs.on);
  const result: EventRecordingResult = {
    markets,
    ticks,
    costRatio: Math.round((off / on) * 1000) / 1000,
    offTickP50Ms: p50(runs.off),
    onTickP50Ms: p50(runs.on),
    offSnapshotsPerSecond: Math.round(off),
    onSnapshotsPerSecond: Math.round(on),
    eventsPerTick: Math.round(runs.on.reduce((s, r) => s + r.eventsWritten, 0) / (ticks * runs.on.length)),
  };
  log(
    `event recording: a live tick of ${markets} markets with events on costs ${result.costRatio}x the tick with events off ` +
      `(${result.onTickP50Ms} ms vs ${result.offTickP50Ms} ms p50; ${result.onSnapshotsPerSecond} vs ${result.offSnapshotsPerSecond} snapshots/s; ` +
      `${result.eventsPerTick} events written a tick)`,
  );
  return result;
}
