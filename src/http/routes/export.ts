import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import {
  type ExportFormat,
  type ExportSelection,
  exportChunks,
  seriesMarkets,
} from "../../archive/archive.ts";
import { limitsOf } from "../../domain/plan.ts";
import { isoSeconds } from "../../domain/time.ts";
import type { StoredMarket } from "../../store/ports/market-store.ts";
import { compressStream, negotiate } from "../compression.ts";
import type { Api, AppContext } from "../context.ts";
import { ApiError, secondsUntil } from "../errors.ts";
import { stateOf } from "../../access/limiter/limiter.ts";
import { rateLimitHeaders, requestWindows, withStates } from "../metering.ts";
import { callerOf, coinParam, marketTypeParam, openMarket, timeRange } from "../params.ts";
import { answer, Query, SlugParams, TimeParam, v1Responses } from "../schemas.ts";

const EXPORT_FORMATS: ExportFormat[] = ["ndjson", "csv", "parquet"];

const FORMAT = Type.Enum(EXPORT_FORMATS, {
  default: "ndjson",
  description: "ndjson (our archive, importable), csv, or parquet (typed columns)",
});

const ExportQuery = Query({
  format: FORMAT,
  include_orderbook: Type.Boolean({ default: false }),
  start_time: Type.Optional(TimeParam("Snapshots at or after")),
  end_time: Type.Optional(TimeParam("Snapshots at or before")),
});

const BulkQuery = Query({
  coin: Type.String({ description: "A configured coin (the Coin values), any case" }),
  market_type: Type.String({ description: "5m, 15m, 1h, 4h, 24h (1hr, 4hr, 24hr accepted)" }),
  format: FORMAT,
  include_orderbook: Type.Boolean({ default: false }),
  start_time: Type.Optional(TimeParam("Snapshots at or after (default: the series' first)")),
  end_time: Type.Optional(TimeParam("Snapshots at or before (default: the series' last)")),
});

const MEDIA_TYPES: Record<ExportFormat, string> = {
  ndjson: "application/x-ndjson",
  csv: "text/csv",
  parquet: "application/vnd.apache.parquet",
};
const CONTENT_TYPES: Record<ExportFormat, string> = {
  ndjson: `${MEDIA_TYPES.ndjson}; charset=utf-8`,
  csv: `${MEDIA_TYPES.csv}; charset=utf-8`,
  parquet: MEDIA_TYPES.parquet,
};

const exportFile = {
  content: Object.fromEntries(
    EXPORT_FORMATS.map((f) => [
      MEDIA_TYPES[f],
      {
        schema: {
          type: "string",
          ...(f === "parquet" ? { format: "binary" } : {}),
          description: `${f}, streamed`,
        },
      },
    ]),
  ),
};

const FILE_HEADERS = {
  "Content-Disposition": { type: "string", required: true, description: "attachment; the file's name" },
  "Content-Encoding": {
    type: "string",
    enum: ["br", "zstd", "gzip"],
    description: "NDJSON and CSV, when accepted (Parquet is compressed within)",
  },
  Vary: { type: "string", required: true, description: "`Accept-Encoding`" },
};

const exportSchema = {
  operationId: "exportSnapshots",
  tags: ["snapshots"],
  summary: "All snapshots of a market (or a time range of them) in one streamed file, oldest first",
  description:
    "ndjson is the archive format of `updown export` (a market line, then one line a snapshot) and can be imported with `updown import archive`; csv is one snapshot a row, books as JSON columns; parquet has typed columns (time as a UTC microsecond timestamp, prices as doubles, books as lists of {price, size}). NDJSON and CSV are compressed (br, zstd or gzip) when the request accepts it.",
  params: SlugParams,
  querystring: ExportQuery,
  response: v1Responses(
    { 200: answer(exportFile, "The file, streamed", FILE_HEADERS) },
    { errors: [400, 403, 404] },
  ),
};

