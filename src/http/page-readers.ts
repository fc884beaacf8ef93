import { Worker } from "node:worker_threads";
import type { Logger } from "../log.ts";
import { backendOf } from "../store/backends.ts";
import type { ResultsPage } from "../backtest/wire.ts";
import type { LentJson } from "../wire/json-bytes.ts";
import type { RunRecord, StrategyRecord } from "../store/ports/backtest-store.ts";
import type { PageRead, ReaderMessage, ReadMessage } from "./page-reader-thread.ts";
import type { PageAsk, PageMarket } from "./snapshot-page.ts";

/**
 * Pages of resolved markets and run answers read on threads of their own, where the store's reads hold
 * the thread that makes them (SQLite: `Backend.readsHoldThread`). A page not in the page cache is a few
 * store reads and about 100 KB written (2 MB with books), a run's answer up to megabytes of stored
 * results joined; on the request thread that time is taken from every other request, while a reader
 * thread does it on another core as the request thread goes on (issue 20: cold pages;
 * docs/decisions.md "Cold pages on reader threads").
 *
 * What a reader thread reads is what the request thread would: the same function (snapshot-page.ts)
 * over its own connection to the same database, sent the market's record as the request thread has it.
 * Nothing is decided there: the request was checked, authorised and counted before it is sent. When no
 * thread is ready (starting, or there are none), `read` says so and the request thread reads the page
 * itself; when a thread fails a read or is lost, the read rejects and the caller reads it itself, so a
 * store error is raised, mapped and logged where every other one is.
 */

/** Buffers sent back with a thread's next read at most; more are left to the collector. */
const MAX_RETURNED = 64;

export interface PageReadersOptions {
  /** Told of each read a thread answered (the server counts them in its metrics). */
  onRead?: (kind: PageRead["kind"]) => void;
  /** The thread's script (default page-reader-thread.ts); tests give threads that fail. */
  script?: URL;
}

const THREAD_SCRIPT = new URL("./page-reader-thread.ts", import.meta.url);

class ReaderThread {
  private worker: Worker | null = null;
  private ready = false;
  /** Who waits for the thread to be ready or to have failed (start()). */
  private startWaiters: (() => void)[] = [];
  /** Set when a thread died before it was ready (the store cannot be opened from a thread), or closed. */
  private down = false;
  private nextId = 1;
  private readonly pending = new Map<number, { done: (p: LentJson) => void; fail: (e: Error) => void }>();
  private returned: ArrayBuffer[] = [];
  private readonly url: string;
  private readonly script: URL;
  private readonly log: () => Logger | null;

