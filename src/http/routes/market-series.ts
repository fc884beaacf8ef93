import { hash } from "node:crypto";
import { type Static, Type } from "typebox";
import { downsample, ROWS_PER_BUCKET } from "../../domain/downsample.ts";
import { JsonBytes } from "../../wire/json-bytes.ts";
import { isResolved } from "../../domain/market.ts";
import type { SnapshotRow } from "../../domain/snapshot.ts";
import type { Micros } from "../../domain/time.ts";
import { writeSnapshotJson } from "../../wire/wire.ts";
import type { MarketStore, StoredMarket } from "../../store/ports/market-store.ts";
import { negotiate, varyOnEncoding } from "../compression.ts";
import type { Api, AppContext } from "../context.ts";
import { type CachedPage, PAGE_CACHE_CONTROL } from "../page-cache.ts";
import { openMarket, timeRange } from "../params.ts";
import { answer, Query, ref, SlugParams, TimeParam, v1Responses } from "../schemas.ts";
import { JSON_TYPE } from "../media-types.ts";

const MAX_POINTS = 20_000;

const SeriesQuery = Query({
  points: Type.Integer({
    minimum: ROWS_PER_BUCKET,
    maximum: MAX_POINTS,
    default: 1000,
    description: `At most this many snapshots in the answer (${ROWS_PER_BUCKET}..${MAX_POINTS})`,
  }),
  start_time: Type.Optional(TimeParam("Snapshots at or after")),
  end_time: Type.Optional(TimeParam("Snapshots at or before")),
});
type SeriesQuery = Static<typeof SeriesQuery>;

const Series = Type.Object(
  {
    slug: Type.String(),
    points: Type.Integer({ description: "The most snapshots asked for" }),
    total: Type.Integer({ description: "Snapshots of the market (within start_time/end_time when given)" }),
    bucket_us: Type.Union([Type.Integer(), Type.Null()], {
      description: "Width of a bucket in microseconds; null when every snapshot is in the answer",
    }),
    snapshots: Type.Array(ref("Snapshot"), {
      description:
        "Oldest first: of each bucket, its first and last snapshot and those with the lowest and highest Up, Down and coin price",
    }),
  },
  { $id: "MarketSeries", additionalProperties: false },
);

export const marketSeriesComponents = [Series];

const seriesSchema = {
  operationId: "getSeries",
  tags: ["snapshots"],
  summary: "A market's Up, Down and coin prices downsampled for a chart, in one request",
  description:
    "The market's time span (or start_time..end_time) is cut into points/8 equal buckets; each keeps its first and last snapshot and the ones with the lowest and highest price_up, price_down and coin_price, so no extreme is lost. Every snapshot in the answer is a recorded one (without books). With no more snapshots than points, all of them.",
  params: SlugParams,
  querystring: SeriesQuery,
  response: v1Responses(
    {
      200: answer(ref("MarketSeries"), "The downsampled series", {
        ETag: { type: "string", description: "Resolved markets only: the answer's version" },
        "Cache-Control": { type: "string", description: "Resolved markets only" },
      }),
      304: answer({ type: "null" }, "Not modified (If-None-Match matched a resolved market's ETag)"),
    },
    { errors: [400, 403, 404] },
  ),
};

const READ_CHUNK = 10_000;

/** Every snapshot of the range without books, oldest first, read by time (keyset) in chunks. */
async function readRange(store: MarketStore, marketKey: number, from?: Micros, to?: Micros) {
  const rows: SnapshotRow[] = [];
  let after = from;
  for (;;) {
    const chunk = await store.snapshotPage(marketKey, {
      order: "asc",
      limit: READ_CHUNK,
      offset: 0,
      books: false,
      from: after,
      to,
    });
    for (const r of chunk) rows.push(r);
    if (chunk.length < READ_CHUNK) return rows;
    after = chunk[chunk.length - 1].time + 1;
  }
}

const seriesBytes = new JsonBytes(1 << 16);

async function renderSeries(
  ctx: AppContext,
  market: StoredMarket,
  q: SeriesQuery,
  from?: Micros,
  to?: Micros,
) {
  const rows = await readRange(ctx.store.markets, market.key, from, to);
  const { rows: kept, bucketUs } = downsample(rows, q.points);
  const w = seriesBytes;
  w.reset();
  w.ascii('{"slug":');
  w.utf8(JSON.stringify(market.slug));
  w.ascii(`,"points":${q.points},"total":${rows.length},"bucket_us":${bucketUs},"snapshots":[`);
  for (let i = 0; i < kept.length; i++) {
    if (i > 0) w.byte(44);
    writeSnapshotJson(w, kept[i], false);
  }
  w.ascii("]}");
  return w.toBuffer();
}

export function marketSeriesRoutes(app: Api, ctx: AppContext): void {
  app.get("/markets/:slug/series", { schema: seriesSchema }, async (req, reply) => {
    const q = req.query;
    const { from, to } = timeRange(q.start_time, q.end_time);
    const market = await openMarket(ctx, req, req.params.slug);
    reply.type(JSON_TYPE);
    if (!isResolved(market)) return reply.send(await renderSeries(ctx, market, q, from, to));
    // As the snapshot pages: a resolved market's series never changes, and the key names its version.
    const key = `series:${market.key}:${market.updatedAt}:${market.snapshotCount}:${q.points}:${from}:${to}`;
    let page: CachedPage | undefined = ctx.pageCache.get(key);
    if (!page) {
      page = {
        body: await renderSeries(ctx, market, q, from, to),
        etag: `"${hash("sha1", key, "base64url")}"`,
      };
      ctx.pageCache.set(key, page);
    }
    reply.header("etag", page.etag).header("cache-control", PAGE_CACHE_CONTROL);
    varyOnEncoding(reply);
    if (req.headers["if-none-match"] === page.etag) return reply.code(304).send();
    const encoding = negotiate(req.headers["accept-encoding"]);
    if (encoding === null) return reply.send(page.body);
    return reply.header("content-encoding", encoding).send(await ctx.pageCache.encoded(key, page, encoding));
  });
}
