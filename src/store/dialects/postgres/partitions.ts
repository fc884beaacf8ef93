import type { Pool } from "pg";
import { SCHEMA_LOCK, inTransaction } from "./pg-util.ts";

/** One UTC month of times: [fromUs, toUs). */
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
 * SQLSTATE of a row that fits no partition (its month's partition is gone from under us), shared with
 * failed CHECK constraints, which the partitioned tables have none of; the message is not matched, as it
 * depends on the server's language.
 */
const NO_PARTITION_FOR_ROW = "23514";

function isMissingPartition(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === NO_PARTITION_FOR_ROW;
}

/** Rows about to be written to tables range-partitioned by UTC month of time: which tables, which times. */
export interface PartitionedRows {
  tables: readonly string[];
  times: readonly number[];
}

/**
 * Creates the monthly partitions of the partitioned tables (snapshots and their books, and the busier
 * exchange tables) before rows reach them; one per pool, shared by the stores on it. Each month is
 * created in a short transaction of its own: CREATE TABLE ... PARTITION OF locks the parent table
 * exclusively, which inside an insert's transaction would hold off every reader for as long as the
 * insert takes. `CREATE TABLE IF NOT EXISTS` alone is not safe against a concurrent creator (both may
 * pass the check and one then fails on the catalog's unique index), hence the advisory lock. Partitions
 * known to exist are remembered, so that the usual insert costs no round trip here.
 */
export class MonthlyPartitions {
  private readonly pool: Pool;
  private readonly known = new Set<string>();

  constructor(pool: Pool) {
    this.pool = pool;
  }

  /**
   * Runs `write` once the partitions its rows need exist. Should a partition be dropped behind this
   * process's back, the write fails on its row; the partitions are then made again and the write
   * retried once.
   */
  async writing<T>(rows: readonly PartitionedRows[], write: () => Promise<T>): Promise<T> {
    await this.ensure(rows);
    try {
      return await write();
    } catch (err) {
      if (!isMissingPartition(err)) throw err;
      this.known.clear();
      await this.ensure(rows);
      return write();
    }
  }

  private async ensure(rows: readonly PartitionedRows[]): Promise<void> {
    const missing = new Map<string, { table: string; month: MonthRange }>();
    for (const { tables, times } of rows) {
      for (const month of monthsOf(times)) {
        for (const table of tables) {
          const name = `${table}_${month.suffix}`;
          if (!this.known.has(name)) missing.set(name, { table, month });
        }
      }
    }
    if (missing.size === 0) return;
    await inTransaction(this.pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1, $2)", [
        SCHEMA_LOCK.namespace,
        SCHEMA_LOCK.partitions,
      ]);
      for (const [name, { table, month }] of missing) {
        await client.query(
          `CREATE TABLE IF NOT EXISTS "${name}" PARTITION OF ${table}
             FOR VALUES FROM (${month.fromUs}) TO (${month.toUs})`,
        );
      }
    });
    for (const name of missing.keys()) this.known.add(name);
  }
}
