import type { Coin, MarketType } from "./domain/market.ts";
import { readOptions } from "./config/read.ts";
import {
  OPTIONS,
  type RunPriority,
  SERVICE_OPTION_NAMES,
  type ServiceOptionName,
  type Values,
} from "./config/options.ts";

export { ConfigError } from "./config/error.ts";
export { DEFAULT_DEMO_COUNTS, type RunPriority } from "./config/options.ts";

/**
 * What the service is told, built from the options of src/config/options.ts (their defaults, the
 * environment and the flags, merged in src/config/read.ts).
 */
export interface Config {
  port: number;
  host: string;
  /** `sqlite:<path>` (default) or `postgres://...`. */
  databaseUrl: string;
  /** How long `serve` lets a statement run and waits for a connection (PostgreSQL; 0: no limit). */
  storeTimeouts: { statementTimeoutMs: number; acquireTimeoutMs: number };
  /** Unset: the in-process rate limiter. */
  redisUrl: string | null;
  /** The Redis limiter's command timeout and how long its breaker stays open (ms). */
  redisCommandTimeoutMs: number;
  redisBreakerOpenMs: number;
  /** Added to the system clock (ms): 0 but in tests and drills. */
  clockOffsetMs: number;
  plansFile: string | null;
  /** Failed authentications allowed per client address and minute before 429. */
  authFailuresPerMinute: number;
  /** Requests per client address and minute to what needs no key (documents, /docs, the page) before 429. */
  keylessRequestsPerMinute: number;
  /** Requests per key and minute to the routes that do not count (/v1/account, the quota) before 429. */
  uncountedRequestsPerMinute: number;
  /** The largest request body read, in bytes (413 beyond). */
  bodyLimitBytes: number;
  /** Deadlines for receiving a request's headers and the whole request (408 after). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Fastify's trustProxy: which proxies' X-Forwarded-For names the client address (false: none). */
  trustProxy: false | number | string;
  /** The address clients reach the service at, for the absolute URLs it writes; null: relative ones. */
  publicBaseUrl: string | null;
  /** Bearer token for /metrics; unset: /metrics answers loopback callers only. */
  metricsToken: string | null;
  logLevel: string;
  /** Bytes of rendered snapshot pages of resolved markets kept in memory. */
  pageCacheBytes: number;
  /** Threads reading pages of resolved markets beside the request thread (http/page-readers.ts). */
  pageReaders: number;
  /** File exports streaming at once in this process: per key, and all keys together. */
  exports: { perKey: number; perProcess: number };
  /** The coins the service knows: the API's coin values, the demo data, what the collector records. */
  coins: Coin[];
  /** Seed demo data and demo keys into an empty database on `serve`. */
  seedDemo: boolean;
  demoCounts: Record<MarketType, number>;
  /** The collector's cadence: one snapshot per live market this often; coverage judges by it. */
  snapshotIntervalMs: number;
  /** After SIGTERM or SIGINT, how long work in flight may take before it is cut (ms). */
  drainMs: number;
  /** Polymarket's Gamma REST API, CLOB market WebSocket and real-time data socket. */
  polymarket: { gammaUrl: string; clobWsUrl: string; rtdsUrl: string };
  /** Backtest runs (DESIGN 3.7): how many this process executes at once, and how long it holds each unrenewed. */
  backtest: {
    workers: number;
    priority: RunPriority;
    leaseMs: number;
    runsPerKey: number;
    runsPerAccount: number;
  };
  /** An OpenAI-compatible endpoint generating strategies; null: the built-in generator only. */
  llm: { baseUrl: string; apiKey: string | null; model: string; timeoutMs: number } | null;
  /** Binance's public market-data addresses, and the request weight per minute each venue allows. */
  binance: {
    urls: { spotRest: string; spotWs: string; futuresRest: string; futuresWs: string };
    weightLimits: { spot: number; futures: number };
  };
}

export type ServiceValues = Values<ServiceOptionName>;

function defaults(): ServiceValues {
  return Object.fromEntries(
    SERVICE_OPTION_NAMES.map((name) => [name, OPTIONS[name].default]),
  ) as ServiceValues;
}

/** The service's configuration from option values; those not given take their defaults. */
export function toConfig(given: Partial<ServiceValues>): Config {
  const v: ServiceValues = { ...defaults(), ...given };
  return {
    port: v.port,
    host: v.host,
    databaseUrl: v.databaseUrl,
    storeTimeouts: {
      statementTimeoutMs: v.pgStatementTimeoutMs,
      acquireTimeoutMs: v.pgAcquireTimeoutMs,
    },
    redisUrl: v.redisUrl,
    redisCommandTimeoutMs: v.redisCommandTimeoutMs,
    redisBreakerOpenMs: v.redisBreakerOpenMs,
    clockOffsetMs: v.clockOffsetMs,
    plansFile: v.plansFile,
    authFailuresPerMinute: v.authFailuresPerMinute,
    keylessRequestsPerMinute: v.keylessRequestsPerMinute,
    uncountedRequestsPerMinute: v.uncountedRequestsPerMinute,
    bodyLimitBytes: v.bodyLimitKb * 1024,
    headersTimeoutMs: v.headersTimeoutMs,
    requestTimeoutMs: v.requestTimeoutMs,
    trustProxy: v.trustProxy,
    publicBaseUrl: v.publicBaseUrl,
    metricsToken: v.metricsToken,
    logLevel: v.logLevel,
    pageCacheBytes: v.pageCacheMb * 1024 * 1024,
    pageReaders: v.pageReaders,
    exports: { perKey: v.exportsPerKey, perProcess: v.exportsPerProcess },
    coins: v.coins,
    seedDemo: v.seedDemo,
    demoCounts: v.demoCounts,
    snapshotIntervalMs: v.snapshotIntervalMs,
    drainMs: v.drainSeconds * 1000,
    backtest: {
      workers: v.backtestWorkers,
      priority: v.backtestPriority,
      leaseMs: v.backtestLeaseS * 1000,
      runsPerKey: v.backtestRunsPerKey,
      runsPerAccount: v.backtestRunsPerAccount,
    },
    llm:
      v.llmBaseUrl === null
        ? null
        : { baseUrl: v.llmBaseUrl, apiKey: v.llmApiKey, model: v.llmModel, timeoutMs: v.llmTimeoutMs },
    polymarket: {
      gammaUrl: v.polymarketGammaUrl,
      clobWsUrl: v.polymarketClobWsUrl,
      rtdsUrl: v.polymarketRtdsUrl,
    },
    binance: {
      urls: {
        spotRest: v.binanceSpotRestUrl,
        spotWs: v.binanceSpotWsUrl,
        futuresRest: v.binanceFuturesRestUrl,
        futuresWs: v.binanceFuturesWsUrl,
      },
      weightLimits: { spot: v.binanceSpotWeightLimit, futures: v.binanceFuturesWeightLimit },
    },
  };
}

export const DEFAULT_CONFIG: Config = toConfig({});

/** Every setting of the service from the environment and, winning over it, command-line flags. */
export function loadConfig(env: NodeJS.ProcessEnv, args: readonly string[] = []): Config {
  return toConfig(readOptions(SERVICE_OPTION_NAMES, args, env).values);
}
