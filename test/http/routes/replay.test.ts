import assert from "node:assert/strict";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import WebSocket from "ws";
import { KeyService } from "../../../src/access/keys.ts";
import { loadPlans } from "../../../src/access/plans.ts";
import type { MarketEvent } from "../../../src/domain/event.ts";
import { ManualClock } from "../../../src/domain/time.ts";
import { serverOver } from "../../../src/http/app.ts";
import { type AppContext, buildContext } from "../../../src/http/context.ts";
import type { ReplayOutcome, ReplaySession } from "../../../src/http/replay.ts";
import { REPLAY_HIGH_WATER } from "../../../src/http/routes/replay.ts";
import type { Store } from "../../../src/store/ports/store.ts";
import { ANCHOR, HAND_MARKET, openTestStore } from "../../helpers/app.ts";
import { checkAnswersOf } from "../../helpers/contract.ts";
import { inReceiveOrder, marketEvents, NEXT_MARKET, recordMarket } from "../../helpers/recorded-events.ts";

const A = marketEvents(HAND_MARKET);
// The next market's stream overlaps the first's in time, so that the replay interleaves them.
const B = marketEvents(NEXT_MARKET, { startMs: HAND_MARKET.startTime * 1000 - 4_900, stepMs: 330 });
const BOTH = inReceiveOrder(A, B);
const FROM = "2026-07-23T23:00:00Z";
const TO = "2026-07-24T02:00:00Z";

/** What the test's sleeper was asked to wait, in order; it moves the app's clock by as much. */
const slept: number[] = [];
/** While set, the sleeper never resolves (a long pause of a paced replay). */
let sleepForever = false;

let store: Store;
let clock: ManualClock;
let ctx: AppContext;
let app: FastifyInstance;
let base: string;
let key: string;
let keys: KeyService;
let verify: () => void;

