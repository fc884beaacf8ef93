import { workerData } from "node:worker_threads";
import { archiveHour, strangerRows } from "../test/helpers/pmxt-hour.ts";
import { writePmxtFile } from "../test/helpers/pmxt-parquet.ts";
import { archiveOrder } from "../test/helpers/pmxt-stream.ts";

/**
 * Writes the pmxt-import bench's hour file (bench/pmxt-import.ts) on a worker thread: the million
 * rows it builds are garbage in the worker's heap, gone with it, not in the bench's, where collecting
 * them would be timed as part of the import measured next.
 */
const { file, rows } = workerData as { file: string; rows: number };
const kept = archiveHour(200, 600).rows;
writePmxtFile(file, archiveOrder([...kept, ...strangerRows(rows - kept.length, 8, 2)]));
