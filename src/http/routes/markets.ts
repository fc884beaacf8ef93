import { Type } from "typebox";
import type { PlanName } from "../../domain/api-key.ts";
import { cheapestPlanWith } from "../../domain/plan.ts";
import { marketToWire } from "../../wire/wire.ts";
import type { Api, AppContext } from "../context.ts";
import { callerOf, coinParam, marketTypeParam, openMarket, timeRange } from "../params.ts";
import {
  answer,
  Limit,
  Nullable,
  Offset,
  Query,
  ref,
  SlugParams,
  TimeParam,
  v1Responses,
} from "../schemas.ts";

const ListQuery = Query({
  coin: Type.Optional(Type.String({ description: "A configured coin (the Coin values), any case" })),
  market_type: Type.Optional(Type.String({ description: "5m, 15m, 1h, 4h, 24h (1hr, 4hr, 24hr accepted)" })),
  resolved: Type.Optional(Type.Boolean()),
  start_time: Type.Optional(TimeParam("Markets starting at or after")),
  end_time: Type.Optional(TimeParam("Markets starting at or before")),
  limit: Limit(100, 100),
  offset: Offset,
});

const MarketList = Type.Object(
  {
    markets: Type.Array(ref("Market")),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
    warning: Nullable(Type.String({ description: "What the plan leaves out of this list, if anything" })),
  },
  { $id: "MarketList", additionalProperties: false },
);

export const marketComponents = [MarketList];

const listSchema = {
  operationId: "listMarkets",
  tags: ["markets"],
  summary: "List markets, newest first",
  querystring: ListQuery,
  response: v1Responses({ 200: answer(ref("MarketList"), "A page of markets") }, { errors: [400] }),
};

const detailSchema = {
  operationId: "getMarket",
  tags: ["markets"],
  summary: "One market record",
  params: SlugParams,
  response: v1Responses({ 200: answer(ref("Market"), "The market record") }, { errors: [400, 403, 404] }),
};

/** Says what the list leaves out, when the caller's plan hides older markets of some coins. */
function hiddenWarning(ctx: AppContext, plan: PlanName, coins: string[]): string {
  const countsOf = (coin: string) =>
    Object.entries(ctx.plans[plan].history[coin] ?? {})
      .map(([type, n]) => `${n} (${type})`)
      .join(", ");
  const windows =
    coins.length === 1
      ? countsOf(coins[0])
      : coins.map((c) => `${c.toUpperCase()}: ${countsOf(c)}`).join("; ");
  const required = cheapestPlanWith(ctx.plans, (p) => coins.every((coin) => p.history[coin] === undefined));
  const names = coins.map((c) => c.toUpperCase()).join(", ");
  return (
    `The ${plan} plan opens only the latest ${names} markets of each type: ${windows}. Older ${names} ` +
    `markets are left out of this list and of total${required ? `; upgrade to ${required} for the full history` : ""}.`
  );
}

export function marketRoutes(app: Api, ctx: AppContext): void {
  app.get("/markets", { schema: listSchema }, async (req) => {
    const q = req.query;
    const { from, to } = timeRange(q.start_time, q.end_time);
    const coin = coinParam(q.coin, ctx.config.coins);
    const plan = callerOf(req).plan;
    const hidden = await ctx.access.hiddenSeries(plan, coin);
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
    const warning =
      hidden.length === 0 ? null : hiddenWarning(ctx, plan, [...new Set(hidden.map((h) => h.coin))]);
    return { markets: markets.map(marketToWire), total, limit: q.limit, offset: q.offset, warning };
  });

  app.get("/markets/:slug", { schema: detailSchema }, async (req) =>
    marketToWire(await openMarket(ctx, req, req.params.slug)),
  );
}