before(async () => {
  store = await openTestStore();
  clock = new ManualClock(ANCHOR * 1e6);
  const plans = loadPlans();
  plans.starter = {
    ...plans.starter,
    history: { ...plans.starter.history, sol: { "5m": 0, "15m": 0, "1h": 0, "4h": 0, "24h": 0 } },
  };
  const sleep = (ms: number) => {
    slept.push(ms);
    if (sleepForever) return new Promise<void>(() => {});
    clock.advance(Math.round(ms * 1000));
    return Promise.resolve();
  };
  ctx = buildContext({ store, clock, plans, sleep });
  app = await serverOver(ctx, {});
  verify = checkAnswersOf(app).verify;
  await app.listen({ port: 0, host: "127.0.0.1" });
  base = `127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  keys = new KeyService(store.keys, clock, plans);
  key = (await keys.create({ plan: "pro", account: "replay" })).key;
  await recordMarket(store, HAND_MARKET, A);
  await recordMarket(store, NEXT_MARKET, B);
});
after(async () => {
  await app.close();
  await store.close();
  verify();
});

interface Received {
  messages: unknown[];
  code: number;
  reason: string;
}

/**
 * A client written as for Polymarket's market channel: connect, send the subscribe message, read
 * every message until the close. Only the URL differs from the upstream's.
 */
async function polymarketClient(
  query: string,
  subscribe: unknown,
  headers: Record<string, string> = { "x-api-key": key },
): Promise<Received> {
  const ws = new WebSocket(`ws://${base}/v1/replay/ws?${query}`, { headers });
  const messages: unknown[] = [];
  ws.on("open", () => ws.send(JSON.stringify(subscribe)));
  ws.on("message", (data) => messages.push(JSON.parse(String(data))));
  const [code, reason] = (await once(ws, "close")) as [number, Buffer];
  return { messages, code, reason: String(reason) };
}

const subscribeTo = (...assets: string[]) => ({ assets_ids: assets, type: "market" });
const tokensOf = (m: typeof HAND_MARKET) => [m.clobTokenUp, m.clobTokenDown];
const messagesOf = (events: MarketEvent[]) => events.map((e) => e.message);
const nextEnd = () => once(ctx.replays, "end") as Promise<[ReplaySession, ReplayOutcome]>;

describe("GET /v1/replay/ws", () => {
  test("speed=max: an unmodified Polymarket client receives exactly the stored messages, in receive order across markets, then 1000", async () => {
    const got = await polymarketClient(
      `from=${FROM}&to=${TO}&speed=max`,
      subscribeTo(...tokensOf(HAND_MARKET), ...tokensOf(NEXT_MARKET)),
    );
    assert.equal(got.code, 1000);
    assert.deepEqual(got.messages, messagesOf(BOTH));
    assert.equal(ctx.replays.openStreams, 0);
    assert.equal(ctx.replays.active, 0);
  });

  test("speed=10: each message waits its receive-time gap divided by 10 on the app's clock", async () => {
    slept.length = 0;
    const got = await polymarketClient(
      `from=${FROM}&to=${TO}&speed=10`,
      subscribeTo(...tokensOf(HAND_MARKET)),
    );
    assert.equal(got.code, 1000);
    assert.deepEqual(got.messages, messagesOf(A));
    // Each message is due its receive-time distance from the first divided by 10; the replay sleeps
    // whenever the next is due 1 ms or more after the clock (which moves only by those sleeps).
    const expected: number[] = [];
    let now = 0;
    for (const e of A) {
      const wait = (e.receivedUs - A[0].receivedUs) / 10 / 1000 - now;
      if (wait >= 1) {
        expected.push(wait);
        now += wait;
      }
    }
    assert.equal(slept.length, expected.length);
    slept.forEach((ms, i) => assert.ok(Math.abs(ms - expected[i]) < 0.01, `${ms} against ${expected[i]}`));
    const span = (A[A.length - 1].receivedUs - A[0].receivedUs) / 10 / 1000;
    assert.ok(Math.abs(slept.reduce((a, b) => a + b, 0) - span) < 1);
  });

  test("slugs are accepted in assets_ids; one token of a market replays only its messages; from..to bounds the upstream timestamp", async () => {
    const slug = await polymarketClient(`from=${FROM}&to=${TO}&speed=max`, subscribeTo(NEXT_MARKET.slug));
    assert.deepEqual(slug.messages, messagesOf(B));

    const up = await polymarketClient(
      `from=${FROM}&to=${TO}&speed=max`,
      subscribeTo(HAND_MARKET.clobTokenUp),
    );
    const mentionsUp = (e: MarketEvent) => JSON.stringify(e.message).includes(`"${HAND_MARKET.clobTokenUp}"`);
    assert.deepEqual(up.messages, messagesOf(A.filter(mentionsUp)));
    assert.ok(up.messages.length < A.length);

    const from = A[4].timestampMs;
    const to = A[9].timestampMs;
    const ranged = await polymarketClient(`from=${from}&to=${to}&speed=max`, subscribeTo(HAND_MARKET.slug));
    assert.deepEqual(ranged.messages, messagesOf(A.slice(4, 10)));
  });

  test("the key may come as Authorization: Bearer, the updown-key subprotocol or ?api_key", async () => {
    const q = `from=${FROM}&to=${TO}&speed=max`;
    const sub = subscribeTo(HAND_MARKET.slug);
    assert.equal((await polymarketClient(q, sub, { authorization: `Bearer ${key}` })).code, 1000);
    assert.equal((await polymarketClient(`${q}&api_key=${key}`, sub, {})).code, 1000);
    const ws = new WebSocket(`ws://${base}/v1/replay/ws?${q}`, ["updown", `updown-key.${key}`]);
    ws.on("open", () => ws.send(JSON.stringify(sub)));
    let n = 0;
    ws.on("message", () => n++);
    const [code] = (await once(ws, "close")) as [number];
    assert.equal(ws.protocol, "updown");
    assert.equal(code, 1000);
    assert.equal(n, A.length);
  });

  test("bad parameters close with their 4xxx code and a reason, never a crash", async () => {
    const ok = `from=${FROM}&to=${TO}`;
    const sub = subscribeTo(HAND_MARKET.slug);
    const cases: [string, unknown, Record<string, string> | undefined, number, RegExp][] = [
      ["to=" + TO, sub, undefined, 4400, /from is required/],
      [`${ok}&speed=0`, sub, undefined, 4400, /speed/],
      [`${ok}&speed=1001`, sub, undefined, 4400, /speed/],
      [`${ok}&speed=fast`, sub, undefined, 4400, /speed/],
      [`from=${TO}&to=${FROM}`, sub, undefined, 4400, /from must not be after to/],
      [`from=2026-07-01T00:00:00Z&to=${TO}`, sub, undefined, 4400, /7 days/],
      [ok, sub, {}, 4401, /key/i],
      [ok, sub, { "x-api-key": "ud_nope" }, 4401, /key/i],
      [ok, "not an object", undefined, 4400, /object/],
      [ok, { assets_ids: [], type: "market" }, undefined, 4400, /assets_ids/],
      [ok, { assets_ids: ["1"], type: "user" }, undefined, 4400, /market/],
      [ok, subscribeTo("999999"), undefined, 4404, /token 999999/],
      [ok, subscribeTo("sol-updown-15m-1"), undefined, 4404, /slug/],
    ];
    for (const [query, subscribe, headers, code, reason] of cases) {
      const got = await polymarketClient(query, subscribe, headers);
      assert.equal(got.code, code, `${query} ${JSON.stringify(subscribe)}`);
      assert.match(got.reason, reason);
      assert.deepEqual(got.messages, []);
    }
    const starter = (await keys.create({ plan: "starter", account: "replay-starter" })).key;
    const refused = await polymarketClient(ok, sub, { "x-api-key": starter });
    assert.equal(refused.code, 4403);
  });

  test("a subscribe that is not JSON closes 4400; PING is answered PONG", async () => {
    const ws = new WebSocket(`ws://${base}/v1/replay/ws?from=${FROM}&to=${TO}`, {
      headers: { "x-api-key": key },
    });
    await once(ws, "open");
    ws.send("PING");
    const [pong] = (await once(ws, "message")) as [Buffer];
    assert.equal(String(pong), "PONG");
    ws.send("{");
    const [code, reason] = (await once(ws, "close")) as [number, Buffer];
    assert.equal(code, 4400);
    assert.match(String(reason), /not JSON/);
  });

  test("a reader that stops reading stops the replay: the server holds at most its high-water mark", async () => {
    // Messages big enough to fill the kernel's buffers between the two ends, then the server's.
    const big = {
      ...HAND_MARKET,
      slug: "sol-updown-15m-1784853000",
      clobTokenUp: "5555",
      clobTokenDown: "6666",
      startTime: 1784853000,
      endTime: 1784853900,
    };
    const events = marketEvents(big, { changes: 0, levels: 150 });
    // Only books are large; many of them.
    const books = events.filter((e) => e.type === "book");
    const flood = Array.from({ length: 2000 }, (_, i) => ({
      ...books[i % 2],
      receivedUs: books[0].receivedUs + i * 1000,
      message: { ...books[i % 2].message, hash: `0xflood${i}` },
    }));
    await recordMarket(store, big, flood);
    const largest = Math.max(...flood.map((e) => JSON.stringify(e.message).length));

    const ws = new WebSocket(`ws://${base}/v1/replay/ws?from=${FROM}&to=${TO}&speed=max`, {
      headers: { "x-api-key": key },
    });
    await once(ws, "open");
    // The reader stops: nothing more is taken off its socket.
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const waited = once(ctx.replays, "wait") as Promise<[ReplaySession]>;
    ws.send(JSON.stringify(subscribeTo(big.slug)));
    const [session] = await waited;
    assert.ok(session.sent < flood.length, `sent ${session.sent} of ${flood.length} before waiting`);
    // The replay does not go on while the reader is stopped: it sends only when the kernel takes bytes
    // off the server's buffer, and once the kernel's buffers between the two ends are full, a turn of the
    // loop later nothing more is sent. Under load the kernel may still take some after the first wait
    // (loopback's packets handled a moment later): the replay then sends until it must wait again.
    let sentAtWait = session.sent;
    let waits = session.drainWaits;
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      assert.ok(session.sent < flood.length, `sent all ${flood.length} to a reader that reads nothing`);
      if (session.sent === sentAtWait && session.drainWaits === waits) break;
      if (session.drainWaits !== waits) {
        sentAtWait = session.sent;
        waits = session.drainWaits;
      }
    }
    assert.ok(session.bufferedHigh <= REPLAY_HIGH_WATER + largest + 64, `buffered ${session.bufferedHigh}`);

    // The reader goes on and gets every message.
    let n = 0;
    ws.on("message", () => n++);
    const ended = nextEnd();
    (ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const [code] = (await once(ws, "close")) as [number];
    assert.equal(code, 1000);
    assert.equal(n, flood.length);
    const [, outcome] = await ended;
    assert.equal(outcome, "complete");
    assert.ok(session.drainWaits >= 1);
  });

  test("a disconnect mid-replay ends the server's work and closes the store's streams", async () => {
    // More events than a stored block holds, so that the store's stream is open mid-replay.
    const long = {
      ...NEXT_MARKET,
      slug: "sol-updown-15m-1784853900",
      clobTokenUp: "9991",
      clobTokenDown: "9992",
      startTime: 1784853900,
      endTime: 1784854800,
    };
    const events = marketEvents(long, { changes: 6000, stepMs: 50 });
    await recordMarket(store, long, events);
    sleepForever = true;
    try {
      const ws = new WebSocket(`ws://${base}/v1/replay/ws?from=${FROM}&to=${TO}&speed=1`, {
        headers: { "x-api-key": key },
      });
      ws.on("open", () => ws.send(JSON.stringify(subscribeTo(long.slug))));
      const [first] = (await once(ws, "message")) as [Buffer];
      assert.deepEqual(JSON.parse(String(first)), events[0].message);
      assert.equal(ctx.replays.openStreams, 1);
      assert.equal(ctx.replays.active, 1);
      const ended = nextEnd();
      ws.terminate();
      const [session, outcome] = await ended;
      assert.equal(outcome, "disconnected");
      assert.equal(session.sent, 1);
      assert.equal(ctx.replays.openStreams, 0);
      assert.equal(ctx.replays.active, 0);
      const metrics = (await app.inject("/metrics")).body;
      assert.match(metrics, /^updown_replays_active 0$/m);
      assert.match(metrics, /^updown_replay_store_streams_open 0$/m);
    } finally {
      sleepForever = false;
    }
  });

  test("a plain GET is a 400 saying to upgrade", async () => {
    const res = await app.inject({
      method: "GET",
      url: `/v1/replay/ws?from=${FROM}&to=${TO}`,
      headers: { "x-api-key": key },
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().error.message, /WebSocket/);
  });
});

describe("GET /v1/replay (NDJSON)", () => {
  const get = (query: string, k = key) =>
    app.inject({ method: "GET", url: `/v1/replay?${query}`, headers: { "x-api-key": k } });

  test("streams the same messages, one a line, with what it cost", async () => {
    const assets = [...tokensOf(HAND_MARKET), NEXT_MARKET.slug].join(",");
    const res = await get(`assets_ids=${assets}&from=${FROM}&to=${TO}&speed=max`);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers["content-type"]), /^application\/x-ndjson/);
    assert.equal(res.headers["x-replay-cost"], "2");
    const lines = res.body
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as unknown);
    assert.deepEqual(lines, messagesOf(BOTH));
  });

  test("parameters' 400s, 404 and 403 in the error envelope", async () => {
    const cases: [string, number, string][] = [
      [`from=${FROM}&to=${TO}`, 400, "assets_ids"],
      [`assets_ids=${HAND_MARKET.slug}&to=${TO}`, 400, "from"],
      [`assets_ids=${HAND_MARKET.slug}&from=${FROM}&to=${TO}&speed=0.5`, 400, "speed"],
      [`assets_ids=,&from=${FROM}&to=${TO}`, 400, "assets_ids"],
    ];
    for (const [query, status, parameter] of cases) {
      const res = await get(query);
      assert.equal(res.statusCode, status, query);
      assert.equal(res.json().error.details.parameter, parameter, query);
    }
    assert.equal((await get(`assets_ids=42&from=${FROM}&to=${TO}`)).statusCode, 404);
    const starter = (await keys.create({ plan: "starter", account: "ndjson-starter" })).key;
    assert.equal(
      (await get(`assets_ids=${HAND_MARKET.slug}&from=${FROM}&to=${TO}`, starter)).statusCode,
      403,
    );
  });

  test("costs one request per market-hour, charged before the first message; 429 when the day has less left", async () => {
    // A 1h market whose events span 90 minutes: 2 market-hours.
    const hourly = {
      ...HAND_MARKET,
      slug: "sol-updown-1h-1784858400",
      marketType: "1h" as const,
      clobTokenUp: "7777",
      clobTokenDown: "8888",
      startTime: 1784858400,
      endTime: 1784862000,
    };
    const events = marketEvents(hourly, { changes: 10, stepMs: 6 * 60_000 });
    await recordMarket(store, hourly, events);
    const window = `from=2026-07-24T01:00:00Z&to=2026-07-24T05:00:00Z`;
    const tight = (await keys.create({ plan: "enterprise", account: "tight", perDayLimit: 3 })).key;
    const ok = await get(`assets_ids=${hourly.slug}&${window}&speed=max`, tight);
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.headers["x-replay-cost"], "2");
    assert.equal(ok.headers["x-ratelimit-remaining"], "1");
    const refused = await get(`assets_ids=${hourly.slug}&${window}&speed=max`, tight);
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().error.code, "RATE_LIMIT_EXCEEDED");
    assert.equal(refused.json().error.details.cost, 2);
    assert.ok(Number(refused.headers["retry-after"]) >= 1);

    // Over the WebSocket the refusal is a 4429 close, before any message.
    const other = (await keys.create({ plan: "enterprise", account: "tight-ws", perDayLimit: 1 })).key;
    const got = await polymarketClient(`${window}&speed=max`, subscribeTo(hourly.slug), {
      "x-api-key": other,
    });
    assert.equal(got.code, 4429);
    assert.deepEqual(got.messages, []);
  });
});

describe("a server that stops", () => {
  test("ends the replays in flight with 1001 and closes", async () => {
    const own = await openTestStore();
    const ownClock = new ManualClock(ANCHOR * 1e6);
    // A paced replay that would wait for ever between its first two messages.
    const stopping = await serverOver(
      buildContext({ store: own, clock: ownClock, sleep: () => new Promise(() => {}) }),
      {},
    );
    await stopping.listen({ port: 0, host: "127.0.0.1" });
    const ownKey = (
      await new KeyService(own.keys, ownClock, loadPlans()).create({ plan: "pro", account: "stop" })
    ).key;
    await recordMarket(own, HAND_MARKET, A);
    const port = (stopping.server.address() as AddressInfo).port;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/replay/ws?from=${FROM}&to=${TO}`, {
      headers: { "x-api-key": ownKey },
    });
    ws.on("open", () => ws.send(JSON.stringify(subscribeTo(HAND_MARKET.slug))));
    await once(ws, "message");
    const closed = once(ws, "close") as Promise<[number, Buffer]>;
    await stopping.close();
    const [code, reason] = await closed;
    assert.equal(code, 1001);
    assert.match(String(reason), /stopping/);
    await own.close();
  });
});
