import { FlatParquet, UnsupportedParquetError } from "./parquet/flat-parquet.ts";
import { FlatRowGroups } from "./pmxt-file-flat.ts";
import { WasmRowGroups } from "./pmxt-file-wasm.ts";
import { type KeptEvent, NotPmxtError, type RowGroupReader } from "./pmxt-rows.ts";

/**
 * Reading one PMXT archive v2 file (DESIGN 3.11): one Parquet file per UTC hour of every Polymarket
 * market's market-channel stream, rows sorted by (market, asset_id, timestamp_received), one row per
 * `book`, per `price_change` entry, per `last_trade_price` and per `tick_size_change`.
 *
 * A row group is read in two passes: the `market` column alone, to find the runs of rows of the
 * markets kept (the rows are sorted by market, so each kept market is one run, found by a galloping
 * search); then the other columns, at those runs' rows only. Two readers do it:
 * - src/archive/pmxt-file-flat.ts, by the project's own reader of flat Parquet files
 *   (src/archive/parquet/flat-parquet.ts): it decompresses only the pages holding kept rows, with
 *   Node's zstd, and decodes only the values of kept rows. It reads what the archive's writers write;
 * - src/archive/pmxt-file-wasm.ts, by parquet-wasm (the Rust parquet crate), for a file in any other
 *   Parquet dialect (a DELTA encoding, Snappy, LZ4, nested columns): slower, as it decodes every
 *   column of a row group whole up to the last row asked.
 * Both give the same events (test/archive/pmxt-file.test.ts reads the same files by both).
 *
 * Each kept row becomes the market-channel message it was cut from (`rowEvent`): PMXT drops what the
 * upstream sent beyond its 16 columns (a book's `hash`, `tick_size` and `last_trade_price`, a
 * `price_change` entry's `hash`) and splits a `price_change` of several entries into one row each;
 * the rebuilt message is a `price_change` of that one entry. Decimals are written in their shortest
 * form ("0.51", "150"), as the archive's fixed-scale decimals no longer say how the upstream wrote them.
 */

/**
 * How a file is read. `batchRows`: rows handed over at once, at a market's end (65,536); by the
 * parquet-wasm reader also the rows decoded at a time. `spanGapRows` (parquet-wasm reader only): kept
 * runs closer than this are read in one pass, their gap decoded and dropped (131,072). `reader`:
 * "auto" (the flat reader where it can read the file, else parquet-wasm) or one of them by name.
 */
export interface PmxtReadOptions {
  batchRows?: number;
  spanGapRows?: number;
  reader?: "auto" | "flat" | "wasm";
}

/** A file that is not a readable PMXT v2 file: names the file (and row group, when one is at fault). */
export class PmxtFileError extends Error {
  constructor(file: string, reason: string) {
    super(`${file}: ${reason}`);
    this.name = "PmxtFileError";
  }
}

/** An opened PMXT file: its row groups' sizes, and each one's kept events on demand. */
export class PmxtFile {
  readonly path: string;
  readonly rowGroupRows: number[];
  /** Which reader reads it ("flat" or "wasm"). */
  readonly reader: "flat" | "wasm";
  private readonly rowGroups: RowGroupReader;
  private readonly batchRows: number;

  private constructor(path: string, reader: "flat" | "wasm", rowGroups: RowGroupReader, batchRows: number) {
    this.path = path;
    this.reader = reader;
    this.rowGroups = rowGroups;
    this.rowGroupRows = rowGroups.rowGroupRows;
    this.batchRows = batchRows;
  }

  /** Opens a file and reads its footer; a truncated or foreign file is a PmxtFileError naming it. */
  static async open(path: string, options: PmxtReadOptions = {}): Promise<PmxtFile> {
    const batchRows = options.batchRows ?? 65_536;
    const choice = options.reader ?? "auto";
    try {
      if (choice !== "wasm") {
        try {
          const flat = FlatParquet.open(path);
          try {
            return new PmxtFile(path, "flat", new FlatRowGroups(flat), batchRows);
          } catch (err) {
            flat.close();
            throw err;
          }
        } catch (err) {
          // A file the flat reader does not read is read by parquet-wasm; any other error is the file's.
          if (!(err instanceof UnsupportedParquetError) || choice === "flat") throw err;
        }
      }
      const wasm = await WasmRowGroups.open(path, options.spanGapRows ?? 131_072, batchRows);
      return new PmxtFile(path, "wasm", wasm, batchRows);
    } catch (err) {
      if (err instanceof NotPmxtError) throw new PmxtFileError(path, err.message);
      throw new PmxtFileError(path, `not a readable Parquet file (truncated?): ${messageOf(err)}`);
    }
  }

  /**
   * The events of the kept rows of one row group, in file order; `keep` holds the kept markets'
   * condition ids. `onEvents` gets them in parts, at the end of a market once `flushEvery` are held.
   */
  async readRowGroup(
    index: number,
    keep: ReadonlySet<string>,
    onEvents: (events: KeptEvent[]) => Promise<void>,
    flushEvery = this.batchRows,
  ): Promise<number> {
    try {
      return await this.rowGroups.readRowGroup(index, keep, onEvents, flushEvery);
    } catch (err) {
      if (err instanceof PmxtFileError) throw err;
      throw new PmxtFileError(this.path, `row group ${index}: ${messageOf(err)}`);
    }
  }

  close(): void {
    this.rowGroups.close();
  }
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
