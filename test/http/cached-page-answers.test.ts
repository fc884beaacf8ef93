import assert from "node:assert/strict";
import http, { type IncomingHttpHeaders } from "node:http";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { pino } from "pino";
import type { FastifyInstance } from "fastify";
import { KeyService } from "../../src/access/keys.ts";
import type { RateLimiter } from "../../src/access/limiter/limiter.ts";
import { loadPlans } from "../../src/access/plans.ts";
import type { Plans } from "../../src/domain/plan.ts";
import { ManualClock } from "../../src/domain/time.ts";
import { buildApp } from "../../src/http/app.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { ANCHOR, openSeededTestStore } from "../helpers/app.ts";
import { openRedisLimiter, SKIP_WITHOUT_REDIS } from "../helpers/redis.ts";

// A repeated request for a cached page is answered before Fastify routes it (src/http/cached-page-answers.ts).
// Each answer taken there must be the app's own answer, header for header and byte for byte, and
// everything else must reach the app as if the shortcut were not there: counted once, answered the same.

/** A resolved market of the test data: its pages are cached from their second request. */
const PAGE = "/v1/markets/btc-updown-5m-1784851800/snapshots?include_orderbook=true&limit=20";
const PAGE_NO_BOOKS = "/v1/markets/btc-updown-5m-1784851800/snapshots?limit=20&order=asc";

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Headers a socket's answer carries and an injected one does not, or that differ by the instant only. */
const TRANSPORT_HEADERS = new Set(["date", "connection", "keep-alive"]);

/** A plan set whose starter plan opens only the newest BTC 5m market (the test data has three). */
function narrowStarterPlan(): Plans {
  const plans = loadPlans();
  const starter = plans.starter;
  return {
    ...plans,
    starter: { ...starter, history: { ...starter.history, btc: { ...starter.history.btc, "5m": 1 } } },
  };
}

class Served {
  app!: FastifyInstance;
  store!: Store;
  keys!: KeyService;
  origin = "";
  readonly clock = new ManualClock(ANCHOR * 1e6 + 123_456);
  readonly lines: Record<string, unknown>[] = [];

