import type { Pool } from "pg";
import { SCHEMA_LOCK, inTransaction } from "./pg-util.ts";

/** The tables partitioned by month of time_us; each month has one partition in both. */
const PARTITIONED_TABLES = ["snapshots", "snapshot_books"] as const;

/** One UTC month of snapshot times: [fromUs, toUs). */
export interface MonthRange {
  /** `YYYY_MM`, the partitions' name suffix. */
  suffix: string;
  fromUs: number;
  toUs: number;
}

/** Microseconds at the first instant of a UTC month (months past 11 roll into the next year). */
function monthStartUs(year: number, month: number): number {
  // Not Date.UTC, which reads years 0 to 99 as 1900 to 1999.
  const d = new Date(0);
  d.setUTCFullYear(year, month, 1);
  return d.getTime() * 1000;
}

export function monthRangeOf(timeUs: number): MonthRange {
  const d = new Date(Math.floor(timeUs / 1000));
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  return {
    suffix: `${year}_${String(month + 1).padStart(2, "0")}`,
    fromUs: monthStartUs(year, month),
    toUs: monthStartUs(year, month + 1),
  };
}

/** The months a batch of times falls in, each once (a batch is usually within one or two). */
export function monthsOf(times: Iterable<number>): MonthRange[] {
  const months: MonthRange[] = [];
  let last: MonthRange | null = null;
  for (const t of times) {
    if (last && t >= last.fromUs && t < last.toUs) continue;
    last = months.find((m) => t >= m.fromUs && t < m.toUs) ?? null;
    if (!last) {
      last = monthRangeOf(t);
      months.push(last);
    }
  }
  return months;
}

/**
 * Creates the monthly partitions of the snapshot tables before rows reach them. Each month is created
 * in a short transaction of its own: CREATE TABLE ... PARTITION OF locks the parent table exclusively,
 * which inside an insert's transaction would hold off every reader for as long as the insert takes.
 * `CREATE TABLE IF NOT EXISTS` alone is not safe against a concurrent creator (both may pass the check
 * and one then fails on the catalog's unique index), hence the advisory lock. Months known to exist
 * are remembered, so that the usual insert costs no round trip here.
 */
export class SnapshotPartitions {
  private readonly pool: Pool;
  private readonly known = new Set<string>();

  constructor(pool: Pool) {
    this.pool = pool;
  }

  async ensureFor(times: Iterable<number>): Promise<void> {
    const missing = monthsOf(times).filter((m) => !this.known.has(m.suffix));
    if (missing.length === 0) return;
    await inTransaction(this.pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1, $2)", [
        SCHEMA_LOCK.namespace,
        SCHEMA_LOCK.partitions,
      ]);
      for (const m of missing) {
        for (const table of PARTITIONED_TABLES) {
          await client.query(
            `CREATE TABLE IF NOT EXISTS "${table}_${m.suffix}" PARTITION OF ${table}
               FOR VALUES FROM (${m.fromUs}) TO (${m.toUs})`,
          );
        }
      }
    });
    for (const m of missing) this.known.add(m.suffix);
  }

  /** Forgets the months seen, e.g. after partitions were dropped behind this process's back. */
  forget(): void {
    this.known.clear();
  }
}