const bulkSchema = {
  operationId: "exportSeries",
  tags: ["snapshots"],
  summary: "Every snapshot of a series (coin and type) over a time range, in one streamed file",
  description:
    "The markets of the series that overlap start_time..end_time (oldest first; those the plan does not open are left out), each with its snapshots in the range, in the formats of exportSnapshots. It costs one request per market it covers (X-Export-Markets), at least one: checked and counted in the day window before the first byte, and refused with 429 (details.cost, details.remaining) when the day has less left.",
  querystring: BulkQuery,
  response: v1Responses(
    {
      200: answer(exportFile, "The file, streamed", {
        ...FILE_HEADERS,
        "X-Export-Markets": {
          type: "string",
          required: true,
          description: "Markets in the file: the requests the export cost",
        },
      }),
    },
    { errors: [400, 403] },
  ),
};

/** Sends the export: compressed when accepted (text formats; Parquet compresses within). */
function sendFile(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: AppContext,
  sel: ExportSelection,
  name: string,
) {
  let body: Readable = Readable.from(exportChunks(ctx.store.markets, sel));
  reply
    .type(CONTENT_TYPES[sel.format])
    .header("content-disposition", `attachment; filename="${name}.${sel.format}"`)
    .header("vary", "Accept-Encoding");
  const encoding = sel.format === "parquet" ? null : negotiate(req.headers["accept-encoding"]);
  if (encoding !== null) {
    body = body.pipe(compressStream(encoding));
    reply.header("content-encoding", encoding);
  }
  return reply.send(body);
}

/**
 * Charges the day window for the markets an export covers beyond the request's own count (DESIGN
 * 3.8), all or none in one step of the limiter, and puts the windows as they now stand on the reply;
 * 429 when the day has less left than the export costs.
 */
async function chargeExport(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, cost: number) {
  if (ctx.unmetered || cost <= 1) return;
  const key = callerOf(req);
  const limits = limitsOf(ctx.plans, key);
  const nowMs = Math.floor(ctx.clock.nowMicros() / 1000);
  const charged = await ctx.limiter.limit(`key:${key.id}`, requestWindows(limits, "day"), cost - 1, nowMs);
  // The minute as this request's own count left it, the day as the charge leaves it.
  const decision = req.limitDecision ? withStates(req.limitDecision, charged) : charged;
  reply.headers(rateLimitHeaders(key.plan, decision, nowMs));
  if (decision.admitted) return;
  const day = stateOf(charged, "day");
  const remaining = Math.max(0, (limits.perDay ?? 0) - day.used);
  const retryAfter = secondsUntil(day.resetAt, nowMs);
  throw new ApiError(
    "RATE_LIMIT_EXCEEDED",
    `Daily request limit too low for this export: it covers ${cost} markets and costs ${cost} requests (this one ` +
      `and ${cost - 1} more), and the ${key.plan} plan has ${remaining} left today. Narrow start_time..end_time, ` +
      `or wait for ${isoSeconds(day.resetAt)} (00:00 UTC).`,
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

export function exportRoutes(app: Api, ctx: AppContext): void {
  app.get("/markets/:slug/snapshots/export", { schema: exportSchema }, async (req, reply) => {
    const q = req.query;
    const { from, to } = timeRange(q.start_time, q.end_time);
    const market = await openMarket(ctx, req, req.params.slug);
    const sel = { format: q.format, books: q.include_orderbook, markets: [market], from, to };
    return sendFile(req, reply, ctx, sel, market.slug);
  });

  app.get("/snapshots/export", { schema: bulkSchema }, async (req, reply) => {
    const q = req.query;
    const coin = coinParam(q.coin, ctx.config.coins);
    const marketType = marketTypeParam(q.market_type);
    const { from, to } = timeRange(q.start_time, q.end_time);
    const plan = callerOf(req).plan;
    const markets: StoredMarket[] = [];
    for (const m of await seriesMarkets(ctx.store.markets, { coin, marketType, from, to })) {
      if (await ctx.access.canOpen(plan, m)) markets.push(m);
    }
    await chargeExport(ctx, req, reply, markets.length);
    reply.header("x-export-markets", String(markets.length));
    const sel = { format: q.format, books: q.include_orderbook, markets, from, to };
    const span = [q.start_time, q.end_time].map((t) => (t ?? "").replace(/[^0-9A-Za-z]/g, "")).join("-");
    return sendFile(req, reply, ctx, sel, `${coin}-${marketType}${span === "-" ? "" : `-${span}`}`);
  });
}
