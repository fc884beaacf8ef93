import { Type } from "typebox";
import type { StoredMarket } from "../../store/ports/market-store.ts";
import { isoMicros, isoSeconds } from "../../domain/time.ts";
import { splitAggregate } from "../../backtest/wire.ts";
import type { Api, AppContext } from "../context.ts";
import {
  answering,
  backtestCaller,
  bodyUnchecked,
  IdempotencyHeader,
  LOCATION,
  runLocation,
  sendJson,
} from "../backtest.ts";
import { ApiError, validationError } from "../errors.ts";
import { openMarket, requireFeature } from "../params.ts";
import { answer, ref, v1Responses } from "../schemas.ts";

/**
 * `POST /v1/replay` (DESIGN 3.7): PolyHistorical's Strategy Replay, one resolved market replayed with
 * `side`, `entryConditions` (all) and `exitConditions` (any), in its body and its answer's shape. It runs
 * as a backtest run of one market (a job, under the runs-in-flight limits; no generation spent), so
 * that the replay is computed and rendered on a worker thread, never on the request thread.
 */

const alias = (canonical: string) => `Also accepted as ${canonical}`;
const Condition = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      "{field, operator, value}: a feature, <, <=, >, >= (or lt, lte, gt, gte), crosses_above, crosses_below, and a number or a feature",
  },
);

const ReplayBody = Type.Object(
  {
    marketSlug: Type.Optional(Type.String({ description: "A resolved market's slug; required" })),
    market_slug: Type.Optional(Type.String({ description: alias("marketSlug") })),
    side: Type.Optional(Type.Enum(["UP", "DOWN"], { description: "The outcome bought; required" })),
    entryConditions: Type.Optional(
      Type.Array(Condition, { description: "All must hold to enter; required" }),
    ),
    entry_conditions: Type.Optional(Type.Array(Condition, { description: alias("entryConditions") })),
    exitConditions: Type.Optional(Type.Array(Condition, { description: "Any closes the position" })),
    exit_conditions: Type.Optional(Type.Array(Condition, { description: alias("exitConditions") })),
    positionSize: Type.Optional(
      Type.Number({ minimum: 1, maximum: 10000, description: "Shares per entry; default 100" }),
    ),
    position_size: Type.Optional(Type.Number({ description: alias("positionSize") })),
    maxLossPercent: Type.Optional(
      Type.Number({
        minimum: 1,
        maximum: 100,
        description: "A forced exit of the position at this drawdown, in percent; default 50",
      }),
    ),
    max_loss_percent: Type.Optional(Type.Number({ description: alias("maxLossPercent") })),
    orderType: Type.Optional(Type.Enum(["MARKET", "LIMIT"], { description: "Default MARKET" })),
    order_type: Type.Optional(Type.String({ description: alias("orderType") })),
    latencyMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60000 })),
    latency_ms: Type.Optional(Type.Integer({ description: alias("latencyMs") })),
    maxFillPrice: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
    max_fill_price: Type.Optional(Type.Number({ description: alias("maxFillPrice") })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })),
    wait: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 60,
        description: "Seconds to wait for the replay before 202; default 25",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "PolyHistorical's replay body; camelCase or snake_case, one spelling a field",
  },
);

const ReplayMarket = Type.Object(
  {
    slug: Type.String(),
    coin: Type.String(),
    market_type: Type.String(),
    start_time: Type.String({ format: "date-time" }),
    end_time: Type.String({ format: "date-time" }),
    winner: Type.Enum(["Up", "Down", "50-50"]),
  },
  { additionalProperties: false },
);

const ReplayAnswer = Type.Object(
  {
    success: Type.Literal(true),
    data: Type.Object(
      {
        market: ReplayMarket,
        strategy: Type.Ref("StrategyDefinition", { description: "The definition that ran" }),
        performance: Type.Object(
          {},
          {
            additionalProperties: true,
            description: "The run's figures: BacktestAggregate without its equity curve",
          },
        ),
        trades: Type.Array(Type.Ref("BacktestTrade")),
        pnl_curve: Type.Array(
          Type.Object(
            { time: Type.String({ format: "date-time" }), equity: Type.Number() },
            { additionalProperties: false },
          ),
          { description: "Cumulative PnL after each closed trade (USDC)" },
        ),
        total_snapshots: Type.Integer({ description: "Snapshots replayed" }),
      },
      { additionalProperties: false },
    ),
    timestamp: Type.String({ format: "date-time" }),
  },
  { $id: "ReplayAnswer", additionalProperties: false },
);

