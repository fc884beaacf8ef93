import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { after, afterEach, before, beforeEach, describe, test } from "node:test";
import { systemClock } from "../../../src/domain/time.ts";
import type { LogFields, Logger } from "../../../src/log.ts";
import {
  ReconnectingSocket,
  type ReconnectingSocketOptions,
  type SocketDownCause,
  type SocketEvent,
} from "../../../src/record/socket/reconnecting-socket.ts";
import { BinanceUpstream } from "../../helpers/binance-upstream.ts";
import { FakeScheduler } from "../../helpers/fake-scheduler.ts";
import {
  type PolymarketUpstream,
  startPolymarketUpstream,
  until,
} from "../../helpers/polymarket-upstream.ts";

/**
 * The contract of the one reconnecting WebSocket base, against real local servers playing the
 * upstreams (Polymarket's CLOB channel answers PING with PONG; Binance's streams can be refused and
 * dropped). Every timer of the socket runs on a fake scheduler, so silence, backoff and the handover
 * happen when the test moves the clock; the tests only ever wait for I/O.
 */

const T0 = 1784852434_000;

/** What the socket told its owner and its logger. */
class Seen {
  readonly events: SocketEvent[] = [];
  readonly messages: string[] = [];
  readonly downs: { cause: SocketDownCause; detail: string }[] = [];
  readonly lines: { level: string; fields: LogFields; message: string }[] = [];
  readonly log: Logger = {
    debug: (fields, message) => this.lines.push({ level: "debug", fields, message }),
    info: (fields, message) => this.lines.push({ level: "info", fields, message }),
    warn: (fields, message) => this.lines.push({ level: "warn", fields, message }),
    error: (fields, message) => this.lines.push({ level: "error", fields, message }),
  };

  of(type: SocketEvent["type"]): SocketEvent[] {
    return this.events.filter((e) => e.type === type);
  }

  async reach(count: number, type: SocketEvent["type"]): Promise<SocketEvent[]> {
    await until(() => this.of(type).length >= count, `${count} ${type} events`);
    return this.of(type);
  }

  warnings(): string[] {
    return this.lines.filter((l) => l.level === "warn").map((l) => l.message);
  }
}

let scheduler: FakeScheduler;
let seen: Seen;
let socket: ReconnectingSocket | null;
let polymarket: PolymarketUpstream;
let binance: BinanceUpstream;
/** A Binance stream URL of one stream. */
let streamUrl: string;

