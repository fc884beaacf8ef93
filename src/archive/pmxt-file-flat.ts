import {
  type DataPage,
  decodedInOrder,
  type FlatColumn,
  type FlatParquet,
  type PageRef,
  PhysicalType,
  type PlainValues,
  UnsupportedParquetError,
} from "./parquet/flat-parquet.ts";
import {
  checkPmxtColumns,
  DECIMAL_COLUMNS,
  type DecimalColumn,
  type KeptEvent,
  KeptEventBatches,
  type KeptRun,
  type PmxtRows,
  type RowGroupReader,
  rowEvent,
  runEnd,
  scaled,
  shortest,
  TEXT_COLUMNS,
  type TextColumn,
} from "./pmxt-rows.ts";

/**
 * PMXT row groups read by the flat Parquet reader (src/archive/parquet/flat-parquet.ts): the `market`
 * column's pages whole, to find the kept markets' runs; then, column by column, only the pages that
 * hold a kept row, and of them only the kept rows' values (a dictionary value converted once).
 *
 * Memory is bounded by one column chunk's compressed bytes and its decompressed pages (the largest
 * is `market`, 66 bytes a row: about 70 MB for 1,048,576 rows), plus the kept rows' values of the
 * row group and the events the caller holds.
 */

type Convert<T> = (values: PlainValues, i: number) => T;

export class FlatRowGroups implements RowGroupReader {
  readonly rowGroupRows: number[];
  private readonly file: FlatParquet;

  /** Reads a file whose columns are PMXT v2's in types this reader converts; else UnsupportedParquetError. */
  constructor(file: FlatParquet) {
    this.file = file;
    checkPmxtColumns((c) => file.columns.has(c));
    const column = (name: string) => file.columns.get(name) as FlatColumn;
    const expect = (name: string, ok: boolean) => {
      if (!ok)
        throw new UnsupportedParquetError(`column ${name} is of a type the flat reader does not convert`);
    };
    for (const name of ["timestamp_received", "timestamp"]) {
      const c = column(name);
      expect(
        name,
        c.type === PhysicalType.INT64 && ["MILLIS", "MICROS", "NANOS"].includes(c.timestampUnit ?? "MILLIS"),
      );
    }
    const bytes = (c: FlatColumn) =>
      c.type === PhysicalType.BYTE_ARRAY || c.type === PhysicalType.FIXED_LEN_BYTE_ARRAY;
    expect("market", bytes(column("market")));
    for (const name of TEXT_COLUMNS) expect(name, column(name).type === PhysicalType.BYTE_ARRAY);
    for (const name of DECIMAL_COLUMNS) expect(name, column(name).decimalScale !== null);
    const fee = column("fee_rate_bps").type;
    expect("fee_rate_bps", fee === PhysicalType.INT32 || fee === PhysicalType.INT64);
    this.rowGroupRows = file.rowGroups.map((g) => g.rows);
  }

  async readRowGroup(
    index: number,
    keep: ReadonlySet<string>,
    onEvents: (events: KeptEvent[]) => Promise<void>,
    flushEvery: number,
  ): Promise<number> {
    const runs = await this.keptRuns(index, keep);
    if (runs.length === 0) return 0;
    const rows = await KeptRows.read(this.file, index, runs);
    const batches = new KeptEventBatches(onEvents, flushEvery);
    let k = 0;
    for (const run of runs) {
      for (let row = run.start; row < run.end; row++, k++)
        batches.push({ conditionId: run.conditionId, event: rowEvent(rows, k, run.conditionId) });
      await batches.marketEnded();
    }
    await batches.finish();
    return k;
  }

  /** The runs of rows of kept markets in a row group, from its `market` column alone. */
  private async keptRuns(index: number, keep: ReadonlySet<string>): Promise<KeptRun[]> {
    const { dictionary, pages } = this.file.chunk(index, "market");
    const runs: KeptRun[] = [];
    const ids: string[] = [];
    let previous = "";
    let kept = false;
    for await (const page of decodedInOrder([...pages])) {
      const end = page.firstRow + page.rows;
      if (!page.complete) throw new Error(`rows ${page.firstRow} to ${end - 1} hold a row without a market`);
      let same: (a: number, b: number) => boolean;
      let idOf: (row: number) => string;
      if (page.dictionaryEncoded) {
        if (!dictionary) throw new Error("market: a dictionary-encoded page without a dictionary");
        same = (a, b) => page.valueIndex(a) === page.valueIndex(b);
        idOf = (row) => {
          const v = page.valueIndex(row);
          return (ids[v] ??= dictionary.bytes.toString("latin1", dictionary.start(v), dictionary.end(v)));
        };
      } else {
        const values = page.values;
        const b = values.bytes;
        same = (x, y) => {
          const vx = page.valueIndex(x);
          const vy = page.valueIndex(y);
          return b.compare(b, values.start(vx), values.end(vx), values.start(vy), values.end(vy)) === 0;
        };
        idOf = (row) => {
          const v = page.valueIndex(row);
          return b.toString("latin1", values.start(v), values.end(v));
        };
      }
      for (let row = page.firstRow; row < end;) {
        const conditionId = idOf(row);
        const runStop = runEnd(same, row, end);
        if (conditionId !== previous) {
          previous = conditionId;
          kept = keep.has(conditionId);
          if (kept) runs.push({ conditionId, start: row, end: runStop });
        } else if (kept) runs[runs.length - 1].end = runStop;
        row = runStop;
      }
    }
    return runs;
  }

