import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { BacktestRefusal, type Caller, type Refusal, type RunOutcomeAnswer } from "../backtest/service.ts";
import { MAX_SWEEP_AXES, MAX_SWEEP_COMBINATIONS } from "../backtest/sweep.ts";
import type { LentJson } from "../wire/json-bytes.ts";
import { sendLent } from "./body-buffers.ts";
import { cheapestPlanWith } from "../domain/plan.ts";
import { isoSeconds } from "../domain/time.ts";
import type { AppContext } from "./context.ts";
import { ApiError, notFound, secondsUntil, validationError } from "./errors.ts";
import { callerOf, requireFeature } from "./params.ts";
import { JSON_TYPE } from "./media-types.ts";

/**
 * What the backtest routes share (DESIGN 3.7): who the caller is (key, Idempotency-Key, the series
 * their plan hides), their refusals as HTTP answers, and the documented request bodies.
 */

/** Seconds a caller with too many runs in flight is asked to wait. */
const BUSY_RETRY_SECONDS = 5;

const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{1,255}$/;

/**
 * The plan's feature check of the backtest routes: 403 BACKTEST_AI_REQUIRED (PolyHistorical's code for
 * these routes) with `details.required_plan`, where other routes answer TIER_ACCESS_DENIED.
 */
export function requireBacktestAi(ctx: AppContext, req: FastifyRequest): void {
  try {
    requireFeature(ctx, req, "backtest");
  } catch (err) {
    if (err instanceof ApiError && err.code === "TIER_ACCESS_DENIED") {
      throw new ApiError("BACKTEST_AI_REQUIRED", err.message, err.details, err.headers);
    }
    throw err;
  }
}

/** The caller of a backtest route, after the plan's feature check (403 on starter). */
export async function backtestCaller(ctx: AppContext, req: FastifyRequest, coin?: string): Promise<Caller> {
  requireBacktestAi(ctx, req);
  const key = callerOf(req);
  const header = req.headers["idempotency-key"];
  let idempotencyKey: string | null = null;
  if (header !== undefined) {
    if (typeof header !== "string" || !IDEMPOTENCY_KEY_RE.test(header)) {
      throw validationError("Idempotency-Key must be 1 to 255 visible ASCII characters", {
        parameter: "Idempotency-Key",
        rule: "format",
        in: "header",
      });
    }
    idempotencyKey = header;
  }
  const coinOf = coin === undefined ? undefined : coin.toLowerCase();
  return { key, idempotencyKey, hidden: await ctx.access.hiddenSeries(key.plan, coinOf) };
}

/** The coin a body names, if it is one (only to narrow the plan's hidden series; the body is checked later). */
export function bodyCoin(body: unknown): string | undefined {
  const coin = (body as { coin?: unknown } | null)?.coin;
  return typeof coin === "string" ? coin : undefined;
}

function refusalError(ctx: AppContext, req: FastifyRequest, r: Refusal): ApiError {
  const plan = callerOf(req).plan;
  switch (r.kind) {
    case "invalid":
      return validationError(r.message, { pointer: r.pointer, in: "body" });
    case "not_included": {
      const required = cheapestPlanWith(ctx.plans, (p) => p.backtestGenerationsPerMonth !== 0);
      return new ApiError("BACKTEST_AI_REQUIRED", `The ${plan} plan includes no backtest generations.`, {
        required_plan: required,
      });
    }
    case "quota_exhausted": {
      const q = r.quota;
      const retryAfter = secondsUntil(q.resetsAt, Math.floor(ctx.clock.nowMicros() / 1000));
      return new ApiError(
        "BACKTEST_AI_QUOTA_EXCEEDED",
        `The ${plan} plan includes ${q.limit} backtest generations a month; all of ${q.month}'s are used. ` +
          `They renew at ${isoSeconds(q.resetsAt)}.`,
        {
          month: q.month,
          limit: q.limit,
          used: q.used,
          resets_at: isoSeconds(q.resetsAt),
          retry_after: retryAfter,
        },
        { "retry-after": String(retryAfter) },
      );
    }
    case "busy":
      return new ApiError(
        "RATE_LIMIT_EXCEEDED",
        `This ${r.scope} has ${r.inFlight} backtest runs queued or running; at most ${r.limit} may be at once. ` +
          "Retry when one has finished.",
        {
          reason: "runs_in_flight",
          scope: r.scope,
          in_flight: r.inFlight,
          limit: r.limit,
          retry_after: BUSY_RETRY_SECONDS,
        },
        { "retry-after": String(BUSY_RETRY_SECONDS) },
      );
    case "generation_failed":
      return new ApiError(
        "GENERATION_FAILED",
        `The strategy could not be generated: ${r.reason} Your quota was not charged.`,
        { reason: r.reason, clauses: r.clauses, charged: false },
      );
    case "not_found":
      return notFound(r.message);
    case "idempotency_conflict":
      return validationError(
        "Idempotency-Key was first used for a different request; send that request again, or use a new key.",
        { parameter: "Idempotency-Key", rule: "same_request", in: "header" },
      );
  }
}

