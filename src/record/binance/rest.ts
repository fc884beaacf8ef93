import { errorMessage, type Logger, silentLogger } from "../../log.ts";
import { nowMillis, type Scheduler, sleep } from "../scheduler.ts";

/** Binance answered 418: this address is banned for a while. Everything stops; nothing is retried. */
export class BinanceBannedError extends Error {
  readonly retryAfterSeconds: number | null;
  constructor(url: string, retryAfterSeconds: number | null) {
    super(
      `Binance banned this address (HTTP 418) answering ${url}` +
        (retryAfterSeconds === null ? "" : `; retry after ${retryAfterSeconds} s`),
    );
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** An answer Binance will give again if asked again (4xx other than 418 and 429, or retries exhausted). */
export class BinanceHttpError extends Error {
  readonly status: number;
  constructor(url: string, status: number, body: string) {
    super(`Binance answered ${status} to ${url}: ${body.slice(0, 300)}`);
    this.status = status;
  }
}

export interface RestOptions {
  baseUrl: string;
  /** Request weight per minute Binance allows this address (X-MBX-USED-WEIGHT-1M counts against it). */
  weightLimit: number;
  /** Share of the limit used before waiting for the next minute; the rest is left for other clients. */
  budgetShare?: number;
  scheduler: Scheduler;
  log?: Logger;
  /** Attempts for one request after 429s, 5xx answers and network errors. */
  maxAttempts?: number;
  /** Per request, in real milliseconds. */
  timeoutMs?: number;
  /** Aborted when the process stops waiting for upstream calls: a call in flight or waiting fails at once. */
  signal?: AbortSignal;
}

const MINUTE_MS = 60_000;

/**
 * GET requests to one Binance REST base, paced by request weight: it tracks the weight used this
 * minute (Binance's X-MBX-USED-WEIGHT-1M header, or its own count where the header is missing) and,
 * before a request would take it past its budget, waits for the next minute. A 429 waits Retry-After
 * seconds and tries again; a 418 (banned) throws BinanceBannedError at once.
 */
export class BinanceRest {
  private readonly options: Required<Omit<RestOptions, "log" | "signal">> & { log: Logger };
  private readonly signal: AbortSignal | null;
  private usedWeight = 0;
  private usedMinute = -1;
  /** Milliseconds spent waiting for the weight budget or Retry-After, for reports. */
  waitedMs = 0;

  constructor(options: RestOptions) {
    this.options = {
      budgetShare: 0.8,
      maxAttempts: 5,
      timeoutMs: 30_000,
      log: silentLogger,
      ...options,
    };
    this.signal = options.signal ?? null;
  }

  /** The weight used in the current minute, as last known. */
  get used(): number {
    return this.usedMinute === Math.floor(nowMillis(this.options.scheduler) / MINUTE_MS)
      ? this.usedWeight
      : 0;
  }

  private async wait(ms: number): Promise<void> {
    this.waitedMs += ms;
    const signal = this.signal;
    if (!signal) return sleep(this.options.scheduler, ms);
    signal.throwIfAborted();
    let onAbort = () => {};
    const aborted = new Promise<never>((_resolve, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([sleep(this.options.scheduler, ms), aborted]);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** Waits for the next minute when `weight` more would pass the budget. */
  private async pace(weight: number): Promise<void> {
    const budget = Math.floor(this.options.weightLimit * this.options.budgetShare);
    const now = nowMillis(this.options.scheduler);
    if (this.used + weight <= budget) return;
    const wait = (Math.floor(now / MINUTE_MS) + 1) * MINUTE_MS - now;
    this.options.log.info(
      { url: this.options.baseUrl, used: this.used, limit: this.options.weightLimit, waitMs: wait },
      `Binance ${this.options.baseUrl}: ${this.used} of ${this.options.weightLimit} request weight used this minute; waiting ${Math.ceil(wait / 1000)} s`,
    );
    await this.wait(wait);
  }

  private count(weight: number, header: string | null): void {
    const minute = Math.floor(nowMillis(this.options.scheduler) / MINUTE_MS);
    if (minute !== this.usedMinute) {
      this.usedMinute = minute;
      this.usedWeight = 0;
    }
    const reported = header === null ? Number.NaN : Number(header);
    this.usedWeight = Number.isFinite(reported) ? reported : this.usedWeight + weight;
  }

  /** GETs `path` with the query; `weight` is what Binance charges for it (used before the answer says). */
  async get<T>(path: string, query: Record<string, string | number | undefined>, weight: number): Promise<T> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const url = `${this.options.baseUrl}${path}?${params}`;
    for (let attempt = 1; ; attempt++) {
      await this.pace(weight);
      let res: Response;
      try {
        const timeout = AbortSignal.timeout(this.options.timeoutMs);
        res = await fetch(url, { signal: this.signal ? AbortSignal.any([timeout, this.signal]) : timeout });
      } catch (err) {
        if (attempt >= this.options.maxAttempts || this.signal?.aborted) throw err;
        this.options.log.warn(
          { url, err: errorMessage(err) },
          `Binance ${url}: ${errorMessage(err)}; retrying`,
        );
        await this.wait(1000 * 2 ** (attempt - 1));
        continue;
      }
      this.count(weight, res.headers.get("x-mbx-used-weight-1m"));
      if (res.ok) return (await res.json()) as T;
      const body = await res.text();
      const retryAfter = retryAfterSeconds(res.headers.get("retry-after"));
      if (res.status === 418) throw new BinanceBannedError(url, retryAfter);
      if ((res.status === 429 || res.status >= 500) && attempt < this.options.maxAttempts) {
        const waitMs = res.status === 429 ? (retryAfter ?? 60) * 1000 : 1000 * 2 ** (attempt - 1);
        this.options.log.warn(
          { url, status: res.status, waitMs },
          `Binance answered ${res.status} to ${url}; waiting ${waitMs / 1000} s`,
        );
        await this.wait(waitMs);
        continue;
      }
      throw new BinanceHttpError(url, res.status, body);
    }
  }
}

function retryAfterSeconds(text: string | null): number | null {
  if (text === null) return null;
  const n = Number(text);
  return Number.isFinite(n) && n >= 0 ? n : null;
}
