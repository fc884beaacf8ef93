import { hash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { isResolved } from "../../domain/market.ts";
import type { SortOrder } from "../../domain/snapshot.ts";
import { isoMicros } from "../../domain/time.ts";
import { JsonBytes } from "../../domain/json-bytes.ts";
import { marketToWire, snapshotJson, writeSnapshotJson } from "../../domain/wire.ts";
import type { StoredMarket } from "../../store/market-store.ts";
import type { AppContext } from "../app.ts";
import { notFound } from "../errors.ts";
import type { CachedPage } from "../page-cache.ts";
import { openMarket, timeParam, timeRange } from "../params.ts";
import { errorResponses, slugParams, timeParam as timeParamSchema } from "../schemas.ts";

interface PageQuery {
  limit: number;
  offset: number;
  include_orderbook: boolean;
  order: SortOrder;
  start_time?: string;
  end_time?: string;
}

const includeOrderbook = {
  type: "boolean",
  default: false,
  description: "Include orderbook_up and orderbook_down (best first) on every snapshot",
};

const pageSchema = {
  tags: ["snapshots"],
  summary: "A market and a page of its per-second snapshots, newest first",
  description:
    "Page by increasing offset by limit until offset reaches total. total counts every snapshot of the market (within start_time/end_time when given).",
  params: slugParams,
  querystring: {
    type: "object",
    properties: {
      limit: { type: "integer", minimum: 1, maximum: 1000, default: 1000 },
      offset: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
      include_orderbook: includeOrderbook,
      order: { type: "string", enum: ["desc", "asc"], default: "desc" },
      start_time: timeParamSchema("Snapshots at or after"),
      end_time: timeParamSchema("Snapshots at or before"),
    },
  },
  response: {
    200: {
      type: "object",
      properties: {
        market: { $ref: "Market#" },
        snapshots: { type: "array", items: { $ref: "Snapshot#" } },
        total: { type: "integer" },
        limit: { type: "integer" },
        offset: { type: "integer" },
      },
      required: ["market", "snapshots", "total", "limit", "offset"],
    },
    304: {
      type: "null",
      description: "Not modified (If-None-Match matched the ETag of a resolved market's page)",
    },
    ...errorResponses,
  },
};

const atSchema = {
  tags: ["snapshots"],
  summary: "The snapshot in effect at a time: the latest at or before it",
  params: slugParams,
  querystring: {
    type: "object",
    properties: {
      time: timeParamSchema("The time to look up"),
      include_orderbook: includeOrderbook,
    },
    required: ["time"],
  },
  response: {
    200: {
      type: "object",
      properties: {
        slug: { type: "string" },
        requested_time: { type: "string", format: "date-time" },
        distance_us: { type: "integer", description: "Microseconds from the snapshot to the requested time" },
        snapshot: { $ref: "Snapshot#" },
      },
      required: ["slug", "requested_time", "distance_us", "snapshot"],
    },
    ...errorResponses,
  },
};

/** Pages are written into one reused buffer (rendering is synchronous), then copied out at their size. */
const pageBytes = new JsonBytes(1 << 20);

async function renderPage(
  ctx: AppContext,
  market: StoredMarket,
  q: PageQuery,
  from: number | undefined,
  to: number | undefined,
): Promise<Buffer> {
  const ranged = from !== undefined || to !== undefined;
  const total = ranged ? await ctx.store.markets.countSnapshots(market.key, from, to) : market.snapshotCount;
  const rows =
    q.offset >= total
      ? []
      : await ctx.store.markets.snapshotPage(market.key, {
          order: q.order,
          limit: q.limit,
          offset: q.offset,
          from,
          to,
          books: q.include_orderbook,
          total,
        });
  const w = pageBytes;
  w.reset();
  w.ascii('{"market":');
  w.utf8(JSON.stringify(marketToWire(market)));
  w.ascii(',"snapshots":[');
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) w.byte(44);
    writeSnapshotJson(w, rows[i], q.include_orderbook);
  }
  w.ascii(`],"total":${total},"limit":${q.limit},"offset":${q.offset}}`);
  return w.toBuffer();
}

function sendJson(reply: FastifyReply, body: string | Buffer) {
  return reply.type("application/json; charset=utf-8").send(body);
}

export function snapshotRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Params: { slug: string }; Querystring: PageQuery }>(
    "/markets/:slug/snapshots",
    { schema: pageSchema },
    async (req: FastifyRequest<{ Params: { slug: string }; Querystring: PageQuery }>, reply) => {
      const q = req.query;
      const { from, to } = timeRange(q.start_time, q.end_time);
      const market = await openMarket(ctx, req, req.params.slug);
      if (!isResolved(market)) return sendJson(reply, await renderPage(ctx, market, q, from, to));

      // A resolved market's pages never change; the key names the exact version of the market.
      const key = `${market.key}:${market.updatedAt}:${market.snapshotCount}:${q.order}:${q.limit}:${q.offset}:${from}:${to}:${q.include_orderbook}`;
      let page: CachedPage | undefined = ctx.pageCache.get(key);
      if (!page) {
        const body = await renderPage(ctx, market, q, from, to);
        page = { body, etag: `"${hash("sha1", key, "base64url")}"` };
        ctx.pageCache.set(key, page);
      }
      reply.header("etag", page.etag);
      reply.header("cache-control", "private, max-age=86400");
      if (req.headers["if-none-match"] === page.etag) return reply.code(304).send();
      return sendJson(reply, page.body);
    },
  );

  app.get<{ Params: { slug: string }; Querystring: { time: string; include_orderbook: boolean } }>(
    "/markets/:slug/snapshots/at",
    { schema: atSchema },
    async (req, reply) => {
      const time = timeParam("time", req.query.time) as number;
      const market = await openMarket(ctx, req, req.params.slug);
      const row = await ctx.store.markets.snapshotAtOrBefore(market.key, time, req.query.include_orderbook);
      if (!row) throw notFound(`Market ${market.slug} has no snapshot at or before ${isoMicros(time)}.`);
      return sendJson(
        reply,
        `{"slug":${JSON.stringify(market.slug)},"requested_time":"${isoMicros(time)}","distance_us":${time - row.time},"snapshot":${snapshotJson(row, req.query.include_orderbook)}}`,
      );
    },
  );
}
