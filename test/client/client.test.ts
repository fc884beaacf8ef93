import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { UpdownClient, UpdownError, type RetryInfo } from "../../client/src/index.ts";
import { retryAfterMs } from "../../client/src/timing.ts";
import { encodeBooks } from "../../src/wire/book-codec.ts";
import { isoMicros } from "../../src/domain/time.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { HAND_MARKET } from "../helpers/app.ts";
import { closedPort, ControlledLimiter, serveTestApp, type ServedApp } from "../helpers/client.ts";
import { marketEvents, recordMarket } from "../helpers/recorded-events.ts";

// The client (client/src) against a running server: real HTTP over loopback, real fetch, real SQLite.
// Waits between attempts go through the client's injected `sleep`, which records the delay (and, for
// rate limits, advances the app's clock by it), so nothing here waits for real time to pass.

/** Rejects with the UpdownError `promise` rejects with, failing the test when it resolves. */
async function failure(promise: Promise<unknown>): Promise<UpdownError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof UpdownError, `an UpdownError, not ${String(err)}`);
    return err;
  }
  assert.fail("expected the call to fail");
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** A sleep that records what it was asked to wait and returns at once. */
function recordingSleep(also: (ms: number) => void = () => {}) {
  const slept: number[] = [];
  return {
    slept,
    sleep: async (ms: number) => {
      slept.push(ms);
      also(ms);
    },
  };
}

/** 2026-07-23T22:00:00Z: a resolved 1h market two hours before the test clock. */
const LONG_START = 1784844000;

/** A resolved hour recorded every second (3600 snapshots, every tenth with books): a long market. */
async function insertLongMarket(store: Store): Promise<string> {
  const slug = `btc-updown-1h-${LONG_START}`;
  const m = await store.markets.upsertMarket({
    ...HAND_MARKET,
    slug,
    coin: "btc",
    marketType: "1h",
    marketId: "4000001",
    conditionId: `0x${"ab".repeat(32)}`,
    startTime: LONG_START,
    endTime: LONG_START + 3600,
    resolvedAt: LONG_START + 3620,
  });
  const book = { bids: [{ price: 0.5, size: 10 }], asks: [{ price: 0.52, size: 4 }] };
  const rows = Array.from({ length: 3600 }, (_, i) => ({
    time: (LONG_START + i) * 1e6 + 250_000,
    coinPrice: 65_000 + i / 10,
    priceUp: 0.5 + (i % 40) / 100,
    priceDown: 0.5 - (i % 40) / 100,
    books: i % 10 === 0 ? encodeBooks(book, book) : null,
  }));
  await store.markets.insertSnapshots(m.key, rows);
  return slug;
}

