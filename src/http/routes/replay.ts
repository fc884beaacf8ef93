import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { Readable } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import { Type } from "typebox";
import { type RawData, type WebSocket, WebSocketServer } from "ws";
import { type LimitDecision, stateOf } from "../../access/limiter/limiter.ts";
import type { ApiKeyRecord } from "../../domain/api-key.ts";
import type { MarketEvent } from "../../domain/event.ts";
import { limitsOf } from "../../domain/plan.ts";
import { isoSeconds } from "../../domain/time.ts";
import type { StoredMarket } from "../../store/ports/market-store.ts";
import { isStoreUnavailable } from "../../store/errors.ts";
import type { Api, AppContext } from "../context.ts";
import {
  ApiError,
  notFound,
  secondsUntil,
  tierAccessDenied,
  unauthorized,
  validationError,
} from "../errors.ts";
import { rateLimitHeaders, requestWindows, withStates } from "../metering.ts";
import { callerOf, timeParam } from "../params.ts";
import {
  type EventSource,
  MAX_SPEED,
  type ReplayOutcome,
  type ReplaySession,
  type ReplaySpeed,
  replayMessages,
} from "../replay.ts";
import { answer, Query, TimeParam, v1Responses } from "../schemas.ts";
import { cheapestPlanWith } from "../../domain/plan.ts";

/**
 * Replays over Polymarket's own market-channel protocol (DESIGN 3.10, docs/events.md): the WebSocket
 * `/v1/replay/ws` and the same messages as NDJSON at `/v1/replay`.
 */

/** The longest range one replay may ask for. */
const MAX_SPAN_MS = 7 * 86_400_000;
/** Assets one subscription may name. */
const MAX_ASSETS = 100;
/** A market-hour: the unit a replay is charged in. */
const HOUR_MS = 3_600_000;
/** Bytes a replay lets wait in its socket before it stops for the reader. */
export const REPLAY_HIGH_WATER = 256 * 1024;
/** How long a connected client has to send its subscribe message. */
const SUBSCRIBE_WAIT_MS = 30_000;

/**
 * Close codes (docs/events.md): 1000 when every message was sent, 1001 when the server stops, the
 * rest the HTTP statuses' meaning plus 4000.
 */
export const CLOSE_CODES = {
  done: 1000,
  goingAway: 1001,
  badRequest: 4400,
  unauthorized: 4401,
  forbidden: 4403,
  notFound: 4404,
  subscribeTimeout: 4408,
  rateLimited: 4429,
  internal: 4500,
  unavailable: 4503,
} as const;

const CLOSE_OF_STATUS: Record<number, number> = {
  400: CLOSE_CODES.badRequest,
  401: CLOSE_CODES.unauthorized,
  403: CLOSE_CODES.forbidden,
  404: CLOSE_CODES.notFound,
  429: CLOSE_CODES.rateLimited,
  503: CLOSE_CODES.unavailable,
};

/** The subprotocol a browser offers its key in: `updown-key.<key>` (it cannot set headers). */
const KEY_PROTOCOL = "updown-key.";

const ReplayQuery = Query({
  assets_ids: Type.String({
    maxLength: 10_000,
    description:
      "Comma-separated token ids (asset ids) and/or market slugs, as in the WebSocket's subscribe message",
  }),
  from: TimeParam("Replay events whose upstream timestamp is at or after"),
  to: TimeParam("Replay events whose upstream timestamp is at or before (at most 7 days after from)"),
  speed: Type.String({
    maxLength: 10,
    default: "1",
    description: `max (as fast as the reader takes them) or a number from 1 to ${MAX_SPEED}: how many times faster than recorded`,
  }),
});

const replayDescription =
  "The recorded market-channel messages of the assets (token ids or market slugs), in receive order across the " +
  "markets, each exactly as Polymarket sent it, paced by the receive times divided by speed. Costs one request " +
  "per market-hour it covers (each market's events within from..to, rounded up to whole hours; at least 1), " +
  "charged before the first message: 429 when the day has less left (details.cost). docs/events.md.";

