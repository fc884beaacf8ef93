import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { KeyService } from "../../src/access/keys.ts";
import { type Config, DEFAULT_CONFIG } from "../../src/config.ts";
import type { RateLimiter } from "../../src/access/limiter/limiter.ts";
import { loadPlans } from "../../src/access/plans.ts";
import type { PlanName } from "../../src/domain/api-key.ts";
import { encodeBooks } from "../../src/wire/book-codec.ts";
import type { Plans } from "../../src/domain/plan.ts";
import type { Market } from "../../src/domain/market.ts";
import { ManualClock } from "../../src/domain/time.ts";
import { buildApp } from "../../src/http/app.ts";
import { seedDemo } from "../../src/demo/seed.ts";
import { SqliteStore } from "../../src/store/dialects/sqlite/sqlite-store.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { checkAnswersOf } from "./contract.ts";
import { SEEDED_IMAGES_VARIABLE } from "./paths.ts";
import { openScratchStore, openSeededScratchStore, postgresTestUrl } from "./postgres.ts";

/**
 * The defaults, with backtest runs scheduled as requests are (BACKTEST_PRIORITY=normal). `npm test` runs
 * six files side by side on two cores: at the default low priority a run over PostgreSQL, on a worker
 * thread, got about 1 % of a core while they ran, and took minutes instead of a second (seen in CI: a
 * test of the fair queue waited out its 180 s). Yielding to a busy machine is what `low` is for; these
 * tests check what a run does, not when the machine lets it.
 */
export const TEST_CONFIG: Config = {
  ...DEFAULT_CONFIG,
  backtest: { ...DEFAULT_CONFIG.backtest, priority: "normal" },
};

/** The rate-limit headers every answer to a valid key carries (DESIGN 3.1). */
export const LIMIT_HEADERS = [
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "x-tier",
  "ratelimit-policy",
  "ratelimit",
];

/** 2026-07-24T00:20:34Z: inside a 5m, 15m and 1h market, so each series has a live one. */
export const ANCHOR = 1784852434;

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  clock: ManualClock;
  keys: KeyService;
  key: string;
  keyFor(plan: PlanName): Promise<string>;
  /** Answers outside the API document so far (close() fails while there are any). */
  contractMismatches: readonly string[];
  get(url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * The store API tests run over: an in-memory SQLite database, or with UPDOWN_TEST_STORE=postgres
 * (set by test/helpers/api-on-postgres.ts) a fresh schema on the PostgreSQL server of DATABASE_URL.
 */
export async function openTestStore(): Promise<Store> {
  if (process.env.UPDOWN_TEST_STORE === "postgres") {
    const url = postgresTestUrl();
    if (!url) throw new Error("UPDOWN_TEST_STORE=postgres needs DATABASE_URL=postgres://...");
    return openScratchStore(url);
  }
  const store = new SqliteStore(":memory:");
  await store.migrate();
  return store;
}

/** A fresh in-memory database with a little demo data, the app over it, and a pro key. */
export interface TestAppOptions {
  seed?: boolean;
  /** Seed the exchange demo data too (slower; only the exchange tests need it). */
  exchange?: boolean;
  store?: Store;
  /** Default: the app's own in-process limiter. */
  limiter?: RateLimiter;
  plans?: Plans;
  /** Default: ANCHOR and 123456 µs. */
  clock?: ManualClock;
  config?: Partial<Config>;
}

/** The demo data makeTestApp seeds: two coins, a few markets of each length, the exchange's if asked. */
async function seedTestDemo(store: Store, exchange: boolean): Promise<void> {
  await seedDemo(store, {
    seed: 7,
    anchor: ANCHOR,
    counts: { "5m": 3, "15m": 2, "1h": 1, "4h": 1, "24h": 0 },
    coins: ["btc", "eth"],
    exchange,
  });
}

/** The bytes of in-memory SQLite databases seeded in this process, by the name of what was seeded. */
const seededImages = new Map<string, Promise<Uint8Array>>();

/**
 * The bytes `seed` writes, seeded here, or read from the run's folder (SEEDED_IMAGES_VARIABLE) when
 * another process of the run left them there under `name`.
 */
async function seededImage(name: string, seed: (store: Store) => Promise<void>): Promise<Uint8Array> {
  const folder = process.env[SEEDED_IMAGES_VARIABLE];
  const file = folder ? join(folder, `${name}.sqlite`) : null;
  if (file !== null && existsSync(file)) return readFileSync(file);
  const seeded = new SqliteStore(":memory:");
  await seeded.migrate();
  await seed(seeded);
  const bytes = seeded.db.serialize();
  await seeded.close();
  if (file !== null) {
    // Written whole under a name of its own, then renamed: a reader never sees part of it.
    const part = `${file}.${process.pid}`;
    writeFileSync(part, bytes);
    renameSync(part, file);
  }
  return bytes;
}

/**
 * A new store holding what `seed` writes, `name` naming it (one name, one seed function, in the whole
 * suite). Seeding costs about a second of CPU, and a test file builds many apps, so over SQLite it is
 * done once a process, and under `npm test` once a run: each store is a copy of the seeded database's
 * bytes (SQLite's serialize and deserialize), as if seeded again. Over PostgreSQL each store is seeded
 * (test/helpers/postgres.ts copies a seeded template database when the run provides one).
 */
export async function openSeededStore(name: string, seed: (store: Store) => Promise<void>): Promise<Store> {
  if (process.env.UPDOWN_TEST_STORE === "postgres") {
    const url = postgresTestUrl();
    if (!url) throw new Error("UPDOWN_TEST_STORE=postgres needs DATABASE_URL=postgres://...");
    return openSeededScratchStore(url, name, seed);
  }
  let image = seededImages.get(name);
  if (image === undefined) {
    image = seededImage(name, seed);
    seededImages.set(name, image);
  }
  const store = new SqliteStore(":memory:");
  store.db.deserialize(await image);
  await store.migrate();
  return store;
}

/** A new store holding what seedTestDemo seeds (openSeededStore). */
export function openSeededTestStore(exchange = false): Promise<Store> {
  return openSeededStore(`demo-${exchange ? "exchange" : "plain"}`, (store) => seedTestDemo(store, exchange));
}

export async function makeTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const seed = options.seed !== false;
  let store: Store;
  if (options.store) {
    store = options.store;
    if (seed) await seedTestDemo(store, options.exchange ?? false);
  } else {
    store = seed ? await openSeededTestStore(options.exchange ?? false) : await openTestStore();
  }
  const clock = options.clock ?? new ManualClock(ANCHOR * 1e6 + 123_456);
  const plans = options.plans ?? loadPlans();
  const config = { ...TEST_CONFIG, ...options.config };
  const app = await buildApp({ store, clock, plans, limiter: options.limiter, config });
  const contract = checkAnswersOf(app);
  const keys = new KeyService(store.keys, clock, plans);
  // Each test key has its own account, so a test never meets the keys-per-account limit by accident.
  let accounts = 0;
  const keyFor = async (plan: PlanName) => (await keys.create({ plan, account: `test-${++accounts}` })).key;
  const key = await keyFor("pro");
  return {
    app,
    store,
    clock,
    keys,
    key,
    keyFor,
    contractMismatches: contract.mismatches,
    get: (url, headers = {}) => app.inject({ method: "GET", url, headers: { "x-api-key": key, ...headers } }),
    close: async () => {
      await app.close();
      await store.close();
      contract.verify();
    },
  };
}