describe("client: paging", () => {
  let s: ServedApp;
  let client: UpdownClient;
  before(async () => {
    s = await serveTestApp();
    await insertLongMarket(s.t.store);
    client = new UpdownClient({ baseUrl: s.baseUrl, apiKey: s.t.key });
  });
  after(() => s.close());

  /** The longest stored market and all its snapshot times from the store, oldest first. */
  async function longestMarket() {
    const { markets } = await s.t.store.markets.listMarkets({ limit: 1000, offset: 0 });
    const longest = markets.reduce((a, b) => (b.snapshotCount > a.snapshotCount ? b : a));
    const rows = await s.t.store.markets.snapshotPage(longest.key, {
      order: "asc",
      limit: longest.snapshotCount,
      offset: 0,
      books: false,
    });
    return { slug: longest.slug, times: rows.map((r) => isoMicros(r.time)) };
  }

  test("a long market's snapshots, every one exactly once, in pages of 700 and of the default size", async () => {
    const { slug, times } = await longestMarket();
    assert.ok(times.length > 3000, `a long market (${times.length} snapshots)`);
    const defaultLimit = (await client.snapshotsPage(slug, { limit: undefined })).limit;
    for (const limit of [700, undefined]) {
      const before = s.seen.length;
      const got = (await all(client.snapshots(slug, { limit }))).map((x) => x.time);
      assert.equal(got.length, times.length);
      assert.equal(new Set(got).size, got.length, "no snapshot twice");
      assert.deepEqual(got, [...times].reverse(), "newest first, as the API pages them");
      const pages = Math.ceil(times.length / (limit ?? defaultLimit));
      assert.equal(s.seen.length - before, pages, `${pages} requests of ${limit ?? defaultLimit}`);
    }
    const ascending = await all(
      client.snapshots(slug, { limit: 999, order: "asc", include_orderbook: true }),
    );
    assert.deepEqual(
      ascending.map((x) => x.time),
      times,
    );
    const withBooks = ascending.filter((x) => (x.orderbook_up?.bids.length ?? 0) > 0);
    assert.equal(withBooks.length, times.length / 10, "the books asked for, where they were recorded");
  });

  test("a starting offset and a time range are kept across pages; an exact multiple of the page ends on total", async () => {
    const { slug, times } = await longestMarket();
    const fromOffset = await all(client.snapshots(slug, { limit: 500, offset: 1234, order: "asc" }));
    assert.deepEqual(
      fromOffset.map((x) => x.time),
      times.slice(1234),
    );
    const range = times.slice(100, 1100);
    const before = s.seen.length;
    const ranged = await all(
      client.snapshots(slug, { limit: 250, order: "asc", start_time: range[0], end_time: range.at(-1) }),
    );
    assert.deepEqual(
      ranged.map((x) => x.time),
      range,
    );
    assert.equal(s.seen.length - before, 4, "1000 in pages of 250: four requests, no empty fifth");
  });

  test("markets page by offset and limit; breaking out of the loop fetches nothing more", async () => {
    const expected = (await s.t.get("/v1/markets?limit=100"))
      .json()
      .markets.map((m: { slug: string }) => m.slug);
    const slugs = (await all(client.markets({ limit: 3 }))).map((m) => m.slug);
    assert.deepEqual(slugs, expected);
    const btc = await all(client.markets({ coin: "btc", market_type: "5m", limit: 2 }));
    assert.ok(btc.length > 0 && btc.every((m) => m.coin === "btc" && m.market_type === "5m"));
    const before = s.seen.length;
    for await (const market of client.markets({ limit: 2 })) {
      assert.ok(market.slug);
      break;
    }
    assert.equal(s.seen.length - before, 1);
  });

  test("the other paged lists: a market's trades and a key's strategies", async () => {
    let slug = "";
    let most = 0;
    for await (const market of client.markets()) {
      const total = (await client.tradesPage(market.slug, { limit: 1 })).total;
      if (total > most) [slug, most] = [market.slug, total];
    }
    assert.ok(most > 20, `a market with trades (${most})`);
    const page = await client.tradesPage(slug, { limit: 1000 });
    const trades = await all(client.trades(slug, { limit: 7 }));
    assert.equal(trades.length, page.total);
    assert.deepEqual(trades, page.trades);
    const key = await s.t.keyFor("pro");
    const own = new UpdownClient({ baseUrl: s.baseUrl, apiKey: key });
    for (const preset of ["momentum_entry", "quick_scalp", "dip_buying"] as const)
      await own.generateStrategy({ preset });
    const strategies = await all(own.strategies({ limit: 2 }));
    assert.equal(strategies.length, 3);
    assert.deepEqual(await own.strategy(strategies[0].id), strategies[0]);
  });
});

