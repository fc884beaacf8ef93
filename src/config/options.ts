import { PLAN_NAMES, parsePlanName } from "../domain/api-key.ts";
import { type BackfillKind, parseVenue, VENUES } from "../domain/exchange.ts";
import { DEFAULT_COINS, MARKET_TYPES, type MarketType, parseMarketType } from "../domain/market.ts";
import { parseIsoMicros, parseUserTime } from "../domain/time.ts";
import {
  choice,
  coinCode,
  coinList,
  demoCounts,
  integer,
  listOf,
  matching,
  optional,
  storeUrl,
  text,
  textList,
  time,
  trustProxy,
  url,
  type ValueType,
  yesNo,
} from "./values.ts";

/**
 * Every setting the service and its commands take, environment variables and flags alike: one row
 * each, with its rule and default. Commands pick their options from here by name (src/cli/commands/);
 * src/config/read.ts reads them, and docs/configuration.md lists them (test/config/config.test.ts checks it).
 */
export interface Option<T> {
  /** The environment variable, for the settings an operator keeps in the environment. */
  readonly env?: string;
  /** Its spellings on the command line, the first the one help and errors use. */
  readonly flags: readonly string[];
  readonly type: ValueType<T>;
  readonly default: T;
  /** The flags take no value and set this one (`--no-seed`, `--books`). */
  readonly switchTo?: T;
  /** The flag may be given more than once; the texts are read as one comma-separated list. */
  readonly repeatable?: boolean;
  /** One line: what it is for. */
  readonly doc: string;
}

function option<T>(spec: Option<T>): Option<T> {
  return spec;
}

/** The rule as help and the docs state it: a switch takes no value; its variable follows the type's rule. */
export function ruleOf(option: Option<unknown>): string {
  if (option.switchTo === undefined) return option.type.rule;
  return option.env ? `${option.type.rule}; ${option.flags.join(", ")}: no value` : "a switch, no value";
}

/** The default as help and the docs state it. */
export function shownDefault(option: Option<unknown>): string {
  return option.type.show(option.default);
}

export const DEFAULT_DEMO_COUNTS: Record<MarketType, number> = {
  "5m": 60,
  "15m": 60,
  "1h": 12,
  "4h": 3,
  "24h": 2,
};

/** Above this a copy batch buys no speed and holds one long transaction at the destination. */
export const MAX_COPY_BATCH = 50_000;

/** How a backtest worker thread is scheduled beside the rest of the machine (BACKTEST_PRIORITY). */
export const RUN_PRIORITIES = ["low", "normal"] as const;
export type RunPriority = (typeof RUN_PRIORITIES)[number];

/** What `--kinds` accepts for each kind of backfill; a Record, so that a new kind cannot be left out. */
const KIND_SPELLINGS: Record<BackfillKind, string[]> = {
  candles: ["candles"],
  trades: ["trades"],
  funding: ["funding", "funding-rates"],
  open_interest: ["open-interest", "open_interest"],
};
const BACKFILL_KINDS = Object.keys(KIND_SPELLINGS) as BackfillKind[];
const parseKind = (value: string): BackfillKind | null =>
  BACKFILL_KINDS.find((kind) => KIND_SPELLINGS[kind].includes(value.toLowerCase())) ?? null;

const USER_TIME = "an ISO 8601 time or epoch milliseconds";

function parseOrderType(value: string): "MARKET" | "LIMIT" | null {
  const upper = value.toUpperCase();
  return upper === "MARKET" || upper === "LIMIT" ? upper : null;
}

/** `now` (null: the command reads its clock) or an ISO 8601 time. */
const isoOrNow: ValueType<number | null> = {
  rule: "an ISO 8601 time or now",
  placeholder: "ISO|now",
  parse: (value, label) => (value === "now" ? null : time(parseIsoMicros, isoOrNow.rule).parse(value, label)),
  show: (value) => (value === null ? "now" : String(value)),
};

