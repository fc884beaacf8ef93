import { Type } from "typebox";
import { DEFINITION_SCHEMA } from "../../backtest/definition.ts";
import type { Api, AppContext } from "../context.ts";
import {
  answering,
  requireBacktestAi,
  backtestCaller,
  bodyCoin,
  bodyUnchecked,
  GenerateBody,
  IdempotencyHeader,
  LOCATION,
  sendRun,
  StrategyBody,
} from "../backtest.ts";
import { callerOf } from "../params.ts";
import { answer, Limit, Offset, Query, ref, v1Responses } from "../schemas.ts";
import { quotaToWire } from "./account.ts";

/**
 * Strategies (DESIGN 3.7): the definition's schema, generation from a prompt or preset, a strategy run
 * in one request, and the key's stored strategies. Runs have their own file (backtest-runs.ts).
 */

const GenerateAnswer = Type.Object(
  { strategy: ref("Strategy"), quota: ref("BacktestQuota") },
  { $id: "GenerateAnswer", additionalProperties: false },
);

const StrategyList = Type.Object(
  {
    strategies: Type.Array(ref("Strategy")),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: "StrategyList", additionalProperties: false },
);

export const strategyComponents = [DEFINITION_SCHEMA, GenerateAnswer, StrategyList];

const StrategyParams = Type.Object({ id: Type.String({ maxLength: 100, description: "A strategy's id" }) });

const schemaSchema = {
  operationId: "getStrategySchema",
  tags: ["backtest"],
  summary: "The JSON schema of a strategy definition (version 1)",
  description: "The same schema validates definitions given to strategy and run, and constrains generation.",
  response: v1Responses({
    200: answer(Type.Object({}, { additionalProperties: true }), "The JSON schema (draft 2020-12 subset)"),
  }),
};

const generateSchema = {
  operationId: "generateStrategy",
  tags: ["backtest"],
  summary: "Generate a strategy from a prompt or a preset (one generation of the monthly quota)",
  description:
    "The quota is charged in the transaction that stores the strategy: a failed generation (422) charges nothing. " +
    "Every POST counts as one request against the rate limits.",
  headers: IdempotencyHeader,
  body: GenerateBody,
  response: v1Responses(
    { 200: answer(ref("GenerateAnswer"), "The stored strategy and the quota after it") },
    { errors: [400, 403, 422, 429], quota: true, backtestAi: true },
  ),
};

const strategyRunSchema = {
  operationId: "runStrategy",
  tags: ["backtest"],
  summary: "Generate (or take) a strategy and run it over the latest resolved markets (one generation)",
  description:
    "Answers 200 with the result when the run finishes within `wait` seconds (default 25), else 202 with " +
    "the run and its Location. At most two runs of a key may be queued or running at once (429).",
  headers: IdempotencyHeader,
  body: StrategyBody,
  response: v1Responses(
    {
      200: answer(ref("BacktestRunAnswer"), "The run, finished (complete or failed)"),
      202: answer(ref("BacktestRunAnswer"), "The run, still queued or running", { Location: LOCATION }),
    },
    { errors: [400, 403, 422, 429], quota: true, backtestAi: true },
  ),
};

const listSchema = {
  operationId: "listStrategies",
  tags: ["backtest"],
  summary: "The key's stored strategies, newest first",
  querystring: Query({ limit: Limit(100, 20), offset: Offset }),
  response: v1Responses(
    { 200: answer(ref("StrategyList"), "A page of strategies") },
    { errors: [400, 403], backtestAi: true },
  ),
};

const getSchema = {
  operationId: "getStrategy",
  tags: ["backtest"],
  summary: "One stored strategy of the key",
  params: StrategyParams,
  response: v1Responses(
    { 200: answer(ref("Strategy"), "The strategy") },
    { errors: [400, 403, 404], backtestAi: true },
  ),
};

export function strategyRoutes(app: Api, ctx: AppContext): void {
  app.get("/backtest-ai/schema", { schema: schemaSchema }, async () => DEFINITION_SCHEMA);

  app.post(
    "/backtest-ai/generate",
    { schema: generateSchema, validatorCompiler: bodyUnchecked },
    async (req) => {
      const caller = await backtestCaller(ctx, req);
      const made = await answering(ctx, req, () => ctx.backtests.generate(caller, req.body));
      return { strategy: made.strategy, quota: { plan: caller.key.plan, ...quotaToWire(made.quota) } };
    },
  );

  app.post(
    "/backtest-ai/strategy",
    { schema: strategyRunSchema, validatorCompiler: bodyUnchecked },
    async (req, reply) => {
      const caller = await backtestCaller(ctx, req, bodyCoin(req.body));
      return sendRun(reply, await answering(ctx, req, () => ctx.backtests.strategy(caller, req.body)));
    },
  );

  app.get("/backtest-ai/strategies", { schema: listSchema }, async (req) => {
    requireBacktestAi(ctx, req);
    return ctx.backtests.listStrategies(callerOf(req), req.query.limit, req.query.offset);
  });

  app.get("/backtest-ai/strategies/:id", { schema: getSchema }, async (req) => {
    requireBacktestAi(ctx, req);
    return answering(ctx, req, () => ctx.backtests.getStrategy(callerOf(req), req.params.id));
  });
}