const replaySchema = {
  operationId: "replay",
  tags: ["events"],
  summary: "Replay recorded messages as NDJSON (one upstream message a line), paced",
  description: replayDescription,
  querystring: ReplayQuery,
  response: v1Responses(
    {
      200: answer(
        {
          content: {
            "application/x-ndjson": {
              schema: { type: "string", description: "One upstream message a line, as it was sent" },
            },
          },
        },
        "The messages, streamed",
        { "X-Replay-Cost": { type: "string", required: true, description: "Requests the replay cost" } },
      ),
    },
    { errors: [400, 403, 404] },
  ),
};

const wsSchema = {
  operationId: "replayWebSocket",
  tags: ["events"],
  summary: "WebSocket replay in Polymarket's market-channel protocol (upgrade required)",
  description:
    "Connect with a WebSocket (ws://host/v1/replay/ws?from=...&to=...&speed=...), send Polymarket's subscribe " +
    'message {"assets_ids": [...], "type": "market"} (market slugs accepted too), and read. The key goes in ' +
    "X-API-Key, Authorization: Bearer, the subprotocol updown-key.<key>, or the api_key query parameter. " +
    "The connection closes with 1000 after the last message; refusals close with 4400, 4401, 4403, 4404, 4408, " +
    "4429, 4500 or 4503 and a reason. A plain GET (no upgrade) is answered 400. " +
    replayDescription,
  querystring: Type.Object({
    from: TimeParam("Replay events whose upstream timestamp is at or after"),
    to: TimeParam("Replay events whose upstream timestamp is at or before"),
    speed: Type.Optional(Type.String({ maxLength: 10, description: "max, or 1 to 1000 (default 1)" })),
    api_key: Type.Optional(Type.String({ maxLength: 100, description: "The key, for a browser" })),
  }),
  response: v1Responses(
    {
      101: answer({ type: "null" }, "Switching Protocols: the replay's WebSocket (the answer to an upgrade)"),
    },
    { errors: [400] },
  ),
};

interface ReplayParams {
  fromMs: number;
  toMs: number;
  speed: ReplaySpeed;
}

/** from, to and speed as a replay takes them, or the 400 naming the first one wrong. */
export function replayParams(query: { from?: string; to?: string; speed?: string }): ReplayParams {
  for (const name of ["from", "to"] as const) {
    if (query[name] === undefined || query[name] === "")
      throw validationError(`${name} is required`, { parameter: name, rule: "required" });
  }
  const fromMs = Math.ceil((timeParam("from", query.from) as number) / 1000);
  const toMs = Math.floor((timeParam("to", query.to) as number) / 1000);
  if (fromMs > toMs) throw validationError("from must not be after to", { parameter: "from", rule: "range" });
  if (toMs - fromMs > MAX_SPAN_MS)
    throw validationError("to must be at most 7 days after from", { parameter: "to", rule: "range" });
  return { fromMs, toMs, speed: speedParam(query.speed) };
}

function speedParam(text: string | undefined): ReplaySpeed {
  if (text === undefined || text === "") return 1;
  if (text.toLowerCase() === "max") return "max";
  const speed = /^[0-9]+(\.[0-9]+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!(speed >= 1 && speed <= MAX_SPEED))
    throw validationError(`speed must be max or a number from 1 to ${MAX_SPEED}`, {
      parameter: "speed",
      rule: "range",
    });
  return speed;
}

/** The assets of a subscribe message (the JSON text a Polymarket client sends), or a 400. */
export function subscribedAssets(text: string): string[] {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    throw validationError("the subscribe message is not JSON", { parameter: "subscribe", rule: "json" });
  }
  const m = message as { assets_ids?: unknown; type?: unknown } | null;
  if (typeof m !== "object" || m === null || Array.isArray(m))
    throw validationError("the subscribe message must be an object", {
      parameter: "subscribe",
      rule: "type",
    });
  if (typeof m.type !== "string" || m.type.toLowerCase() !== "market")
    throw validationError('the subscribe message\'s type must be "market"', {
      parameter: "type",
      rule: "enum",
    });
  return assetList(m.assets_ids);
}

function assetList(value: unknown): string[] {
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    value.length > MAX_ASSETS ||
    !value.every((a) => typeof a === "string" && a.length > 0 && a.length <= 200)
  ) {
    throw validationError(`assets_ids must be a list of 1 to ${MAX_ASSETS} token ids or market slugs`, {
      parameter: "assets_ids",
      rule: "type",
    });
  }
  return [...new Set(value as string[])];
}

/** One market of a replay: which of its tokens were asked for (both: every message). */
interface ReplayMarket {
  market: StoredMarket;
  tokens: Set<string>;
}

