import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import { type Clock, type Micros, systemClock } from "../../domain/time.ts";
import type { RunPriority } from "../../config.ts";
import type { Logger } from "../../log.ts";
import type { Store } from "../../store/ports/store.ts";
import { FairQueue, type RunOwner } from "./fair-queue.ts";
import { executeRun } from "./replay.ts";
import type { WorkerData, WorkerJob, WorkerMessage } from "./worker.ts";

/**
 * Runs as jobs (DESIGN 3.7): each process has a scheduler that executes the runs it was handed on a
 * few worker threads, each with its own store connection, so that a long run never holds up a request.
 * A run is held under a lease the scheduler renews while it is queued here or executing; a process
 * that dies stops renewing, and once the lease has run out any process's sweep (at start, then every
 * lease period) takes the run over and executes it again from the start, or fails it after
 * `maxAttempts` starts. A store only this process can open (`sqlite::memory:`) is replayed on the
 * event loop instead, a market at a time.
 */

export interface SchedulerOptions {
  store: Store;
  clock?: Clock;
  /** Runs executed at once by this process. */
  workers: number;
  /** How the worker threads are scheduled (BACKTEST_PRIORITY; its default is the option's). */
  priority: RunPriority;
  /** How long a run stays this process's without a renewal. */
  leaseMs: number;
  /** Starts of a run before a lost lease fails it rather than running it again. */
  maxAttempts?: number;
  log?: Logger;
}

/** How often a wait for a run another process holds looks at the store. */
const RUN_POLL_MS = 100;

/** One place a run executes: a worker thread, or this thread for a store no other thread can open. */
interface Slot {
  execute(runId: string, runner: string): Promise<void>;
  close(): Promise<void>;
}

class InlineSlot implements Slot {
  private readonly store: Store;
  private readonly clock: Clock;
  constructor(store: Store, clock: Clock) {
    this.store = store;
    this.clock = clock;
  }
  execute(runId: string, runner: string): Promise<void> {
    return executeRun(this.store, runId, runner, () => this.clock.nowMicros());
  }
  async close(): Promise<void> {}
}

class WorkerSlot implements Slot {
  private readonly url: string;
  private readonly clock: Clock;
  private readonly priority: RunPriority;
  private worker: Worker | null = null;
  private pending: { runId: string; done: () => void; fail: (err: Error) => void } | null = null;

  constructor(url: string, clock: Clock, priority: RunPriority) {
    this.url = url;
    this.clock = clock;
    this.priority = priority;
  }

  private start(): Worker {
    const data: WorkerData = { databaseUrl: this.url, priority: this.priority };
    const worker = new Worker(new URL("./worker.ts", import.meta.url), { workerData: data });
    worker.on("message", (m: WorkerMessage) => {
      if (m.type === "ready") return;
      const p = this.pending;
      this.pending = null;
      if (m.type === "done") p?.done();
      else p?.fail(new Error(m.message));
    });
    const lost = (err: Error) => {
      this.worker = null;
      const p = this.pending;
      this.pending = null;
      p?.fail(err);
    };
    worker.on("error", lost);
    worker.on("exit", (code) => lost(new Error(`the worker thread exited (${code})`)));
    return worker;
  }