describe("client: every operation answers as the API does", () => {
  let s: ServedApp;
  let client: UpdownClient;
  let slug: string;
  before(async () => {
    s = await serveTestApp({ exchange: true });
    client = new UpdownClient({ baseUrl: s.baseUrl, apiKey: s.t.key });
    slug = (await s.t.get("/v1/markets?resolved=true&coin=btc&limit=1")).json().markets[0].slug;
  });
  after(() => s.close());

  test("single answers equal the API's own (inject) answers", async () => {
    const same = async (path: string, got: unknown) =>
      assert.deepEqual(got, (await s.t.get(path)).json(), path);
    await same(`/v1/markets/${slug}`, await client.market(slug));
    await same(`/v1/markets/${slug}/coverage`, await client.coverage(slug));
    await same(`/v1/markets/${slug}/series?points=16`, await client.marketSeries(slug, { points: 16 }));
    const at = (await client.snapshotsPage(slug, { limit: 1, order: "asc" })).snapshots[0].time;
    await same(
      `/v1/markets/${slug}/snapshots/at?time=${at}&include_orderbook=true`,
      await client.snapshotAt(slug, { time: at, include_orderbook: true }),
    );
    await same(
      `/v1/markets/${slug}/execution-price?outcome=up&side=buy&size=50&time=${at}`,
      await client.executionPrice(slug, { outcome: "up", side: "buy", size: 50, time: at }),
    );
    await same("/v1/btc/spot/latest", await client.latest("btc", "spot"));
    await same(
      "/v1/btc/futures/trades/latest?limit=5",
      await client.latestTrades("btc", "futures", { limit: 5 }),
    );
    await same("/v1/backtest-ai/schema", await client.strategySchema());
    await same("/v1/backtest-ai/quota", await client.backtestQuota());
    const catalog = await client.seriesCatalog();
    assert.deepEqual(catalog, (await s.t.get("/v1/series")).json());
    assert.equal((await client.account()).plan, "pro");
  });

  test("exchange series page through every record of a range", async () => {
    const lists = [
      ["/v1/btc/spot/snapshots", client.depthSnapshots("btc", "spot", { limit: 400 })],
      ["/v1/btc/futures/candles", client.candles("btc", "futures", { limit: 17 })],
      ["/v1/btc/futures/candles?interval=5m", client.candles("btc", "futures", { interval: "5m", limit: 5 })],
      ["/v1/btc/futures/funding-rates", client.fundingRates("btc", { limit: 2 })],
      ["/v1/btc/futures/open-interest", client.openInterest("btc", { limit: 3 })],
      ["/v1/btc/futures/mark-price", client.markPrices("btc", { limit: 500, order: "asc" })],
    ] as const;
    for (const [path, items] of lists) {
      const got = await all<{ time?: string; open_time?: string }>(items);
      const total = (await s.t.get(path)).json().total;
      assert.ok(total > 1, `${path} has records`);
      assert.equal(got.length, total, path);
      assert.equal(new Set(got.map((x) => x.time ?? x.open_time)).size, total, `${path}: each once`);
    }
  });
});

describe("client: typed errors", () => {
  let s: ServedApp;
  const answered: { status: number; requestId: string | null }[] = [];
  /** The real fetch, watched: what X-Request-Id each answer carried. */
  const watchingFetch: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    answered.push({ status: res.status, requestId: res.headers.get("x-request-id") });
    return res;
  };
  const clientWith = (apiKey: string | undefined) =>
    new UpdownClient({ baseUrl: s.baseUrl, apiKey, fetch: watchingFetch, maxRetries: 0 });
  before(async () => {
    s = await serveTestApp();
  });
  after(() => s.close());

  async function check(call: Promise<unknown>, status: number, code: string) {
    const seenBefore = s.seen.length;
    const err = await failure(call);
    assert.equal(err.status, status);
    assert.equal(err.code, code);
    assert.ok(err.message.length > 10, err.message);
    assert.equal(err.requestId, answered.at(-1)?.requestId, "the X-Request-Id the server sent");
    assert.match(err.requestId ?? "", /^[0-9a-f-]{36}$/);
    assert.equal(s.seen.length - seenBefore, 1, "a 4xx is not retried");
    return err;
  }

  test("401, 403, 404 and 400 carry the envelope's code, message and details, and the request id", async () => {
    const pro = clientWith(s.t.key);
    await check(clientWith(undefined).account(), 401, "UNAUTHORIZED");
    await check(clientWith("ud_wrong").markets().next(), 401, "UNAUTHORIZED");
    const starter = clientWith(await s.t.keyFor("starter"));
    const plan = await check(
      starter.generateStrategy({ preset: "quick_scalp" }),
      403,
      "BACKTEST_AI_REQUIRED",
    );
    assert.deepEqual(plan.details, { required_plan: "pro" });
    await check(pro.market("btc-updown-5m-1"), 404, "RESOURCE_NOT_FOUND");
    const invalid = await check(pro.marketsPage({ limit: 0 }), 400, "VALIDATION_ERROR");
    assert.equal((invalid.details as { parameter?: string }).parameter, "limit");
    assert.equal(invalid.retryAfterSeconds, null);
    const badBody = await check(pro.runBacktest({ coin: "btc" }), 400, "VALIDATION_ERROR");
    assert.ok(badBody.isRateLimited === false);
  });

  test("the caller's own X-Request-Id comes back on the error", async () => {
    const err = await failure(
      clientWith(s.t.key).request("GET", "/v1/markets/nope", { headers: { "X-Request-Id": "trace.42" } }),
    );
    assert.equal(err.requestId, "trace.42");
    assert.equal(s.seen.at(-1)?.headers["x-request-id"], "trace.42");
  });

  test("the key travels in X-API-Key, never in the URL", async () => {
    await clientWith(s.t.key).account();
    const last = s.seen.at(-1);
    assert.equal(last?.headers["x-api-key"], s.t.key);
    assert.ok(!last?.url.includes(s.t.key));
  });

  test("no server there: NETWORK after the retries", async () => {
    const retries: RetryInfo[] = [];
    const { sleep, slept } = recordingSleep();
    const nowhere = new UpdownClient({
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      maxRetries: 2,
      sleep,
      onRetry: (info) => retries.push(info),
    });
    const err = await failure(nowhere.account());
    assert.equal(err.code, "NETWORK");
    assert.equal(err.status, null);
    assert.equal(err.requestId, null);
    assert.equal(retries.length, 2);
    assert.equal(slept.length, 2);
    assert.ok(retries.every((r) => r.error instanceof UpdownError && r.error.code === "NETWORK"));
  });
});

