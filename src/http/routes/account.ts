import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { PLAN_NAMES } from "../../domain/api-key.ts";
import { type LimitDecision, stateOf, type WindowState } from "../../access/limiter/limiter.ts";
import type { QuotaStatus } from "../../access/quota.ts";
import { isoMicros, isoSeconds } from "../../domain/time.ts";
import type { Api, AppContext } from "../context.ts";
import { callerOf } from "../params.ts";
import { answer, Nullable, ref, v1Responses } from "../schemas.ts";

const Window = Type.Object(
  {
    used: Type.Integer(),
    limit: Nullable(Type.Integer({ description: "null: no limit" })),
    remaining: Nullable(Type.Integer()),
    resets_at: Type.String({ format: "date-time" }),
  },
  { $id: "UsageWindow", additionalProperties: false },
);

const quotaFields = {
  included: Type.Boolean({ description: "false when the plan has no backtest generations" }),
  month: Type.String({ description: "UTC month, YYYY-MM" }),
  limit: Nullable(Type.Integer({ description: "generations per month; null: no limit" })),
  used: Type.Integer(),
  remaining: Nullable(Type.Integer()),
  resets_at: Type.String({ format: "date-time" }),
};

const PlanName = Type.Enum([...PLAN_NAMES], { description: "The key's plan" });

const Account = Type.Object(
  {
    plan: PlanName,
    key: Type.Object(
      {
        id: Type.String(),
        name: Nullable(Type.String()),
        account: Type.String(),
        created_at: Type.String({ format: "date-time" }),
      },
      { additionalProperties: false },
    ),
    usage: Type.Object(
      { minute: ref("UsageWindow"), day: ref("UsageWindow") },
      { additionalProperties: false },
    ),
    quota: Type.Object(quotaFields, { additionalProperties: false }),
    features: Type.Object(
      { spot: Type.Boolean(), futures: Type.Boolean(), backtest: Type.Boolean() },
      { additionalProperties: false },
    ),
    btc_history: Nullable(
      Type.Record(Type.String(), Type.Integer(), {
        description:
          "How many of the latest BTC markets of each type the plan opens; null: all (history.btc)",
      }),
    ),
    history: Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer()), {
      description:
        "Per coin, how many of its latest markets of each type the plan opens; a coin not named is open in full",
    }),
    keys_per_account: Nullable(Type.Integer()),
  },
  { $id: "Account", additionalProperties: false },
);

const Quota = Type.Object(
  { plan: PlanName, ...quotaFields },
  { $id: "BacktestQuota", additionalProperties: false },
);

export const accountComponents = [Window, Account, Quota];

const accountSchema = {
  operationId: "getAccount",
  tags: ["account"],
  summary: "The key's plan, limits, usage in both windows, quota and features (not counted)",
  response: v1Responses({ 200: answer(ref("Account"), "The account") }),
};

const quotaSchema = {
  operationId: "getBacktestQuota",
  tags: ["backtest"],
  summary: "The key's monthly backtest-generation quota (not counted)",
  response: v1Responses({ 200: answer(ref("BacktestQuota"), "The quota") }),
};

function windowToWire(w: WindowState) {
  return {
    used: w.used,
    limit: w.limit,
    remaining: w.limit === null ? null : Math.max(0, w.limit - w.used),
    resets_at: isoSeconds(w.resetAt),
  };
}

export function quotaToWire(q: QuotaStatus) {
  return {
    included: q.included,
    month: q.month,
    limit: q.limit,
    used: q.used,
    remaining: q.remaining,
    resets_at: isoSeconds(q.resetsAt),
  };
}

/** The caller's windows, as the metering hook looked at them (unmetered routes count nothing). */
function windowsOf(req: FastifyRequest): LimitDecision {
  if (!req.limitDecision) throw new Error("an unmetered route ran without the metering hook");
  return req.limitDecision;
}

export function accountRoutes(app: Api, ctx: AppContext): void {
  app.get("/account", { schema: accountSchema, config: { metered: false } }, async (req) => {
    const key = callerOf(req);
    const plan = ctx.plans[key.plan];
    const decision = windowsOf(req);
    return {
      plan: key.plan,
      key: { id: key.id, name: key.name, account: key.account, created_at: isoMicros(key.createdAt) },
      usage: {
        minute: windowToWire(stateOf(decision, "minute")),
        day: windowToWire(stateOf(decision, "day")),
      },
      quota: quotaToWire(await ctx.quota.status(key)),
      features: plan.features,
      btc_history: plan.history.btc ?? null,
      history: plan.history,
      keys_per_account: plan.keysPerAccount,
    };
  });

  app.get("/backtest-ai/quota", { schema: quotaSchema, config: { metered: false } }, async (req) => {
    const key = callerOf(req);
    return { plan: key.plan, ...quotaToWire(await ctx.quota.status(key)) };
  });
}
