import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import type { Level, OrderBook } from "../../src/domain/book.ts";

/**
 * Local servers that play Polymarket's upstream protocols for collector tests: the Gamma REST API
 * (`/markets?slug=`, `/events?slug=`), the CLOB market channel (subscribe, PING/PONG, `book`,
 * `price_change`, `last_trade_price`, `tick_size_change`, `market_resolved`) and the real-time data
 * socket (coin prices: Chainlink's instantaneous and TWAP streams, Binance's).
 * The CLOB server keeps the true book of every token, so a test can compare what was recorded with
 * what the upstream said at that second.
 */

const FIXTURES = new URL("../fixtures/polymarket-protocol/", import.meta.url);

/** A message of the recorded protocol fixtures, parsed. */
export function protocolFixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(name, FIXTURES), "utf8")) as Record<string, unknown>;
}

/** Gamma market objects served by slug; a test edits them to close or resolve a market. */
export class FakeGamma {
  readonly markets = new Map<string, Record<string, unknown>>();
  /** Slugs `/markets` answers [] for, so that only `/events` knows them. */
  readonly onlyInEvents = new Set<string>();
  /** Called for a slug not in `markets`; may create it (a process test serves any slug it is asked). */
  fallback: ((slug: string) => Record<string, unknown> | null) | null = null;
  /** Slugs whose look-ups are never answered: an upstream that hangs. */
  readonly stalled = new Set<string>();
  requests: string[] = [];

  handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://x");
    this.requests.push(`${url.pathname}${url.search}`);
    const slug = url.searchParams.get("slug") ?? "";
    if (this.stalled.has(slug)) return;
    let market = this.markets.get(slug) ?? null;
    if (!market && this.fallback) {
      market = this.fallback(slug);
      if (market) this.markets.set(slug, market);
    }
    let body: unknown[];
    if (url.pathname === "/markets") body = market && !this.onlyInEvents.has(slug) ? [market] : [];
    else if (url.pathname === "/events")
      body = market ? [{ id: `ev-${market.id}`, slug, markets: [market] }] : [];
    else {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  }
}

/** A Gamma market object for an Up or Down market, in the shape of the recorded fixture. */
export function gammaMarket(slug: string, id: number, tokens: [string, string]): Record<string, unknown> {
  const raw = protocolFixture("gamma-market-btc-updown-5m.json").raw as Record<string, unknown>;
  return {
    ...raw,
    id: String(id),
    slug,
    conditionId: `0xcondition${id}`,
    clobTokenIds: JSON.stringify(tokens),
    closed: false,
    active: true,
    outcomePrices: '["0.5", "0.5"]',
    liquidity: "0",
    liquidityNum: 0,
    volume: "0",
    volumeNum: 0,
  };
}

interface TrueBook {
  bids: Map<number, number>;
  asks: Map<number, number>;
}

function sorted(levels: Map<number, number>, desc: boolean): Level[] {
  return [...levels.entries()]
    .sort((a, b) => (desc ? b[0] - a[0] : a[0] - b[0]))
    .map(([price, size]) => ({ price, size }));
}

/** The CLOB market channel. */
export class FakeClob {
  readonly books = new Map<string, TrueBook>();
  readonly lastTrade = new Map<string, number>();
  private readonly clients = new Map<WebSocket, Set<string>>();
  /** Frames sent to each client connection, so a test can wait until the collector read them all. */
  framesSent = 0;
  /** While frozen the server sends nothing, answers no PING, and holds back subscriptions. */
  private frozen = false;
  private held: { ws: WebSocket; ids: string[] }[] = [];
  /** While refusing, new connections are closed at once. */
  refusing = false;
  /** Trades sent so far; the last `replayTrades` of a token are sent again to each new subscription. */
  readonly tradeLog: Record<string, unknown>[] = [];
  replayTrades = 0;
  /** Gives a book to a token subscribed before any was set (a process test serves any market). */
  autoBook: ((id: string) => OrderBook) | null = null;
  connections = 0;
  /** The upstream's `timestamp` (ms) of the messages it makes; a test sets it (0 until then). */
  nowMs: (() => number) | null = null;
  private hashes = 0;
  /** When a list: every frame sent to a client, with the number of its connection (1 for the first). */
  sent: { connection: number; text: string }[] | null = null;
  private readonly connectionOf = new Map<WebSocket, number>();

