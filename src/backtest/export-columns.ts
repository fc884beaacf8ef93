import * as arrow from "apache-arrow";
import { parseIsoMicros } from "../domain/time.ts";
import type { Column, Kind, Value } from "./exports.ts";

/**
 * A run's tables (exports.ts) as Arrow columns, for the Parquet export. Apart from exports.ts so that
 * the server and the command line load Arrow with the first Parquet file they write, not at start.
 */

const TIME = new arrow.TimestampMicrosecond("UTC");

/** The validity bitmap of a column (bit set: a value), and how many are null. */
function validity(values: readonly Value[]): { bitmap: Uint8Array; nulls: number } {
  const bitmap = new Uint8Array(Math.ceil(values.length / 8));
  let nulls = 0;
  values.forEach((v, i) => {
    if (v === null) nulls++;
    else bitmap[i >> 3] |= 1 << (i & 7);
  });
  return { bitmap, nulls };
}

function vectorOf(kind: Kind, values: Value[]): arrow.Vector {
  if (kind === "text") return arrow.vectorFromArray(values as (string | null)[], new arrow.Utf8());
  const { bitmap, nulls } = validity(values);
  const length = values.length;
  if (kind === "number") {
    const data = Float64Array.from(values, (v) => (v === null ? 0 : (v as number)));
    return arrow.makeVector(
      arrow.makeData({ type: new arrow.Float64(), length, nullCount: nulls, nullBitmap: bitmap, data }),
    );
  }
  const data = BigInt64Array.from(values, (v) => BigInt(v === null ? 0 : (parseIsoMicros(v as string) ?? 0)));
  return arrow.makeVector(arrow.makeData({ type: TIME, length, nullCount: nulls, nullBitmap: bitmap, data }));
}

/** The rows as an Arrow table: text as UTF-8, times as UTC microsecond timestamps, numbers as doubles. */
export function arrowTableOf<T>(columns: readonly Column<T>[], rows: readonly T[]): arrow.Table {
  const vectors: Record<string, arrow.Vector> = {};
  for (const c of columns)
    vectors[c.name] = vectorOf(
      c.kind,
      rows.map((r) => c.of(r)),
    );
  return new arrow.Table(vectors);
}