const TOKEN_RE = /^[0-9]+$/;

/** The tokens a market-channel message concerns. */
function tokensOf(message: Readonly<Record<string, unknown>>): string[] {
  if (typeof message.asset_id === "string") return [message.asset_id];
  const changes = message.price_changes;
  if (Array.isArray(changes))
    return changes.map((c) => (c as { asset_id?: unknown }).asset_id).filter((a) => typeof a === "string");
  return Array.isArray(message.assets_ids) ? message.assets_ids.filter((a) => typeof a === "string") : [];
}

/**
 * The markets of the assets, each once, in the order first named; 404 for an asset no market has,
 * 403 for a market the plan does not open. A token is looked for among the markets starting from two
 * days before `from` to a day after `to` (the collector records a market from at most a day before it
 * starts until just after it resolves).
 */
async function marketsOf(
  ctx: AppContext,
  plan: ApiKeyRecord["plan"],
  assets: string[],
  p: ReplayParams,
): Promise<ReplayMarket[]> {
  const out: ReplayMarket[] = [];
  const add = (market: StoredMarket, tokens: string[]) => {
    const known = out.find((m) => m.market.key === market.key);
    if (known) for (const t of tokens) known.tokens.add(t);
    else out.push({ market, tokens: new Set(tokens) });
  };
  const tokens = assets.filter((a) => TOKEN_RE.test(a));
  if (tokens.length > 0) {
    const { markets } = await ctx.store.markets.listMarkets({
      startFrom: Math.floor(p.fromMs / 1000) - 2 * 86_400,
      startTo: Math.floor(p.toMs / 1000) + 86_400,
      limit: 1_000_000,
      offset: 0,
    });
    const byToken = new Map<string, StoredMarket>();
    for (const m of markets) {
      byToken.set(m.clobTokenUp, m);
      byToken.set(m.clobTokenDown, m);
    }
    for (const t of tokens) {
      const m = byToken.get(t);
      if (!m) throw notFound(`No market with token ${t} around ${isoSeconds(Math.floor(p.fromMs / 1000))}.`);
      add(m, [t]);
    }
  }
  for (const slug of assets.filter((a) => !TOKEN_RE.test(a))) {
    const m = await ctx.access.find(slug);
    if (!m) throw notFound(`No market with slug ${slug}.`);
    add(m, [m.clobTokenUp, m.clobTokenDown]);
  }
  for (const { market } of out) {
    if (await ctx.access.canOpen(plan, market)) continue;
    const required = cheapestPlanWith(ctx.plans, (pl) => pl.history[market.coin] === undefined);
    throw tierAccessDenied(`The ${plan} plan does not open ${market.slug}.`, required);
  }
  return out;
}

/** What the replay costs: each market's event span within from..to in whole hours, at least 1 in all. */
async function costOf(ctx: AppContext, markets: ReplayMarket[], p: ReplayParams): Promise<number> {
  let hours = 0;
  for (const { market } of markets) {
    const span = await ctx.store.events.marketEventSpan(market.key);
    if (span === null) continue;
    const lo = Math.max(p.fromMs, span.firstTimestampMs);
    const hi = Math.min(p.toMs, span.lastTimestampMs);
    if (lo <= hi) hours += Math.max(1, Math.ceil((hi - lo) / HOUR_MS));
  }
  return Math.max(1, hours);
}

/**
 * Charges the day window the replay's cost beyond the one request already counted, all or nothing;
 * answers the windows as they now stand, or throws the 429 (DESIGN 3.10).
 */
async function charge(
  ctx: AppContext,
  key: ApiKeyRecord,
  counted: LimitDecision | null,
  cost: number,
): Promise<Record<string, string> | null> {
  const nowMs = Math.floor(ctx.clock.nowMicros() / 1000);
  const limits = limitsOf(ctx.plans, key);
  if (cost <= 1 || ctx.unmetered) return null;
  const charged = await ctx.limiter.limit(`key:${key.id}`, requestWindows(limits, "day"), cost - 1, nowMs);
  const decision = counted ? withStates(counted, charged) : charged;
  if (charged.admitted) return rateLimitHeaders(key.plan, decision, nowMs);
  const day = stateOf(charged, "day");
  const remaining = Math.max(0, (limits.perDay ?? 0) - day.used);
  const retryAfter = secondsUntil(day.resetAt, nowMs);
  throw new ApiError(
    "RATE_LIMIT_EXCEEDED",
    `Daily request limit too low for this replay: it costs ${cost} requests (one per market-hour) and ${remaining} are left today.`,
    {
      window: "day",
      cost,
      remaining,
      limit: limits.perDay,
      reset_at: isoSeconds(day.resetAt),
      retry_after: retryAfter,
    },
    { "retry-after": String(retryAfter) },
  );
}

