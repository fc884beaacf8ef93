import { hash } from "node:crypto";
import type { FastifyReply } from "fastify";
import { type Static, Type } from "typebox";
import { isResolved } from "../../domain/market.ts";
import { isoMicros } from "../../domain/time.ts";
import { JsonBytes, type LentJson } from "../../wire/json-bytes.ts";
import { marketToWire, snapshotJson } from "../../wire/wire.ts";
import type { StoredMarket } from "../../store/ports/market-store.ts";
import type { SnapshotRow } from "../../domain/snapshot.ts";
import { readSnapshotPage } from "../snapshot-page.ts";
import { snapshotOf } from "../../events/derive.ts";
import { BookEncodingError } from "../../wire/book-codec.ts";
import { bookOfMarketAt } from "./book.ts";
import type { Api, AppContext } from "../context.ts";
import { sendLent } from "../body-buffers.ts";
import { negotiate, varyOnEncoding } from "../compression.ts";
import { notFound } from "../errors.ts";
import { type CachedPage, PAGE_CACHE_CONTROL, pageKey } from "../page-cache.ts";
import { openMarket, timeParam, timeRange } from "../params.ts";
import {
  answer,
  IncludeOrderbook,
  Limit,
  Offset,
  Query,
  Order,
  ref,
  SlugParams,
  TimeParam,
  v1Responses,
} from "../schemas.ts";
import { JSON_TYPE } from "../media-types.ts";

const PageQuery = Query({
  limit: Limit(1000, 1000),
  offset: Offset,
  include_orderbook: IncludeOrderbook,
  order: Order,
  start_time: Type.Optional(TimeParam("Snapshots at or after")),
  end_time: Type.Optional(TimeParam("Snapshots at or before")),
});
type PageQuery = Static<typeof PageQuery>;

const SnapshotPage = Type.Object(
  {
    market: ref("Market"),
    snapshots: Type.Array(ref("Snapshot")),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: "SnapshotPage", additionalProperties: false },
);

const pageSchema = {
  operationId: "listSnapshots",
  tags: ["snapshots"],
  summary: "A market and a page of its per-second snapshots, newest first",
  description:
    "Page by increasing offset by limit until offset reaches total. total counts every snapshot of the market (within start_time/end_time when given).",
  params: SlugParams,
  querystring: PageQuery,
  response: v1Responses(
    {
      200: answer(ref("SnapshotPage"), "The market and a page of its snapshots", {
        ETag: { type: "string", description: "Resolved markets only: the page's version" },
        "Cache-Control": { type: "string", description: "Resolved markets only" },
      }),
      304: answer(
        { type: "null" },
        "Not modified (If-None-Match matched the ETag of a resolved market's page)",
      ),
    },
    { errors: [400, 403, 404] },
  ),
};

const SnapshotAt = Type.Object(
  {
    slug: Type.String(),
    requested_time: Type.String({ format: "date-time" }),
    distance_us: Type.Integer({ description: "Microseconds from the snapshot to the requested time" }),
    snapshot: ref("Snapshot"),
  },
  { $id: "SnapshotAt", additionalProperties: false },
);

export const snapshotComponents = [SnapshotPage, SnapshotAt];

const atSchema = {
  operationId: "getSnapshotAt",
  tags: ["snapshots"],
  summary: "The snapshot in effect at a time: the latest at or before it",
  description:
    "Where the market has events, the snapshot is derived from them at exactly that time (distance_us 0): the " +
    "book every event received by then makes, with the coin price of the latest stored snapshot. Otherwise " +
    "the latest stored snapshot at or before the time, and its distance.",
  params: SlugParams,
  querystring: Query({ time: TimeParam("The time to look up"), include_orderbook: IncludeOrderbook }),
  response: v1Responses(
    { 200: answer(ref("SnapshotAt"), "The snapshot in effect") },
    { errors: [400, 403, 404] },
  ),
};

/**
 * Pages read on this thread are written into one shared writer (writing is synchronous) and its
 * buffer lent to the body (body-buffers.ts), which is given back once the answer has gone.
 */
const pageBytes = new JsonBytes(1 << 20);

/**
 * A market's JSON as it opens a page, made once per record: market-access.ts hands out the same
 * record of a resolved market for a second, so consecutive pages of it share the text.
 */
const marketJson = new WeakMap<StoredMarket, Uint8Array>();
function marketBytes(market: StoredMarket): Uint8Array {
  let bytes = marketJson.get(market);
  if (!bytes) {
    // Its own ArrayBuffer, not a slice of Buffer's pool: a read sent to a page reader thread copies
    // the whole ArrayBuffer under the view.
    bytes = new TextEncoder().encode(JSON.stringify(marketToWire(market)));
    marketJson.set(market, bytes);
  }
  return bytes;
}