describe("client: retries", () => {
  let s: ServedApp;
  let limiter: ControlledLimiter;
  let slug: string;
  before(async () => {
    limiter = new ControlledLimiter();
    s = await serveTestApp({ limiter });
    slug = (await s.t.get("/v1/markets?limit=1")).json().markets[0].slug;
  });
  after(() => s.close());

  test("a 429 with Retry-After is waited out (on the app's clock) and the retry succeeds", async () => {
    const { key } = await s.t.keys.create({ plan: "enterprise", account: "tiny-minute", perMinuteLimit: 1 });
    const retries: RetryInfo[] = [];
    const { sleep, slept } = recordingSleep((ms) => s.t.clock.advance(ms * 1000));
    const client = new UpdownClient({
      baseUrl: s.baseUrl,
      apiKey: key,
      sleep,
      onRetry: (r) => retries.push(r),
    });
    await client.market(slug);
    const secondOfMinute = Math.floor(s.t.clock.nowMicros() / 1e6) % 60;
    const before = s.seen.length;
    const market = await client.market(slug);
    assert.equal(market.slug, slug);
    assert.deepEqual(slept, [(60 - secondOfMinute) * 1000], "the wait is the server's Retry-After");
    assert.equal(retries.length, 1);
    assert.equal(retries[0].status, 429);
    assert.equal((retries[0].error as UpdownError).code, "RATE_LIMIT_EXCEEDED");
    assert.equal((retries[0].error as UpdownError).retryAfterSeconds, 60 - secondOfMinute);
    assert.equal(s.seen.length - before, 2, "the refused request and its retry");
  });

  test("a Retry-After beyond retryMaxMs fails at once with the 429 (the day window)", async () => {
    const { key } = await s.t.keys.create({ plan: "enterprise", account: "tiny-day", perDayLimit: 1 });
    const { sleep, slept } = recordingSleep();
    const client = new UpdownClient({ baseUrl: s.baseUrl, apiKey: key, sleep });
    await client.market(slug);
    const err = await failure(client.market(slug));
    assert.equal(err.code, "RATE_LIMIT_EXCEEDED");
    assert.equal(err.status, 429);
    assert.ok(err.isRateLimited);
    assert.equal((err.details as { window?: string }).window, "day");
    assert.ok((err.retryAfterSeconds ?? 0) > 30, `hours until midnight: ${err.retryAfterSeconds}`);
    assert.deepEqual(slept, []);
  });

  test("a 503 (backing service unreachable) is retried after its Retry-After and succeeds once it is back", async () => {
    limiter.failure = "ECONNREFUSED";
    const { sleep, slept } = recordingSleep(() => (limiter.failure = null));
    const client = new UpdownClient({ baseUrl: s.baseUrl, apiKey: s.t.key, sleep });
    const before = s.seen.length;
    try {
      assert.equal((await client.market(slug)).slug, slug);
    } finally {
      limiter.failure = null;
    }
    assert.deepEqual(slept, [5000], "Retry-After: 5");
    assert.equal(s.seen.length - before, 2);
  });

  test("a 503 that lasts: maxRetries retries, then SERVICE_UNAVAILABLE", async () => {
    limiter.failure = "ECONNREFUSED";
    const { sleep, slept } = recordingSleep();
    const client = new UpdownClient({ baseUrl: s.baseUrl, apiKey: s.t.key, sleep, maxRetries: 3 });
    const before = s.seen.length;
    try {
      const err = await failure(client.market(slug));
      assert.equal(err.code, "SERVICE_UNAVAILABLE");
      assert.equal(err.status, 503);
      assert.equal(err.retryAfterSeconds, 5);
    } finally {
      limiter.failure = null;
    }
    assert.deepEqual(slept, [5000, 5000, 5000]);
    assert.equal(s.seen.length - before, 4);
  });

  test("a 500 without Retry-After backs off exponentially with full jitter, capped at retryMaxMs", async () => {
    limiter.failure = "plain";
    try {
      const half = recordingSleep();
      const client = new UpdownClient({
        baseUrl: s.baseUrl,
        apiKey: s.t.key,
        sleep: half.sleep,
        random: () => 0.5,
        retryBaseMs: 100,
        maxRetries: 4,
      });
      assert.equal((await failure(client.market(slug))).code, "INTERNAL_ERROR");
      assert.deepEqual(half.slept, [50, 100, 200, 400]);
      const capped = recordingSleep();
      const near1 = new UpdownClient({
        baseUrl: s.baseUrl,
        apiKey: s.t.key,
        sleep: capped.sleep,
        random: () => 0.999,
        retryBaseMs: 100,
        retryMaxMs: 150,
        maxRetries: 3,
      });
      await failure(near1.market(slug));
      assert.deepEqual(capped.slept, [99, 149, 149]);
    } finally {
      limiter.failure = null;
    }
  });

  test("a POST's retries keep one Idempotency-Key: the server stores one strategy and charges once", async () => {
    const key = await s.t.keyFor("pro");
    let posts = 0;
    /** The first POST reaches the server and is answered, but the answer is lost on the way back. */
    const losingFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method === "POST" && posts++ === 0) {
        await res.body?.cancel();
        throw new TypeError("fetch failed: connection reset");
      }
      return res;
    };
    const { sleep } = recordingSleep();
    const client = new UpdownClient({ baseUrl: s.baseUrl, apiKey: key, fetch: losingFetch, sleep });
    const before = s.seen.length;
    const { strategy, quota } = await client.generateStrategy({ preset: "momentum_entry" });
    const sent = s.seen.slice(before).map((r) => r.headers["idempotency-key"]);
    assert.equal(sent.length, 2);
    assert.equal(sent[0], sent[1], "the retry sent the same key");
    assert.match(String(sent[0]), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(quota.used, 1, "charged once");
    const stored = await client.strategiesPage();
    assert.deepEqual(
      stored.strategies.map((x) => x.id),
      [strategy.id],
    );

    await client.generateStrategy({ preset: "quick_scalp" }, { idempotencyKey: "mine-1" });
    assert.equal(s.seen.at(-1)?.headers["idempotency-key"], "mine-1");
    await client.generateStrategy({ preset: "dip_buying" });
    assert.notEqual(s.seen.at(-1)?.headers["idempotency-key"], sent[0], "a new call, a new key");
    assert.equal(s.seen.at(-1)?.headers["content-type"], "application/json");
  });

  test("runBacktest and waitForRun: a queued run is polled until it is complete", async () => {
    const key = await s.t.keyFor("pro");
    const client = new UpdownClient({
      baseUrl: s.baseUrl,
      apiKey: key,
      sleep: () => new Promise((resolve) => setImmediate(resolve)),
    });
    const { strategy } = await client.generateStrategy({ preset: "momentum_entry" });
    const started = await client.runBacktest({
      strategy_id: strategy.id,
      coin: "btc",
      market_type: "5m",
      market_count: 2,
      wait: 0,
    });
    assert.ok(["queued", "running", "complete"].includes(started.run.status));
    const done = await client.waitForRun(started.run.id, { pollMs: 1 });
    assert.equal(done.run.status, "complete");
    assert.equal(done.run.id, started.run.id);
    assert.ok(done.aggregate !== null);
    assert.deepEqual(done, await client.backtestRun(started.run.id));
  });

  test("a run's results and trades by page, and PolyHistorical's replay", async () => {
    const client = new UpdownClient({ baseUrl: s.baseUrl, apiKey: await s.t.keyFor("pro") });
    const done = await client.runStrategy({
      preset: "momentum_entry",
      coin: "btc",
      market_type: "5m",
      market_count: 3,
    });
    assert.equal(done.run.status, "complete");
    const id = done.run.id;
    const second = await client.backtestRun(id, { query: { results_limit: 1, results_offset: 1 } });
    assert.deepEqual(second.results_page, { total: done.results.length, limit: 1, offset: 1 });
    assert.deepEqual(second.results, done.results.slice(1, 2));
    for (const result of done.results) {
      const trades = [];
      for await (const trade of client.runTrades(id, result.slug, { limit: 1 })) trades.push(trade);
      assert.deepEqual(trades, result.trades, result.slug);
    }
    const slug = done.results[0]!.slug;
    const replay = await client.replayStrategy({
      marketSlug: slug,
      side: "UP",
      entryConditions: [{ field: "price_up", operator: "<", value: 0.9 }],
      exitConditions: [],
      positionSize: 10,
    });
    assert.ok("market" in replay.data, "finished within wait");
    assert.equal(replay.data.market.slug, slug);
  });
});

