import { PLAN_NAMES, parsePlanName } from "../domain/api-key.ts";
import { parseVenue, VENUES } from "../domain/exchange.ts";
import { COINS, MARKET_TYPES, type MarketType, parseCoin, parseMarketType } from "../domain/market.ts";
import { parseIsoMicros, parseUserTime } from "../domain/time.ts";
import type { BackfillKind } from "../record/binance/backfill.ts";
import {
  choice,
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
 * src/config/read.ts reads them, and docs/configuration.md lists them (test/config.test.ts checks it).
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
  redisUrl: option({
    env: "REDIS_URL",
    flags: ["--redis-url"],
    type: optional(url(["redis:", "rediss:"])),
    default: null,
    doc: "Redis for rate-limit counters shared by every replica; unset: counted in this process",
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
  trustProxy: option({
    env: "TRUST_PROXY",
    flags: ["--trust-proxy"],
    type: trustProxy(),
    default: false,
    doc: "whose X-Forwarded-For gives the client address for throttling",
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
    doc: "the server's log level; request logs never include headers, so keys are never logged",
  }),
  pageCacheMb: option({
    env: "PAGE_CACHE_MB",
    flags: ["--page-cache-mb"],
    type: integer(0, 65536),
    default: 128,
    doc: "memory (MB) for rendered snapshot pages of resolved markets; 0 disables the cache",
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
  snapshotIntervalMs: option({
    env: "SNAPSHOT_INTERVAL_MS",
    flags: ["--snapshot-interval-ms"],
    type: integer(100, 60_000),
    default: 1000,
    doc: "the collector's cadence: one snapshot per live market this often; serve judges coverage by it",
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
};

const COMMAND_OPTIONS = {
  coins: option({
    flags: ["--coins", "--coin"],
    type: listOf(COINS, parseCoin),
    default: [...COINS],
    doc: "coins to work on",
  }),
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
    type: optional(text("FILE", "a file path (CSV, .gz accepted)"), "required"),
    default: null,
    doc: "the settlement feed the markets are cross-checked against",
  }),
  maxStaleness: option({
    flags: ["--max-staleness"],
    type: integer(0, Infinity, "a whole number of seconds"),
    default: 10,
    doc: "the oldest a feed tick may be and still decide a market in the cross-check",
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
    type: optional(choice(COINS, parseCoin), "every coin"),
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
};

export const OPTIONS = { ...SERVICE_OPTIONS, ...COMMAND_OPTIONS };
export type OptionName = keyof typeof OPTIONS;
export type ServiceOptionName = keyof typeof SERVICE_OPTIONS;
export const SERVICE_OPTION_NAMES = Object.keys(SERVICE_OPTIONS) as ServiceOptionName[];

/** The type of an option's value. */
export type ValueOf<N extends OptionName> = (typeof OPTIONS)[N] extends Option<infer T> ? T : never;
/** The values of some options, by name. */
export type Values<N extends OptionName> = { [K in N]: ValueOf<K> };
