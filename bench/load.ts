/**
 * The load generator of `npm run bench` but for its page scenarios (those use wrk: bench/wrk.ts):
 * by default a child process of bench/run.ts (over IPC) so that autocannon's HTTP client does not
 * share the server's event loop; BENCH_LOAD=inprocess imports it into the server's process instead.
 *
 * Messages from the parent, as a child:
 *   {type: "list", name, paths}       a rotation list (paths, or entries with their own headers and
 *                                     kind); its cursor persists across runs
 *   {type: "run", id, job}            one autocannon run; replies {type: "result", id, result}
 *   {type: "exit"}
 */
import { createRequire } from "node:module";

interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  setupRequest?: (req: AutocannonRequest, context: RequestContext) => AutocannonRequest;
  /** Called with the status of each answer, before autocannon's own "response" event for it. */
  onResponse?: (status: number, body: string, context: RequestContext) => void;
}

/** autocannon's per-connection context: with one request in flight per connection, that request's. */
interface RequestContext {
  kind?: string;
}

interface Histogram {
  average: number;
  mean: number;
  p50: number;
  p99: number;
  max: number;
  total: number;
}

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  resets: number;
  latency: Histogram;
  requests: Histogram & { sent: number };
  throughput: Histogram;
}

/** autocannon's run: a promise of the result that is also an emitter of per-response events. */
type AutocannonRun = Promise<AutocannonResult> & {
  on(
    event: "response",
    listener: (client: unknown, status: number, bytes: number, responseTimeMs: number) => void,
  ): void;
};
type Autocannon = (opts: Record<string, unknown>) => AutocannonRun;

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

/**
 * One request of a rotation list: a path sent with the job's headers, or a path with headers of its
 * own (another key, none, a client address), counted under `kind` in LoadResult.byKind.
 */
export type ListEntry = string | { path: string; headers?: Record<string, string>; kind?: string };

export interface LoadJob {
  /** One origin, or several (replicas): autocannon gives its connections to them in turn. */
  origin: string | string[];
  headers: Record<string, string>;
  seconds: number;
  connections: number;
  /** A fixed path, or the name of a rotation list sent before. */
  path?: string;
  list?: string;
  /** Count responses by status code (LoadResult.statusCounts, and byKind for lists with kinds). */
  countStatuses?: boolean;
  /** Also report latency and statuses per window of this many seconds (LoadResult.windows). */
  windowSeconds?: number;
}

/** What was answered in one window of a run: `from` and `to` in seconds since the run began. */
export interface LoadWindow {
  from: number;
  to: number;
  responses: number;
  /** Latency percentiles of the 2xx answers of the window, and of all its answers. */
  p50Ms: number;
  p99Ms: number;
  allP50Ms: number;
  allP99Ms: number;
  statusCounts: Record<string, number>;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  reqPerSec: number;
  /** Latency percentiles of 2xx responses, from autocannon's per-response times (its own histogram keeps whole ms). */
  p50Ms: number;
  p99Ms: number;
  bytesPerSec: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  /** Paths handed out from the rotation list during this run, and how many of them had been handed out before. */
  issued: number;
  reissued: number;
  /** Responses by status code, when the job asked for them. */
  statusCounts?: Record<string, number>;
  /** Responses by the list entries' kind, then status code, when the job asked for statuses. */
  byKind?: Record<string, Record<string, number>>;
  /** Per window, when the job asked for windows. */
  windows?: LoadWindow[];
}

type Message =
  | { type: "list"; name: string; paths: ListEntry[] }
  | { type: "run"; id: number; job: LoadJob }
  | { type: "exit" };

const lists = new Map<string, { paths: ListEntry[]; cursor: number }>();

/** A rotation list: runs naming it hand out its paths in order, carrying on where the last run stopped. */
export function setList(name: string, paths: ListEntry[]): void {
  lists.set(name, { paths, cursor: 0 });
}

/** Response times in a growable array, for percentiles. */
class Latencies {
  private values = new Float64Array(1 << 12);
  private n = 0;

  add(ms: number): void {
    if (this.n === this.values.length) {
      const next = new Float64Array(this.n * 2);
      next.set(this.values);
      this.values = next;
    }
    this.values[this.n++] = ms;
  }

  percentiles(): { p50: number; p99: number } {
    const n = this.n;
    const sorted = this.values.subarray(0, n).sort();
    const at = (p: number) => (n === 0 ? 0 : sorted[Math.min(n - 1, Math.floor((p / 100) * n))]);
    return { p50: at(50), p99: at(99) };
  }
}

function increment<K>(counts: Map<K, number>, key: K): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function statusRecord(counts: Map<number, number>): Record<string, number> {
  return Object.fromEntries([...counts].sort((a, b) => a[0] - b[0]).map(([s, c]) => [String(s), c]));
}

