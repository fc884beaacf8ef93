import type { FastifyInstance, FastifyRequest } from "fastify";
import type { LimitDecision, WindowState } from "../../access/limiter/limiter.ts";
import type { QuotaStatus } from "../../access/quota.ts";
import { isoMicros, isoSeconds } from "../../domain/time.ts";
import type { AppContext } from "../app.ts";
import { callerOf } from "../params.ts";
import { errorResponses, nullable } from "../schemas.ts";

const windowSchema = {
  type: "object",
  properties: {
    used: { type: "integer" },
    limit: nullable("integer", { description: "null: no limit" }),
    remaining: nullable("integer"),
    resets_at: { type: "string", format: "date-time" },
  },
  required: ["used", "limit", "remaining", "resets_at"],
};

const quotaProperties = {
  included: { type: "boolean", description: "false when the plan has no backtest generations" },
  month: { type: "string", description: "UTC month, YYYY-MM" },
  limit: nullable("integer", { description: "generations per month; null: no limit" }),
  used: { type: "integer" },
  remaining: nullable("integer"),
  resets_at: { type: "string", format: "date-time" },
};
const quotaRequired = ["included", "month", "limit", "used", "remaining", "resets_at"];

const accountSchema = {
  tags: ["account"],
  summary: "The key's plan, limits, usage in both windows, quota and features (not counted)",
  response: {
    200: {
      type: "object",
      properties: {
        plan: { type: "string" },
        key: {
          type: "object",
          properties: {
            id: { type: "string" },
            name: nullable("string"),
            account: { type: "string" },
            created_at: { type: "string", format: "date-time" },
          },
          required: ["id", "name", "account", "created_at"],
        },
        usage: {
          type: "object",
          properties: { minute: windowSchema, day: windowSchema },
          required: ["minute", "day"],
        },
        quota: { type: "object", properties: quotaProperties, required: quotaRequired },
        features: {
          type: "object",
          properties: {
            spot: { type: "boolean" },
            futures: { type: "boolean" },
            backtest: { type: "boolean" },
          },
          required: ["spot", "futures", "backtest"],
        },
        btc_history: nullable("object", {
          description: "How many of the latest BTC markets of each type the plan opens; null: all",
          additionalProperties: { type: "integer" },
        }),
        keys_per_account: nullable("integer"),
      },
      required: ["plan", "key", "usage", "quota", "features", "btc_history", "keys_per_account"],
    },
    ...errorResponses,
  },
};

const quotaSchema = {
  tags: ["backtest"],
  summary: "The key's monthly backtest-generation quota (not counted)",
  response: {
    200: {
      type: "object",
      properties: { plan: { type: "string" }, ...quotaProperties },
      required: ["plan", ...quotaRequired],
    },
    ...errorResponses,
  },
};

function windowToWire(w: WindowState) {
  return {
    used: w.used,
    limit: w.limit,
    remaining: w.limit === null ? null : Math.max(0, w.limit - w.used),
    resets_at: isoSeconds(w.resetAt),
  };
}

function quotaToWire(q: QuotaStatus) {
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

export function accountRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get("/account", { schema: accountSchema, config: { metered: false } }, async (req) => {
    const key = callerOf(req);
    const plan = ctx.plans[key.plan];
    const decision = windowsOf(req);
    return {
      plan: key.plan,
      key: { id: key.id, name: key.name, account: key.account, created_at: isoMicros(key.createdAt) },
      usage: { minute: windowToWire(decision.minute), day: windowToWire(decision.day) },
      quota: quotaToWire(await ctx.quota.status(key)),
      features: plan.features,
      btc_history: plan.btcHistory,
      keys_per_account: plan.keysPerAccount,
    };
  });

  app.get("/backtest-ai/quota", { schema: quotaSchema, config: { metered: false } }, async (req) => {
    const key = callerOf(req);
    return { plan: key.plan, ...quotaToWire(await ctx.quota.status(key)) };
  });
}
