import type { Coin, MarketType } from "../domain/market.ts";
import { liveMarketStart, nextMarketStart } from "../domain/series.ts";
import { formatSlug, polymarketSlug } from "../domain/slug.ts";
import type { MarketStore } from "../store/ports/market-store.ts";
import { FieldError } from "../upstream/gamma-market.ts";
import type { PriceFeed } from "../upstream/price-feed.ts";
import {
  ImportError,
  type ImportReport,
  MarketRecordImport,
  type UpstreamMarket,
  upstreamMarketsOf,
} from "./upstream-import.ts";

/**
 * `updown import gamma` (issue 23): Gamma's market records, from JSON-lines files or fetched by slug,
 * stored by the upstream importer's one path (MarketRecordImport), so that settlement, fees, tokens,
 * outcome, price to beat and final price are taken exactly as `import upstream` takes them.
 */

/** The markets of a series starting within [from, to] (Unix seconds): our slug and Gamma's. */
export function seriesSlugs(
  coin: Coin,
  marketType: MarketType,
  from: number,
  to: number,
): { slug: string; upstreamSlug: string }[] {
  const out: { slug: string; upstreamSlug: string }[] = [];
  let start = liveMarketStart(marketType, from);
  if (start < from) start = nextMarketStart(marketType, start);
  for (; start <= to; start = nextMarketStart(marketType, start)) {
    const slug = formatSlug(coin, marketType, start);
    out.push({ slug, upstreamSlug: polymarketSlug(coin, marketType, start) ?? slug });
  }
  return out;
}

export interface GammaFetchOptions {
  store: MarketStore;
  /** Gamma's base URL (the collector's POLYMARKET_GAMMA_URL). */
  baseUrl: string;
  series: readonly { coin: Coin; marketType: MarketType }[];
  /** Markets starting within [from, to], Unix seconds. */
  from: number;
  to: number;
  feeds: ReadonlyMap<string, PriceFeed>;
  maxStalenessSeconds?: number;
  /** At most this many requests a second. */
  requestsPerSecond: number;
  /** Attempts of one request before the import stops (429, 5xx and network failures are retried). */
  maxAttempts?: number;
  /** Injected for tests; the defaults are the real ones. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  nowMs?: () => number;
  random?: () => number;
  onProgress?: (done: number, total: number) => void;
}

export interface GammaFetchReport extends ImportReport {
  /** Markets of the range. */
  wanted: number;
  /** Stored resolved already (by an earlier run, or the collector): final, not asked for again. */
  skipped: number;
  /** Slugs Gamma does not list. */
  notFound: string[];
  requests: number;
  /** Requests answered 429, 5xx, or not at all, and tried again. */
  retries: number;
}

const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 30_000;

/**
 * Fetches the records of a series' markets in a range by slug, `/markets?slug=` then `/events?slug=`
 * (either can miss a market the other lists, as the collector's look-up knows), writing each as it
 * comes. Resumable: a market stored resolved is final and skipped, so a killed import run again asks
 * only for what it had not finished. Paced to `requestsPerSecond`; a 429, a 5xx or a network failure
 * is retried after Retry-After or a full-jitter exponential backoff, up to `maxAttempts`.
 */
export async function fetchGammaRecords(opts: GammaFetchOptions): Promise<GammaFetchReport> {
  const http = new GammaHttp(opts);
  const records = new MarketRecordImport(opts.store, opts.feeds, opts.maxStalenessSeconds);
  const slugs = opts.series.flatMap((s) => seriesSlugs(s.coin, s.marketType, opts.from, opts.to));
  let skipped = 0;
  const notFound: string[] = [];
  for (const [i, s] of slugs.entries()) {
    const stored = await opts.store.getMarket(s.slug);
    if (stored !== null && stored.winner !== null) {
      skipped++;
    } else {
      const found = await lookUp(http, s.upstreamSlug);
      if (found.length === 0) notFound.push(s.upstreamSlug);
      for (const u of found) await records.add(u);
    }
    opts.onProgress?.(i + 1, slugs.length);
  }
  return {
    ...records.report,
    wanted: slugs.length,
    skipped,
    notFound,
    requests: http.requests,
    retries: http.retries,
  };
}