  execute(runId: string, runner: string): Promise<void> {
    this.worker ??= this.start();
    const job: WorkerJob = { runId, runner, clockOffset: this.clock.nowMicros() - systemClock.nowMicros() };
    return new Promise((done, fail) => {
      this.pending = { runId, done, fail };
      this.worker?.postMessage(job);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }
}

export class RunScheduler {
  /** This process's name as a runner, in the runs it holds. */
  readonly runner = randomUUID();
  private readonly options: Required<Omit<SchedulerOptions, "log">>;
  private log: Logger | null;
  private readonly slots: Slot[];
  private readonly idle: Slot[];
  private readonly queue = new FairQueue();
  /** Runs this process holds: queued here or executing. */
  private readonly held = new Set<string>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(options: SchedulerOptions) {
    const clock = options.clock ?? systemClock;
    const { log, ...rest } = options;
    this.options = { maxAttempts: 2, ...rest, clock };
    this.log = log ?? null;
    const url = options.store.url;
    this.slots = Array.from({ length: Math.max(1, options.workers) }, () =>
      url === null ? new InlineSlot(options.store, clock) : new WorkerSlot(url, clock, this.options.priority),
    );
    this.idle = [...this.slots];
  }

  /** Where warnings go (the server's log, once there is one). */
  useLogger(log: Logger): void {
    this.log = log;
  }

  /** The lease a run is given now. */
  leaseUntil(): Micros {
    return this.options.clock.nowMicros() + this.options.leaseMs * 1000;
  }

  /** Starts renewing leases and sweeping for abandoned runs, beginning with a sweep now. */
  async start(): Promise<void> {
    if (this.timer !== null || this.closed) return;
    let ticks = 0;
    const period = Math.max(50, Math.floor(this.options.leaseMs / 3));
    this.timer = setInterval(() => {
      ticks++;
      void this.renew().catch((err: unknown) => this.warn("renewing backtest leases failed", err));
      if (ticks % 3 === 0) void this.sweep().catch((err: unknown) => this.warn("backtest sweep failed", err));
    }, period);
    this.timer.unref();
    // A store that cannot be reached now must not stop the server starting; the next sweep retries.
    await this.sweep().catch((err: unknown) => this.warn("backtest sweep failed", err));
  }

  /** Takes over runs whose lease ran out (their process died), and fails those tried too often. */
  async sweep(): Promise<void> {
    const { store, clock, maxAttempts } = this.options;
    const { requeued, failed } = await store.backtests.reclaimExpired(
      this.runner,
      clock.nowMicros(),
      this.leaseUntil(),
      maxAttempts,
    );
    for (const id of failed) this.log?.warn({ run: id }, "backtest run abandoned by its server, failed");
    for (const id of requeued) {
      this.log?.info({ run: id }, "backtest run abandoned by its server, taken over");
      const run = await store.backtests.getRun(id);
      if (run !== null) this.submit(id, { account: run.account ?? run.keyId, keyId: run.keyId });
    }
  }

  private async renew(): Promise<void> {
    if (this.held.size > 0)
      await this.options.store.backtests.renewLeases(this.runner, [...this.held], this.leaseUntil());
  }

  /**
   * Queues a run held by this process's runner (created with `runner` and a lease). Queued runs start
   * round robin over accounts, then over each account's keys (FairQueue).
   */
  submit(runId: string, owner: RunOwner): void {
    if (this.closed || this.held.has(runId)) return;
    this.held.add(runId);
    this.queue.push(runId, owner);
    this.pump();
  }

  private pump(): void {
    while (this.queue.size > 0 && this.idle.length > 0) {
      const runId = this.queue.shift() as string;
      const slot = this.idle.pop() as Slot;
      void this.execute(slot, runId).finally(() => {
        this.held.delete(runId);
        this.idle.push(slot);
        this.notify(runId);
        this.pump();
      });
    }
  }

  private async execute(slot: Slot, runId: string): Promise<void> {
    const { store, clock } = this.options;
    try {
      if (!(await store.backtests.claimRun(runId, this.runner, clock.nowMicros(), this.leaseUntil()))) return;
      await slot.execute(runId, this.runner);
    } catch (err) {
      // Closing stops the workers mid-run: the run's lease then runs out and another process (or this
      // one, started again) takes it over, so it is not failed here.
      if (this.closed) return;
      this.warn("backtest run failed in its worker", err);
      const error = `The run failed: ${(err as Error).message}`;
      await store.backtests
        .finishRun(runId, this.runner, { status: "failed", error }, clock.nowMicros())
        .catch((e: unknown) => this.warn("recording a failed backtest run failed", e));
    }
  }

  private notify(runId: string): void {
    const waiting = this.waiters.get(runId);
    this.waiters.delete(runId);
    for (const wake of waiting ?? []) wake();
  }

  /** Milliseconds from the scheduler's clock to `deadline` (microseconds on that clock). */
  private msUntil(deadline: number): number {
    return (deadline - this.options.clock.nowMicros()) / 1000;
  }

  /**
   * Resolves when the run has finished, or after `ms` on the scheduler's clock, whichever comes first
   * (a clock that stands still, as tests inject, waits for the run however long it takes). A run this
   * process holds wakes its waiters as it ends; one another process holds (a retry landing on the other
   * replica) is seen ending in the store, looked at every RUN_POLL_MS.
   */
  waitFor(runId: string, ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return this.waitUntil(runId, this.options.clock.nowMicros() + ms * 1000);
  }

  private waitUntil(runId: string, deadline: number): Promise<void> {
    if (!this.held.has(runId)) return this.pollUntilFinished(runId, deadline);
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      const set = this.waiters.get(runId) ?? new Set();
      this.waiters.set(runId, set);
      set.add(done);
      // On the system clock the first timer is the deadline; on another, the clock is read again then.
      const arm = () => {
        const left = this.msUntil(deadline);
        if (left <= 0) done();
        else timer = setTimeout(arm, left);
      };
      arm();
      function done() {
        if (timer !== null) clearTimeout(timer);
        set.delete(done);
        resolve();
      }
    });
  }

  private async pollUntilFinished(runId: string, deadline: number): Promise<void> {
    for (;;) {
      if (this.held.has(runId)) return this.waitUntil(runId, deadline);
      const run = await this.options.store.backtests.getRun(runId);
      if (run === null || run.status === "complete" || run.status === "failed") return;
      const left = this.msUntil(deadline);
      if (left <= 0 || this.closed) return;
      await sleep(Math.min(RUN_POLL_MS, left));
    }
  }

  /** Runs this process holds now (queued or executing). */
  get inFlight(): number {
    return this.held.size;
  }

  private warn(msg: string, err: unknown): void {
    this.log?.warn({ err: { message: (err as Error).message } }, msg);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    for (const id of [...this.waiters.keys()]) this.notify(id);
    await Promise.all(this.slots.map((s) => s.close()));
  }
}
