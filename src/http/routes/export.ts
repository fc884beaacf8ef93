import { Readable } from "node:stream";
import { Type } from "typebox";
import { type ExportFormat, exportChunks } from "../../archive/archive.ts";
import { compressStream, negotiate } from "../compression.ts";
import type { Api, AppContext } from "../context.ts";
import { openMarket, timeRange } from "../params.ts";
import { answer, Query, SlugParams, TimeParam, v1Responses } from "../schemas.ts";

const EXPORT_FORMATS: ExportFormat[] = ["ndjson", "csv"];

const ExportQuery = Query({
  format: Type.Enum(EXPORT_FORMATS, { default: "ndjson" }),
  include_orderbook: Type.Boolean({ default: false }),
  start_time: Type.Optional(TimeParam("Snapshots at or after")),
  end_time: Type.Optional(TimeParam("Snapshots at or before")),
});

const MEDIA_TYPES: Record<ExportFormat, string> = { ndjson: "application/x-ndjson", csv: "text/csv" };
const CONTENT_TYPES: Record<ExportFormat, string> = {
  ndjson: `${MEDIA_TYPES.ndjson}; charset=utf-8`,
  csv: `${MEDIA_TYPES.csv}; charset=utf-8`,
};

const exportFile = {
  content: Object.fromEntries(
    EXPORT_FORMATS.map((f) => [
      MEDIA_TYPES[f],
      { schema: { type: "string", description: `${f}, streamed` } },
    ]),
  ),
};

const exportSchema = {
  operationId: "exportSnapshots",
  tags: ["snapshots"],
  summary: "All snapshots of a market (or a time range of them) in one streamed file, oldest first",
  description:
    "ndjson is the archive format of `updown export` (a market line, then one line a snapshot) and can be imported with `updown import archive`; csv is one snapshot a row, books as JSON columns. Compressed (br, zstd or gzip) when the request accepts it.",
  params: SlugParams,
  querystring: ExportQuery,
  response: v1Responses(
    {
      200: answer(exportFile, "The file, compressed when the request accepts an encoding", {
        "Content-Disposition": { type: "string", required: true, description: "attachment; the file's name" },
        "Content-Encoding": { type: "string", enum: ["br", "zstd", "gzip"], description: "When accepted" },
        Vary: { type: "string", required: true, description: "`Accept-Encoding`" },
      }),
    },
    { errors: [400, 403, 404] },
  ),
};

export function exportRoutes(app: Api, ctx: AppContext): void {
  app.get("/markets/:slug/snapshots/export", { schema: exportSchema }, async (req, reply) => {
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
      .header("vary", "Accept-Encoding");
    const encoding = negotiate(req.headers["accept-encoding"]);
    if (encoding !== null) {
      body = body.pipe(compressStream(encoding));
      reply.header("content-encoding", encoding);
    }
    return reply.send(body);
  });
}
