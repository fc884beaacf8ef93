import type { FastifyRequest } from "fastify";
import type { ApiKeyRecord } from "../domain/api-key.ts";
import { type Coin, knownCoin, MARKET_TYPES, type MarketType, parseMarketType } from "../domain/market.ts";
import { isoMicros, isoSeconds, type Micros, readUserTime, USER_TIME_RANGE } from "../domain/time.ts";
import { cheapestPlanWith, type Feature } from "../domain/plan.ts";
import type { StoredMarket } from "../store/ports/market-store.ts";
import type { AppContext } from "./context.ts";
import { notFound, tierAccessDenied, validationError } from "./errors.ts";

/** A coin of a query, one of the configured coins in any case. */
export function coinParam(text: string | undefined, coins: readonly Coin[]): Coin | undefined {
  if (text === undefined) return undefined;
  const coin = knownCoin(text, coins);
  if (!coin)
    throw validationError(`coin must be one of ${coins.join(", ")}`, { parameter: "coin", rule: "enum" });
  return coin;
}

export function marketTypeParam(text: string | undefined): MarketType | undefined {
  if (text === undefined) return undefined;
  const type = parseMarketType(text);
  if (!type) {
    throw validationError(
      `market_type must be one of ${MARKET_TYPES.join(", ")} (1hr, 4hr, 24hr also accepted)`,
      {
        parameter: "market_type",
        rule: "enum",
      },
    );
  }
  return type;
}

export function timeParam(name: string, text: string | undefined): Micros | undefined {
  if (text === undefined) return undefined;
  const reading = readUserTime(text);
  if ("micros" in reading) return reading.micros;
  if (reading.problem === "range") {
    throw validationError(`${name} must be between ${isoSeconds(0)} and ${isoMicros(USER_TIME_RANGE.max)}`, {
      parameter: name,
      rule: "range",
    });
  }
  throw validationError(`${name} must be an ISO 8601 timestamp or epoch milliseconds`, {
    parameter: name,
    rule: "format",
  });
}

export function timeRange(
  start: string | undefined,
  end: string | undefined,
): { from?: Micros; to?: Micros } {
  const from = timeParam("start_time", start);
  const to = timeParam("end_time", end);
  if (from !== undefined && to !== undefined && from > to) {
    throw validationError("start_time must not be after end_time", {
      parameter: "start_time",
      rule: "range",
    });
  }
  return { from, to };
}

/** The caller's key; every /v1 handler runs after the metering hook has set it. */
export function callerOf(req: FastifyRequest): ApiKeyRecord {
  if (!req.apiKey) throw new Error("a /v1 route ran without authentication");
  return req.apiKey;
}

const FEATURE_NAMES: Record<Feature, string> = {
  spot: "spot exchange data",
  futures: "futures exchange data",
  backtest: "Backtest AI",
};

/** 403 unless the caller's plan includes the feature; the exchange and backtest routes call it first. */
export function requireFeature(ctx: AppContext, req: FastifyRequest, feature: Feature): void {
  const plan = callerOf(req).plan;
  if (ctx.plans[plan].features[feature]) return;
  const required = cheapestPlanWith(ctx.plans, (p) => p.features[feature]);
  throw tierAccessDenied(
    `The ${plan} plan does not include ${FEATURE_NAMES[feature]}.` +
      (required ? ` Upgrade to ${required} to use it.` : ""),
    required,
  );
}

/** The market a path names, if the caller's plan opens it (DESIGN 3.3), else 403. */
export async function openMarket(ctx: AppContext, req: FastifyRequest, slug: string): Promise<StoredMarket> {
  const market = await marketBySlug(ctx, slug);
  const plan = callerOf(req).plan;
  if (await ctx.access.canOpen(plan, market)) return market;
  const window = ctx.plans[plan].history[market.coin]?.[market.marketType] ?? 0;
  const required = cheapestPlanWith(ctx.plans, (p) => p.history[market.coin] === undefined);
  throw tierAccessDenied(
    `The ${plan} plan opens the latest ${window} ${market.coin.toUpperCase()} ${market.marketType} markets; ${market.slug} is older. ` +
      (required ? `Upgrade to ${required} for the full history.` : "No plan opens it."),
    required,
  );
}

/** The market a path names, by our slug in any accepted spelling or by Polymarket's alias. */
async function marketBySlug(ctx: AppContext, slug: string): Promise<StoredMarket> {
  const market = await ctx.access.find(slug);
  if (!market) throw notFound(`No market with slug ${slug}.`);
  return market;
}