/** The answers of one window of a run. */
class WindowCounts {
  readonly ok = new Latencies();
  readonly all = new Latencies();
  readonly statuses = new Map<number, number>();
  responses = 0;

  add(status: number, ms: number): void {
    this.responses++;
    this.all.add(ms);
    if (status >= 200 && status < 300) this.ok.add(ms);
    increment(this.statuses, status);
  }

  report(index: number, seconds: number, total: number): LoadWindow {
    const ok = this.ok.percentiles();
    const all = this.all.percentiles();
    return {
      from: index * seconds,
      to: Math.min(total, (index + 1) * seconds),
      responses: this.responses,
      p50Ms: ok.p50,
      p99Ms: ok.p99,
      allP50Ms: all.p50,
      allP99Ms: all.p99,
      statusCounts: statusRecord(this.statuses),
    };
  }
}

/** The request of a job: one path, or the next entry of its rotation list on every request. */
function requestOf(job: LoadJob, onKind: (kind: string | undefined) => void) {
  const handedOut = { issued: 0, reissued: 0 };
  if (job.list === undefined) return { request: { method: "GET", path: job.path }, handedOut };
  const list = lists.get(job.list);
  if (!list) throw new Error(`no list ${job.list}`);
  const request: AutocannonRequest = {
    method: "GET",
    setupRequest: (req, context) => {
      if (list.cursor >= list.paths.length) handedOut.reissued++;
      const entry = list.paths[list.cursor++ % list.paths.length];
      handedOut.issued++;
      if (typeof entry === "string") {
        req.path = entry;
        context.kind = undefined;
      } else {
        req.path = entry.path;
        // A new object: autocannon shares the one it passes in with every other request.
        if (entry.headers) req.headers = { ...entry.headers };
        context.kind = entry.kind;
      }
      return req;
    },
    // Runs right before autocannon's "response" event for the same answer (see runLoad).
    onResponse: (_status, _body, context) => onKind(context.kind),
  };
  return { request, handedOut };
}

export async function runLoad(job: LoadJob): Promise<LoadResult> {
  let answeredKind: string | undefined;
  const { request, handedOut } = requestOf(job, (kind) => (answeredKind = kind));
  const run = autocannon({
    url: job.origin,
    connections: job.connections,
    duration: job.seconds,
    headers: job.headers,
    requests: [request],
    // One request in flight per connection: latencies are per request, not per pipeline.
    pipelining: 1,
  });
  const started = performance.now();
  const windowMs = (job.windowSeconds ?? 0) * 1000;
  const windows = Array.from(
    { length: windowMs > 0 ? Math.max(1, Math.ceil((job.seconds * 1000) / windowMs)) : 0 },
    () => new WindowCounts(),
  );
  const ok = new Latencies();
  const statuses = new Map<number, number>();
  const byKind = new Map<string, Map<number, number>>();
  run.on("response", (_client, status, _bytes, ms) => {
    if (job.countStatuses) {
      increment(statuses, status);
      if (answeredKind !== undefined) {
        const counts = byKind.get(answeredKind) ?? new Map<number, number>();
        byKind.set(answeredKind, counts);
        increment(counts, status);
      }
    }
    answeredKind = undefined;
    if (windows.length > 0) {
      const i = Math.min(windows.length - 1, Math.floor((performance.now() - started) / windowMs));
      windows[i].add(status, ms);
    }
    if (status >= 200 && status < 300) ok.add(ms);
  });
  const r = await run;
  const { p50, p99 } = ok.percentiles();
  return {
    requests: r.requests.total,
    seconds: r.duration,
    reqPerSec: r.requests.total / r.duration,
    p50Ms: p50,
    p99Ms: p99,
    bytesPerSec: r.throughput.total / r.duration,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    ...handedOut,
    ...(job.countStatuses
      ? {
          statusCounts: statusRecord(statuses),
          ...(byKind.size > 0
            ? { byKind: Object.fromEntries([...byKind].sort().map(([k, c]) => [k, statusRecord(c)])) }
            : {}),
        }
      : {}),
    ...(windows.length > 0
      ? { windows: windows.map((w, i) => w.report(i, job.windowSeconds ?? 0, job.seconds)) }
      : {}),
  };
}

if (import.meta.main) {
  process.on("message", (raw) => {
    const msg = raw as Message;
    if (msg.type === "list") {
      setList(msg.name, msg.paths);
    } else if (msg.type === "run") {
      runLoad(msg.job).then(
        (result) => process.send?.({ type: "result", id: msg.id, result }),
        (err: unknown) => process.send?.({ type: "result", id: msg.id, error: String(err) }),
      );
    } else if (msg.type === "exit") {
      process.disconnect();
    }
  });
  process.send?.({ type: "ready" });
}