/** The store's streams of the markets, each holding only the messages of the tokens asked for. */
function sourceOf(ctx: AppContext, markets: ReplayMarket[]): EventSource {
  const counted = ctx.replays.counted((key, range) => ctx.store.events.streamMarketEvents(key, range));
  return (key, range) => {
    const m = markets.find((r) => r.market.key === key) as ReplayMarket;
    const all = m.tokens.has(m.market.clobTokenUp) && m.tokens.has(m.market.clobTokenDown);
    if (all) return counted(key, range);
    return onlyTokens(counted(key, range), m.tokens);
  };
}

async function* onlyTokens(blocks: AsyncIterable<MarketEvent[]>, tokens: Set<string>) {
  for await (const block of blocks) yield block.filter((e) => tokensOf(e.message).some((t) => tokens.has(t)));
}

interface PreparedReplay {
  markets: ReplayMarket[];
  params: ReplayParams;
  cost: number;
}

async function prepare(ctx: AppContext, key: ApiKeyRecord, assets: string[], params: ReplayParams) {
  const markets = await marketsOf(ctx, key.plan, assets, params);
  return { markets, params, cost: await costOf(ctx, markets, params) } satisfies PreparedReplay;
}

function messagesOf(ctx: AppContext, r: PreparedReplay, signal: AbortSignal) {
  const plan = {
    marketKeys: r.markets.map((m) => m.market.key),
    range: { fromMs: r.params.fromMs, toMs: r.params.toMs },
    speed: r.params.speed,
  };
  return replayMessages(sourceOf(ctx, r.markets), plan, ctx, signal);
}

// ---------------------------------------------------------------- WebSocket

/** The key a WebSocket client presented: X-API-Key, Authorization: Bearer, the subprotocol, or ?api_key. */
function presentedKey(req: IncomingMessage, query: URLSearchParams): string | undefined {
  const header = req.headers["x-api-key"];
  if (typeof header === "string" && header !== "") return header;
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
  if (bearer) return bearer[1];
  for (const p of (req.headers["sec-websocket-protocol"] ?? "").split(",")) {
    const name = p.trim();
    if (name.startsWith(KEY_PROTOCOL)) return name.slice(KEY_PROTOCOL.length);
  }
  return query.get("api_key") ?? undefined;
}

/** A refusal as a close: the code of its status and its message, cut to the 123 bytes a reason may have. */
function closeFor(err: unknown): { code: number; reason: string } {
  if (err instanceof ApiError) {
    const code = CLOSE_OF_STATUS[err.status] ?? CLOSE_CODES.internal;
    return {
      code,
      reason: Buffer.from(err.message)
        .subarray(0, 123)
        .toString("utf8")
        .replace(/\uFFFD$/, ""),
    };
  }
  if (isStoreUnavailable(err))
    return { code: CLOSE_CODES.unavailable, reason: "A backing store is unreachable; retry shortly." };
  return { code: CLOSE_CODES.internal, reason: "An internal error occurred." };
}

/**
 * The first text message (the subscribe), or null when the client leaves or sends none in time;
 * Polymarket's "PING" keep-alives are answered "PONG", before and after it. Listens from the moment
 * the socket opens, so that a subscribe sent at once is never missed.
 */
