import type { FastifyInstance } from "fastify";
import type { PlanName } from "../../domain/api-key.ts";
import { cheapestPlanWith } from "../../domain/plan.ts";
import { marketToWire } from "../../domain/wire.ts";
import type { AppContext } from "../app.ts";
import { callerOf, coinParam, marketTypeParam, openMarket, timeRange } from "../params.ts";
import { errorResponses, slugParams, timeParam } from "../schemas.ts";

interface ListQuery {
  coin?: string;
  market_type?: string;
  resolved?: boolean;
  start_time?: string;
  end_time?: string;
  limit: number;
  offset: number;
}

const listSchema = {
  tags: ["markets"],
  summary: "List markets, newest first",
  querystring: {
    type: "object",
    properties: {
      coin: { type: "string", description: "btc, eth or sol (any case)" },
      market_type: { type: "string", description: "5m, 15m, 1h, 4h, 24h (1hr, 4hr, 24hr accepted)" },
      resolved: { type: "boolean" },
      start_time: timeParam("Markets starting at or after"),
      end_time: timeParam("Markets starting at or before"),
      limit: { type: "integer", minimum: 1, maximum: 100, default: 100 },
      offset: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
    },
  },
  response: {
    200: {
      type: "object",
      properties: {
        markets: { type: "array", items: { $ref: "Market#" } },
        total: { type: "integer" },
        limit: { type: "integer" },
        offset: { type: "integer" },
        warning: { type: ["string", "null"] },
      },
      required: ["markets", "total", "limit", "offset", "warning"],
    },
    ...errorResponses,
  },
};

const detailSchema = {
  tags: ["markets"],
  summary: "One market record",
  params: slugParams,
  response: { 200: { $ref: "Market#" }, ...errorResponses },
};

/** Says what the list leaves out, when the caller's plan hides older BTC markets. */
function hiddenWarning(ctx: AppContext, plan: PlanName): string {
  const windows = ctx.plans[plan].btcHistory ?? {};
  const counts = Object.entries(windows)
    .map(([type, n]) => `${n} (${type})`)
    .join(", ");
  const required = cheapestPlanWith(ctx.plans, (p) => p.btcHistory === null);
  return (
    `The ${plan} plan opens only the latest BTC markets of each type: ${counts}. Older BTC markets are ` +
    `left out of this list and of total${required ? `; upgrade to ${required} for the full history` : ""}.`
  );
}

export function marketRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: ListQuery }>("/markets", { schema: listSchema }, async (req) => {
    const q = req.query;
    const { from, to } = timeRange(q.start_time, q.end_time);
    const coin = coinParam(q.coin);
    const plan = callerOf(req).plan;
    const hidden = coin === undefined || coin === "btc" ? await ctx.access.hiddenSeries(plan) : [];
    const { markets, total } = await ctx.store.markets.listMarkets({
      coin,
      marketType: marketTypeParam(q.market_type),
      resolved: q.resolved,
      startFrom: from === undefined ? undefined : Math.ceil(from / 1e6),
      startTo: to === undefined ? undefined : Math.floor(to / 1e6),
      hiddenBefore: hidden,
      limit: q.limit,
      offset: q.offset,
    });
    const warning = hidden.length === 0 ? null : hiddenWarning(ctx, plan);
    return { markets: markets.map(marketToWire), total, limit: q.limit, offset: q.offset, warning };
  });

  app.get<{ Params: { slug: string } }>("/markets/:slug", { schema: detailSchema }, async (req) =>
    marketToWire(await openMarket(ctx, req, req.params.slug)),
  );
}