  close(): void {
    this.file.close();
  }
}

/** The kept rows' values of a row group, column by column; row k is the k-th kept row. */
class KeptRows implements PmxtRows {
  private readonly received: (number | null)[];
  private readonly timestamps: (number | null)[];
  private readonly fees: (string | null)[];
  private readonly texts: Record<TextColumn, (string | null)[]>;
  private readonly decimals: Record<DecimalColumn, (string | null)[]>;

  private constructor(
    received: (number | null)[],
    timestamps: (number | null)[],
    fees: (string | null)[],
    texts: Record<TextColumn, (string | null)[]>,
    decimals: Record<DecimalColumn, (string | null)[]>,
  ) {
    this.received = received;
    this.timestamps = timestamps;
    this.fees = fees;
    this.texts = texts;
    this.decimals = decimals;
  }

  static async read(file: FlatParquet, group: number, runs: readonly KeptRun[]): Promise<KeptRows> {
    const total = runs.reduce((n, r) => n + r.end - r.start, 0);
    const fee = (file.columns.get("fee_rate_bps") as FlatColumn).type;
    const columns: [string, Convert<unknown>][] = [
      ...TEXT_COLUMNS.map((name): [string, Convert<unknown>] => [name, utf8]),
      ...DECIMAL_COLUMNS.map((name): [string, Convert<unknown>] => [
        name,
        decimalOf(file.columns.get(name) as FlatColumn),
      ]),
      ["timestamp_received", timeIn(file, "timestamp_received", 1_000_000)],
      ["timestamp", timeIn(file, "timestamp", 1_000)],
      [
        "fee_rate_bps",
        fee === PhysicalType.INT32 ? (v, i) => String(v.int32(i)) : (v, i) => String(v.int64(i)),
      ],
    ];
    const values = new Map<string, unknown[]>();
    // The next column's pages decompress on the thread pool while this one's are converted.
    let next = planColumn(file, group, columns[0][0], runs);
    for (let c = 0; c < columns.length; c++) {
      const current = next;
      if (c + 1 < columns.length) next = planColumn(file, group, columns[c + 1][0], runs);
      values.set(columns[c][0], await extract(current, runs, total, columns[c][1]));
    }
    const texts = {} as Record<TextColumn, (string | null)[]>;
    for (const name of TEXT_COLUMNS) texts[name] = values.get(name) as (string | null)[];
    const decimals = {} as Record<DecimalColumn, (string | null)[]>;
    for (const name of DECIMAL_COLUMNS) decimals[name] = values.get(name) as (string | null)[];
    return new KeptRows(
      values.get("timestamp_received") as (number | null)[],
      values.get("timestamp") as (number | null)[],
      values.get("fee_rate_bps") as (string | null)[],
      texts,
      decimals,
    );
  }

  receivedUs(i: number): number {
    return this.received[i] ?? fail(i, "timestamp_received");
  }

  timestampMs(i: number): number {
    return this.timestamps[i] ?? fail(i, "timestamp");
  }

  text(column: TextColumn, i: number): string | null {
    return this.texts[column][i];
  }

  decimal(column: DecimalColumn, i: number): string | null {
    return this.decimals[column][i];
  }

  feeRateBps(i: number): string | null {
    return this.fees[i];
  }
}

function fail(i: number, column: string): never {
  throw new Error(`kept row ${i} has no ${column}`);
}

/**
 * One column's values at the runs' rows (in order, `total` of them), null where the row has none.
 * Pages holding none of the rows are skipped undecoded; a dictionary value is converted once.
 */
/** A column's pages that hold kept rows, their decoding begun. */
interface ColumnPlan {
  name: string;
  dictionary: PlainValues | null;
  pages: AsyncGenerator<DataPage>;
  first: Promise<IteratorResult<DataPage>>;
}