  private timestampMs(): number {
    return this.nowMs?.() ?? 0;
  }

  attach(wss: WebSocketServer): void {
    wss.on("connection", (ws) => {
      if (this.refusing) {
        ws.terminate();
        return;
      }
      this.connections++;
      this.connectionOf.set(ws, this.connections);
      this.clients.set(ws, new Set());
      ws.on("close", () => this.clients.delete(ws));
      ws.on("message", (data) => this.onClientMessage(ws, data.toString()));
    });
  }

  get subscribedTokens(): Set<string> {
    const all = new Set<string>();
    for (const ids of this.clients.values()) for (const id of ids) all.add(id);
    return all;
  }

  private onClientMessage(ws: WebSocket, text: string): void {
    if (text === "PING") {
      if (!this.frozen) this.send(ws, "PONG");
      return;
    }
    const m = JSON.parse(text) as { assets_ids?: string[]; type?: string; operation?: string };
    const ids = m.assets_ids ?? [];
    if (this.frozen) {
      this.held.push({ ws, ids });
      return;
    }
    this.subscribe(ws, ids);
  }

  private subscribe(ws: WebSocket, ids: string[]): void {
    const set = this.clients.get(ws);
    if (!set) return;
    for (const id of ids) {
      set.add(id);
      if (!this.books.has(id) && this.autoBook) this.setBook(id, this.autoBook(id), false);
    }
    // The initial dump: every subscribed book in one frame, as an array.
    const books = ids.filter((id) => this.books.has(id)).map((id) => this.bookMessage(id));
    if (books.length > 0) this.send(ws, JSON.stringify(books));
    if (this.replayTrades > 0) {
      const recent = this.tradeLog.filter((t) => ids.includes(String(t.asset_id))).slice(-this.replayTrades);
      if (recent.length > 0) this.send(ws, JSON.stringify(recent));
    }
  }

  private send(ws: WebSocket, text: string): void {
    this.framesSent++;
    this.sent?.push({ connection: this.connectionOf.get(ws) ?? 0, text });
    ws.send(text);
  }

  private broadcast(tokens: string[], text: string): void {
    if (this.frozen) return;
    for (const [ws, ids] of this.clients) if (tokens.some((t) => ids.has(t))) this.send(ws, text);
  }

  /** A frame as it is, to every client: for what a real upstream should never send. */
  sendRaw(text: string): void {
    for (const ws of this.clients.keys()) this.send(ws, text);
  }

  /** Upstream's order: bids ascending and asks descending, best last. */
  bookMessage(id: string): Record<string, unknown> {
    const book = this.books.get(id) as TrueBook;
    const text = (levels: Level[]) => levels.map((l) => ({ price: String(l.price), size: String(l.size) }));
    return {
      event_type: "book",
      asset_id: id,
      market: "0xmarket",
      bids: text(sorted(book.bids, false)),
      asks: text(sorted(book.asks, true)),
      timestamp: String(this.timestampMs()),
      hash: `0x${++this.hashes}`,
      tick_size: "0.01",
      last_trade_price: String(this.lastTrade.get(id) ?? ""),
    };
  }

  setBook(id: string, book: OrderBook, send = true): void {
    this.books.set(id, {
      bids: new Map(book.bids.map((l) => [l.price, l.size])),
      asks: new Map(book.asks.map((l) => [l.price, l.size])),
    });
    if (send) this.broadcast([id], JSON.stringify(this.bookMessage(id)));
  }

