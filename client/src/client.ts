import { errorFromAnswer, UpdownError } from "./errors.ts";
import { pageThrough, type PageFrame } from "./paging.ts";
import {
  abortableSleep,
  attemptSignal,
  backoffMs,
  newIdempotencyKey,
  realSleep,
  retryAfterMs,
  type AttemptSignal,
  type Sleep,
} from "./timing.ts";
import type * as T from "./types.ts";
import { ndjsonMessages, type ReplayMessage, socketMessages } from "./replay.ts";

export interface RetryInfo {
  /** The retry about to be made: 1 for the first retry. */
  attempt: number;
  /** How long the client waits before it. */
  delayMs: number;
  /** The status of the failed attempt, when an answer came. */
  status?: number;
  /** The failed attempt's error. */
  error?: unknown;
}

export interface ClientOptions {
  /** Where the API is, e.g. "http://127.0.0.1:8080"; "" in a browser means the page's own origin. */
  baseUrl: string;
  /** Sent as X-API-Key on every request (never in a URL). */
  apiKey?: string;
  /** Limit of one attempt, default 30_000 ms; 0 for none. */
  timeoutMs?: number;
  /** Retries after the first attempt, default 4. */
  maxRetries?: number;
  /** Base of the exponential backoff, default 250 ms (full jitter). */
  retryBaseMs?: number;
  /** Longest single wait, default 30_000 ms; a longer Retry-After fails at once with the answer's error. */
  retryMaxMs?: number;
  /** The fetch to use, default the platform's. */
  fetch?: typeof fetch;
  /** How to wait between attempts and polls, default setTimeout. */
  sleep?: Sleep;
  /** Source of the jitter, default Math.random. */
  random?: () => number;
  /** Called before each retry. */
  onRetry?: (info: RetryInfo) => void;
}

export interface CallOptions {
  /** Aborting it stops the call at once (an `ABORTED` error), during a request or a wait. */
  signal?: AbortSignal;
  /** This call's limit of one attempt, instead of the client's. */
  timeoutMs?: number;
  /** For POSTs: the Idempotency-Key to send (default a new random UUID per call, the same on retries). */
  idempotencyKey?: string;
}

export interface ReplayOptions {
  /** Token ids (asset ids) and/or market slugs, as in Polymarket's subscribe message. */
  assets: readonly string[];
  /** Upstream timestamps from (ISO 8601 or epoch ms), inclusive. */
  from: string | number;
  /** Upstream timestamps to, inclusive; at most 7 days after `from`. */
  to: string | number;
  /** "max", or 1 to 1000 times faster than recorded (default 1). */
  speed?: number | "max";
  /**
   * "websocket" (GET /v1/replay/ws, the key as the updown-key subprotocol), "ndjson" (GET /v1/replay),
   * or "auto" (default): the WebSocket where the platform has one (browsers, Node 22+), else NDJSON.
   */
  transport?: "auto" | "websocket" | "ndjson";
}

export type QueryValue = string | number | boolean | null | undefined;

export interface RequestOptions extends CallOptions {
  query?: Readonly<Record<string, QueryValue>>;
  body?: unknown;
  headers?: Readonly<Record<string, string>>;
}

export type WaitOptions = CallOptions & {
  /** Between polls, default 1000 ms. */
  pollMs?: number;
};

/** Statuses worth another attempt: the request may succeed as it is, later. */
const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

type Attempt<V> =
  { ok: true; value: V } | { ok: false; error: UpdownError; retryable: boolean; waitMs: number | null };

const seg = (value: string) => encodeURIComponent(value);
const DOT_SEGMENT = /\/(\.|%2e){1,2}(\/|$)/i;

/** A typed client of the Up or Down history API: one method per operation, iterators over paged lists. */
export class UpdownClient {
  readonly #baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #retryBaseMs: number;
  readonly #retryMaxMs: number;
  readonly #fetch: typeof fetch;
  readonly #sleep: Sleep;
  readonly #random: () => number;
  readonly #onRetry: ((info: RetryInfo) => void) | undefined;

