import { constants, setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import type { RunPriority } from "../../config.ts";
import { systemClock } from "../../domain/time.ts";
import { openStore } from "../../store/open.ts";
import { executeRun } from "./replay.ts";

/**
 * A backtest worker thread (jobs/scheduler.ts starts them): its own store connection, opened from the
 * URL it is given, and one run at a time. Messages in: `{runId, runner}`; out: `{type: "ready"}`,
 * then `{type: "done", runId}` after each run (its outcome is in the store) or `{type: "crashed", ...}`.
 */

export interface WorkerData {
  databaseUrl: string;
  priority: RunPriority;
}

export interface WorkerJob {
  runId: string;
  runner: string;
  /** The scheduler's clock less this thread's, in µs: times written for the run follow the scheduler's clock. */
  clockOffset: number;
}

export type WorkerMessage =
  | { type: "ready" }
  | { type: "done"; runId: string }
  | { type: "crashed"; runId: string | null; message: string };

/**
 * Requests come before runs (priority low, the default): the thread lowers its own scheduling
 * priority, so that on a busy machine a run takes what CPU the request thread leaves. That is all
 * other work, not only requests: beside a busy neighbour a run waits until it is done, hence
 * `normal`. (On Linux the nice value is per thread, and this call sets the calling thread's; where
 * that is refused, the thread keeps the process's priority.)
 */
function yieldToRequests(priority: RunPriority): void {
  if (priority === "normal") return;
  try {
    setPriority(constants.priority.PRIORITY_LOW);
  } catch {
    // Not allowed here: the run competes on equal terms.
  }
}

const port = parentPort;
if (port === null) throw new Error("jobs/worker.ts runs as a worker thread");
const { databaseUrl, priority } = workerData as WorkerData;

yieldToRequests(priority);
try {
  const store = await openStore(databaseUrl);
  const post = (message: WorkerMessage) => port.postMessage(message);
  port.on("message", (job: WorkerJob) => {
    executeRun(store, job.runId, job.runner, () => systemClock.nowMicros() + job.clockOffset).then(
      () => post({ type: "done", runId: job.runId }),
      (err: unknown) => post({ type: "crashed", runId: job.runId, message: (err as Error).message }),
    );
  });
  port.once("close", () => void store.close());
  post({ type: "ready" });
} catch (err) {
  port.postMessage({ type: "crashed", runId: null, message: (err as Error).message } satisfies WorkerMessage);
}
