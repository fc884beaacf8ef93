import { Type } from "typebox";
import type { Api, AppContext } from "../context.ts";
import {
  answering,
  backtestCaller,
  bodyCoin,
  bodyUnchecked,
  IdempotencyHeader,
  LOCATION,
  RunBody,
  sendRun,
} from "../backtest.ts";
import { callerOf, requireFeature } from "../params.ts";
import { answer, ref, v1Responses } from "../schemas.ts";

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
    { errors: [400, 403, 404, 429] },
  ),
};

const getRunSchema = {
  operationId: "getBacktestRun",
  tags: ["backtest"],
  summary:
    "A run of the key: its status and progress, and once complete its aggregate and per-market results",
  params: Type.Object({ id: Type.String({ maxLength: 100, description: "A run's id" }) }),
  response: v1Responses(
    { 200: answer(ref("BacktestRunAnswer"), "The run as it stands") },
    { errors: [400, 403, 404] },
  ),
};

export function runRoutes(app: Api, ctx: AppContext): void {
  app.post(
    "/backtest-ai/run",
    { schema: runSchema, validatorCompiler: bodyUnchecked },
    async (req, reply) => {
      const caller = await backtestCaller(ctx, req, bodyCoin(req.body));
      return sendRun(reply, await answering(ctx, req, () => ctx.backtests.run(caller, req.body)));
    },
  );

  app.get("/backtest-ai/runs/:id", { schema: getRunSchema }, async (req) => {
    requireFeature(ctx, req, "backtest");
    return answering(ctx, req, () => ctx.backtests.getRun(callerOf(req), req.params.id));
  });
}
