import { Type } from "typebox";
import type { Api, AppContext } from "../context.ts";
import {
  answering,
  requireBacktestAi,
  backtestCaller,
  bodyCoin,
  bodyUnchecked,
  IdempotencyHeader,
  LOCATION,
  RunBody,
  sendJson,
  sendRun,
} from "../backtest.ts";
import { callerOf } from "../params.ts";
import { answer, Limit, Offset, Query, ref, v1Responses } from "../schemas.ts";

/**
 * Backtest runs (DESIGN 3.7): a stored strategy or a definition replayed over the selected markets as
 * a job (no generation spent), and a run by id. Strategies have their own file (backtest-strategies.ts).
 */

const runSchema = {
  operationId: "runBacktest",
  tags: ["backtest"],
  summary: "Run a stored strategy or a definition over the latest resolved markets (no generation spent)",
  description:
    "Answers 200 with the result when the run finishes within `wait` seconds (default 25), else 202 with " +
    "the run and its Location. At most two runs of a key may be queued or running at once (429). " +
    "Every POST counts as one request against the rate limits.",
  headers: IdempotencyHeader,
  body: RunBody,
  response: v1Responses(
    {
      200: answer(ref("BacktestRunAnswer"), "The run, finished (complete or failed)"),
      202: answer(ref("BacktestRunAnswer"), "The run, still queued or running", { Location: LOCATION }),
    },
    { errors: [400, 403, 404, 429], backtestAi: true },
  ),
};

const RunParams = Type.Object({ id: Type.String({ maxLength: 100, description: "A run's id" }) });

const getRunSchema = {
  operationId: "getBacktestRun",
  tags: ["backtest"],
  summary:
    "A run of the key: its status and progress, and once complete its aggregate and per-market results",
  description:
    "Results are paged by market (`results_limit`, `results_offset`; `results_page` says where the page is); " +
    "a market's trades are also on their own route, paged (runs/{id}/markets/{slug}/trades).",
  params: RunParams,
  querystring: Query({
    results_limit: Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 100,
      description: "Markets' results in the answer (default: every market)",
    }),
    results_offset: Offset,
  }),
  response: v1Responses(
    { 200: answer(ref("BacktestRunAnswer"), "The run as it stands") },
    { errors: [400, 403, 404], backtestAi: true },
  ),
};

const MarketTradesSchema = Type.Object(
  {
    run_id: Type.String(),
    slug: Type.String(),
    total: Type.Integer({ description: "The market's trades in the run" }),
    limit: Type.Integer(),
    offset: Type.Integer(),
    trades: Type.Array(Type.Ref("BacktestTrade"), { description: "Oldest first" }),
  },
  { $id: "BacktestMarketTrades", additionalProperties: false },
);

const tradesSchema = {
  operationId: "getBacktestRunTrades",
  tags: ["backtest"],
  summary: "A page of one market's trades in a run of the key",
  params: Type.Object({
    id: Type.String({ maxLength: 100, description: "A run's id" }),
    slug: Type.String({ maxLength: 200, description: "A market the run replayed" }),
  }),
  querystring: Query({ limit: Limit(5000, 1000), offset: Offset }),
  response: v1Responses(
    { 200: answer(ref("BacktestMarketTrades"), "The page of trades") },
    { errors: [400, 403, 404], backtestAi: true },
  ),
};

export const runComponents = [MarketTradesSchema];

export function runRoutes(app: Api, ctx: AppContext): void {
  app.post(
    "/backtest-ai/run",
    { schema: runSchema, validatorCompiler: bodyUnchecked },
    async (req, reply) => {
      const caller = await backtestCaller(ctx, req, bodyCoin(req.body));
      return sendRun(reply, await answering(ctx, req, () => ctx.backtests.run(caller, req.body)));
    },
  );

  app.get("/backtest-ai/runs/:id", { schema: getRunSchema }, async (req, reply) => {
    requireBacktestAi(ctx, req);
    const { results_limit: limit, results_offset: offset } = req.query;
    const run = await answering(ctx, req, () =>
      ctx.backtests.getRun(callerOf(req), req.params.id, limit, offset),
    );
    return sendJson(reply, run.json);
  });

  app.get("/backtest-ai/runs/:id/markets/:slug/trades", { schema: tradesSchema }, async (req, reply) => {
    requireBacktestAi(ctx, req);
    const { id, slug } = req.params;
    const { limit, offset } = req.query;
    const json = await answering(ctx, req, () =>
      ctx.backtests.marketTrades(callerOf(req), id, slug, limit, offset),
    );
    return sendJson(reply, json);
  });
}