  constructor(options: ClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#maxRetries = options.maxRetries ?? 4;
    this.#retryBaseMs = options.retryBaseMs ?? 250;
    this.#retryMaxMs = options.retryMaxMs ?? 30_000;
    // Called detached: a browser's window.fetch throws "Illegal invocation" when called on another object.
    const platformFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#fetch = platformFetch;
    this.#sleep = options.sleep ?? realSleep;
    this.#random = options.random ?? Math.random;
    this.#onRetry = options.onRetry;
  }

  // ---- account ----

  /** The key's plan, both windows' usage and the backtest quota; counts against nothing. */
  account(o?: CallOptions): Promise<T.Account> {
    return this.request("GET", "/v1/account", o);
  }

  backtestQuota(o?: CallOptions): Promise<T.BacktestQuota> {
    return this.request("GET", "/v1/backtest-ai/quota", o);
  }

  // ---- markets ----

  /** Every market matching the query, page after page (`limit` sets the page size). */
  markets(query: T.MarketsQuery = {}, o?: CallOptions): AsyncIterableIterator<T.Market> {
    return this.#iterate(
      query,
      (q) => this.marketsPage(q, o),
      (p) => p.markets,
      o?.signal,
    );
  }

  marketsPage(query: T.MarketsQuery = {}, o?: CallOptions): Promise<T.MarketPage> {
    return this.request("GET", "/v1/markets", { ...o, query });
  }

  market(slug: string, o?: CallOptions): Promise<T.Market> {
    return this.request("GET", `/v1/markets/${seg(slug)}`, o);
  }

  coverage(slug: string, o?: CallOptions): Promise<T.Coverage> {
    return this.request("GET", `/v1/markets/${seg(slug)}/coverage`, o);
  }

  /** Every recorded series (coin and type) with counts and recording coverage. */
  seriesCatalog(o?: CallOptions): Promise<T.SeriesCatalog> {
    return this.request("GET", "/v1/series", o);
  }

  /** Every snapshot of a market in the query's range, page after page (newest first unless order "asc"). */
  snapshots(slug: string, query: T.SnapshotsQuery = {}, o?: CallOptions): AsyncIterableIterator<T.Snapshot> {
    return this.#iterate(
      query,
      (q) => this.snapshotsPage(slug, q, o),
      (p) => p.snapshots,
      o?.signal,
    );
  }

  snapshotsPage(slug: string, query: T.SnapshotsQuery = {}, o?: CallOptions): Promise<T.SnapshotPage> {
    return this.request("GET", `/v1/markets/${seg(slug)}/snapshots`, { ...o, query });
  }

  /** The snapshot in effect at `time`: the latest at or before it, and its distance. */
  snapshotAt(slug: string, query: T.SnapshotAtQuery, o?: CallOptions): Promise<T.SnapshotAt> {
    return this.request("GET", `/v1/markets/${seg(slug)}/snapshots/at`, { ...o, query });
  }

  /** Up, Down and coin prices over the market's life, downsampled to at most `points` snapshots. */
  marketSeries(slug: string, query: T.MarketSeriesQuery = {}, o?: CallOptions): Promise<T.MarketSeries> {
    return this.request("GET", `/v1/markets/${seg(slug)}/series`, { ...o, query });
  }

  /** Every Polymarket trade of a market in the query's range, page after page. */
  trades(slug: string, query: T.TradesQuery = {}, o?: CallOptions): AsyncIterableIterator<T.MarketTrade> {
    return this.#iterate(
      query,
      (q) => this.tradesPage(slug, q, o),
      (p) => p.trades,
      o?.signal,
    );
  }

  tradesPage(slug: string, query: T.TradesQuery = {}, o?: CallOptions): Promise<T.MarketTradePage> {
    return this.request("GET", `/v1/markets/${seg(slug)}/trades`, { ...o, query });
  }

  /** Every recorded market-channel message of a market in the query's range, page after page (newest first unless order "asc"). */
  events(slug: string, query: T.EventsQuery = {}, o?: CallOptions): AsyncIterableIterator<T.MarketEvent> {
    return this.#iterate(
      query,
      (q) => this.eventsPage(slug, q, o),
      (p) => p.events,
      o?.signal,
    );
  }

  eventsPage(slug: string, query: T.EventsQuery = {}, o?: CallOptions): Promise<T.MarketEventPage> {
    return this.request("GET", `/v1/markets/${seg(slug)}/events`, { ...o, query });
  }

  /** The full book of both outcomes at `time`, rebuilt from the market's events. */
  bookAt(slug: string, query: T.BookAtQuery, o?: CallOptions): Promise<T.BookAt> {
    return this.request("GET", `/v1/markets/${seg(slug)}/book`, { ...o, query });
  }

  /**
   * The recorded messages of the assets between `from` and `to`, each exactly as Polymarket sent it,
   * paced by `speed` (docs/events.md). Costs one request per market-hour, charged before the first
   * message; an error (UpdownError) when refused. Not retried: a retry would be charged again.
   */
  replay(options: ReplayOptions, o: Pick<CallOptions, "signal"> = {}): AsyncIterableIterator<ReplayMessage> {
    const query = { from: options.from, to: options.to, speed: options.speed ?? 1 };
    const transport = options.transport ?? "auto";
    const socket = transport === "websocket" || (transport === "auto" && typeof WebSocket === "function");
    if (socket) {
      // "" is the page's own origin (a browser).
      const page = (globalThis as { location?: { origin: string } }).location?.origin ?? "";
      const http = this.#baseUrl === "" ? page : this.#baseUrl;
      const url = `${http.replace(/^http/, "ws")}/v1/replay/ws${queryString(query)}`;
      const protocols = this.#apiKey === undefined ? ["updown"] : ["updown", `updown-key.${this.#apiKey}`];
      return socketMessages(url, protocols, options.assets, o.signal);
    }
    const url = `${this.#baseUrl}/v1/replay${queryString({ ...query, assets_ids: options.assets.join(",") })}`;
    const fetchImpl = this.#fetch;
    const headers: Record<string, string> = { accept: "application/x-ndjson" };
    if (this.#apiKey !== undefined) headers["x-api-key"] = this.#apiKey;
    return (async function* () {
      let response: Response;
      try {
        response = await fetchImpl(url, { headers, signal: o.signal });
      } catch (err) {
        if (o.signal?.aborted) throw abortedError(o.signal);
        throw new UpdownError({ code: "NETWORK", message: `The replay failed: ${String(err)}`, cause: err });
      }
      yield* ndjsonMessages(response);
    })();
  }

  /** What a market order of `size` would have paid (or got) from the book in effect at `time`. */
  executionPrice(slug: string, query: T.ExecutionPriceQuery, o?: CallOptions): Promise<T.ExecutionPrice> {
    return this.request("GET", `/v1/markets/${seg(slug)}/execution-price`, { ...o, query });
  }

  // ---- exchange series (Binance) ----

  latest(coin: T.ExchangeCoin, venue: T.Venue, o?: CallOptions): Promise<T.LatestDepth> {
    return this.request("GET", `/v1/${seg(coin)}/${seg(venue)}/latest`, o);
  }

  latestTrades(
    coin: T.ExchangeCoin,
    venue: T.Venue,
    query: T.LatestTradesQuery = {},
    o?: CallOptions,
  ): Promise<T.LatestTrades> {
    return this.request("GET", `/v1/${seg(coin)}/${seg(venue)}/trades/latest`, { ...o, query });
  }

  depthSnapshots(
    coin: T.ExchangeCoin,
    venue: T.Venue,
    query: T.DepthSnapshotsQuery = {},
    o?: CallOptions,
  ): AsyncIterableIterator<T.DepthSnapshot> {
    return this.#iterate(
      query,
      (q) => this.depthSnapshotsPage(coin, venue, q, o),
      (p) => p.data,
      o?.signal,
    );
  }

  depthSnapshotsPage(
    coin: T.ExchangeCoin,
    venue: T.Venue,
    query: T.DepthSnapshotsQuery = {},
    o?: CallOptions,
  ): Promise<T.DepthPage> {
    return this.request("GET", `/v1/${seg(coin)}/${seg(venue)}/snapshots`, { ...o, query });
  }

  candles(
    coin: T.ExchangeCoin,
    venue: T.Venue,
    query: T.CandlesQuery = {},
    o?: CallOptions,
  ): AsyncIterableIterator<T.Candle> {
    return this.#iterate(
      query,
      (q) => this.candlesPage(coin, venue, q, o),
      (p) => p.data,
      o?.signal,
    );
  }

  candlesPage(
    coin: T.ExchangeCoin,
    venue: T.Venue,
    query: T.CandlesQuery = {},
    o?: CallOptions,
  ): Promise<T.CandlePage> {
    return this.request("GET", `/v1/${seg(coin)}/${seg(venue)}/candles`, { ...o, query });
  }

  fundingRates(
    coin: T.ExchangeCoin,
    query: T.FundingRatesQuery = {},
    o?: CallOptions,
  ): AsyncIterableIterator<T.FundingRate> {
    return this.#iterate(
      query,
      (q) => this.fundingRatesPage(coin, q, o),
      (p) => p.data,
      o?.signal,
    );
  }

  fundingRatesPage(
    coin: T.ExchangeCoin,
    query: T.FundingRatesQuery = {},
    o?: CallOptions,
  ): Promise<T.FundingRatePage> {
    return this.request("GET", `/v1/${seg(coin)}/futures/funding-rates`, { ...o, query });
  }

  openInterest(
    coin: T.ExchangeCoin,
    query: T.OpenInterestQuery = {},
    o?: CallOptions,
  ): AsyncIterableIterator<T.OpenInterest> {
    return this.#iterate(
      query,
      (q) => this.openInterestPage(coin, q, o),
      (p) => p.data,
      o?.signal,
    );
  }

  openInterestPage(
    coin: T.ExchangeCoin,
    query: T.OpenInterestQuery = {},
    o?: CallOptions,
  ): Promise<T.OpenInterestPage> {
    return this.request("GET", `/v1/${seg(coin)}/futures/open-interest`, { ...o, query });
  }

  markPrices(
    coin: T.ExchangeCoin,
    query: T.MarkPricesQuery = {},
    o?: CallOptions,
  ): AsyncIterableIterator<T.MarkPrice> {
    return this.#iterate(
      query,
      (q) => this.markPricesPage(coin, q, o),
      (p) => p.data,
      o?.signal,
    );
  }

  markPricesPage(
    coin: T.ExchangeCoin,
    query: T.MarkPricesQuery = {},
    o?: CallOptions,
  ): Promise<T.MarkPricePage> {
    return this.request("GET", `/v1/${seg(coin)}/futures/mark-price`, { ...o, query });
  }

  // ---- backtests ----

  /** The JSON Schema of a strategy definition. */
  strategySchema(o?: CallOptions): Promise<T.StrategySchema> {
    return this.request("GET", "/v1/backtest-ai/schema", o);
  }

  /** Generates and stores a strategy from a prompt or preset (spends one generation of the quota). */
  generateStrategy(body: T.GenerateStrategyBody, o?: CallOptions): Promise<T.GeneratedStrategy> {
    return this.request("POST", "/v1/backtest-ai/generate", { ...o, body });
  }

  /** Generates a strategy (or takes a definition) and runs it; `run.status` says whether it finished. */
  runStrategy(body: T.RunStrategyBody, o?: CallOptions): Promise<T.BacktestRunAnswer> {
    return this.request("POST", "/v1/backtest-ai/strategy", { ...o, body });
  }

  /** Runs a stored strategy or a definition; `run.status` says whether it finished (see waitForRun). */
  runBacktest(body: T.RunBacktestBody, o?: CallOptions): Promise<T.BacktestRunAnswer> {
    return this.request("POST", "/v1/backtest-ai/run", { ...o, body });
  }

  /** A run and a page of its per-market results (`results_limit`, `results_offset`). */
  backtestRun(id: string, o?: CallOptions & { query?: T.BacktestRunQuery }): Promise<T.BacktestRunAnswer> {
    return this.request("GET", `/v1/backtest-ai/runs/${seg(id)}`, o);
  }

  /** Every trade of one market in a run, oldest first, page after page. */
  runTrades(
    id: string,
    slug: string,
    query: T.RunTradesQuery = {},
    o?: CallOptions,
  ): AsyncIterableIterator<T.BacktestTrade> {
    return this.#iterate(
      query,
      (q) => this.runTradesPage(id, slug, q, o),
      (p) => p.trades,
      o?.signal,
    );
  }

  runTradesPage(
    id: string,
    slug: string,
    query: T.RunTradesQuery = {},
    o?: CallOptions,
  ): Promise<T.BacktestMarketTrades> {
    return this.request("GET", `/v1/backtest-ai/runs/${seg(id)}/markets/${seg(slug)}/trades`, {
      ...o,
      query,
    });
  }

  /** The definition a run replayed, to run again or edit. */
  runDefinition(id: string, o?: CallOptions): Promise<T.StrategyDefinition> {
    return this.request("GET", `/v1/backtest-ai/runs/${seg(id)}/definition`, o);
  }

  /** Runs of the key side by side: each one's run, aggregate, benchmarks, intervals, sweep and walk-forward. */
  compareRuns(ids: readonly string[], o?: CallOptions): Promise<T.BacktestComparedRuns> {
    return this.request("GET", "/v1/backtest-ai/runs", { ...o, query: { ids: ids.join(",") } });
  }

  /**
   * PolyHistorical's `POST /v1/replay`: one market, a strategy of conditions, answered in its shape
   * when it finishes within `wait` seconds, else a pending run (poll `backtestRun`).
   */
  replayStrategy(body: T.ReplayStrategyBody, o?: CallOptions): Promise<T.ReplayAnswer | T.ReplayPending> {
    return this.request("POST", "/v1/replay", { ...o, body });
  }

  /** Polls a run until its status is "complete" or "failed", and answers it (a failed run is answered, not thrown). */
  async waitForRun(id: string, o: WaitOptions = {}): Promise<T.BacktestRunAnswer> {
    const pollMs = o.pollMs ?? 1000;
    for (;;) {
      const answer = await this.backtestRun(id, o);
      if (answer.run.status === "complete" || answer.run.status === "failed") return answer;
      await this.#wait(pollMs, o.signal);
    }
  }

  /** This key's stored strategies, page after page. */
  strategies(query: T.StrategiesQuery = {}, o?: CallOptions): AsyncIterableIterator<T.Strategy> {
    return this.#iterate(
      query,
      (q) => this.strategiesPage(q, o),
      (p) => p.strategies,
      o?.signal,
    );
  }

  strategiesPage(query: T.StrategiesQuery = {}, o?: CallOptions): Promise<T.StrategyPage> {
    return this.request("GET", "/v1/backtest-ai/strategies", { ...o, query });
  }

  strategy(id: string, o?: CallOptions): Promise<T.Strategy> {
    return this.request("GET", `/v1/backtest-ai/strategies/${seg(id)}`, o);
  }

  // ---- the one way out ----

  /**
   * One call to the API, with retries (408, 429, 500, 502, 503, 504, network errors and timeouts,
   * after Retry-After or a jittered backoff), the per-attempt timeout and the caller's signal.
   * Answers the parsed JSON body of a 2xx; throws an UpdownError otherwise.
   */
  async request<R>(method: "GET" | "POST", path: string, init: RequestOptions = {}): Promise<R> {
    // `.` and `..` (or `%2e%2e`, which URLs read the same) as a segment, from a slug or id given to a
    // method, would resolve to another path than the one the method names: refused, never sent.
    if (DOT_SEGMENT.test(path))
      throw new TypeError(`${path} has a . or .. segment; a slug or id cannot be one`);
    const url = this.#baseUrl + path + queryString(init.query);
    const idempotencyKey = method === "POST" ? (init.idempotencyKey ?? newIdempotencyKey()) : undefined;
    const requestInit = {
      method,
      headers: this.#headers(init, idempotencyKey),
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    };
    for (let retry = 0; ; retry++) {
      throwIfAborted(init.signal);
      const outcome = await this.#attempt<R>(url, requestInit, init);
      if (outcome.ok) return outcome.value;
      const delayMs = this.#retryDelay(outcome, retry + 1);
      if (delayMs === null) throw outcome.error;
      this.#onRetry?.({
        attempt: retry + 1,
        delayMs,
        status: outcome.error.status ?? undefined,
        error: outcome.error,
      });
      await this.#wait(delayMs, init.signal);
    }
  }

  /** The wait before retry number `retry`, or null when the failure is final. */
  #retryDelay(outcome: Extract<Attempt<unknown>, { ok: false }>, retry: number): number | null {
    if (!outcome.retryable || retry > this.#maxRetries) return null;
    if (outcome.waitMs === null) return backoffMs(retry, this.#retryBaseMs, this.#retryMaxMs, this.#random);
    return outcome.waitMs <= this.#retryMaxMs ? outcome.waitMs : null;
  }

  #headers(init: RequestOptions, idempotencyKey: string | undefined): Record<string, string> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.#apiKey !== undefined) headers["x-api-key"] = this.#apiKey;
    if (init.body !== undefined) headers["content-type"] = "application/json";
    if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey;
    for (const [name, value] of Object.entries(init.headers ?? {})) headers[name.toLowerCase()] = value;
    return headers;
  }

  async #attempt<R>(
    url: string,
    requestInit: { method: string; headers: Record<string, string>; body: string | undefined },
    init: RequestOptions,
  ): Promise<Attempt<R>> {
    const attempt = attemptSignal(init.signal, init.timeoutMs ?? this.#timeoutMs);
    try {
      const fetchImpl = this.#fetch;
      const response = await fetchImpl(url, { ...requestInit, signal: attempt.signal });
      const text = await response.text();
      return answerOf<R>(response, text);
    } catch (err) {
      return transportFailure(err, attempt, init.signal);
    } finally {
      attempt.release();
    }
  }

  async #wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    try {
      await abortableSleep(this.#sleep, ms, signal);
    } catch (err) {
      if (signal?.aborted) throw abortedError(signal);
      throw err;
    }
  }

  #iterate<Q extends { offset?: number }, Page extends PageFrame, Item>(
    query: Q,
    fetchPage: (query: Q) => Promise<Page>,
    itemsOf: (page: Page) => readonly Item[],
    signal: AbortSignal | undefined,
  ): AsyncIterableIterator<Item> {
    const checkpoint = () => throwIfAborted(signal);
    return pageThrough(query.offset ?? 0, (offset) => fetchPage({ ...query, offset }), itemsOf, checkpoint);
  }
}

