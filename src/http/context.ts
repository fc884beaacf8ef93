import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { KeyService } from "../access/keys.ts";
import type { RateLimiter } from "../access/limiter/limiter.ts";
import { MemoryLimiter } from "../access/limiter/memory.ts";
import { MarketAccess } from "../access/market-access.ts";
import { loadPlans } from "../access/plans.ts";
import { QuotaService } from "../access/quota.ts";
import { OfflineGenerator } from "../backtest/generate/offline.ts";
import { OpenAiCompatibleGenerator } from "../backtest/generate/openai.ts";
import { RunScheduler } from "../backtest/jobs/scheduler.ts";
import { BacktestService } from "../backtest/service.ts";
import { type Config, DEFAULT_CONFIG } from "../config.ts";
import type { Plans } from "../domain/plan.ts";
import { type Clock, systemClock } from "../domain/time.ts";
import type { Store } from "../store/ports/store.ts";
import { Metrics } from "./metrics.ts";
import { BodyBuffers } from "./body-buffers.ts";
import { PageCache } from "./page-cache.ts";
import { PageReaders } from "./page-readers.ts";
import { ReplaySessions, type Sleep } from "./replay.ts";

/** What the app is built from: its dependencies, each with a default merged here and nowhere else. */
export interface AppOptions {
  store: Store;
  clock?: Clock;
  config?: Partial<Config>;
  /** Fastify logger setting; false in tests. */
  logger?: boolean | { level: string };
  /** A logger of the caller's (serve's, with its asynchronous destination); wins over `logger`. */
  loggerInstance?: FastifyBaseLogger;
  /** Default: read from `config.plansFile` over config/plans.json. */
  plans?: Plans;
  /** Default: an in-process limiter owned (and closed) by the app. */
  limiter?: RateLimiter;
  /**
   * Benchmarks only, never reachable from configuration: no authentication and no counting, every
   * request served as an enterprise key would be. The baseline that metering's cost is measured by.
   */
  unmetered?: boolean;
  /** Where the web page's source is (default: the repository's web/); tests give a broken one. */
  webDir?: string;
  /** How a paced replay waits (default setTimeout); tests pass one that moves their clock instead. */
  sleep?: Sleep;
}

const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** What every route gets: the app's dependencies, built once. */
export interface AppContext {
  store: Store;
  clock: Clock;
  config: Config;
  plans: Plans;
  keys: KeyService;
  limiter: RateLimiter;
  /** Whether the app made the limiter (and so closes it). */
  ownsLimiter: boolean;
  access: MarketAccess;
  quota: QuotaService;
  pageCache: PageCache;
  /** Threads that read pages of resolved markets beside this one (none: every page is read here). */
  pageReaders: PageReaders;
  /** Buffers lent to bodies sent once and not kept. */
  bodies: BodyBuffers;
  metrics: Metrics;
  unmetered: boolean;
  /** Backtests: strategies, generation and runs (the app starts and closes its scheduler). */
  backtests: BacktestService;
  /** How a paced replay waits: with `clock`, the time replays run on. */
  sleep: Sleep;
  /** The replays in flight (routes/replay.ts). */
  replays: ReplaySessions;
}

/** Backtests over the store: the generators the configuration names and this process's run scheduler. */
function backtestsOf(store: Store, config: Config, clock: Clock, quota: QuotaService): BacktestService {
  return new BacktestService({
    store,
    quota,
    clock,
    coins: config.coins,
    runLimits: { perKey: config.backtest.runsPerKey, perAccount: config.backtest.runsPerAccount },
    generators: {
      offline: new OfflineGenerator(),
      provider: config.llm === null ? null : new OpenAiCompatibleGenerator(config.llm),
    },
    scheduler: new RunScheduler({
      store,
      clock,
      workers: config.backtest.workers,
      priority: config.backtest.priority,
      leaseMs: config.backtest.leaseMs,
    }),
  });
}

export function buildContext(options: AppOptions): AppContext {
  const config: Config = { ...DEFAULT_CONFIG, ...options.config };
  const clock = options.clock ?? systemClock;
  const plans = options.plans ?? loadPlans(config.plansFile);
  const store = options.store;
  const quota = new QuotaService(store.quota, clock, plans);
  const metrics = new Metrics();
  const pageReaders = new PageReaders(store.url, config.pageReaders, {
    onRead: (kind) => metrics.threadPageReads.inc({ kind }),
  });
  const backtests = backtestsOf(store, config, clock, quota);
  backtests.readAnswersWith((run, strategy, page) => pageReaders.readRun(run, strategy, page));
  return {
    store,
    clock,
    config,
    plans,
    keys: new KeyService(store.keys, clock, plans),
    limiter: options.limiter ?? new MemoryLimiter(),
    ownsLimiter: !options.limiter,
    access: new MarketAccess(store.markets, plans, clock),
    quota,
    pageCache: new PageCache(config.pageCacheBytes),
    pageReaders,
    bodies: new BodyBuffers(),
    metrics,
    unmetered: options.unmetered ?? false,
    backtests,
    sleep: options.sleep ?? realSleep,
    replays: new ReplaySessions(),
  };
}

/** A Fastify instance whose route handlers take their types from the route schemas (TypeBox). */
export type Api = FastifyInstance<
  FastifyInstance["server"],
  FastifyRequest["raw"],
  FastifyReply["raw"],
  FastifyInstance["log"],
  TypeBoxTypeProvider
>;