  async start(limiter?: RateLimiter): Promise<void> {
    this.store = await openSeededTestStore();
    const plans = narrowStarterPlan();
    const lines = this.lines;
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split("\n")) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    this.app = await buildApp({
      store: this.store,
      clock: this.clock,
      plans,
      limiter,
      loggerInstance: pino({ level: "info" }, sink),
    });
    this.keys = new KeyService(this.store.keys, this.clock, plans);
    await this.app.listen({ host: "127.0.0.1", port: 0 });
    const address = this.app.server.address();
    if (!address || typeof address === "string") throw new Error("no address");
    this.origin = `http://127.0.0.1:${address.port}`;
  }

  async key(
    plan: "starter" | "pro" | "enterprise",
    perMinuteLimit?: number,
  ): Promise<{ key: string; id: string }> {
    const made = await this.keys.create({
      plan,
      account: `cached-${this.lines.length}-${Math.random()}`,
      perMinuteLimit,
    });
    return { key: made.key, id: made.record.id };
  }

  /** A request over a socket, as a client sends it: the bytes of the answer as they came. */
  raw(path: string, headers: Record<string, string>, method = "GET", body?: string): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      const req = http.request(this.origin + path, { method, headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  /** The same request through the app itself (inject never passes the socket's listener). */
  async injected(path: string, headers: Record<string, string>): Promise<RawAnswer> {
    const res = await this.app.inject({ method: "GET", url: path, headers });
    return { status: res.statusCode, headers: res.headers as IncomingHttpHeaders, body: res.rawPayload };
  }

  async metric(series: string): Promise<number> {
    const text = (await this.app.inject({ url: "/metrics" })).body;
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  }

  direct(): Promise<number> {
    return this.metric("updown_page_cache_direct_answers_total");
  }

  /** Asks until the page is cached and remembered (its second answer), then once more: taken directly. */
  async warm(path: string, headers: Record<string, string>): Promise<RawAnswer> {
    for (let i = 0; i < 2; i++) assert.equal((await this.raw(path, headers)).status, 200);
    const before = await this.direct();
    const answer = await this.raw(path, headers);
    assert.equal(await this.direct(), before + 1, `${path} ${JSON.stringify(headers)}: answered directly`);
    return answer;
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.store.close();
  }
}

/** Every header but the transport's, the limit headers apart (they count this request). */
function headersOf(a: RawAnswer): Record<string, unknown> {
  return Object.fromEntries(Object.entries(a.headers).filter(([name]) => !TRANSPORT_HEADERS.has(name)));
}

/** The remaining counts of a `RateLimit` field, by window. */
function remainingOf(field: unknown): Record<string, number> {
  return Object.fromEntries(
    String(field)
      .split(", ")
      .map((item) => {
        const [name, r] = item.split(";");
        return [name, Number(r.slice(2))];
      }),
  );
}

/** The direct answer `a` against the app's answer `b` to the next same request: equal but one count. */
function assertSameAnswer(a: RawAnswer, b: RawAnswer): void {
  assert.equal(a.status, b.status);
  assert.ok(a.body.equals(b.body), "the same bytes");
  const [ha, hb] = [headersOf(a), headersOf(b)];
  assert.deepEqual(Object.keys(ha).sort(), Object.keys(hb).sort());
  for (const name of Object.keys(ha)) {
    if (name === "x-ratelimit-remaining" || name === "ratelimit") continue;
    assert.equal(ha[name], hb[name], name);
  }
  const [ra, rb] = [remainingOf(ha.ratelimit), remainingOf(hb.ratelimit)];
  assert.deepEqual(Object.keys(ra), ['"minute"', '"day"']);
  for (const w of Object.keys(ra))
    assert.equal(ra[w] - 1, rb[w], `the next request counted once more in ${w}`);
  if (ha["x-ratelimit-remaining"] !== "unlimited") {
    assert.equal(Number(ha["x-ratelimit-remaining"]) - 1, Number(hb["x-ratelimit-remaining"]));
  }
}

describe("cached pages answered before routing", () => {
  const s = new Served();
  before(() => s.start());
  after(() => s.close());

  test("the app's answer, header for header and byte for byte, in every encoding, with and without books", async () => {
    const { key } = await s.key("pro");
    for (const path of [PAGE, PAGE_NO_BOOKS]) {
      for (const encoding of [null, "br", "gzip", "zstd"]) {
        const headers: Record<string, string> = { "x-api-key": key, "x-request-id": "same-request" };
        if (encoding !== null) headers["accept-encoding"] = encoding;
        const direct = await s.warm(path, headers);
        assert.equal(direct.headers["content-encoding"], encoding ?? undefined);
        assertSameAnswer(direct, await s.injected(path, headers));
      }
    }
  });

  test("a key in Authorization: Bearer is taken as in X-API-Key", async () => {
    const { key } = await s.key("enterprise");
    const headers = { authorization: `Bearer ${key}`, "x-request-id": "bearer" };
    assertSameAnswer(await s.warm(PAGE, headers), await s.injected(PAGE, headers));
  });

  test("its request line is the app's, with its own request id", async () => {
    const { key } = await s.key("pro");
    await s.warm(PAGE, { "x-api-key": key, "x-request-id": "line-direct" });
    await s.injected(PAGE, { "x-api-key": key, "x-request-id": "line-app" });
    const lineOf = (id: string) => s.lines.filter((l) => l.reqId === id).at(-1) as Record<string, unknown>;
    const [direct, app] = [lineOf("line-direct"), lineOf("line-app")];
    assert.deepEqual(Object.keys(direct), Object.keys(app), "the same fields in the same order");
    for (const name of ["level", "pid", "hostname", "method", "url", "statusCode", "msg"]) {
      assert.equal(direct[name], app[name], name);
    }
    assert.equal(typeof direct.responseTime, "number");
  });

  test("what it cannot answer alone reaches the app, counted once", async () => {
    const { key, id } = await s.key("pro");
    const headers = { "x-api-key": key };
    const page = await s.warm(PAGE, headers);
    const before = await s.direct();

    const revalidated = await s.raw(PAGE, { ...headers, "if-none-match": String(page.headers.etag) });
    assert.equal(revalidated.status, 304);
    assert.equal((await s.raw(PAGE, { "x-api-key": `${key}x` })).status, 401);
    assert.equal((await s.raw(PAGE, {})).status, 401);
    const twoKeys = await s.raw(PAGE, { ...headers, authorization: "Bearer ud_other" });
    assert.equal(twoKeys.status, 401);
    const head = await s.raw(PAGE, headers, "HEAD");
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    const withBody = await s.raw(
      PAGE,
      { ...headers, "content-type": "application/json", "content-length": "2" },
      "GET",
      "{}",
    );
    assert.equal(withBody.status, 400);
    assert.match(withBody.body.toString(), /GET takes no body/);
    // A starter key asking for the URL another key warmed: the plan does not open that market.
    const starter = await s.key("starter");
    const refused = await s.raw(PAGE, { "x-api-key": starter.key });
    assert.equal(refused.status, 403);
    assert.match(refused.body.toString(), /TIER_ACCESS_DENIED|tier/i);
    assert.equal(await s.direct(), before, "none of these was answered directly");

    // Revoked by another process: the app sees it once its record's second has passed, and so does this.
    assert.equal(await s.keys.revoke(id), true);
    s.clock.advance(1_000_001);
    assert.equal((await s.raw(PAGE, headers)).status, 401);
    assert.equal(await s.direct(), before);
  });

  test("a full window refuses through the app: one 429, counted once; the next minute answers directly", async () => {
    const { key } = await s.key("enterprise", 3);
    const headers = { "x-api-key": key };
    const refusedSeries = 'updown_rate_limit_decisions_total{result="refused_minute",limiter="memory"}';
    const admittedSeries = 'updown_rate_limit_decisions_total{result="admitted",limiter="memory"}';
    const [refused0, admitted0] = [await s.metric(refusedSeries), await s.metric(admittedSeries)];
    await s.warm(PAGE, headers); // three requests: the minute's all
    const before = await s.direct();
    const over = await s.raw(PAGE, headers);
    assert.equal(over.status, 429);
    assert.equal(remainingOf(over.headers.ratelimit)['"minute"'], 0);
    assert.match(over.body.toString(), /"code":"RATE_LIMIT_EXCEEDED"/);
    assert.equal(await s.direct(), before);
    assert.equal(await s.metric(refusedSeries), refused0 + 1, "the refusal counted once");
    assert.equal(await s.metric(admittedSeries), admitted0 + 3);

    s.clock.advance(60_000_000);
    // The key's and the market's records are a minute old: the app reads them again, then they serve.
    assert.equal((await s.raw(PAGE, headers)).status, 200);
    assert.equal(await s.direct(), before);
    assert.equal((await s.raw(PAGE, headers)).status, 200);
    assert.equal(await s.direct(), before + 1, "a new minute: answered directly again");
  });

  test("a server no longer listening (draining) leaves every request to the app", async () => {
    const { key } = await s.key("pro");
    const headers = { "x-api-key": key };
    await s.warm(PAGE, headers);
    const before = await s.direct();
    // The drain (src/server.ts) closes the server while requests are in flight: this one arrives then.
    s.app.server.prependOnceListener("request", () => s.app.server.close());
    const answer = await s.raw(PAGE, headers);
    assert.equal(answer.status, 200);
    assert.equal(await s.direct(), before, "answered by the app");
  });
});

describe(
  "cached pages answered before routing, with the shared limiter",
  { skip: SKIP_WITHOUT_REDIS },
  () => {
    const s = new Served();
    let limiter: RateLimiter;
    before(async () => {
      limiter = await openRedisLimiter();
      await s.start(limiter);
    });
    after(async () => {
      await s.close();
      await limiter.close();
    });

    test("counted in Redis, answered as the app answers; a full window refuses through the app", async () => {
      const { key } = await s.key("enterprise", 4);
      const headers = { "x-api-key": key, "x-request-id": "redis" };
      const direct = await s.warm(PAGE, headers);
      assertSameAnswer(direct, await s.injected(PAGE, headers));
      const before = await s.direct();
      const over = await s.raw(PAGE, headers);
      assert.equal(over.status, 429);
      assert.equal(await s.direct(), before);
    });
  },
);
