import { Readable } from "node:stream";
import { createGzip } from "node:zlib";
import type { FastifyInstance } from "fastify";
import { type ExportFormat, exportChunks } from "../../archive/archive.ts";
import type { AppContext } from "../app.ts";
import { openMarket, timeRange } from "../params.ts";
import { errorResponses, slugParams, timeParam } from "../schemas.ts";

interface ExportQuery {
  format: ExportFormat;
  include_orderbook: boolean;
  start_time?: string;
  end_time?: string;
}

const CONTENT_TYPES: Record<ExportFormat, string> = {
  ndjson: "application/x-ndjson; charset=utf-8",
  csv: "text/csv; charset=utf-8",
};

const exportSchema = {
  tags: ["snapshots"],
  summary: "All snapshots of a market (or a time range of them) in one streamed file, oldest first",
  description:
    "ndjson is the archive format of `updown export` (a market line, then one line a snapshot) and can be imported with `updown import archive`; csv is one snapshot a row, books as JSON columns. Gzipped when the request accepts gzip.",
  params: slugParams,
  querystring: {
    type: "object",
    properties: {
      format: { type: "string", enum: ["ndjson", "csv"], default: "ndjson" },
      include_orderbook: { type: "boolean", default: false },
      start_time: timeParam("Snapshots at or after"),
      end_time: timeParam("Snapshots at or before"),
    },
  },
  response: { 200: { type: "string", description: "NDJSON or CSV" }, ...errorResponses },
};

export function exportRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Params: { slug: string }; Querystring: ExportQuery }>(
    "/markets/:slug/snapshots/export",
    { schema: exportSchema },
    async (req, reply) => {
      const q = req.query;
      const { from, to } = timeRange(q.start_time, q.end_time);
      const market = await openMarket(ctx, req, req.params.slug);
      const chunks = exportChunks(ctx.store.markets, {
        format: q.format,
        books: q.include_orderbook,
        slugs: [market.slug],
        from,
        to,
      });
      let body: Readable = Readable.from(chunks);
      reply
        .type(CONTENT_TYPES[q.format])
        .header("content-disposition", `attachment; filename="${market.slug}.${q.format}"`)
        .header("vary", "accept-encoding");
      if (/\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""))) {
        body = body.pipe(createGzip());
        reply.header("content-encoding", "gzip");
      }
      return reply.send(body);
    },
  );
}
