import { pipeline, Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { MarketResult } from "../../backtest/engine.ts";
import {
  type Column,
  csvHeaderOf,
  csvRowOf,
  EXPORT_FORMATS,
  EXPORT_MEDIA_TYPES,
  type ExportFormat,
  RESULT_COLUMNS,
  resultLine,
  TRADE_COLUMNS,
  type TradeRow,
  tradeLine,
} from "../../backtest/exports.ts";
import { researchFields } from "../../backtest/wire.ts";
import { compressStream, negotiate } from "../compression.ts";
import type { Api, AppContext } from "../context.ts";
import { answering, requireBacktestAi, sendJson } from "../backtest.ts";
import { validationError } from "../errors.ts";
import { callerOf } from "../params.ts";
import { answer, Query, ref, v1Responses } from "../schemas.ts";

/**
 * A run's files and runs side by side (DESIGN 3.12, docs/backtests.md "Exports"): every trade of a
 * run and its per-market results as CSV, NDJSON or Parquet, the definition it replayed as JSON, and
 * several runs' figures in one answer. A run is the key's own: another key's is 404, as for one run.
 */

/** Runs one comparison may name. */
export const MAX_COMPARED_RUNS = 10;

const RunParams = Type.Object({ id: Type.String({ maxLength: 100, description: "A run's id" }) });

const FileQuery = Query({
  format: Type.Enum([...EXPORT_FORMATS], {
    default: "csv",
    description:
      "csv (one row a trade, flattened), ndjson (the API's objects with slug), parquet (typed columns)",
  }),
});

const fileContent = {
  content: Object.fromEntries(
    EXPORT_FORMATS.map((f) => [
      EXPORT_MEDIA_TYPES[f].split(";")[0],
      { schema: { type: "string", ...(f === "parquet" ? { format: "binary" } : {}), description: f } },
    ]),
  ),
};

const FILE_HEADERS = {
  "Content-Disposition": { type: "string", required: true, description: "attachment; the file's name" },
};

const STREAM_HEADERS = {
  ...FILE_HEADERS,
  "Content-Encoding": {
    type: "string",
    enum: ["br", "zstd", "gzip"],
    description: "CSV and NDJSON, when accepted (Parquet is compressed within)",
  },
  Vary: { type: "string", required: true, description: "`Accept-Encoding`" },
};

const fileSchema = (operationId: string, summary: string, description: string) => ({
  operationId,
  tags: ["backtest"],
  summary,
  description,
  params: RunParams,
  querystring: FileQuery,
  response: v1Responses(
    { 200: answer(fileContent, "The file, streamed", STREAM_HEADERS) },
    { errors: [400, 403, 404], backtestAi: true },
  ),
});

const tradesFileSchema = fileSchema(
  "exportBacktestRunTrades",
  "Every trade of a run of the key, with its market's slug, as one file",
  "Markets in replay order, each market's trades oldest first: the trades of runs/{id}/markets/{slug}/trades. " +
    "CSV and Parquet flatten each trade into the columns docs/backtests.md lists (times as ISO text in CSV, " +
    "UTC microsecond timestamps in Parquet; an absent value is empty or null); NDJSON is each API trade with " +
    "`slug` first. A run still running exports the markets done so far.",
);

const resultsFileSchema = fileSchema(
  "exportBacktestRunResults",
  "The per-market results of a run of the key, as one file",
  "One row a market, in replay order: the fields of BacktestMarketResult, its trades counted (CSV, Parquet) " +
    "or included (NDJSON).",
);

const definitionSchema = {
  operationId: "getBacktestRunDefinition",
  tags: ["backtest"],
  summary: "The definition a run of the key replayed, as a JSON file (to copy back into an editor)",
  params: RunParams,
  response: v1Responses(
    {
      200: answer(
        { content: { "application/json": { schema: ref("StrategyDefinition") } } },
        "The definition",
        FILE_HEADERS,
      ),
    },
    { errors: [400, 403, 404], backtestAi: true },
  ),
};

const ComparedRunsSchema = Type.Object(
  {
    runs: Type.Array(
      Type.Object(
        {
          run: Type.Ref("BacktestRun"),
          aggregate: Type.Union([Type.Ref("BacktestAggregate"), Type.Null()]),
          ...researchFields,
        },
        { additionalProperties: false },
      ),
      { description: "In the order of ids" },
    ),
  },
  { $id: "BacktestComparedRuns", additionalProperties: false },
);

const compareSchema = {
  operationId: "compareBacktestRuns",
  tags: ["backtest"],
  summary:
    "Runs of the key side by side: each one's run, aggregate, benchmarks, intervals, sweep and walk-forward",
  querystring: Query({
    ids: Type.String({
      minLength: 1,
      maxLength: 1100,
      description: `Run ids, comma-separated, 1 to ${MAX_COMPARED_RUNS} (each a run of the key; another's is 404)`,
    }),
  }),
  response: v1Responses(
    { 200: answer(ref("BacktestComparedRuns"), "The runs, in the order asked") },
    { errors: [400, 403, 404], backtestAi: true },
  ),
};

export const exportComponents = [ComparedRunsSchema];

/** The run's ids a comparison names: 1 to MAX_COMPARED_RUNS, none empty, none twice. */
function idsOf(text: string): string[] {
  const ids = text.split(",").map((s) => s.trim());
  const fail = (rule: string, message: string) =>
    validationError(message, { parameter: "ids", rule, in: "query" });
  if (ids.some((id) => id === "" || id.length > 100))
    throw fail("format", "ids must be run ids separated by commas, none empty");
  if (ids.length > MAX_COMPARED_RUNS)
    throw fail("maximum", `ids names ${ids.length} runs; at most ${MAX_COMPARED_RUNS}`);
  if (new Set(ids).size !== ids.length) throw fail("unique", "ids names a run twice");
  return ids;
}

async function* textOf<T>(
  pages: AsyncIterable<MarketResult[]>,
  rowsOf: (page: MarketResult[]) => T[],
  head: string,
  line: (row: T) => string,
): AsyncGenerator<string> {
  if (head !== "") yield head;
  for await (const page of pages) yield rowsOf(page).map(line).join("");
}

const tradeRows = (page: MarketResult[]): TradeRow[] =>
  page.flatMap((r) => r.trades.map((trade) => ({ slug: r.slug, trade })));

async function rowsOf<T>(pages: AsyncIterable<MarketResult[]>, of: (page: MarketResult[]) => T[]) {
  const rows: T[] = [];
  for await (const page of pages) rows.push(...of(page));
  return rows;
}

/** The file: CSV and NDJSON streamed, compressed when the request accepts it; Parquet (compressed within) whole. */
function sendFile(
  req: FastifyRequest,
  reply: FastifyReply,
  format: ExportFormat,
  name: string,
  body: Readable | Uint8Array,
) {
  reply
    .type(EXPORT_MEDIA_TYPES[format])
    .header("content-disposition", `attachment; filename="${name}.${format}"`)
    .header("vary", "Accept-Encoding");
  const encoding = body instanceof Readable ? negotiate(req.headers["accept-encoding"]) : null;
  if (encoding === null) return reply.send(body);
  reply.header("content-encoding", encoding);
  // pipeline, not pipe: an answer cut short destroys the compressor and the reading too.
  return reply.send(pipeline(body as Readable, compressStream(encoding), () => {}));
}

/**
 * The rows as a Parquet file. Arrow and parquet-wasm are imported by the first one the server
 * writes: at start they cost every process a quarter of a second of CPU that most never use.
 */
async function parquetOf<T>(columns: readonly Column<T>[], rows: readonly T[]): Promise<Uint8Array> {
  const [{ arrowTableOf }, { parquetOfTable }] = await Promise.all([
    import("../../backtest/export-columns.ts"),
    import("../../archive/parquet.ts"),
  ]);
  return parquetOfTable(arrowTableOf(columns, rows));
}

export function exportRoutes(app: Api, ctx: AppContext): void {
  app.get("/backtest-ai/runs/:id/trades", { schema: tradesFileSchema }, async (req, reply) => {
    requireBacktestAi(ctx, req);
    const run = await answering(ctx, req, () => ctx.backtests.exportedRun(callerOf(req), req.params.id));
    const { format } = req.query;
    const pages = ctx.backtests.runResults(run);
    const name = `run-${run.id}-trades`;
    if (format === "parquet") {
      return sendFile(
        req,
        reply,
        format,
        name,
        await parquetOf(TRADE_COLUMNS, await rowsOf(pages, tradeRows)),
      );
    }
    const text =
      format === "csv"
        ? textOf(pages, tradeRows, csvHeaderOf(TRADE_COLUMNS), (r) => csvRowOf(TRADE_COLUMNS, r))
        : textOf(pages, tradeRows, "", tradeLine);
    return sendFile(req, reply, format, name, Readable.from(text, { objectMode: false }));
  });

  app.get("/backtest-ai/runs/:id/results", { schema: resultsFileSchema }, async (req, reply) => {
    requireBacktestAi(ctx, req);
    const run = await answering(ctx, req, () => ctx.backtests.exportedRun(callerOf(req), req.params.id));
    const { format } = req.query;
    const pages = ctx.backtests.runResults(run);
    const name = `run-${run.id}-results`;
    const same = (page: MarketResult[]) => page;
    if (format === "parquet") {
      return sendFile(req, reply, format, name, await parquetOf(RESULT_COLUMNS, await rowsOf(pages, same)));
    }
    const text =
      format === "csv"
        ? textOf(pages, same, csvHeaderOf(RESULT_COLUMNS), (r) => csvRowOf(RESULT_COLUMNS, r))
        : textOf(pages, same, "", resultLine);
    return sendFile(req, reply, format, name, Readable.from(text, { objectMode: false }));
  });

  app.get("/backtest-ai/runs/:id/definition", { schema: definitionSchema }, async (req, reply) => {
    requireBacktestAi(ctx, req);
    const id = req.params.id;
    const json = await answering(ctx, req, () => ctx.backtests.runDefinition(callerOf(req), id));
    reply.header("content-disposition", `attachment; filename="run-${id}-definition.json"`);
    return sendJson(reply, json);
  });

  app.get("/backtest-ai/runs", { schema: compareSchema }, async (req, reply) => {
    requireBacktestAi(ctx, req);
    const ids = idsOf(req.query.ids);
    const json = await answering(ctx, req, () => ctx.backtests.compareRuns(callerOf(req), ids));
    return sendJson(reply, json);
  });
}
