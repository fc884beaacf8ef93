import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import type { Venue } from "../../src/domain/exchange.ts";
import type { Clock } from "../../src/domain/time.ts";
import type { BinanceUrls } from "../../src/record/binance/urls.ts";

/**
 * A local server playing Binance's public market data for tests: the REST endpoints the backfill
 * and recorder use (answers generated from the time, field names as Binance sends them), request
 * weight counted per minute of the test's clock and reported in X-MBX-USED-WEIGHT-1M, scripted 429
 * and 418 answers, and combined-stream WebSockets at /spot/stream and /futures/stream.
 *
 * Generated history (times in ms), inside [dataFrom, dataTo]:
 * - a 1m kline every minute: open 100 + minutes since dataFrom, high +2, low -1, close +0.5;
 * - an aggregate trade every 10 s (id = time / 10000) made of three trades (ids 3a, 3a+1, 3a+2, one
 *   ms apart): spot answers historicalTrades by those ids, futures aggTrades by aggregate id;
 * - a funding rate every 8 h, open interest every 5 min.
 */

const MINUTE = 60_000;
const TRADE_EVERY = 10_000;

export interface RequestLog {
  path: string;
  query: Record<string, string>;
  status: number;
  /** Test clock when answered, ms. */
  at: number;
}

interface Failure {
  path: string;
  status: number;
  headers: Record<string, string>;
  /** Requests to the path still answered normally before this one. */
  skip: number;
}

export interface StreamConnection {
  venue: Venue;
  streams: string[];
  socket: WebSocket;
}

/** Weights as Binance charges them (what the server adds to the minute's count). */
const WEIGHTS: Record<string, number> = {
  "/api/v3/klines": 2,
  "/api/v3/aggTrades": 4,
  "/api/v3/historicalTrades": 25,
  "/fapi/v1/klines": 5,
  "/fapi/v1/aggTrades": 20,
  "/fapi/v1/fundingRate": 1,
  "/futures/data/openInterestHist": 1,
};

export class BinanceUpstream {
  readonly server: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly clock: Clock;
  readonly requests: RequestLog[] = [];
  readonly connections: StreamConnection[] = [];
  private readonly failures: Failure[] = [];
  private readonly used = new Map<string, number>();
  /** Weight to add to every count reported (other clients on the same address). */
  extraWeight = 0;
  /** Refuse WebSocket upgrades (503) while set. */
  refuseStreams = false;
  dataFrom: number;
  dataTo: number;
  urls!: BinanceUrls;
  private connectionWaiters: (() => void)[] = [];

  private constructor(clock: Clock, dataFrom: number, dataTo: number) {
    this.clock = clock;
    this.dataFrom = dataFrom;
    this.dataTo = dataTo;
    this.server = createServer((req, res) => this.rest(req, res));
    this.server.on("upgrade", (req, socket, head) => this.upgrade(req, socket, head));
  }

  static async start(clock: Clock, dataFrom: number, dataTo: number): Promise<BinanceUpstream> {
    const up = new BinanceUpstream(clock, dataFrom, dataTo);
    await new Promise<void>((resolve) => up.server.listen(0, "127.0.0.1", resolve));
    const { port } = up.server.address() as { port: number };
    const http = `http://127.0.0.1:${port}`;
    const ws = `ws://127.0.0.1:${port}`;
    up.urls = { spotRest: http, futuresRest: http, spotWs: `${ws}/spot`, futuresWs: `${ws}/futures` };
    return up;
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.socket.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private now(): number {
    return Math.floor(this.clock.nowMicros() / 1000);
  }

  /** The next request to `path` (after `skip` answered ones) gets this status and headers instead. */
  failNext(path: string, status: number, headers: Record<string, string> = {}, skip = 0): void {
    this.failures.push({ path, status, headers, skip });
  }

  requestsTo(path: string): RequestLog[] {
    return this.requests.filter((r) => r.path === path);
  }

  // ---------------------------------------------------------------------------------------------
  // REST

  private rest(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://x");
    const query = Object.fromEntries(url.searchParams);
    const path = url.pathname;
    const venue = path.startsWith("/api/") ? "spot" : "futures";
    const minute = `${venue}:${Math.floor(this.now() / MINUTE)}`;
    const used = (this.used.get(minute) ?? 0) + (WEIGHTS[path] ?? 1);
    this.used.set(minute, used);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      this.requests.push({ path, query, status, at: this.now() });
      res.writeHead(status, {
        "content-type": "application/json",
        "x-mbx-used-weight-1m": String(used + this.extraWeight),
        ...headers,
      });
      res.end(JSON.stringify(body));
    };
    const failure = this.failures.findIndex((f) => f.path === path && f.skip-- <= 0);
    if (failure >= 0) {
      const [f] = this.failures.splice(failure, 1);
      send(f.status, { code: -1003, msg: "Too many requests." }, f.headers);
      return;
    }
    const answer = this.answer(path, query);
    if (answer === undefined) send(404, { code: -1, msg: `no ${path}` });
    else send(200, answer);
  }