/** Runs a backtest route's work, turning its refusals into the error envelope. */
export async function answering<T>(ctx: AppContext, req: FastifyRequest, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof BacktestRefusal) throw refusalError(ctx, req, err.refusal);
    throw err;
  }
}

/**
 * JSON already rendered (a run's results are spliced from what the worker stored): sent as it is,
 * Fastify's serializer left out.
 */
export function sendJson(reply: FastifyReply, json: string | LentJson) {
  reply.type(JSON_TYPE);
  return typeof json === "string" ? reply.send(json) : sendLent(reply, json);
}

/** A run answer: 200 once the run finished within `wait`, else 202 with where to poll. */
export function sendRun(reply: FastifyReply, outcome: RunOutcomeAnswer) {
  if (outcome.complete) return sendJson(reply.code(200), outcome.answer.json);
  reply.header("location", runLocation(outcome.answer.runId));
  return sendJson(reply.code(202), outcome.answer.json);
}

export const runLocation = (id: string) => `/v1/backtest-ai/runs/${id}`;

/** The header of a run's 202. */
export const LOCATION = {
  type: "string",
  required: true,
  description: "Where to poll the run: /v1/backtest-ai/runs/{id}",
};

export const IdempotencyHeader = Type.Object({
  "Idempotency-Key": Type.Optional(
    Type.String({
      maxLength: 255,
      description: "A retry with the same key and body answers the first result, charging nothing again",
    }),
  ),
});

/**
 * Bodies are read by the backtest module itself (src/backtest/request.ts), which accepts the camelCase
 * aliases and names the JSON pointer of a broken field; Fastify only parses the JSON.
 */
export const bodyUnchecked = () => () => true;

const alias = (canonical: string) => `Alias of ${canonical} (PolyHistorical's spelling)`;

const Overrides = {
  position_size: Type.Optional(Type.Number({ minimum: 1, maximum: 10000, description: "Shares per entry" })),
  max_loss_percent: Type.Optional(Type.Number({ minimum: 1, maximum: 100 })),
  order_type: Type.Optional(Type.Enum(["MARKET", "LIMIT"])),
  latency_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 60000 })),
  max_fill_price: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
  positionSize: Type.Optional(Type.Number({ description: alias("position_size") })),
  maxLossPercent: Type.Optional(Type.Number({ description: alias("max_loss_percent") })),
  orderType: Type.Optional(Type.String({ description: alias("order_type") })),
  latencyMs: Type.Optional(Type.Integer({ description: alias("latency_ms") })),
};

const Markets = {
  coin: Type.Optional(Type.String({ description: "A configured coin; required" })),
  market_type: Type.Optional(Type.String({ description: "5m, 15m, 1h, 4h, 24h; required" })),
  market_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "Default 10" })),
  start_time: Type.Optional(
    Type.String({ description: "Markets starting at or after: ISO 8601 or epoch ms" }),
  ),
  end_time: Type.Optional(Type.String({ description: "Markets starting at or before" })),
  marketType: Type.Optional(Type.String({ description: alias("market_type") })),
  marketCount: Type.Optional(Type.Integer({ description: alias("market_count") })),
  wait: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 60,
      description: "Seconds to wait for the run before 202; default 25",
    }),
  ),
};