/**
 * A page's bytes in a lent buffer: a resolved market's read on a page reader thread when one is
 * ready (page-readers.ts), anything else (and a read a thread failed, whose error is then raised here
 * where every store error is mapped and logged) read on this thread.
 */
async function pageOf(
  ctx: AppContext,
  market: StoredMarket,
  q: PageQuery,
  from: number | undefined,
  to: number | undefined,
): Promise<LentJson> {
  const page = {
    key: market.key,
    snapshotCount: market.snapshotCount,
    resolved: isResolved(market),
    json: marketBytes(market),
  };
  const ask = { order: q.order, limit: q.limit, offset: q.offset, from, to, books: q.include_orderbook };
  const elsewhere = page.resolved ? ctx.pageReaders.read(page, ask) : null;
  if (elsewhere !== null) {
    try {
      return await elsewhere;
    } catch {
      // The thread failed the read or was lost: read here.
    }
  }
  const text = await readSnapshotPage(ctx.store.markets, page, ask);
  const w = pageBytes;
  w.reset();
  text(w);
  return ctx.bodies.lend(w);
}

/** A page sent once and not kept, from its lent buffer. */
const sendOnce = (reply: FastifyReply, page: LentJson) => sendLent(asJson(reply), page);

/** A page to keep: its bytes copied out of the lent buffer, which goes back at once. */
function kept(page: LentJson): Buffer {
  const body = Buffer.from(page.body);
  page.release();
  return body;
}

const asJson = (reply: FastifyReply) => reply.type(JSON_TYPE);

function sendJson(reply: FastifyReply, body: string | Buffer) {
  return asJson(reply).send(body);
}

/**
 * The snapshot at exactly `time` derived from the market's events (src/events/derive.ts), with the coin
 * price of the stored snapshot in effect; null where the events do not give one (none yet, or no book).
 */
async function snapshotFromEvents(
  ctx: AppContext,
  market: StoredMarket,
  time: number,
  coinPrice: number,
): Promise<SnapshotRow | null> {
  const at = await bookOfMarketAt(ctx, market, time);
  if (at === null) return null;
  try {
    return snapshotOf(at.up, at.down, time, coinPrice);
  } catch (err) {
    // A book the codec cannot hold gives no snapshot (as live): the stored one answers.
    if (err instanceof BookEncodingError) return null;
    throw err;
  }
}

export function snapshotRoutes(app: Api, ctx: AppContext): void {
  app.get("/markets/:slug/snapshots", { schema: pageSchema }, async (req, reply) => {
    const q = req.query;
    const { from, to } = timeRange(q.start_time, q.end_time);
    const market = await openMarket(ctx, req, req.params.slug);
    // A page not kept is sent from a lent buffer, compressed by the onSend hook.
    if (!isResolved(market)) return sendOnce(reply, await pageOf(ctx, market, q, from, to));

    // A resolved market's pages never change; the key names the exact version of the market.
    const query = `${q.order}:${q.limit}:${q.offset}:${from}:${to}:${q.include_orderbook}`;
    const key = pageKey(market, query);
    let page: CachedPage | undefined = ctx.pageCache.get(key);
    const etag = page?.etag ?? `"${hash("sha1", key, "base64url")}"`;
    reply.header("etag", etag);
    reply.header("cache-control", PAGE_CACHE_CONTROL);
    varyOnEncoding(reply);
    if (req.headers["if-none-match"] === etag) return reply.code(304).send();
    if (!page) {
      // Kept from its second request (PageCache.admits); the first is sent once.
      if (!ctx.pageCache.admits(key)) return sendOnce(reply, await pageOf(ctx, market, q, from, to));
      page = { body: kept(await pageOf(ctx, market, q, from, to)), etag };
      ctx.pageCache.set(key, page);
    }
    // The same URL, asked again, is answered before routing while the page stays (cached-page-answers.ts).
    ctx.pageCache.rememberRequest(req.url, req.params.slug, query);
    const encoding = negotiate(req.headers["accept-encoding"]);
    if (encoding === null) return sendJson(reply, page.body);
    const bytes = await ctx.pageCache.encoded(key, page, encoding);
    return sendJson(reply.header("content-encoding", encoding), bytes);
  });

  app.get("/markets/:slug/snapshots/at", { schema: atSchema }, async (req, reply) => {
    const time = timeParam("time", req.query.time) as number;
    const market = await openMarket(ctx, req, req.params.slug);
    const stored = await ctx.store.markets.snapshotAtOrBefore(market.key, time, req.query.include_orderbook);
    if (!stored) throw notFound(`Market ${market.slug} has no snapshot at or before ${isoMicros(time)}.`);
    const row = (await snapshotFromEvents(ctx, market, time, stored.coinPrice)) ?? stored;
    return sendJson(
      reply,
      `{"slug":${JSON.stringify(market.slug)},"requested_time":"${isoMicros(time)}","distance_us":${time - row.time},"snapshot":${snapshotJson(row, req.query.include_orderbook)}}`,
    );
  });
}