function subscribeMessage(ws: WebSocket, signal: AbortSignal): Promise<string | null> {
  return new Promise((resolve) => {
    let first = true;
    // A deadline on the wall clock, not the replay's: it guards the server, it paces nothing.
    const timer = setTimeout(() => finish(null), SUBSCRIBE_WAIT_MS);
    const finish = (text: string | null) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      if (first) resolve(text);
      first = false;
    };
    const onAbort = () => finish(null);
    ws.on("message", (data: RawData, isBinary: boolean) => {
      const text = isBinary ? "" : data.toString();
      if (text === "PING") ws.send("PONG");
      else if (first) finish(text);
    });
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The socket under a WebSocket, whose "drain" says the reader has taken what was waiting. */
function rawSocket(ws: WebSocket): Duplex {
  // ws keeps its socket in a private field; waiting on its "drain" is how a sender follows the reader.
  return (ws as unknown as { _socket: Duplex })._socket;
}

/** Waits until the socket has room again (or the reader is gone). */
function drained(ws: WebSocket, signal: AbortSignal): Promise<void> {
  const socket = rawSocket(ws);
  return new Promise((resolve) => {
    const done = () => {
      socket.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    socket.on("drain", done);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Sends a batch of a replay's messages, in one write rather than one system call each (ws writes
 * every frame as it is sent): the socket is corked while they are queued. Past the high-water mark
 * the kernel takes what it has room for first; what it leaves means the reader is behind, and the
 * replay waits for it rather than buffer (a slow reader slows the replay).
 */
async function sendBatch(
  ctx: AppContext,
  ws: WebSocket,
  session: ReplaySession,
  batch: readonly string[],
  signal: AbortSignal,
): Promise<void> {
  const socket = rawSocket(ws);
  socket.cork();
  try {
    for (const message of batch) {
      if (signal.aborted) return;
      ws.send(message);
      session.sent++;
      const waiting = ws.bufferedAmount;
      if (waiting > session.bufferedHigh) session.bufferedHigh = waiting;
      if (waiting <= REPLAY_HIGH_WATER) continue;
      socket.uncork();
      if (ws.bufferedAmount > REPLAY_HIGH_WATER) {
        session.drainWaits++;
        ctx.replays.emit("wait", session);
        await drained(ws, signal);
      }
      socket.cork();
    }
  } finally {
    // Whatever ends the batch, what it queued leaves (a close frame after it would wait otherwise).
    socket.uncork();
  }
}

async function runSocket(
  ctx: AppContext,
  log: FastifyBaseLogger,
  ws: WebSocket,
  req: IncomingMessage,
  session: ReplaySession,
) {
  const gone = new AbortController();
  ws.on("close", () => gone.abort());
  ws.on("error", () => gone.abort());
  const subscribe = subscribeMessage(ws, gone.signal);
  let outcome: ReplayOutcome = "refused";
  try {
    const url = new URL(req.url ?? "/", "http://replay");
    const params = replayParams({
      from: url.searchParams.get("from") ?? undefined,
      to: url.searchParams.get("to") ?? undefined,
      speed: url.searchParams.get("speed") ?? undefined,
    });
    const key = await authenticated(ctx, req, url.searchParams);
    const counted = ctx.unmetered ? null : await countRequest(ctx, key);
    const text = await subscribe;
    if (gone.signal.aborted) return void (outcome = "disconnected");
    if (text === null) {
      ws.close(CLOSE_CODES.subscribeTimeout, `No subscribe message within ${SUBSCRIBE_WAIT_MS / 1000} s.`);
      return;
    }
    const replay = await prepare(ctx, key, subscribedAssets(text), params);
    await charge(ctx, key, counted, replay.cost);
    outcome = "failed";
    for await (const batch of messagesOf(ctx, replay, gone.signal)) {
      await sendBatch(ctx, ws, session, batch, gone.signal);
      if (gone.signal.aborted) break;
    }
    if (gone.signal.aborted) return void (outcome = "disconnected");
    outcome = "complete";
    ws.close(CLOSE_CODES.done, "Replay complete.");
  } catch (err) {
    if (gone.signal.aborted) return void (outcome = "disconnected");
    const { code, reason } = closeFor(err);
    if (code === CLOSE_CODES.internal) log.error({ err }, "replay failed");
    ws.close(code, reason);
  } finally {
    ctx.replays.end(session, outcome);
  }
}

/** The caller of an unmetered app (benchmarks): an enterprise key. */
const UNMETERED_REPLAY: ApiKeyRecord = {
  id: "unmetered",
  hash: "",
  plan: "enterprise",
  account: "unmetered",
  name: null,
  createdAt: 0,
  revokedAt: null,
  perMinuteLimit: null,
  perDayLimit: null,
};

async function authenticated(
  ctx: AppContext,
  req: IncomingMessage,
  query: URLSearchParams,
): Promise<ApiKeyRecord> {
  if (ctx.unmetered) return UNMETERED_REPLAY;
  const key = await ctx.keys.authenticate(presentedKey(req, query));
  if (key) return key;
  // Failures are throttled per address as on every route (DESIGN 3.2).
  const nowMs = Math.floor(ctx.clock.nowMicros() / 1000);
  const windows = requestWindows({ perMinute: ctx.config.authFailuresPerMinute, perDay: null }, "minute");
  const decision = await ctx.limiter.limit(`auth:${req.socket.remoteAddress ?? ""}`, windows, 1, nowMs);
  if (decision.admitted) throw unauthorized();
  throw new ApiError("RATE_LIMIT_EXCEEDED", "Too many failed authentication attempts from this address.");
}

/** The connection counts once in the minute and the day window, as any request (DESIGN 3.2). */
async function countRequest(ctx: AppContext, key: ApiKeyRecord) {
  const nowMs = Math.floor(ctx.clock.nowMicros() / 1000);
  const decision = await ctx.limiter.limit(
    `key:${key.id}`,
    requestWindows(limitsOf(ctx.plans, key)),
    1,
    nowMs,
  );
  if (decision.admitted) return decision;
  const window = decision.rejectedBy ?? "minute";
  throw new ApiError("RATE_LIMIT_EXCEEDED", `Rate limit exceeded (the ${window} window); retry later.`);
}

/** Takes the upgrades of /v1/replay/ws off the HTTP server; refuses every other upgrade with 404. */
function attachWebSocket(app: Api, ctx: AppContext): void {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 64 * 1024,
    handleProtocols: (offered) => {
      if (offered.has("updown")) return "updown";
      return offered.values().next().value ?? false;
    },
  });
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/v1/replay/ws") {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      void runSocket(ctx, app.log, ws, req, ctx.replays.start());
    });
  };
  app.server.on("upgrade", onUpgrade);
  // Replays in flight end with 1001 when the server stops (before it waits for its connections).
  app.addHook("preClose", async () => {
    app.server.off("upgrade", onUpgrade);
    for (const client of wss.clients) client.close(CLOSE_CODES.goingAway, "The server is stopping.");
    wss.close();
  });
}

