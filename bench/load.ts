/**
 * The load generator of `npm run bench`: by default a child process of bench/run.ts (over IPC) so
 * that autocannon's HTTP client does not share the server's event loop; BENCH_LOAD=inprocess imports
 * it into the server's process instead.
 *
 * Messages from the parent, as a child:
 *   {type: "list", name, paths}       a rotation list; its cursor persists across runs
 *   {type: "run", id, job}            one autocannon run; replies {type: "result", id, result}
 *   {type: "exit"}
 */
import { createRequire } from "node:module";

interface AutocannonRequest {
  method?: string;
  path?: string;
  setupRequest?: (req: AutocannonRequest, context: unknown) => AutocannonRequest;
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

export interface LoadJob {
  /** One origin, or several (replicas): autocannon gives its connections to them in turn. */
  origin: string | string[];
  headers: Record<string, string>;
  seconds: number;
  connections: number;
  /** A fixed path, or the name of a rotation list sent before. */
  path?: string;
  list?: string;
  /** Count responses by status code (LoadResult.statusCounts). */
  countStatuses?: boolean;
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
}

type Message =
  | { type: "list"; name: string; paths: string[] }
  | { type: "run"; id: number; job: LoadJob }
  | { type: "exit" };

const lists = new Map<string, { paths: string[]; cursor: number }>();

/** A rotation list: runs naming it hand out its paths in order, carrying on where the last run stopped. */
export function setList(name: string, paths: string[]): void {
  lists.set(name, { paths, cursor: 0 });
}

export async function runLoad(job: LoadJob): Promise<LoadResult> {
  let issued = 0;
  let reissued = 0;
  let request: AutocannonRequest;
  if (job.list !== undefined) {
    const list = lists.get(job.list);
    if (!list) throw new Error(`no list ${job.list}`);
    request = {
      method: "GET",
      setupRequest: (req) => {
        if (list.cursor >= list.paths.length) reissued++;
        req.path = list.paths[list.cursor++ % list.paths.length];
        issued++;
        return req;
      },
    };
  } else {
    request = { method: "GET", path: job.path };
  }
  const run = autocannon({
    url: job.origin,
    connections: job.connections,
    duration: job.seconds,
    headers: job.headers,
    requests: [request],
    // One request in flight per connection: latencies are per request, not per pipeline.
    pipelining: 1,
  });
  let latencies = new Float64Array(1 << 16);
  let n = 0;
  const statuses = new Map<number, number>();
  run.on("response", (_client, status, _bytes, ms) => {
    if (job.countStatuses) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (status < 200 || status >= 300) return;
    if (n === latencies.length) {
      const next = new Float64Array(n * 2);
      next.set(latencies);
      latencies = next;
    }
    latencies[n++] = ms;
  });
  const r = await run;
  const sorted = latencies.subarray(0, n).sort();
  const percentile = (p: number) => (n === 0 ? 0 : sorted[Math.min(n - 1, Math.floor((p / 100) * n))]);
  return {
    requests: r.requests.total,
    seconds: r.duration,
    reqPerSec: r.requests.total / r.duration,
    p50Ms: percentile(50),
    p99Ms: percentile(99),
    bytesPerSec: r.throughput.total / r.duration,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    issued,
    reissued,
    ...(job.countStatuses
      ? {
          statusCounts: Object.fromEntries(
            [...statuses].sort((a, b) => a[0] - b[0]).map(([s, c]) => [String(s), c]),
          ),
        }
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