  private answer(path: string, q: Record<string, string>): unknown {
    const limit = Number(q.limit ?? 500);
    const start = q.startTime === undefined ? undefined : Number(q.startTime);
    const end = q.endTime === undefined ? undefined : Number(q.endTime);
    switch (path) {
      case "/api/v3/klines":
      case "/fapi/v1/klines":
        return this.klines(start ?? this.dataFrom, end ?? this.now(), limit);
      case "/api/v3/aggTrades":
      case "/fapi/v1/aggTrades":
        return this.aggTrades(q, limit);
      case "/api/v3/historicalTrades":
        return this.historicalTrades(Number(q.fromId), limit);
      case "/fapi/v1/fundingRate":
        return this.series(8 * 3600_000, start, end, limit, (t) => ({
          symbol: q.symbol,
          fundingTime: t,
          fundingRate: (0.0001 + (t / (8 * 3600_000)) * 1e-6).toFixed(8),
          markPrice: (65000 + (t % 1000)).toFixed(8),
        }));
      case "/futures/data/openInterestHist":
        return this.series(5 * MINUTE, start, end, limit, (t) => ({
          symbol: q.symbol,
          sumOpenInterest: (80000 + t / 300000).toFixed(8),
          sumOpenInterestValue: (5.2e9 + t / 300).toFixed(8),
          timestamp: t,
        }));
      default:
        return undefined;
    }
  }

  /** Times on a grid of `every` ms within the data and [start, end], oldest first (the latest `limit` without start). */
  private series(
    every: number,
    start: number | undefined,
    end: number | undefined,
    limit: number,
    make: (t: number) => unknown,
  ): unknown[] {
    const hi = Math.min(end ?? this.now(), this.dataTo, this.now());
    const lo = Math.max(start ?? Number.MIN_SAFE_INTEGER, this.dataFrom);
    const times: number[] = [];
    for (let t = Math.ceil(lo / every) * every; t <= hi; t += every) times.push(t);
    const picked = start === undefined ? times.slice(-limit) : times.slice(0, limit);
    return picked.map(make);
  }

  private klines(start: number, end: number, limit: number): unknown[] {
    const out: unknown[] = [];
    const hi = Math.min(end, this.dataTo, this.now());
    for (
      let t = Math.ceil(Math.max(start, this.dataFrom) / MINUTE) * MINUTE;
      t <= hi && out.length < limit;
      t += MINUTE
    ) {
      const o = 100 + (t - this.dataFrom) / MINUTE;
      out.push([
        t,
        o.toFixed(8),
        (o + 2).toFixed(8),
        (o - 1).toFixed(8),
        (o + 0.5).toFixed(8),
        "1.50000000",
        t + MINUTE - 1,
        "150.75000000",
        30,
        "0.75000000",
        "75.37500000",
        "0",
      ]);
    }
    return out;
  }

  private aggTrade(a: number) {
    const T = a * TRADE_EVERY;
    return {
      a,
      p: (65000 + (a % 100) / 100).toFixed(8),
      q: "0.01500000",
      f: 3 * a,
      l: 3 * a + 2,
      T,
      m: a % 2 === 0,
      M: true,
    };
  }

  private firstAgg(): number {
    return Math.ceil(this.dataFrom / TRADE_EVERY);
  }

  private lastAgg(): number {
    return Math.floor(Math.min(this.dataTo, this.now()) / TRADE_EVERY);
  }

  private aggTrades(q: Record<string, string>, limit: number): unknown[] {
    let from: number;
    let to = this.lastAgg();
    if (q.fromId !== undefined) from = Number(q.fromId);
    else if (q.startTime !== undefined) {
      from = Math.ceil(Number(q.startTime) / TRADE_EVERY);
      if (q.endTime !== undefined) to = Math.min(to, Math.floor(Number(q.endTime) / TRADE_EVERY));
    } else from = to - limit + 1;
    const out = [];
    for (let a = Math.max(from, this.firstAgg()); a <= to && out.length < limit; a++)
      out.push(this.aggTrade(a));
    return out;
  }

  private historicalTrades(fromId: number, limit: number): unknown[] {
    const out = [];
    for (
      let id = Math.max(fromId, 3 * this.firstAgg());
      id <= 3 * this.lastAgg() + 2 && out.length < limit;
      id++
    ) {
      const a = Math.floor(id / 3);
      const agg = this.aggTrade(a);
      out.push({
        id,
        price: agg.p,
        qty: "0.00500000",
        quoteQty: "325.00000000",
        time: agg.T + (id % 3),
        isBuyerMaker: agg.m,
        isBestMatch: true,
      });
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Streams

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? "/", "http://x");
    const match = /^\/(spot|futures)\/stream$/.exec(url.pathname);
    if (!match || this.refuseStreams) {
      socket.end("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const streams = (url.searchParams.get("streams") ?? "").split("/").filter(Boolean);
      this.connections.push({ venue: match[1] as Venue, streams, socket: ws });
      for (const wake of this.connectionWaiters.splice(0)) wake();
    });
  }

  /** Open connections of a venue, oldest first. */
  open(venue: Venue): StreamConnection[] {
    return this.connections.filter((c) => c.venue === venue && c.socket.readyState === WebSocket.OPEN);
  }

  /** Resolves once `count` connections of the venue have been made in all (open or not). */
  async connected(venue: Venue, count: number): Promise<StreamConnection> {
    while (this.connections.filter((c) => c.venue === venue).length < count) {
      await new Promise<void>((resolve) => this.connectionWaiters.push(resolve));
    }
    return this.connections.filter((c) => c.venue === venue)[count - 1];
  }

  /** Sends `{stream, data}` on every open connection of the venue subscribed to the stream. */
  send(venue: Venue, stream: string, data: unknown): number {
    let sent = 0;
    for (const c of this.open(venue)) {
      if (!c.streams.includes(stream)) continue;
      c.socket.send(JSON.stringify({ stream, data }));
      sent++;
    }
    return sent;
  }

  /** Drops a venue's connections without a closing handshake (as a network failure would). */
  drop(venue: Venue): void {
    for (const c of this.open(venue)) c.socket.terminate();
  }
}