const ReplayPending = Type.Object(
  {
    success: Type.Literal(true),
    data: Type.Object(
      {
        run_id: Type.String(),
        status: Type.Enum(["queued", "running"]),
        location: Type.String({ description: "Where to poll the run: /v1/backtest-ai/runs/{id}" }),
      },
      { additionalProperties: false },
    ),
    timestamp: Type.String({ format: "date-time" }),
  },
  { $id: "ReplayPending", additionalProperties: false },
);

export const replayComponents = [ReplayAnswer, ReplayPending];

const replaySchema = {
  operationId: "replayStrategy",
  tags: ["backtest"],
  summary:
    "PolyHistorical's Strategy Replay: one resolved market, side, entryConditions (all), exitConditions (any)",
  description:
    "Answers `{success, data: {market, strategy, performance, trades, pnl_curve, total_snapshots}, timestamp}` " +
    "when the replay finishes within `wait` seconds (default 25), else 202 with the run's id and Location. " +
    "Runs as a backtest run of one market under the runs-in-flight limits; spends no generation.",
  headers: IdempotencyHeader,
  body: ReplayBody,
  response: v1Responses(
    {
      200: answer(ref("ReplayAnswer"), "The replay"),
      202: answer(ref("ReplayPending"), "The replay, still queued or running", { Location: LOCATION }),
    },
    { errors: [400, 403, 404, 429] },
  ),
};

/** `"snapshots":N` of a stored market result, read from its head (its first fields are slug, times, winner). */
function snapshotsOf(result: string): number {
  const found = /"snapshots":(\d+)/.exec(result.slice(0, 1000));
  return found ? Number(found[1]) : 0;
}

function marketWire(m: StoredMarket) {
  return {
    slug: m.slug,
    coin: m.coin,
    market_type: m.marketType,
    start_time: isoSeconds(m.startTime),
    end_time: isoSeconds(m.endTime),
    winner: m.winner,
  };
}

export function replayRoutes(app: Api, ctx: AppContext): void {
  app.post("/replay", { schema: replaySchema, validatorCompiler: bodyUnchecked }, async (req, reply) => {
    // A plan feature like any other here (TIER_ACCESS_DENIED): Strategy Replay is not the AI agent.
    requireFeature(ctx, req, "backtest");
    const caller = await backtestCaller(ctx, req);
    const request = await answering(ctx, req, async () => ctx.backtests.readReplay(req.body));
    const market = await openMarket(ctx, req, request.marketSlug as string);
    if (market.winner === null) {
      throw validationError(
        `marketSlug names ${market.slug}, which has not resolved yet; replay a resolved market.`,
        {
          pointer: "/marketSlug",
          rule: "resolved",
          in: "body",
        },
      );
    }
    const out = await answering(ctx, req, () =>
      ctx.backtests.replayMarket(caller, request, req.body, market),
    );
    const timestamp = isoMicros(ctx.clock.nowMicros());
    const { run, result, trades } = out;
    if (run.status === "failed") throw new ApiError("INTERNAL_ERROR", "The replay failed; retry it.");
    if (result === null || trades === null || run.aggregate === null) {
      reply.header("location", runLocation(run.id));
      const data = { run_id: run.id, status: run.status, location: runLocation(run.id) };
      return sendJson(reply.code(202), JSON.stringify({ success: true, data, timestamp }));
    }
    // Spliced from what the worker rendered: the figures, the curve and the trades are never parsed here.
    const { figures, curve } = splitAggregate(run.aggregate);
    const json =
      `{"success":true,"data":{"market":${JSON.stringify(marketWire(market))}` +
      `,"strategy":${run.definition},"performance":${figures}` +
      `,"trades":[${trades.replaceAll("\n", ",")}]` +
      `,"pnl_curve":${curve},"total_snapshots":${snapshotsOf(result)}},"timestamp":${JSON.stringify(timestamp)}}`;
    return sendJson(reply.code(200), json);
  });
}