/** Starts decoding the pages of a column that hold a kept row: the others are never decompressed. */
function planColumn(file: FlatParquet, group: number, name: string, runs: readonly KeptRun[]): ColumnPlan {
  const { dictionary, pages } = file.chunk(group, name);
  const wanted: PageRef[] = [];
  let r = 0;
  for (const ref of pages) {
    const end = ref.firstRow + ref.rows;
    while (r < runs.length && runs[r].end <= ref.firstRow) r++;
    if (r >= runs.length) break;
    if (runs[r].start < end) wanted.push(ref);
  }
  const decoded = decodedInOrder(wanted);
  const first = decoded.next();
  // Awaited when the column's turn comes; a failure before then must not count as unhandled.
  first.catch(() => undefined);
  return { name, dictionary, pages: decoded, first };
}

/**
 * One column's values at the runs' rows (in order, `total` of them), null where the row has none; a
 * dictionary value is converted once.
 */
async function extract<T>(
  plan: ColumnPlan,
  runs: readonly KeptRun[],
  total: number,
  convert: Convert<T>,
): Promise<(T | null)[]> {
  const { name, dictionary } = plan;
  const out = new Array<T | null>(total).fill(null);
  // Each dictionary value converted once, in a packed array (a sparse one would be a slow dictionary).
  const converted = new Array<T | null>(dictionary?.count ?? 0).fill(null);
  let r = 0;
  let k = 0;
  let row = runs[0].start;
  for (let step = await plan.first; !step.done; step = await plan.pages.next()) {
    const page = step.value;
    const pageEnd = page.firstRow + page.rows;
    const { valueOfRow, indices, values, firstRow } = page;
    if (indices && !dictionary) throw new Error(`${name}: a dictionary-encoded page without a dictionary`);
    row = Math.max(row, firstRow);
    while (r < runs.length) {
      const to = Math.min(runs[r].end, pageEnd);
      for (; row < to; row++) {
        const v = valueOfRow ? valueOfRow[row - firstRow] : row - firstRow;
        if (v < 0) k++;
        else if (indices) {
          const d = indices[v];
          out[k++] = converted[d] ??= convert(dictionary as PlainValues, d);
        } else out[k++] = convert(values, v);
      }
      if (row < runs[r].end) break; // the run goes on in the next page
      if (++r < runs.length) row = runs[r].start;
      if (row >= pageEnd) break;
    }
  }
  if (k !== total) throw new Error(`${name}: ${total - k} kept rows missing from its pages`);
  return out;
}

/**
 * A timestamp column's values in units of 1/`perSecond` s (µs: 1,000,000; ms: 1,000), from the unit
 * the file wrote them in (the archive's are ms; another writer's, DuckDB's, µs), rounded down.
 */
function timeIn(file: FlatParquet, name: string, perSecond: number): Convert<number> {
  const unit = (file.columns.get(name) as FlatColumn).timestampUnit ?? "MILLIS";
  const per = unit === "MILLIS" ? 1_000 : unit === "MICROS" ? 1_000_000 : 1_000_000_000;
  if (per === perSecond) return (v, i) => v.int64(i);
  if (per < perSecond) return (v, i) => v.int64(i) * (perSecond / per);
  // Nanoseconds since 1970 pass 2^53: divided exactly, as integers.
  const divisor = BigInt(per / perSecond);
  return (v, i) => {
    const t = v.bytes.readBigInt64LE(v.start(i));
    const q = t / divisor;
    return Number(t < 0n && q * divisor !== t ? q - 1n : q);
  };
}

const utf8: Convert<string> = (v, i) => v.bytes.toString("utf8", v.start(i), v.end(i));

/** A decimal column's values in their shortest text, by the column's physical type. */
function decimalOf(column: FlatColumn): Convert<string> {
  const scale = column.decimalScale ?? 0;
  switch (column.type) {
    case PhysicalType.INT32:
      return (v, i) => {
        const n = v.int32(i);
        return n >= 0 ? shortest(n, scale) : scaled(String(n), scale);
      };
    case PhysicalType.INT64:
      return (v, i) => {
        const at = v.start(i);
        const hi = v.bytes.readInt32LE(at + 4);
        // Below 2^53 as a number; beyond, or negative, through BigInt.
        if (hi >= 0 && hi < 0x200000) return shortest(hi * 4294967296 + v.bytes.readUInt32LE(at), scale);
        return scaled(v.bytes.readBigInt64LE(at).toString(), scale);
      };
    default:
      // Big-endian two's complement of any width.
      return (v, i) => {
        const start = v.start(i);
        const end = v.end(i);
        if (end === start) return "0";
        let n = BigInt(`0x${v.bytes.toString("hex", start, end)}`);
        if (v.bytes[start] & 0x80) n -= 1n << BigInt(8 * (end - start));
        return n >= 0n && n < 2n ** 53n ? shortest(Number(n), scale) : scaled(n.toString(), scale);
      };
  }
}