  /** One `price_change` message with several entries (each a new total size; 0 removes the level). */
  priceChange(
    changes: { id: string; side: "BUY" | "SELL"; price: number; size: number }[],
    asArray = false,
  ): void {
    // Each entry carries the token's best bid and ask after it, as the upstream's do.
    const entries = changes.map((c) => {
      const book = this.books.get(c.id) as TrueBook;
      const levels = c.side === "BUY" ? book.bids : book.asks;
      if (c.size === 0) levels.delete(c.price);
      else levels.set(c.price, c.size);
      const best = this.trueBook(c.id);
      return {
        asset_id: c.id,
        price: String(c.price),
        side: c.side,
        size: String(c.size),
        hash: `0x${++this.hashes}`,
        best_bid: String(best.bids[0]?.price ?? 0),
        best_ask: String(best.asks[0]?.price ?? 1),
      };
    });
    const message = {
      event_type: "price_change",
      market: "0xmarket",
      timestamp: String(this.timestampMs()),
      price_changes: entries,
    };
    this.broadcast(
      changes.map((c) => c.id),
      JSON.stringify(asArray ? [message] : message),
    );
  }

  /** A trade in the fixture's shape; time, size and side as given (the fixture's own otherwise). */
  trade(
    id: string,
    price: number,
    trade: { timestampMs?: number; size?: string; side?: "BUY" | "SELL"; transactionHash?: string } = {},
  ): void {
    this.lastTrade.set(id, price);
    const base = protocolFixture("ws-market-last-trade-price.json");
    const message = {
      ...base,
      asset_id: id,
      price: String(price),
      ...(trade.timestampMs === undefined ? {} : { timestamp: String(trade.timestampMs) }),
      ...(trade.size === undefined ? {} : { size: trade.size }),
      ...(trade.side === undefined ? {} : { side: trade.side }),
      ...(trade.transactionHash === undefined ? {} : { transaction_hash: trade.transactionHash }),
    };
    this.tradeLog.push(message);
    this.broadcast([id], JSON.stringify(message));
  }

  /** The fixture's `market_resolved`, for a market of these two tokens: `winner` won. */
  resolve(tokens: [string, string], winner: string, timestampMs: number): void {
    const base = protocolFixture("ws-market-resolved.json");
    const message = {
      ...base,
      assets_ids: tokens,
      winning_asset_id: winner,
      winning_outcome: winner === tokens[0] ? "Up" : "Down",
      timestamp: String(timestampMs),
    };
    this.broadcast(tokens, JSON.stringify(message));
  }

  tickSizeChange(id: string, size: string): void {
    this.broadcast(
      [id],
      JSON.stringify({
        event_type: "tick_size_change",
        asset_id: id,
        market: "0xmarket",
        old_tick_size: "0.01",
        new_tick_size: size,
        timestamp: String(this.timestampMs()),
      }),
    );
  }

  /** The true book best first, as the service must serve it. */
  trueBook(id: string): OrderBook {
    const book = this.books.get(id) as TrueBook;
    return { bids: sorted(book.bids, true), asks: sorted(book.asks, false) };
  }

  freeze(): void {
    this.frozen = true;
  }

  /** Ends a freeze: held subscriptions are answered with their books. */
  thaw(): void {
    this.frozen = false;
    for (const { ws, ids } of this.held.splice(0)) this.subscribe(ws, ids);
  }

  /** Drops every connection without a closing handshake, as a network failure would. */
  disconnectAll(): void {
    for (const ws of this.clients.keys()) ws.terminate();
    this.clients.clear();
  }
}

/** The real-time data socket: coin prices of the Chainlink and Binance topics. */
export class FakeRtds {
  private readonly clients = new Set<WebSocket>();
  framesSent = 0;
  /** When a list: every price frame sent to a client. */
  sent: string[] | null = null;
  subscriptions: unknown[] = [];