// In a describe of its own, so that its hooks wrap only its tests when it shares a process (test/run.ts).
describe("ReconnectingSocket", () => {
  before(async () => {
    polymarket = await startPolymarketUpstream();
    binance = await BinanceUpstream.start(systemClock, T0 - 3600_000, T0);
    streamUrl = `${binance.urls.spotWs}/stream?streams=btcusdt@trade`;
  });
  after(async () => {
    await polymarket.close();
    await binance.close();
  });

  beforeEach(() => {
    scheduler = new FakeScheduler(T0);
    seen = new Seen();
    socket = null;
  });
  afterEach(async () => {
    await socket?.stop();
    polymarket.clob.thaw();
    polymarket.clob.disconnectAll();
    for (const c of binance.connections) c.socket.terminate();
    binance.connections.length = 0;
    binance.refuseStreams = false;
  });

  const subscribe = (send: (text: string) => void) =>
    send(JSON.stringify({ assets_ids: ["1111", "2222"], type: "market" }));
  const pongs = () => seen.messages.filter((m) => m === "PONG").length;
  const trade = (id: number) => ({ e: "trade", t: id, p: "1", q: "1", T: T0, m: true });

  function start(url: string, options: Partial<ReconnectingSocketOptions> = {}): ReconnectingSocket {
    socket = new ReconnectingSocket({
      name: "test",
      url,
      scheduler,
      log: seen.log,
      heartbeat: null,
      silenceMs: 10_000,
      backoff: { initialMs: 1000, maxMs: 8000 },
      onMessage: (text) => seen.messages.push(text),
      onDown: (cause, detail) => seen.downs.push({ cause, detail }),
      onEvent: (event) => seen.events.push(event),
      ...options,
    });
    socket.start();
    return socket;
  }

  describe(
    "heartbeat, silence and resubscription (Polymarket's CLOB channel plays the upstream)",
    { timeout: 30_000 },
    () => {
      test("the heartbeat goes out on the injected clock, and its answers keep the connection", async () => {
        const before = polymarket.clob.connections;
        const s = start(polymarket.clobUrl, { heartbeat: { text: "PING", everyMs: 1000 }, silenceMs: 3000 });
        await seen.reach(1, "open");
        assert.equal(seen.lines[0].message, `test: connected to ${polymarket.clobUrl}`);
        for (let i = 1; i <= 5; i++) {
          await scheduler.advance(1000);
          await until(() => pongs() === i, `answer to heartbeat ${i}`);
        }
        assert.ok(s.connected);
        assert.equal(seen.of("close").length, 0, "five seconds with answers: never silent");
        assert.equal(polymarket.clob.connections, before + 1);
      });

      test("a silent connection is dropped at the limit, reported once, and made again after the backoff with its subscriptions", async () => {
        const before = polymarket.clob.connections;
        const s = start(polymarket.clobUrl, {
          heartbeat: { text: "PING", everyMs: 1000 },
          silenceMs: 3000,
          onOpen: subscribe,
        });
        await seen.reach(1, "open");
        await until(() => polymarket.clob.subscribedTokens.size === 2, "the subscription");
        await scheduler.advance(1000);
        await until(() => pongs() === 1, "the first answer");
        polymarket.clob.freeze();
        await scheduler.advance(2999);
        assert.equal(seen.of("close").length, 0, "silent for less than the limit");
        await scheduler.advance(1);
        assert.deepEqual(seen.events.slice(-2), [
          { type: "close", detail: "no message for 3 s" },
          { type: "reconnect", detail: "no message for 3 s", delayMs: 1000 },
        ]);
        assert.deepEqual(seen.downs, [{ cause: "upstream_silent", detail: "no message for 3 s" }]);
        assert.deepEqual(seen.warnings(), [
          "test: connection lost (upstream_silent: no message for 3 s); reconnecting in 1000 ms",
        ]);
        assert.equal(s.connected, false);
        polymarket.clob.thaw();
        await until(() => polymarket.clob.subscribedTokens.size === 0, "the server to see the close");

        await scheduler.advance(999);
        assert.equal(seen.of("open").length, 1, "no attempt before the backoff is over");
        await scheduler.advance(1);
        await seen.reach(2, "open");
        await until(() => polymarket.clob.subscribedTokens.size === 2, "the subscription, sent again");
        assert.equal(polymarket.clob.connections, before + 2);
        assert.equal(s.connects, 2);
        assert.equal(seen.downs.length, 1, "reported once");
      });
    },
  );

  describe("losses the upstream causes, and checks left to the owner", { timeout: 30_000 }, () => {
    test("a connection the upstream drops is reported with its close, and subscribed again", async () => {
      start(polymarket.clobUrl, { onOpen: subscribe, backoff: { initialMs: 500, maxMs: 30_000 } });
      await seen.reach(1, "open");
      await until(() => polymarket.clob.subscribedTokens.size === 2, "the subscription");
      polymarket.clob.disconnectAll();
      const [reconnect] = await seen.reach(1, "reconnect");
      assert.equal(reconnect.delayMs, 500);
      assert.deepEqual(
        seen.downs.map((d) => d.cause),
        ["upstream_disconnected"],
      );
      assert.match(seen.downs[0].detail, /^closed with code 1006/);
      await scheduler.advance(500);
      await seen.reach(2, "open");
      await until(() => polymarket.clob.subscribedTokens.size === 2, "the subscription, sent again");
    });

    test("with the checks left to the owner, no timer runs and maintain() does the work", async () => {
      const s = start(polymarket.clobUrl, {
        heartbeat: { text: "PING", everyMs: 1000 },
        silenceMs: 3000,
        checks: "maintain",
      });
      await seen.reach(1, "open");
      assert.equal(scheduler.pending, 0, "no check is timed");
      await scheduler.advance(1000);
      s.maintain();
      await until(() => pongs() === 1, "the answer to the heartbeat maintain() sent");
      polymarket.clob.freeze();
      await scheduler.advance(10_000);
      assert.equal(seen.of("close").length, 0, "the clock alone drops nothing");
      s.maintain();
      assert.deepEqual(seen.of("close"), [{ type: "close", detail: "no message for 10 s" }]);
      assert.deepEqual(seen.downs, [{ cause: "upstream_silent", detail: "no message for 10 s" }]);
    });
  });

  describe("backoff (Binance's combined streams play the upstream from here on)", { timeout: 30_000 }, () => {
    test("waits double up to the cap, spread by the injected jitter, and start again once a connection delivers", async () => {
      start(streamUrl, { backoff: { initialMs: 1000, maxMs: 4000, jitter: 0.2, random: () => 1 } });
      await binance.connected("spot", 1);
      await seen.reach(1, "open");
      binance.refuseStreams = true;
      binance.drop("spot");
      await seen.reach(1, "reconnect");
      for (let n = 2; n <= 4; n++) {
        await scheduler.advance(seen.of("reconnect").at(-1)!.delayMs!);
        await seen.reach(n, "reconnect");
      }
      assert.deepEqual(
        seen.of("reconnect").map((r) => r.delayMs),
        [1200, 2400, 4800, 4800],
      );
      assert.match(
        seen.warnings()[1],
        /^test: cannot connect \(closed with code 1006\); trying again in 2400 ms$/,
      );
      binance.refuseStreams = false;
      await scheduler.advance(4800);
      await seen.reach(2, "open");
      assert.equal(binance.send("spot", "btcusdt@trade", trade(1)), 1);
      await until(() => seen.messages.length === 1, "the message");
      binance.drop("spot");
      await seen.reach(5, "reconnect");
      assert.equal(seen.of("reconnect")[4].delayMs, 1200, "back to the first wait");
    });
  });

  describe("handover and stop", { timeout: 30_000 }, () => {
    test("before the age limit a successor takes over on its first message; the old one closes then", async () => {
      const s = start(streamUrl, { handoverAfterMs: 60_000, silenceMs: 120_000 });
      const first = await binance.connected("spot", 1);
      await seen.reach(1, "open");
      await scheduler.advance(59_999);
      assert.equal(seen.of("rotate").length, 0);
      await scheduler.advance(1);
      await seen.reach(1, "rotate");
      const second = await binance.connected("spot", 2);
      await seen.reach(2, "open");
      assert.equal(
        first.socket.readyState,
        first.socket.OPEN,
        "the old connection stays until the new one delivers",
      );
      const firstClosed = new Promise<number>((resolve) => first.socket.once("close", resolve));
      assert.equal(binance.send("spot", "btcusdt@trade", trade(7)), 2);
      assert.equal(await firstClosed, 1000, "a normal close");
      assert.equal(second.socket.readyState, second.socket.OPEN);
      assert.ok(s.connected);
      assert.equal(seen.of("reconnect").length, 0);
      assert.deepEqual(seen.downs, [], "nothing was lost");
      assert.equal(binance.send("spot", "btcusdt@trade", trade(8)), 1, "only the successor is left");
      await until(() => seen.messages.some((m) => m.includes('"t":8')), "the next message");
      // In the overlap both connections carried message 7: it may arrive twice (owners write idempotently).
      assert.ok(seen.messages.filter((m) => m.includes('"t":7')).length >= 1);
      assert.equal(seen.messages.filter((m) => m.includes('"t":8')).length, 1);
    });

    test("stop closes normally, delivers nothing after, and leaves no timer", async () => {
      const s = start(streamUrl, { handoverAfterMs: 60_000 });
      const conn = await binance.connected("spot", 1);
      await seen.reach(1, "open");
      const closed = new Promise<number>((resolve) => conn.socket.once("close", resolve));
      await s.stop();
      assert.equal(await closed, 1000);
      assert.equal(scheduler.pending, 0);
      assert.equal(binance.send("spot", "btcusdt@trade", trade(1)), 0);
      assert.deepEqual(seen.events.at(-1), { type: "close", detail: "stopped" });
      assert.equal(s.connected, false);
    });

    test("stop during a backoff wait cancels the next attempt", async () => {
      const s = start(streamUrl);
      await seen.reach(1, "open");
      binance.drop("spot");
      await seen.reach(1, "reconnect");
      await s.stop();
      assert.equal(scheduler.pending, 0);
      await scheduler.advance(60_000);
      assert.equal(binance.connections.length, 1, "no attempt after stop");
    });
  });

  describe("an attempt that never opens", { timeout: 30_000 }, () => {
    let server: Server;
    const held: Socket[] = [];
    before(async () => {
      // Accepts TCP and never answers the upgrade, as a black-holed upstream would.
      server = createServer((s) => held.push(s));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    });
    after(async () => {
      for (const s of held) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    test("is abandoned as silent at the limit and tried again, with nothing reported lost", async () => {
      const { port } = server.address() as { port: number };
      start(`ws://127.0.0.1:${port}/`, { silenceMs: 5000 });
      await until(() => held.length === 1, "the TCP connection");
      await scheduler.advance(4999);
      assert.equal(seen.events.length, 0);
      await scheduler.advance(1);
      assert.deepEqual(seen.events, [
        { type: "close", detail: "no message for 5 s" },
        { type: "reconnect", detail: "no message for 5 s", delayMs: 1000 },
      ]);
      assert.deepEqual(seen.downs, [], "a connection that never worked is not a lost one");
      assert.deepEqual(seen.warnings(), [
        "test: cannot connect (no message for 5 s); trying again in 1000 ms",
      ]);
    });
  });
});
