/**
 * The few metrics the service exports, in Prometheus' text format (version 0.0.4): requests by route
 * and status, request latency, rate-limiter decisions, store errors. Written here rather than with a
 * client library: counters and one histogram are a page of code.
 */

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Labels = Record<string, string>;

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(
    ([name, value]) => `${name}="${value.replace(/[\\"\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`))}"`,
  );
  return parts.length ? `{${parts.join(",")}}` : "";
}

/** A tree of maps, one level per label, by value: its leaves are the series. */
interface SeriesNode<T> {
  next: Map<string, SeriesNode<T>>;
  series?: T;
}

/**
 * The series of a metric by their label values, in the order the labels are given. Found through
 * nested maps by each value rather than by a key string joined per call: every request updates three
 * series, and hashing a new string each time was the metrics' largest cost (bench/page-profile.ts).
 */
class SeriesMap<T extends { labels: Labels }> {
  private readonly root: SeriesNode<T> = { next: new Map() };
  /** Every series, in the order first seen (the order they are rendered in). */
  readonly all: T[] = [];

  find(labels: Labels, make: () => T): T {
    let node = this.root;
    for (const name in labels) {
      const value = labels[name];
      let next = node.next.get(value);
      if (!next) {
        next = { next: new Map() };
        node.next.set(value, next);
      }
      node = next;
    }
    if (!node.series) {
      node.series = make();
      this.all.push(node.series);
    }
    return node.series;
  }
}

/** A counter per combination of label values; the label text is built when rendering, not per request. */
class Counter {
  private readonly values = new SeriesMap<{ labels: Labels; value: number }>();
  readonly name: string;
  readonly help: string;
  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }
  inc(labels: Labels = {}, by = 1): void {
    this.values.find(labels, () => ({ labels, value: 0 })).value += by;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const { labels, value } of this.values.all) lines.push(`${this.name}${labelText(labels)} ${value}`);
    return lines.join("\n");
  }
}

class Histogram {
  private readonly series = new SeriesMap<{ labels: Labels; counts: number[]; sum: number; count: number }>();
  readonly name: string;
  readonly help: string;
  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }
  observe(labels: Labels, value: number): void {
    const s = this.series.find(labels, () => ({
      labels,
      counts: LATENCY_BUCKETS.map(() => 0),
      sum: 0,
      count: 0,
    }));
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) if (value <= LATENCY_BUCKETS[i]) s.counts[i]++;
    s.sum += value;
    s.count++;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.series.all) {
      LATENCY_BUCKETS.forEach((le, i) =>
        lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: String(le) })} ${s.counts[i]}`),
      );
      lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: "+Inf" })} ${s.count}`);
      lines.push(`${this.name}_sum${labelText(s.labels)} ${s.sum}`);
      lines.push(`${this.name}_count${labelText(s.labels)} ${s.count}`);
    }
    return lines.join("\n");
  }
}

/** What one replica has seen since it started. */
export class Metrics {
  readonly requests = new Counter("updown_http_requests_total", "HTTP requests by route, method and status.");
  readonly latency = new Histogram(
    "updown_http_request_duration_seconds",
    "Time from receiving a request to sending its answer, by route.",
  );
  readonly limiterDecisions = new Counter(
    "updown_rate_limit_decisions_total",
    "Rate-limit decisions by result (admitted, refused_minute, refused_day, refused_uncounted, auth_failure, auth_throttled, keyless_throttled) and by limiter (memory, redis, fallback).",
  );
  readonly storeErrors = new Counter(
    "updown_store_errors_total",
    "Requests that failed because the store failed, by kind (unavailable, error).",
  );
  readonly directPageAnswers = new Counter(
    "updown_page_cache_direct_answers_total",
    "Repeated requests for a cached page answered before routing (src/http/cached-page-answers.ts); also counted in updown_http_requests_total.",
  );
  readonly threadPageReads = new Counter(
    "updown_page_reader_thread_reads_total",
    "Reads a page reader thread answered (src/http/page-readers.ts) rather than the request thread, by kind: snapshots (a page of a resolved market) or run (a run's answer).",
  );
  /** Read when rendering: gauges whose value lives elsewhere. */
  private readonly gauges: { name: string; help: string; read: () => number }[] = [];

  gauge(name: string, help: string, read: () => number): void {
    this.gauges.push({ name, help, read });
  }

  render(): string {
    const parts = [
      this.requests,
      this.latency,
      this.limiterDecisions,
      this.storeErrors,
      this.directPageAnswers,
      this.threadPageReads,
    ].map((m) => m.render());
    for (const g of this.gauges)
      parts.push(`# HELP ${g.name} ${g.help}\n# TYPE ${g.name} gauge\n${g.name} ${g.read()}`);
    return `${parts.join("\n")}\n`;
  }
}
