import { dirname, join } from "node:path";
import { type MarketType, parseMarketType } from "./domain/market.ts";
import { DEFAULT_DEMO_COUNTS } from "./demo/demo.ts";

/** Everything the service can be told, with its defaults merged in one place (DESIGN 4). */
export interface Config {
  port: number;
  host: string;
  /** `sqlite:<path>` (default) or `postgres://...`. */
  databaseUrl: string;
  /** Unset: the in-process rate limiter. */
  redisUrl: string | null;
  plansFile: string | null;
  /** Failed authentications allowed per client address and minute before 429. */
  authFailuresPerMinute: number;
  /** Fastify's trustProxy: whether (or which) proxies' X-Forwarded-For names the client address. */
  trustProxy: boolean | string;
  /** Bearer token for /metrics; unset: /metrics answers loopback callers only. */
  metricsToken: string | null;
  logLevel: string;
  /** Bytes of rendered snapshot pages of resolved markets kept in memory. */
  pageCacheBytes: number;
  /** Seed demo data and demo keys into an empty database on `serve`. */
  seedDemo: boolean;
  demoCounts: Record<MarketType, number>;
  /** The collector's cadence: one snapshot per live market this often; coverage judges by it. */
  snapshotIntervalMs: number;
  /** Polymarket's Gamma REST API, CLOB market WebSocket and real-time data socket. */
  polymarket: { gammaUrl: string; clobWsUrl: string; rtdsUrl: string };
}

export const DEFAULT_CONFIG: Config = {
  port: 8080,
  host: "127.0.0.1",
  databaseUrl: "sqlite:./data/updown.db",
  redisUrl: null,
  plansFile: null,
  authFailuresPerMinute: 30,
  trustProxy: false,
  metricsToken: null,
  logLevel: "info",
  pageCacheBytes: 128 * 1024 * 1024,
  seedDemo: true,
  demoCounts: DEFAULT_DEMO_COUNTS,
  snapshotIntervalMs: 1000,
  polymarket: {
    gammaUrl: "https://gamma-api.polymarket.com",
    clobWsUrl: "wss://ws-subscriptions-clob.polymarket.com/ws/market",
    rtdsUrl: "wss://ws-live-data.polymarket.com",
  },
};

export class ConfigError extends Error {}

function intFrom(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined || text === "") return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${text}"`);
  }
  return n;
}

/** Reads the environment; `overrides` (from command-line flags) win over it. */
export function loadConfig(env: NodeJS.ProcessEnv, overrides: Partial<Config> = {}): Config {
  const fromEnv: Config = {
    port: intFrom("PORT", env.PORT, DEFAULT_CONFIG.port, 0, 65535),
    host: env.HOST || DEFAULT_CONFIG.host,
    databaseUrl: env.DATABASE_URL || DEFAULT_CONFIG.databaseUrl,
    redisUrl: env.REDIS_URL || null,
    plansFile: env.PLANS_FILE || null,
    authFailuresPerMinute: intFrom(
      "AUTH_FAILURES_PER_MINUTE",
      env.AUTH_FAILURES_PER_MINUTE,
      DEFAULT_CONFIG.authFailuresPerMinute,
      1,
      1_000_000,
    ),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    metricsToken: env.METRICS_TOKEN || null,
    logLevel: env.LOG_LEVEL || DEFAULT_CONFIG.logLevel,
    pageCacheBytes:
      intFrom("PAGE_CACHE_MB", env.PAGE_CACHE_MB, DEFAULT_CONFIG.pageCacheBytes / 1048576, 0, 65536) *
      1048576,
    seedDemo: env.SEED_DEMO !== "0" && env.SEED_DEMO !== "false",
    demoCounts: parseDemoCounts(env.DEMO_COUNTS),
    snapshotIntervalMs: intFrom(
      "SNAPSHOT_INTERVAL_MS",
      env.SNAPSHOT_INTERVAL_MS,
      DEFAULT_CONFIG.snapshotIntervalMs,
      100,
      60_000,
    ),
    polymarket: {
      gammaUrl: env.POLYMARKET_GAMMA_URL || DEFAULT_CONFIG.polymarket.gammaUrl,
      clobWsUrl: env.POLYMARKET_CLOB_WS_URL || DEFAULT_CONFIG.polymarket.clobWsUrl,
      rtdsUrl: env.POLYMARKET_RTDS_URL || DEFAULT_CONFIG.polymarket.rtdsUrl,
    },
  };
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  return { ...fromEnv, ...defined };
}

/** `true`, `false`, or a comma-separated list of proxy addresses and CIDR ranges to trust. */
function parseTrustProxy(text: string | undefined): boolean | string {
  if (text === undefined || text === "" || text === "false") return false;
  return text === "true" ? true : text;
}

/** Where demo keys are written: beside the SQLite file, or in the working directory otherwise. */
export function demoKeysPath(databaseUrl: string): string {
  if (databaseUrl.startsWith("sqlite:") && !databaseUrl.endsWith(":memory:")) {
    return join(dirname(databaseUrl.slice("sqlite:".length)), "demo-keys.json");
  }
  return "demo-keys.json";
}

/** `5m=60,15m=60,...`: markets per series; types left out keep their default. */
export function parseDemoCounts(text: string | undefined): Record<MarketType, number> {
  const counts = { ...DEFAULT_DEMO_COUNTS };
  if (!text) return counts;
  for (const part of text.split(",")) {
    const [name, value] = part.split("=");
    const type = parseMarketType(name ?? "");
    const n = Number(value);
    if (!type || !Number.isInteger(n) || n < 0) throw new ConfigError(`demo counts: "${part}" is not TYPE=N`);
    counts[type] = n;
  }
  return counts;
}