const SERVICE_OPTIONS = {
  port: option({
    env: "PORT",
    flags: ["--port"],
    type: integer(0, 65535),
    default: 8080,
    doc: "HTTP port (0 picks a free one; the URL is printed)",
  }),
  host: option({
    env: "HOST",
    flags: ["--host"],
    type: text("ADDRESS", "an address or host name"),
    default: "127.0.0.1",
    doc: "address to bind; 0.0.0.0 for every interface",
  }),
  databaseUrl: option({
    env: "DATABASE_URL",
    flags: ["--database-url"],
    type: storeUrl(),
    default: "sqlite:./data/updown.db",
    doc: "the database: sqlite:<path> (sqlite::memory: for a throwaway one) or postgres://user:password@host:port/database",
  }),
  pgStatementTimeoutMs: option({
    env: "PG_STATEMENT_TIMEOUT_MS",
    flags: ["--pg-statement-timeout-ms"],
    type: integer(0, 600_000),
    default: 5000,
    doc: "PostgreSQL: longest a request's statement may run before it is cancelled (503); a server that does not answer is given up on 250 ms later; 0: no limit",
  }),
  pgAcquireTimeoutMs: option({
    env: "PG_ACQUIRE_TIMEOUT_MS",
    flags: ["--pg-acquire-timeout-ms"],
    type: integer(0, 600_000),
    default: 2000,
    doc: "PostgreSQL: longest a request waits for a pooled connection, or for a new one to be made, before it is answered 503; 0: no limit",
  }),
  redisUrl: option({
    env: "REDIS_URL",
    flags: ["--redis-url"],
    type: optional(url(["redis:", "rediss:"])),
    default: null,
    doc: "Redis for rate-limit counters shared by every replica; unset: counted in this process",
  }),
  redisCommandTimeoutMs: option({
    env: "REDIS_COMMAND_TIMEOUT_MS",
    flags: ["--redis-command-timeout-ms"],
    type: integer(1, 60_000),
    default: 250,
    doc: "time (ms) a rate-limit command may go unanswered by Redis before the request is limited in this process and the breaker opens",
  }),
  redisBreakerOpenMs: option({
    env: "REDIS_BREAKER_OPEN_MS",
    flags: ["--redis-breaker-open-ms"],
    type: integer(10, 3_600_000),
    default: 5000,
    doc: "time (ms) the rate limiter's breaker stays open after Redis failed (requests limited in this process at once) before it asks Redis again",
  }),
  clockOffsetMs: option({
    env: "CLOCK_OFFSET_MS",
    flags: ["--clock-offset-ms"],
    type: integer(-315_360_000_000, 315_360_000_000),
    default: 0,
    doc: "milliseconds added to the server's clock, for tests and drills that must place requests in a rate-limit window (e.g. the start of a minute); 0 in production",
  }),
  plansFile: option({
    env: "PLANS_FILE",
    flags: ["--plans-file"],
    type: optional(text("FILE", "a file path")),
    default: null,
    doc: "a JSON file laid over config/plans.json; only what differs",
  }),
  authFailuresPerMinute: option({
    env: "AUTH_FAILURES_PER_MINUTE",
    flags: ["--auth-failures-per-minute"],
    type: integer(1, 1_000_000),
    default: 30,
    doc: "failed authentications per client address and UTC minute before that address gets 429",
  }),
  keylessRequestsPerMinute: option({
    env: "KEYLESS_REQUESTS_PER_MINUTE",
    flags: ["--keyless-requests-per-minute"],
    type: integer(1, 1_000_000),
    default: 120,
    doc: "requests per client address and UTC minute to what needs no key (documents, /docs, the page, /metrics) before 429; /healthz and /readyz are not limited",
  }),
  uncountedRequestsPerMinute: option({
    env: "UNCOUNTED_REQUESTS_PER_MINUTE",
    flags: ["--uncounted-requests-per-minute"],
    type: integer(1, 1_000_000),
    default: 120,
    doc: "requests per key and UTC minute to /v1/account and /v1/backtest-ai/quota, which do not count, before 429",
  }),
  bodyLimitKb: option({
    env: "BODY_LIMIT_KB",
    flags: ["--body-limit-kb"],
    type: integer(1, 1_048_576),
    default: 256,
    doc: "largest request body (KB) the server reads; a larger one gets 413 before it is read",
  }),
  headersTimeoutMs: option({
    env: "HEADERS_TIMEOUT_MS",
    flags: ["--headers-timeout-ms"],
    type: integer(100, 600_000),
    default: 10_000,
    doc: "time (ms) a client has to send a request's headers before 408 and a closed connection",
  }),
  requestTimeoutMs: option({
    env: "REQUEST_TIMEOUT_MS",
    flags: ["--request-timeout-ms"],
    type: integer(100, 3_600_000),
    default: 30_000,
    doc: "time (ms) a client has to send a whole request, body included, before 408; never limits the answer",
  }),
  trustProxy: option({
    env: "TRUST_PROXY",
    flags: ["--trust-proxy"],
    type: trustProxy(),
    default: false,
    doc: "whose X-Forwarded-For gives the client address for throttling",
  }),
  publicBaseUrl: option({
    env: "PUBLIC_BASE_URL",
    flags: ["--public-base-url"],
    type: optional(url(["http:", "https:"], true)),
    default: null,
    doc: "the address clients reach the service at (https://api.example.com), written in /llms.txt; unset: relative addresses. Never taken from a request's Host",
  }),
  // No flag: a command line is visible to every user of the machine, the environment is not.
  metricsToken: option({
    env: "METRICS_TOKEN",
    flags: [],
    type: optional(text("TOKEN")),
    default: null,
    doc: "a bearer token /metrics requires; unset: /metrics answers loopback callers only",
  }),
  logLevel: option({
    env: "LOG_LEVEL",
    flags: ["--log-level"],
    type: choice(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
    default: "info",
    doc: "the server's log level; debug adds two lines a request (never headers, so never keys)",
  }),
  pageCacheMb: option({
    env: "PAGE_CACHE_MB",
    flags: ["--page-cache-mb"],
    type: integer(0, 65536),
    default: 128,
    doc: "memory (MB) for rendered snapshot pages of resolved markets, each kept from its second request; 0 disables the cache",
  }),
  pageReaders: option({
    env: "PAGE_READERS",
    flags: ["--page-readers"],
    type: integer(0, 64),
    default: 1,
    doc: "threads that read pages of resolved markets not in the page cache, and backtest run answers, each with its own database connection, while the request thread serves other requests (SQLite files only: PostgreSQL's reads do not hold a thread); 0 reads them on the request thread",
  }),
  exportsPerKey: option({
    env: "EXPORTS_PER_KEY",
    flags: ["--exports-per-key"],
    type: integer(1, 10_000),
    default: 2,
    doc: "file exports (bulk and single market) one key may have streaming at once in this process; one more is a 429 with Retry-After",
  }),
  exportsPerProcess: option({
    env: "EXPORTS_PER_PROCESS",
    flags: ["--exports-per-process"],
    type: integer(1, 100_000),
    default: 64,
    doc: "file exports this process streams at once, all keys together; one more is a 503 with Retry-After",
  }),
  coins: option({
    env: "COINS",
    flags: ["--coins", "--coin"],
    type: coinList(),
    default: [...DEFAULT_COINS],
    doc: "the coins the service knows (the API's coin values, demo data); for collect, seed and backfill the coins to work on",
  }),
  seedDemo: option({
    env: "SEED_DEMO",
    flags: ["--no-seed"],
    switchTo: false,
    type: yesNo(),
    default: true,
    doc: "seed demo data and demo keys into an empty database on start; --no-seed: never",
  }),
  demoCounts: option({
    env: "DEMO_COUNTS",
    flags: ["--counts"],
    type: demoCounts(DEFAULT_DEMO_COUNTS),
    default: DEFAULT_DEMO_COUNTS,
    doc: "demo markets per series and coin; types left out keep their default",
  }),
  drainSeconds: option({
    env: "DRAIN_SECONDS",
    flags: ["--drain-seconds"],
    type: integer(0, 3600),
    default: 5,
    doc: "on SIGTERM or SIGINT, how long requests in flight (serve) or upstream calls in flight (collect) may take before they are cut and the process exits",
  }),
  snapshotIntervalMs: option({
    env: "SNAPSHOT_INTERVAL_MS",
    flags: ["--snapshot-interval-ms"],
    type: integer(100, 60_000),
    default: 1000,
    doc: "the collector's cadence: one snapshot per live market this often; serve judges coverage by it",
  }),
  recordEvents: option({
    env: "RECORD_EVENTS",
    flags: ["--no-events"],
    switchTo: false,
    type: yesNo(),
    default: true,
    doc: "the collector keeps every market-channel message and coin-price update as events (DESIGN 3.10); --no-events: snapshots only",
  }),
  polymarketGammaUrl: option({
    env: "POLYMARKET_GAMMA_URL",
    flags: ["--polymarket-gamma-url"],
    type: url(["https:", "http:"]),
    default: "https://gamma-api.polymarket.com",
    doc: "Polymarket's Gamma REST API: discovery, liquidity and resolution polls",
  }),
  polymarketClobWsUrl: option({
    env: "POLYMARKET_CLOB_WS_URL",
    flags: ["--polymarket-clob-ws-url"],
    type: url(["wss:", "ws:"]),
    default: "wss://ws-subscriptions-clob.polymarket.com/ws/market",
    doc: "Polymarket's CLOB market channel: both tokens' books",
  }),
  polymarketRtdsUrl: option({
    env: "POLYMARKET_RTDS_URL",
    flags: ["--polymarket-rtds-url"],
    type: url(["wss:", "ws:"]),
    default: "wss://ws-live-data.polymarket.com",
    doc: "Polymarket's real-time data socket: Chainlink and Binance coin prices",
  }),
  binanceSpotRestUrl: option({
    env: "BINANCE_SPOT_REST_URL",
    flags: ["--binance-spot-rest-url"],
    type: url(["https:", "http:"], true),
    default: "https://api.binance.com",
    doc: "Binance spot REST API (backfill)",
  }),
  binanceSpotWsUrl: option({
    env: "BINANCE_SPOT_WS_URL",
    flags: ["--binance-spot-ws-url"],
    type: url(["wss:", "ws:"], true),
    default: "wss://stream.binance.com:9443",
    doc: "Binance spot combined streams (/stream?streams=... is appended): the live recorder",
  }),
  binanceFuturesRestUrl: option({
    env: "BINANCE_FUTURES_REST_URL",
    flags: ["--binance-futures-rest-url"],
    type: url(["https:", "http:"], true),
    default: "https://fapi.binance.com",
    doc: "Binance USD-M futures REST API: backfill, and the recorder's funding rate and open interest polls",
  }),
  binanceFuturesWsUrl: option({
    env: "BINANCE_FUTURES_WS_URL",
    flags: ["--binance-futures-ws-url"],
    type: url(["wss:", "ws:"], true),
    default: "wss://fstream.binance.com",
    doc: "Binance USD-M futures combined streams: the live recorder",
  }),
  binanceSpotWeightLimit: option({
    env: "BINANCE_SPOT_WEIGHT_LIMIT",
    flags: ["--binance-spot-weight-limit"],
    type: integer(1, Infinity),
    default: 6000,
    doc: "spot request weight Binance allows this address per minute; REST calls stay under 80 % of it",
  }),
  binanceFuturesWeightLimit: option({
    env: "BINANCE_FUTURES_WEIGHT_LIMIT",
    flags: ["--binance-futures-weight-limit"],
    type: integer(1, Infinity),
    default: 2400,
    doc: "the same for USD-M futures",
  }),
  backtestWorkers: option({
    env: "BACKTEST_WORKERS",
    flags: ["--backtest-workers"],
    type: integer(1, 64),
    default: 2,
    doc: "backtest runs this process executes at once, each on a worker thread with its own database connection",
  }),
  backtestPriority: option<RunPriority>({
    env: "BACKTEST_PRIORITY",
    flags: ["--backtest-priority"],
    type: choice(RUN_PRIORITIES),
    default: "low",
    doc: "the scheduling priority of the backtest worker threads: low (nice 19) lets requests, and anything else the machine runs, go first, and a run takes the CPU they leave; normal competes on equal terms (a replica that only runs backtests)",
  }),
  backtestRunsPerKey: option({
    env: "BACKTEST_RUNS_PER_KEY",
    flags: ["--backtest-runs-per-key"],
    type: integer(1, 1000),
    default: 2,
    doc: "backtest runs a key may have queued or running at once; one more is a 429 (runs_in_flight, scope key)",
  }),
  backtestRunsPerAccount: option({
    env: "BACKTEST_RUNS_PER_ACCOUNT",
    flags: ["--backtest-runs-per-account"],
    type: integer(1, 10000),
    default: 6,
    doc: "backtest runs the keys of one account may have queued or running at once; one more is a 429 (runs_in_flight, scope account)",
  }),
  backtestLeaseS: option({
    env: "BACKTEST_LEASE_S",
    flags: ["--backtest-lease-s"],
    type: integer(1, 3600),
    default: 30,
    doc: "seconds a backtest run stays a process's without a renewal; a run whose process died is taken over after it",
  }),
  llmBaseUrl: option({
    env: "LLM_BASE_URL",
    flags: ["--llm-base-url"],
    type: optional(url(["https:", "http:"], true), "unset"),
    default: null,
    doc: "an OpenAI-compatible API root (https://api.openai.com/v1) that generates strategies from prompts; unset: the built-in generator",
  }),
  // No flag: a command line is visible to every user of the machine, the environment is not.
  llmApiKey: option({
    env: "LLM_API_KEY",
    flags: [],
    type: optional(text("KEY")),
    default: null,
    doc: "the bearer token LLM_BASE_URL wants; unset: none sent",
  }),
  llmModel: option({
    env: "LLM_MODEL",
    flags: ["--llm-model"],
    type: text("MODEL", "a model name"),
    default: "gpt-4o-mini",
    doc: "the model asked at LLM_BASE_URL",
  }),
  llmTimeoutMs: option({
    env: "LLM_TIMEOUT_MS",
    flags: ["--llm-timeout-ms"],
    type: integer(100, 600_000),
    default: 30_000,
    doc: "how long a generation may take at LLM_BASE_URL before it fails (422, nothing charged)",
  }),
};

const COMMAND_OPTIONS = {
  types: option({
    flags: ["--types"],
    type: listOf(MARKET_TYPES, parseMarketType, true),
    default: [...MARKET_TYPES],
    doc: "Polymarket series (market types) to record; none: Binance only",
  }),
  venues: option({
    flags: ["--venues", "--venue"],
    type: listOf(VENUES, parseVenue, true),
    default: [...VENUES],
    doc: "Binance venues for the same coins; none: Polymarket only",
  }),
  lookahead: option({
    flags: ["--lookahead"],
    type: integer(0, 10),
    default: 1,
    doc: "markets after the live one to discover ahead, per series",
  }),
  seed: option({
    flags: ["--seed"],
    type: integer(-Infinity, Infinity),
    default: 1,
    doc: "the demo generator's seed: the same seed, anchor and counts give the same data",
  }),
  anchor: option({
    flags: ["--anchor"],
    type: isoOrNow,
    default: null,
    doc: 'the "now" of the demo data: the latest market of each series contains it and is live',
  }),
  markets: option({
    flags: ["--markets"],
    type: optional(text("FILE", "a file path (JSONL, .gz accepted)"), "required"),
    default: null,
    doc: "upstream market rows with their raw Gamma objects",
  }),
  feed: option({
    flags: ["--feed"],
    repeatable: true,
    type: optional(textList("[twapN=]FILE"), "required"),
    default: null,
    doc: "settlement feeds (CSV, .gz accepted): FILE is Chainlink's instantaneous stream, twap30=FILE or twap60=FILE a TWAP stream in the same columns; repeat for each",
  }),
  maxStaleness: option({
    flags: ["--max-staleness"],
    type: integer(0, Infinity, "a whole number of seconds"),
    default: 10,
    doc: "the oldest a feed tick may be and still decide a market in the cross-check (import pmxt: and still be an imported snapshot's coin price)",
  }),
  binanceKlines: option({
    flags: ["--binance-klines"],
    repeatable: true,
    type: optional(textList("FILE"), "none"),
    default: null,
    doc: "Binance's public 1 s klines (data.binance.vision zip or CSV; the coin from the file name, BTCUSDT-1s-...) as the coin prices of imported markets without their own feed",
  }),
  archiveBase: option({
    flags: ["--base"],
    type: optional(text("URL|FOLDER", "a folder or an https:// URL"), "none"),
    default: null,
    doc: "where the archive's hour files are, for --from/--to (import pmxt)",
  }),
  archiveFrom: option({
    flags: ["--from"],
    type: optional(time(parseUserTime, USER_TIME), "none"),
    default: null,
    doc: "the start of the range to import (import gamma: markets starting at or after it; import pmxt: the first hour file under --base)",
  }),
  archiveTo: option({
    flags: ["--to"],
    type: optional(time(parseUserTime, USER_TIME), "none"),
    default: null,
    doc: "the end of the range to import (import gamma: markets starting at or before it; import pmxt: the last hour file under --base)",
  }),
  gammaRequestsPerSecond: option({
    flags: ["--requests-per-second"],
    type: integer(1, 100),
    default: 5,
    doc: "import gamma: at most this many requests a second to Gamma (429 and 5xx answers are retried with backoff)",
  }),
  out: option({
    flags: ["--out"],
    type: optional(text("FILE|-", "a file path (.gz: gzipped), or - for stdout"), "required"),
    default: null,
    doc: "where the export goes",
  }),
  format: option<"ndjson" | "csv" | "parquet">({
    flags: ["--format"],
    type: choice(["ndjson", "csv", "parquet"]),
    default: "ndjson",
    doc: "ndjson: our archive format (importable); csv: one snapshot a row; parquet: typed columns",
  }),
  books: option({
    flags: ["--books"],
    switchTo: true,
    type: yesNo(),
    default: false,
    doc: "include both order books",
  }),
  exportCoin: option({
    flags: ["--coin"],
    type: optional(coinCode(), "every coin"),
    default: null,
    doc: "only the markets of this coin",
  }),
  exportType: option({
    flags: ["--type"],
    type: optional(choice(MARKET_TYPES, parseMarketType), "every type"),
    default: null,
    doc: "only the markets of this type",
  }),
  exportFrom: option({
    flags: ["--from"],
    type: optional(time(parseUserTime, USER_TIME), "the first snapshot"),
    default: null,
    doc: "only snapshots at or after this time (with --type, only the markets that overlap the range)",
  }),
  exportTo: option({
    flags: ["--to"],
    type: optional(time(parseUserTime, USER_TIME), "the last snapshot"),
    default: null,
    doc: "only snapshots at or before this time",
  }),
  slugs: option({
    flags: ["--slug"],
    repeatable: true,
    type: optional(textList("SLUG"), "every market"),
    default: null,
    doc: "only these markets",
  }),
  plan: option({
    flags: ["--plan"],
    type: optional(choice(PLAN_NAMES, parsePlanName), "required"),
    default: null,
    doc: "the new key's plan",
  }),
  account: option({
    flags: ["--account"],
    type: optional(
      matching(/^\S.{0,199}$/, "NAME", "1 to 200 characters, not starting with a space"),
      "default",
    ),
    default: null,
    doc: "who holds the key; a plan allows a number of active keys per account",
  }),
  keyName: option({
    flags: ["--name"],
    type: optional(text("TEXT")),
    default: null,
    doc: "a note shown by keys list",
  }),
  perMinute: option({
    flags: ["--per-minute"],
    type: optional(integer(1, Infinity), "the plan's"),
    default: null,
    doc: "an enterprise key's own requests per minute",
  }),
  perDay: option({
    flags: ["--per-day"],
    type: optional(integer(1, Infinity), "the plan's"),
    default: null,
    doc: "an enterprise key's own requests per day",
  }),
  source: option({
    flags: ["--from"],
    type: optional(text("URL", "a database URL (sqlite:PATH, postgres://..., postgresql://...)"), "required"),
    default: null,
    doc: "the database to copy",
  }),
  destination: option({
    flags: ["--to"],
    type: optional(text("URL", "a database URL (sqlite:PATH, postgres://..., postgresql://...)"), "required"),
    default: null,
    doc: "the database to copy into (created or upgraded first)",
  }),
  batch: option({
    flags: ["--batch"],
    type: integer(1, MAX_COPY_BATCH),
    default: 5000,
    doc: "snapshots or exchange rows read and written at a time; each batch one transaction",
  }),
  rangeStart: option({
    flags: ["--from"],
    type: optional(time(parseUserTime, USER_TIME), "required"),
    default: null,
    doc: "the first time to fill",
  }),
  rangeEnd: option({
    flags: ["--to"],
    type: optional(time(parseUserTime, USER_TIME), "now"),
    default: null,
    doc: "the last time to fill",
  }),
  kinds: option({
    flags: ["--kinds"],
    type: listOf(BACKFILL_KINDS, parseKind),
    default: BACKFILL_KINDS,
    doc: "what to fill: candles, trades, funding (funding-rates) and open-interest",
  }),
  definitionFile: option({
    flags: ["--definition"],
    type: optional(text("FILE", "a file path (JSON)")),
    default: null,
    doc: "a strategy definition (docs/backtests.md); fields left out take their defaults",
  }),
  preset: option({
    flags: ["--preset"],
    type: optional(choice(["mean_reversion", "dip_buying", "momentum_entry", "quick_scalp"])),
    default: null,
    doc: "one of the four presets",
  }),
  prompt: option({
    flags: ["--prompt"],
    type: optional(text("TEXT", "any text")),
    default: null,
    doc: "a strategy in words: LLM_BASE_URL's model when set, else the built-in generator",
  }),
  marketCount: option({
    flags: ["--count"],
    type: integer(1, 100),
    default: 10,
    doc: "how many of the latest resolved markets to replay",
  }),
  backtestFrom: option({
    flags: ["--from"],
    type: optional(time(parseUserTime, USER_TIME), "any"),
    default: null,
    doc: "only markets starting at or after this time",
  }),
  backtestTo: option({
    flags: ["--to"],
    type: optional(time(parseUserTime, USER_TIME), "any"),
    default: null,
    doc: "only markets starting at or before this time",
  }),
  positionSize: option({
    flags: ["--position-size"],
    type: optional(integer(1, 10_000), "the definition's"),
    default: null,
    doc: "shares bought per entry",
  }),
  orderType: option({
    flags: ["--order-type"],
    type: optional(choice<"MARKET" | "LIMIT">(["MARKET", "LIMIT"], parseOrderType), "the definition's"),
    default: null,
    doc: "how entries are placed",
  }),
  latencyMs: option({
    flags: ["--latency-ms"],
    type: optional(integer(0, 60_000), "the definition's"),
    default: null,
    doc: "orders fill at the first snapshot at or after the decision plus this; 0 allowed",
  }),
  maxLossPercent: option({
    flags: ["--max-loss-percent"],
    type: optional(integer(1, 100), "the definition's"),
    default: null,
    doc: "a position is sold once it has lost this percent of its cost (at the bid, net of the exit's fee)",
  }),
  serviceUrl: option({
    env: "UPDOWN_URL",
    flags: ["--url"],
    type: url(["http:", "https:"], true),
    default: "http://127.0.0.1:8080",
    doc: "the service `updown mcp` answers from (its API and key checks)",
  }),
  // No flag: a command line is visible to every user of the machine, the environment is not.
  apiKey: option({
    env: "UPDOWN_API_KEY",
    flags: [],
    type: optional(text("KEY"), "required"),
    default: null,
    doc: "the API key `updown mcp` sends (X-API-Key) with every read its tools make",
  }),
  sweep: option({
    flags: ["--sweep"],
    repeatable: true,
    type: optional(textList("FIELD=V1,V2|FIELD=FROM:TO:STEP"), "none"),
    default: null,
    doc: "sweep a numeric field of the definition (a dotted path, e.g. exit.take_profit_pct) over values, or from:to:step; repeat for a grid of at most 100 combinations",
  }),
  walkForward: option({
    flags: ["--walk-forward"],
    type: optional(
      matching(/^0?\.[0-9]*[1-9][0-9]*$/, "FRACTION", "a fraction between 0 and 1, e.g. 0.7"),
      "none",
    ),
    default: null,
    doc: "with --sweep: choose the best combination by PnL on this fraction of the markets (oldest first) and report it on the rest",
  }),
  backtestExport: option({
    flags: ["--export"],
    type: optional(text("FILE", "a file path ending .csv, .ndjson or .parquet")),
    default: null,
    doc: "write every trade of the run, with its market's slug, to FILE in the format its extension names",
  }),
  json: option({
    flags: ["--json"],
    switchTo: true,
    type: yesNo(),
    default: false,
    doc: "print the full result as JSON on stdout instead of the summary table",
  }),
};

export const OPTIONS = { ...SERVICE_OPTIONS, ...COMMAND_OPTIONS };
export type OptionName = keyof typeof OPTIONS;
export type ServiceOptionName = keyof typeof SERVICE_OPTIONS;
export const SERVICE_OPTION_NAMES = Object.keys(SERVICE_OPTIONS) as ServiceOptionName[];

/** The type of an option's value. */
export type ValueOf<N extends OptionName> = (typeof OPTIONS)[N] extends Option<infer T> ? T : never;
/** The values of some options, by name. */
export type Values<N extends OptionName> = { [K in N]: ValueOf<K> };