const SweepAxis = Type.Object(
  {
    field: Type.String({
      description: "A numeric field of the definition as a dotted path: exit.take_profit_pct, entry.0.value",
    }),
    values: Type.Optional(Type.Array(Type.Number(), { minItems: 1, maxItems: MAX_SWEEP_COMBINATIONS })),
    from: Type.Optional(Type.Number()),
    to: Type.Optional(Type.Number()),
    step: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  },
  {
    additionalProperties: false,
    description: "values, or from, to and step (to included when a step lands on it)",
  },
);

/** A sweep and the settings of the benchmarks and intervals every run computes (docs/backtests.md). */
const Research = {
  sweep: Type.Optional(
    Type.Array(SweepAxis, {
      minItems: 1,
      maxItems: MAX_SWEEP_AXES,
      description: `A grid over numeric fields, run as one job: at most ${MAX_SWEEP_COMBINATIONS} combinations; one generation of the quota per sweep`,
    }),
  ),
  train_fraction: Type.Optional(
    Type.Number({
      minimum: 0.01,
      maximum: 0.99,
      description:
        "Walk-forward (with a sweep): choose the best combination by PnL on this fraction of the markets, oldest first, and report it on the rest",
    }),
  ),
  seed: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 4294967295,
      description: "Seeds the random benchmark and the bootstrap; default 1",
    }),
  ),
  favourite_at_pct: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 100,
      description: "When the favourite benchmark buys, in percent of the market; default 50",
    }),
  ),
};

const Replay = {
  side: Type.Optional(
    Type.Enum(["UP", "DOWN"], { description: "PolyHistorical's replay form, with entryConditions" }),
  ),
  entryConditions: Type.Optional(
    Type.Array(Type.Object({}, { additionalProperties: true }), {
      description: "{field, operator, value}, all must hold",
    }),
  ),
  exitConditions: Type.Optional(
    Type.Array(Type.Object({}, { additionalProperties: true }), {
      description: "{field, operator, value}, any closes",
    }),
  ),
};

const prompt = Type.Optional(
  Type.String({ minLength: 1, maxLength: 2000, description: "What the strategy does, in words" }),
);
const preset = Type.Optional(
  Type.Enum(["mean_reversion", "dip_buying", "momentum_entry", "quick_scalp"], {
    description: "A preset instead of a prompt",
  }),
);
const name = Type.Optional(Type.String({ minLength: 1, maxLength: 120 }));
const definition = Type.Optional(Type.Ref("StrategyDefinition"));

/** What `generate` takes of the markets (PolyHistorical's body): checked against the run's rules, not used. */
const Targets = {
  coin: Markets.coin,
  market_type: Markets.market_type,
  market_count: Markets.market_count,
  marketType: Markets.marketType,
  marketCount: Markets.marketCount,
};

export const GenerateBody = Type.Object(
  { prompt, preset, name, ...Targets, ...Overrides },
  {
    description:
      "A prompt, a preset, or a prompt with a preset (the preset its starting point). coin, marketType and " +
      "marketCount are checked and not used: generation does not depend on markets",
    additionalProperties: false,
  },
);

export const StrategyBody = Type.Object(
  { prompt, preset, definition, ...Replay, name, ...Markets, ...Overrides, ...Research },
  {
    description:
      "One of prompt (with an optional preset), preset, definition (fields left out take their defaults), or side with entryConditions",
    additionalProperties: false,
  },
);

export const RunBody = Type.Object(
  {
    strategy_id: Type.Optional(Type.String({ description: "A stored strategy of this key" })),
    strategyId: Type.Optional(Type.String({ description: alias("strategy_id") })),
    definition,
    strategy: Type.Optional(
      Type.Ref("StrategyDefinition", {
        description: "Alias of definition (PolyHistorical's run takes back generated_strategy as strategy)",
      }),
    ),
    ...Replay,
    name,
    ...Markets,
    ...Overrides,
    ...Research,
  },
  {
    description: "One of strategy_id, definition, or side with entryConditions",
    additionalProperties: false,
  },
);