  attach(wss: WebSocketServer): void {
    wss.on("connection", (ws) => {
      this.clients.add(ws);
      ws.on("close", () => this.clients.delete(ws));
      ws.on("message", (data) => {
        const text = data.toString();
        if (text === "PING") {
          this.framesSent++;
          ws.send("PONG");
        } else this.subscriptions.push(JSON.parse(text));
      });
    });
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** A Chainlink tick (`btc/usd`, value scaled by 1e18 in full_accuracy_value) or a Binance one. */
  price(source: "chainlink" | "binance", coin: string, timestampMs: number, value: string): void {
    const chainlink = source === "chainlink";
    const message = {
      topic: chainlink ? "crypto_prices_chainlink" : "crypto_prices",
      type: "update",
      timestamp: timestampMs + 50,
      payload: {
        symbol: chainlink ? `${coin}/usd` : `${coin}usdt`,
        timestamp: timestampMs,
        value: Number(chainlink ? scaledToDecimal(value) : value),
        full_accuracy_value: value,
      },
    };
    this.sendAll(JSON.stringify(message));
  }

  /** A TWAP stream's update (`crypto_prices_twap_sixty` or `_thirty`), in the shape of the fixture. */
  twap(lookbackS: 30 | 60, coin: string, timestampMs: number, scaled: string): void {
    const base = protocolFixture("rtds-crypto-twap-sixty-update.json");
    const message = {
      ...base,
      topic: lookbackS === 60 ? "crypto_prices_twap_sixty" : "crypto_prices_twap_thirty",
      timestamp: timestampMs + 50,
      payload: {
        symbol: `${coin}/usd`,
        timestamp: timestampMs,
        value: Number(scaledToDecimal(scaled)),
        full_accuracy_value: scaled,
        window_s: lookbackS,
      },
    };
    this.sendAll(JSON.stringify(message));
  }

  private sendAll(text: string): void {
    for (const ws of this.clients) {
      this.framesSent++;
      this.sent?.push(text);
      ws.send(text);
    }
  }
}

export function scaledToDecimal(scaled: string): string {
  const padded = scaled.padStart(19, "0");
  return `${padded.slice(0, -18)}.${padded.slice(-18)}`;
}

export interface PolymarketUpstream {
  gamma: FakeGamma;
  clob: FakeClob;
  rtds: FakeRtds;
  gammaUrl: string;
  clobUrl: string;
  rtdsUrl: string;
  close(): Promise<void>;
}

/** Starts the three upstream servers on one loopback port: HTTP for Gamma, two WebSocket paths. */
export async function startPolymarketUpstream(): Promise<PolymarketUpstream> {
  const gamma = new FakeGamma();
  const clob = new FakeClob();
  const rtds = new FakeRtds();
  const server: Server = createServer((req, res) => gamma.handle(req, res));
  const clobWss = new WebSocketServer({ noServer: true });
  const rtdsWss = new WebSocketServer({ noServer: true });
  clob.attach(clobWss);
  rtds.attach(rtdsWss);
  server.on("upgrade", (req, socket, head) => {
    const wss = req.url?.startsWith("/ws/market") ? clobWss : req.url?.startsWith("/rtds") ? rtdsWss : null;
    if (!wss) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    gamma,
    clob,
    rtds,
    gammaUrl: `http://127.0.0.1:${port}`,
    clobUrl: `ws://127.0.0.1:${port}/ws/market`,
    rtdsUrl: `ws://127.0.0.1:${port}/rtds`,
    close: async () => {
      for (const wss of [clobWss, rtdsWss]) for (const ws of wss.clients) ws.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Resolves once `condition` holds, checking every few milliseconds (after `poll`, when given, which
 * can fetch what the condition looks at); fails after `ms`, saying `what` (a function is asked when it
 * fails, so that it can tell what a process had printed by then).
 */
export async function until(
  condition: () => boolean,
  what: string | (() => string),
  ms = 5000,
  poll?: () => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    await poll?.();
    if (condition()) return;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, poll ? 50 : 2));
  }
}

/**
 * The Gamma record of a 5-minute market settled on the 60 s TWAP stream (the fixture captured after
 * the switch), for a market of our choosing: live, its price to beat not known yet unless given.
 */
export function twapGammaMarket(
  slug: string,
  id: number,
  tokens: [string, string],
  startTime: number,
): Record<string, unknown> {
  const raw = protocolFixture("gamma-market-twap-btc-5m.json");
  return {
    ...raw,
    id: String(id),
    slug,
    conditionId: `0xcondition${id}`,
    clobTokenIds: JSON.stringify(tokens),
    eventStartTime: new Date(startTime * 1000).toISOString(),
    endDate: new Date((startTime + 300) * 1000).toISOString(),
    outcomePrices: '["0.5", "0.5"]',
  };
}