  constructor(url: string, script: URL, log: () => Logger | null) {
    this.url = url;
    this.script = script;
    this.log = log;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Whether it takes reads now; starts the thread on first being asked. */
  available(): boolean {
    if (this.ready) return true;
    if (this.worker === null && !this.down) this.start();
    return false;
  }

  /** Resolves once the thread is ready, or has failed to start (it then stays down). */
  started(): Promise<void> {
    if (this.available() || this.down) return Promise.resolve();
    return new Promise((resolve) => this.startWaiters.push(resolve));
  }

  private settled(): void {
    const waiters = this.startWaiters;
    this.startWaiters = [];
    for (const w of waiters) w();
  }

  private start(): void {
    const worker = new Worker(this.script, { workerData: { databaseUrl: this.url } });
    this.worker = worker;
    worker.on("message", (m: ReaderMessage) => this.onMessage(m));
    const lost = (err: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      if (!this.ready) this.down = true;
      this.ready = false;
      this.returned = [];
      const after = this.down ? "pages are read on the request thread" : "it starts again on the next page";
      this.log()?.warn({ err: err.message }, `a page reader thread stopped; ${after}`);
      this.failAll(err);
      this.settled();
    };
    worker.on("error", lost);
    worker.on("exit", (code) => lost(new Error(`the page reader thread exited (${code})`)));
  }

  private onMessage(m: ReaderMessage): void {
    if (m.type === "ready") {
      // The thread keeps the process alive while it starts and while a read waits on it, not idle.
      if (this.pending.size === 0) this.worker?.unref();
      this.ready = true;
      this.settled();
      return;
    }
    if (m.type === "unopened") {
      // The thread could not open the store: it stays down, and pages are read on the request thread.
      this.down = true;
      this.log()?.warn(
        { err: m.message },
        "a page reader thread could not open the store; pages are read on the request thread",
      );
      void this.stop();
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (m.type === "failed") return p.fail(new Error(m.message));
    const buffer = m.body;
    let released = false;
    p.done({
      body: Buffer.from(buffer, 0, m.length),
      release: () => {
        if (released || this.worker === null || this.returned.length >= MAX_RETURNED) return;
        released = true;
        this.returned.push(buffer);
      },
    });
  }

  read(read: PageRead): Promise<LentJson> {
    const worker = this.worker as Worker;
    const id = this.nextId++;
    const returned = this.returned;
    this.returned = [];
    const message: ReadMessage = { id, read, returned };
    if (this.pending.size === 0) worker.ref();
    return new Promise((done, fail) => {
      this.pending.set(id, { done, fail });
      worker.postMessage(message, returned);
    });
  }

  private failAll(err: Error): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.fail(err);
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.ready = false;
    this.failAll(new Error("the page reader threads closed"));
    this.settled();
    if (worker) await worker.terminate();
  }

  /** Closed for good: it does not start again. */
  close(): Promise<void> {
    this.down = true;
    return this.stop();
  }
}

export class PageReaders {
  private readonly threads: ReaderThread[];
  private log: Logger | null = null;
  private readonly onRead: PageReadersOptions["onRead"];

  /**
   * `url`: the store's (`Store.url`); null, or a store whose reads do not hold the thread, makes no
   * threads. `threads`: how many (PAGE_READERS; 0 reads every page on the request thread).
   */
  constructor(url: string | null, threads: number, options: PageReadersOptions = {}) {
    const readsHoldThread = url !== null && backendOf(url)?.readsHoldThread === true;
    const n = readsHoldThread ? threads : 0;
    const script = options.script ?? THREAD_SCRIPT;
    this.onRead = options.onRead;
    this.threads = Array.from({ length: n }, () => new ReaderThread(url as string, script, () => this.log));
  }

  /** Where a lost thread is reported (the server's log, once there is one). */
  useLogger(log: Logger): void {
    this.log = log;
  }

  /** How many threads read pages (none when the store's reads do not hold a thread). */
  get size(): number {
    return this.threads.length;
  }

  /**
   * The page read on the least busy thread that is ready; null when none is (the caller reads it). A
   * rejection means the thread failed the read or was lost: the caller reads it then.
   */
  read(market: PageMarket, ask: PageAsk): Promise<LentJson> | null {
    return this.onThread({ kind: "snapshots", market, ask });
  }

  /**
   * A run's answer with a page of its results (`renderRunAnswer`), read on a thread as `read` reads a
   * page of snapshots: null when no thread is ready, a rejection when the thread failed or was lost.
   */
  readRun(run: RunRecord, strategy: StrategyRecord | null, page: ResultsPage): Promise<LentJson> | null {
    return this.onThread({ kind: "run", run, strategy, page });
  }

  private onThread(read: PageRead): Promise<LentJson> | null {
    let best: ReaderThread | null = null;
    for (const t of this.threads) {
      if (t.available() && (best === null || t.inFlight < best.inFlight)) best = t;
    }
    if (best === null) return null;
    const reading = best.read(read);
    const onRead = this.onRead;
    return onRead === undefined
      ? reading
      : reading.then((page) => {
          onRead(read.kind);
          return page;
        });
  }

  /**
   * Starts the threads not started yet; resolves when each is ready or has failed to start. The
   * server does not wait for them: a thread starts at the first read asked of it, and until it is
   * ready, pages are read on the request thread.
   */
  async start(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.started()));
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.close()));
  }
}
