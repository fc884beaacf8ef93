import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { FastifyInstance } from "fastify";
import type { ApiKeyRecord } from "../domain/api-key.ts";
import { isResolved } from "../domain/market.ts";
import { presentedKey } from "./api-key-header.ts";
import { type Encoding, negotiate } from "./compression.ts";
import type { AppContext } from "./context.ts";
import { ALWAYS_HEADERS, CORS_HEADERS } from "./cors.ts";
import type { Metering, Taken } from "./metering.ts";
import { PAGE_CACHE_CONTROL, PageCache, pageKeyOf } from "./page-cache.ts";
import { requestIdOf } from "./request-id.ts";
import { requestCompleted } from "./request-log.ts";
import { JSON_TYPE } from "./media-types.ts";

/**
 * A repeated request for a page the page cache holds, answered from Node's request event without
 * routing it through Fastify (issue 20, point 8: a cached page should cost little more than writing
 * it; Fastify's request, reply, hooks and child logger cost more than the write itself).
 *
 * Nothing here decides anything the app does not: the answer is only taken when the same URL was
 * routed, checked and parsed by the app before (PageCache.rememberRequest), and it runs the app's own
 * steps, in the app's order, through the same objects: the key (KeyService), the plan's access to the
 * market (MarketAccess), the page (PageCache), the windows (Metering.take), the request line and the
 * metrics. Every outcome but "served from the cache" is left to Fastify before anything is counted:
 * a missing or bad key, a market the plan does not open, a page evicted, an encoding not made yet, a
 * conditional request (If-None-Match), a body, a missing Host, the drain (the server no longer
 * listening: its answers say `Connection: close`). A window that refuses counts nothing (limiter.ts),
 * so Fastify counts and answers the 429 as usual. test/http/cached-page-answers.test.ts holds the
 * answers of both paths to each other, header by header and byte for byte.
 */

/** The route whose answers are taken here, as Fastify names it in logs and metrics. */
const ROUTE = "/v1/markets/:slug/snapshots";
const PREFIX = "/v1/markets/";

/** The headers every such answer carries before its own, in the order the app's hooks set them. */
const LEADING_HEADERS = Object.entries({ ...ALWAYS_HEADERS, ...CORS_HEADERS });

/** What an answer sends: the page's bytes in the encoding negotiated, and its validator. */
interface Answer {
  body: Buffer;
  encoding: Encoding | null;
  etag: string;
}

/** Whether the request could be one answered here, judged by what it says of itself. */
function plainGet(req: IncomingMessage): boolean {
  const h = req.headers;
  return (
    req.method === "GET" &&
    req.url !== undefined &&
    req.url.startsWith(PREFIX) &&
    req.httpVersionMajor === 1 &&
    req.httpVersionMinor === 1 &&
    h.host !== undefined &&
    h["content-length"] === undefined &&
    h["transfer-encoding"] === undefined &&
    h["if-none-match"] === undefined
  );
}

/**
 * Installs the answers in front of the Fastify app's request handler: what they do not take goes to
 * Fastify as if they were not there.
 */
export function answerCachedPages(app: FastifyInstance, ctx: AppContext, metering: Metering): void {
  const server = app.server;
  const listeners = server.listeners("request");
  // Fastify hands Node one request handler; anything else means another layout than this was written for.
  if (listeners.length !== 1) {
    throw new Error(`expected Fastify's one request listener, found ${listeners.length}`);
  }
  const fastify = listeners[0] as RequestListener;
  server.removeListener("request", fastify);
  const answers = new CachedPageAnswers(app, ctx, metering, fastify);
  server.on("request", (req: IncomingMessage, res: ServerResponse) => answers.onRequest(req, res));
}

class CachedPageAnswers {
  private readonly app: FastifyInstance;
  private readonly ctx: AppContext;
  private readonly metering: Metering;
  private readonly fastify: RequestListener;

  constructor(app: FastifyInstance, ctx: AppContext, metering: Metering, fastify: RequestListener) {
    this.app = app;
    this.ctx = ctx;
    this.metering = metering;
    this.fastify = fastify;
  }

  /** Answers the request here if it can; otherwise Fastify does, with nothing counted or written here. */
  onRequest(req: IncomingMessage, res: ServerResponse): void {
    const startedAt = performance.now();
    const found = plainGet(req) ? this.pageFor(req) : null;
    if (found === null) return void this.fastify(req, res);
    const { metering } = this;
    const nowMs = Math.floor(this.ctx.clock.nowMicros() / 1000);
    // A refusal counted nothing: Fastify counts it again and answers the 429.
    const answer = (taken: Taken) =>
      taken.decision.admitted ? this.write(req, res, found.page, taken, startedAt) : this.fastify(req, res);
    const taken = metering.takeNow(found.key, nowMs);
    if (taken !== null) return answer(taken);
    // The shared limiter failed (it answers from memory while Redis is away): the app answers as it would.
    metering.take(found.key, nowMs).then(answer, () => this.fastify(req, res));
  }

  /**
   * The page this request may be answered with and its caller's key, from what the app keeps in memory
   * (nothing read from the store here); null to leave the request to Fastify.
   */
  private pageFor(req: IncomingMessage): { key: ApiKeyRecord; page: Answer } | null {
    const { ctx } = this;
    const asked = ctx.pageCache.requestOf(req.url as string);
    if (asked === undefined || !this.app.server.listening) return null;
    let presented: string | undefined;
    try {
      presented = presentedKey(req.headers);
    } catch {
      return null;
    }
    const key = ctx.keys.authenticateKept(presented);
    if (!key) return null;
    const market = ctx.access.findKept(asked.slug);
    if (!market || !isResolved(market) || ctx.access.canOpenKept(key.plan, market) !== true) return null;
    const page = ctx.pageCache.get(pageKeyOf(asked, market));
    if (!page) return null;
    const encoding = negotiate(req.headers["accept-encoding"]);
    const body = encoding === null ? page.body : PageCache.madeIn(page, encoding);
    if (body === undefined) return null;
    return { key, page: { body, encoding, etag: page.etag } };
  }

  /** The page's answer to a request the limiter admitted: written, logged and counted as the app does. */
  private write(req: IncomingMessage, res: ServerResponse, page: Answer, taken: Taken, startedAt: number) {
    const { ctx } = this;
    this.metering.report(taken.decision);
    const requestId = requestIdOf(req);
    const headers: string[] = ["x-request-id", requestId];
    for (const [name, value] of LEADING_HEADERS) headers.push(name, value);
    for (const name in taken.headers) headers.push(name, taken.headers[name]);
    headers.push("etag", page.etag, "cache-control", PAGE_CACHE_CONTROL, "vary", "Accept-Encoding");
    headers.push("content-type", JSON_TYPE);
    if (page.encoding !== null) headers.push("content-encoding", page.encoding);
    headers.push("content-length", String(page.body.length));
    res.writeHead(200, headers);
    res.end(page.body);
    const elapsedMs = performance.now() - startedAt;
    const url = req.url as string;
    requestCompleted(
      this.app.log,
      ctx.metrics,
      { route: ROUTE, method: "GET", url, statusCode: 200, elapsedMs },
      requestId,
    );
    ctx.metrics.directPageAnswers.inc();
  }
}