test("Retry-After is read as delta-seconds or an HTTP date; anything else is ignored", () => {
  const now = Date.parse("2026-07-24T00:20:34.500Z");
  assert.equal(retryAfterMs("26", now), 26_000);
  assert.equal(retryAfterMs(" 0 ", now), 0);
  assert.equal(retryAfterMs("Fri, 24 Jul 2026 00:21:00 GMT", now), 25_500);
  assert.equal(retryAfterMs("Fri, 24 Jul 2026 00:20:00 GMT", now), 0, "a date past is no wait");
  for (const odd of [null, "", "-5", "1.5", "soon"]) assert.equal(retryAfterMs(odd, now), null, String(odd));
});

describe("client: abort and timeouts", () => {
  let s: ServedApp;
  let limiter: ControlledLimiter;
  let slug: string;
  before(async () => {
    limiter = new ControlledLimiter();
    s = await serveTestApp({ limiter });
    slug = (await s.t.get("/v1/markets?limit=1")).json().markets[0].slug;
  });
  after(() => s.close());

  test("an abort during a slow answer stops the call at once; nothing more is sent", async () => {
    const client = new UpdownClient({ baseUrl: s.baseUrl, apiKey: s.t.key });
    const gate = limiter.hold();
    const before = s.seen.length;
    const controller = new AbortController();
    try {
      const call = client.market(slug, { signal: controller.signal });
      await gate.entered;
      controller.abort(new Error("user left"));
      const err = await failure(call);
      assert.equal(err.code, "ABORTED");
      assert.equal((err.cause as Error).message, "user left");
    } finally {
      gate.release();
    }
    await client.account();
    assert.equal(s.seen.length - before, 2, "the aborted request, then the next call's: no retry between");
    assert.equal((await failure(client.market(slug, { signal: controller.signal }))).code, "ABORTED");
    assert.equal(s.seen.length - before, 2, "an aborted signal sends nothing");
  });

  test("an abort in the middle of a page stops the iterator at the next item, with no request more", async () => {
    const client = new UpdownClient({ baseUrl: s.baseUrl, apiKey: s.t.key });
    const controller = new AbortController();
    const before = s.seen.length;
    let seen = 0;
    const err = await failure(
      (async () => {
        for await (const _ of client.snapshots(slug, { limit: 10 }, { signal: controller.signal })) {
          if (++seen === 15) controller.abort();
        }
      })(),
    );
    assert.equal(err.code, "ABORTED");
    assert.equal(seen, 15, "not one item after the abort");
    assert.equal(s.seen.length - before, 2);
  });

  test("an abort during a backoff wait stops the wait at once, with the platform's sleep or an injected one", async () => {
    limiter.failure = "ECONNREFUSED";
    try {
      for (const sleep of [undefined, () => new Promise<void>(() => {})]) {
        const controller = new AbortController();
        const client = new UpdownClient({
          baseUrl: s.baseUrl,
          apiKey: s.t.key,
          sleep,
          onRetry: () => controller.abort(),
        });
        const before = s.seen.length;
        const err = await failure(client.market(slug, { signal: controller.signal }));
        assert.equal(err.code, "ABORTED");
        assert.equal(s.seen.length - before, 1, "no request after the abort");
      }
    } finally {
      limiter.failure = null;
    }
  });

  test("an attempt that outlasts timeoutMs is a TIMEOUT, retried like a network failure", async () => {
    const retries: RetryInfo[] = [];
    const { sleep } = recordingSleep();
    const client = new UpdownClient({
      baseUrl: s.baseUrl,
      apiKey: s.t.key,
      timeoutMs: 30_000,
      maxRetries: 1,
      sleep,
      onRetry: (r) => retries.push(r),
    });
    const gate = limiter.hold();
    try {
      const err = await failure(client.market(slug, { timeoutMs: 150 }));
      assert.equal(err.code, "TIMEOUT");
      assert.equal(err.status, null);
      assert.equal(retries.length, 1);
      assert.equal((retries[0].error as UpdownError).code, "TIMEOUT");
    } finally {
      gate.release();
    }
    assert.equal((await client.market(slug)).slug, slug, "the client's own timeout (30 s) lets it through");
  });
});

