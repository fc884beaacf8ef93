import { finished, pipeline, Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import {
  type ExportFormat,
  type ExportSelection,
  EXPORT_CHUNK_CHARS,
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
import { ExportSlots } from "../export-slots.ts";
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
    "ndjson is the archive format of `updown export` (a market line, then one line a snapshot) and can be imported with `updown import archive`; csv is one snapshot a row, books as JSON columns; parquet has typed columns (time as a UTC microsecond timestamp, prices as doubles, books as lists of {price, size}). NDJSON and CSV are compressed (br, zstd or gzip) when the request accepts it. A key may stream at most EXPORTS_PER_KEY exports at once (default 2; 429 with Retry-After beyond), the server at most EXPORTS_PER_PROCESS (default 64; 503 with Retry-After beyond).",
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
    "The markets of the series that overlap start_time..end_time (oldest first; those the plan does not open are left out), each with its snapshots in the range, in the formats of exportSnapshots. It costs one request per market it covers (X-Export-Markets), at least one: checked and counted in the day window before the first byte, and refused with 429 (details.cost, details.remaining) when the day has less left. HEAD answers the headers (X-Export-Markets included) for one request, whatever the markets. Exports streaming at once are capped as for exportSnapshots (429 or 503 with Retry-After, details.reason exports_in_flight).",
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

/** Seconds a caller refused an export slot is asked to wait: exports of a series take seconds to minutes. */
const EXPORT_RETRY_SECONDS = 10;

/**
 * A slot for the caller's export (its release), or the answer that says which cap is full: 429 for the
 * key's, 503 for the process's, each with Retry-After (docs/plans-and-limits.md).
 */
function exportSlot(slots: ExportSlots, req: FastifyRequest): () => void {
  const key = callerOf(req);
  const slot = slots.take(key.id);
  if (slot.taken) return slot.release;
  const retry = { "retry-after": String(EXPORT_RETRY_SECONDS) };
  if (slot.full === "key") {
    throw new ApiError(
      "RATE_LIMIT_EXCEEDED",
      `This key has ${slots.perKey} exports streaming; at most ${slots.perKey} may be at once. ` +
        "Retry when one has finished.",
      {
        reason: "exports_in_flight",
        in_flight: slots.inFlight(key.id),
        limit: slots.perKey,
        retry_after: EXPORT_RETRY_SECONDS,
      },
      retry,
    );
  }
  throw new ApiError(
    "SERVICE_UNAVAILABLE",
    `The server is streaming as many exports as it takes at once (${slots.perProcess}). Retry shortly.`,
    { reason: "exports_in_flight", limit: slots.perProcess, retry_after: EXPORT_RETRY_SECONDS },
    retry,
  );
}

/**
 * Sends the export: compressed when accepted (text formats; Parquet compresses within), in chunks of
 * about EXPORT_CHUNK_CHARS read as the client takes them, so that a slow reader holds little. `release`
 * gives the export's slot back once the answer has ended, sent or cut. HEAD answers the headers alone
 * and reads nothing.
 */
function sendFile(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: AppContext,
  sel: ExportSelection,
  name: string,
  release: (() => void) | null,
) {
  reply
    .type(CONTENT_TYPES[sel.format])
    .header("content-disposition", `attachment; filename="${name}.${sel.format}"`)
    .header("vary", "Accept-Encoding");
  const encoding = sel.format === "parquet" ? null : negotiate(req.headers["accept-encoding"]);
  if (encoding !== null) reply.header("content-encoding", encoding);
  if (release === null) return reply.send();
  finished(reply.raw, () => release());
  let body: Readable = Readable.from(exportChunks(ctx.store.markets, sel), {
    objectMode: false,
    highWaterMark: EXPORT_CHUNK_CHARS,
  });
  // pipeline, not pipe: an answer cut short destroys the compressor and the reading too (its page freed).
  if (encoding !== null) body = pipeline(body, compressStream(encoding), () => {});
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
  const slots = new ExportSlots(ctx.config.exports);
  app.get("/markets/:slug/snapshots/export", { schema: exportSchema }, async (req, reply) => {
    const q = req.query;
    const { from, to } = timeRange(q.start_time, q.end_time);
    const market = await openMarket(ctx, req, req.params.slug);
    const sel = { format: q.format, books: q.include_orderbook, markets: [market], from, to };
    const release = req.method === "HEAD" ? null : exportSlot(slots, req);
    return sendFile(req, reply, ctx, sel, market.slug, release);
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
    // HEAD reads no snapshot: it costs the one request the metering hook counted, not the markets.
    const release = req.method === "HEAD" ? null : exportSlot(slots, req);
    try {
      if (release !== null) await chargeExport(ctx, req, reply, markets.length);
    } catch (err) {
      release?.();
      throw err;
    }
    reply.header("x-export-markets", String(markets.length));
    const sel = { format: q.format, books: q.include_orderbook, markets, from, to };
    const span = [q.start_time, q.end_time].map((t) => (t ?? "").replace(/[^0-9A-Za-z]/g, "")).join("-");
    return sendFile(req, reply, ctx, sel, `${coin}-${marketType}${span === "-" ? "" : `-${span}`}`, release);
  });
}