function queryString(query: Readonly<Record<string, QueryValue>> | undefined): string {
  if (query === undefined) return "";
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.append(name, String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

function abortedError(signal: AbortSignal): UpdownError {
  return new UpdownError({ code: "ABORTED", message: "The request was aborted", cause: signal.reason });
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortedError(signal);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** An answer that came: the value of a 2xx, else its typed error and whether to try again. */
function answerOf<R>(response: Response, text: string): Attempt<R> {
  const parsed = parseJson(text);
  if (response.ok) {
    if (parsed.ok) return { ok: true, value: parsed.value as R };
    const error = new UpdownError({
      code: "UNEXPECTED_RESPONSE",
      message: `HTTP ${response.status} with a body that is not JSON`,
      status: response.status,
      requestId: response.headers.get("x-request-id"),
    });
    return { ok: false, error, retryable: false, waitMs: null };
  }
  const waitMs = retryAfterMs(response.headers.get("retry-after"), Date.now());
  const error = errorFromAnswer(
    response.status,
    parsed.ok ? parsed.value : text === "" ? undefined : text,
    response.headers.get("x-request-id"),
    waitMs === null ? null : Math.ceil(waitMs / 1000),
  );
  return { ok: false, error, retryable: RETRYABLE_STATUSES.has(response.status), waitMs };
}

/** No (whole) answer came: the caller aborted (final), the attempt timed out, or the network failed. */
function transportFailure(
  err: unknown,
  attempt: AttemptSignal,
  caller: AbortSignal | undefined,
): Attempt<never> {
  if (caller?.aborted) return { ok: false, error: abortedError(caller), retryable: false, waitMs: null };
  if (attempt.timedOut()) {
    const error = new UpdownError({ code: "TIMEOUT", message: "The request timed out", cause: err });
    return { ok: false, error, retryable: true, waitMs: null };
  }
  const message = `The request failed: ${err instanceof Error ? err.message : String(err)}`;
  return {
    ok: false,
    error: new UpdownError({ code: "NETWORK", message, cause: err }),
    retryable: true,
    waitMs: null,
  };
}