test("a slug of . or .. is refused before any request: it would name another path", async () => {
  const client = new UpdownClient({
    baseUrl: `http://127.0.0.1:${await closedPort()}`,
    apiKey: "ud_x",
    maxRetries: 0,
  });
  for (const slug of ["..", "."]) {
    await assert.rejects(() => client.market(slug), TypeError, slug);
    await assert.rejects(() => client.snapshotsPage(slug), TypeError, slug);
  }
  // Other dots, and escapes, are a segment's own characters, sent encoded (here to a port nothing listens on).
  for (const slug of ["...", "%2e%2e", "a/.."])
    await assert.rejects(() => client.market(slug), UpdownError, slug);
});

describe("client: a market's events", () => {
  let served: ServedApp;
  let client: UpdownClient;
  const events = marketEvents(HAND_MARKET, { changes: 40 });
  before(async () => {
    served = await serveTestApp({ seed: false });
    await recordMarket(served.t.store, HAND_MARKET, events);
    client = new UpdownClient({ baseUrl: served.baseUrl, apiKey: served.t.key });
  });
  after(() => served.close());

  test("events() pages through every event in the range, each once, in the order asked", async () => {
    const asc = await all(client.events(HAND_MARKET.slug, { order: "asc", limit: 7 }));
    assert.deepEqual(
      asc,
      events.map((e) => ({ ...e.message, received_at: isoMicros(e.receivedUs) })),
    );
    assert.equal(served.seen.length, Math.ceil(events.length / 7));
    const trades = await all(client.events(HAND_MARKET.slug, { types: "last_trade_price" }));
    assert.deepEqual(
      trades.map((e) => e.received_at),
      events
        .filter((e) => e.type === "last_trade_price")
        .map((e) => isoMicros(e.receivedUs))
        .reverse(),
    );
    const book = await client.bookAt(HAND_MARKET.slug, { time: isoMicros(events[1].receivedUs) });
    assert.equal(book.last_event_type, "book");
  });
});
