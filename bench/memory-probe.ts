/**
 * Loaded into a benchmarked `updown serve` with `--import` (bench/processes.ts, ServeProcess.start with
 * `probe`), never into the service itself: it answers its parent's IPC messages with the process's own
 * view of its memory, so that the soak can tell the JS heap from the rest of the resident memory, and
 * with the size of the app's page cache, so that it can tell when the cache is full. The cache is found
 * by wrapping PageCache.prototype.set: this module and the app load the same module instance.
 *
 *   {type: "memory", gc}          replies {type: "memory", memory: ProbedMemory}; with gc (and
 *                                 --expose-gc), after a full collection: the heap still reachable
 *   {type: "heap-snapshot", path} writes a heap snapshot there, replies {type: "heap-snapshot", path}
 */
import { getHeapStatistics, writeHeapSnapshot } from "node:v8";
import { PageCache } from "../src/http/page-cache.ts";

export interface ProbedMemory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  /** Memory of C++ objects bound to JS ones; Buffers are counted here and in arrayBuffers. */
  external: number;
  arrayBuffers: number;
  /** V8's whole reservation for the heap (all spaces, committed). */
  heapCommitted: number;
  /** Whether a full collection ran right before the reading. */
  collected: boolean;
  /** Bytes and entries in the page cache (0 until it stores a page). */
  pageCacheBytes: number;
  pageCacheEntries: number;
}

type ProbeMessage = { type: "memory"; gc: boolean } | { type: "heap-snapshot"; path: string };

const collect = (globalThis as { gc?: () => void }).gc;

/** The app's page cache (one per app, one app per `updown serve`), once it has stored a page. */
const pageCaches = new Set<PageCache>();
const set = PageCache.prototype.set;
PageCache.prototype.set = function (this: PageCache, ...args: Parameters<PageCache["set"]>): void {
  pageCaches.add(this);
  set.apply(this, args);
};

function reading(gc: boolean): ProbedMemory {
  if (gc && collect) collect();
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    heapCommitted: getHeapStatistics().total_physical_size,
    collected: gc && collect !== undefined,
    pageCacheBytes: [...pageCaches].reduce((sum, c) => sum + c.totalBytes, 0),
    pageCacheEntries: [...pageCaches].reduce((sum, c) => sum + c.size, 0),
  };
}

if (process.send) {
  process.on("message", (raw) => {
    const msg = raw as ProbeMessage;
    if (msg.type === "memory") process.send?.({ type: "memory", memory: reading(msg.gc) });
    if (msg.type === "heap-snapshot") {
      process.send?.({ type: "heap-snapshot", path: writeHeapSnapshot(msg.path) });
    }
  });
  // After the listener (which refs it): the channel must not keep the server alive on its own.
  process.channel?.unref();
}