/** A resolved market with hand-written values, for byte-for-byte checks. */
export const HAND_MARKET: Market = {
  slug: "sol-updown-15m-1784851200",
  polymarketSlug: null,
  coin: "sol",
  marketType: "15m",
  marketId: "3047973",
  eventId: "901234",
  startTime: 1784851200,
  endTime: 1784852100,
  coinPriceStart: 150.125,
  coinPriceEnd: 150.5,
  conditionId: "0x36cb924e956b2d13bcafe194cb4c59fbd13d3cccbf1368b081d07924ab20f329",
  clobTokenUp: "113284799581609751589891550166136992389699845333635525538167662371764318518311",
  clobTokenDown: "48265563723288791013647874716778794965875981985781900232388978043327398639215",
  winner: "Up",
  finalVolume: 87923.58,
  finalLiquidity: 12000.5,
  resolvedAt: 1784852118,
  createdAt: 1784764800_000001,
  updatedAt: 1784852118_178216,
  settlement: { source: "chainlink", lookbackS: null },
  feeSchedule: { rate: 0.07, exponent: 1, takerOnly: true, rebateRate: 0.2 },
};

/** Two seconds of HAND_MARKET: the second one without recorded books. */
export async function insertHandMarket(store: Store): Promise<void> {
  const m = await store.markets.upsertMarket(HAND_MARKET);
  const up = {
    // Upstream order (worst first) on purpose: the codec stores best first.
    bids: [
      { price: 0.5, size: 10 },
      { price: 0.51, size: 120.5 },
    ],
    asks: [
      { price: 0.54, size: 3 },
      { price: 0.53, size: 7.25 },
    ],
  };
  const down = {
    bids: [
      { price: 0.47, size: 7.25 },
      { price: 0.46, size: 3 },
    ],
    asks: [
      { price: 0.49, size: 120.5 },
      { price: 0.5, size: 10 },
    ],
  };
  await store.markets.insertSnapshots(m.key, [
    {
      time: 1784851200_000000,
      coinPrice: 150.125,
      priceUp: 0.52,
      priceDown: 0.48,
      books: encodeBooks(up, down),
    },
    { time: 1784851201_500000, coinPrice: 150.13, priceUp: 0.525, priceDown: 0.475, books: null },
  ]);
}