// ---------------------------------------------------------------- routes

export function replayRoutes(app: Api, ctx: AppContext): void {
  attachWebSocket(app, ctx);
  const replays = ctx.replays;
  ctx.metrics.gauge(
    "updown_replays_active",
    "Replays in flight (WebSocket and NDJSON).",
    () => replays.active,
  );
  ctx.metrics.gauge(
    "updown_replay_store_streams_open",
    "Store streams of events the replays in flight hold open.",
    () => replays.openStreams,
  );
  ctx.metrics.gauge(
    "updown_replay_messages_sent",
    "Messages sent by the replays that ended in this process.",
    () => replays.messagesSent,
  );

  app.get("/replay/ws", { schema: wsSchema }, async () => {
    throw validationError(
      "GET /v1/replay/ws is a WebSocket: connect with Upgrade: websocket (docs/events.md).",
      {
        parameter: "upgrade",
        rule: "required",
      },
    );
  });

  app.get("/replay", { schema: replaySchema }, async (req, reply) => {
    const q = req.query;
    const params = replayParams(q);
    const assets = assetList(
      q.assets_ids
        .split(",")
        .map((a) => a.trim())
        .filter((a) => a !== ""),
    );
    const key = callerOf(req);
    const replay = await prepare(ctx, key, assets, params);
    const headers = await charge(ctx, key, req.limitDecision, replay.cost);
    if (headers) reply.headers(headers);
    reply.header("x-replay-cost", String(replay.cost)).type("application/x-ndjson; charset=utf-8");
    const gone = new AbortController();
    // Pulled as the client reads (a slow reader slows the replay); a client gone closes the streams.
    async function* lines() {
      const session = ctx.replays.start();
      let outcome: ReplayOutcome = "disconnected";
      try {
        for await (const batch of messagesOf(ctx, replay, gone.signal)) {
          session.sent += batch.length;
          yield `${batch.join("\n")}\n`;
        }
        if (!gone.signal.aborted) outcome = "complete";
      } finally {
        ctx.replays.end(session, outcome);
      }
    }
    const body = Readable.from(lines(), { objectMode: false });
    body.on("close", () => gone.abort());
    return reply.send(body);
  });
}