/** The markets Gamma lists under a slug, read as the files' objects are. */
async function lookUp(http: GammaHttp, slug: string): Promise<UpstreamMarket[]> {
  for (const kind of ["markets", "events"]) {
    const path = `/${kind}?slug=${encodeURIComponent(slug)}`;
    const list = await http.getList(path);
    const own = list.filter(
      (o) => typeof o === "object" && o !== null && (o as { slug?: unknown }).slug === slug,
    );
    if (own.length === 0) continue;
    try {
      return own.flatMap((o) => upstreamMarketsOf(o));
    } catch (err) {
      if (err instanceof FieldError) throw new ImportError(`${http.baseUrl}${path}`, null, err.message);
      throw err;
    }
  }
  return [];
}

class GammaHttp {
  readonly baseUrl: string;
  requests = 0;
  retries = 0;
  private readonly opts: GammaFetchOptions;
  private readonly fetch: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly nowMs: () => number;
  private readonly random: () => number;
  private nextAllowedMs = 0;

  constructor(opts: GammaFetchOptions) {
    this.opts = opts;
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.fetch = opts.fetch ?? fetch;
    this.sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.nowMs = opts.nowMs ?? Date.now;
    this.random = opts.random ?? Math.random;
  }

  async getList(path: string): Promise<unknown[]> {
    const url = `${this.baseUrl}${path}`;
    const attempts = this.opts.maxAttempts ?? 6;
    for (let attempt = 1; ; attempt++) {
      await this.pace();
      const outcome = await this.once(url);
      if ("list" in outcome) return outcome.list;
      if (!outcome.retry || attempt >= attempts) {
        throw new ImportError(
          url,
          null,
          `${outcome.problem}${outcome.retry ? ` after ${attempt} attempts` : ""}`,
        );
      }
      this.retries++;
      const backoff = this.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
      await this.sleep(outcome.retryAfterMs ?? backoff);
    }
  }

  /** Waits until the next request is allowed by the rate. */
  private async pace(): Promise<void> {
    const now = this.nowMs();
    if (now < this.nextAllowedMs) await this.sleep(this.nextAllowedMs - now);
    this.nextAllowedMs = Math.max(now, this.nextAllowedMs) + 1000 / this.opts.requestsPerSecond;
  }

  private async once(
    url: string,
  ): Promise<{ list: unknown[] } | { problem: string; retry: boolean; retryAfterMs?: number }> {
    this.requests++;
    let response: Response;
    try {
      response = await this.fetch(url, { signal: AbortSignal.timeout(15_000) });
    } catch (err) {
      return { problem: err instanceof Error ? err.message : String(err), retry: true };
    }
    if (response.status === 429 || response.status >= 500) {
      await response.body?.cancel();
      const seconds = Number(response.headers.get("retry-after"));
      return {
        problem: `HTTP ${response.status}`,
        retry: true,
        retryAfterMs: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined,
      };
    }
    if (!response.ok) {
      await response.body?.cancel();
      return { problem: `HTTP ${response.status}`, retry: false };
    }
    const body: unknown = await response.json().catch(() => null);
    if (!Array.isArray(body)) return { problem: "the answer is not a JSON list", retry: false };
    return { list: body };
  }
}

/** The fetch report for people: the import report's lines, then what the fetch skipped and missed. */
export function formatFetchLines(report: GammaFetchReport): string[] {
  return [
    `markets in the range: ${report.wanted} (stored resolved already, skipped: ${report.skipped})`,
    `requests: ${report.requests} (retried: ${report.retries})`,
    `not on Gamma: ${report.notFound.length}${report.notFound.length > 0 ? ` (${report.notFound.join(", ")})` : ""}`,
  ];
}
