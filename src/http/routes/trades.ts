import { Type } from "typebox";
import { tradeToWire } from "../../wire/wire.ts";
import type { Api, AppContext } from "../context.ts";
import { openMarket, timeRange } from "../params.ts";
import { answer, Limit, Offset, Order, Query, ref, SlugParams, TimeParam, v1Responses } from "../schemas.ts";

const TradeQuery = Query({
  limit: Limit(1000, 1000),
  offset: Offset,
  order: Order,
  start_time: Type.Optional(TimeParam("Trades at or after")),
  end_time: Type.Optional(TimeParam("Trades at or before")),
});

const TradePage = Type.Object(
  {
    slug: Type.String(),
    trades: Type.Array(ref("MarketTrade")),
    total: Type.Integer({ description: "Trades in the range; page until offset reaches it" }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: "MarketTradePage", additionalProperties: false },
);

export const tradeComponents = [TradePage];

const tradeSchema = {
  operationId: "listMarketTrades",
  tags: ["trades"],
  summary: "A page of a market's Polymarket trades, newest first",
  description:
    "Every trade of either outcome token the collector received (the market channel's last_trade_price). " +
    "Same plan rules as the snapshots: a market the plan does not open is 403.",
  params: SlugParams,
  querystring: TradeQuery,
  response: v1Responses(
    { 200: answer(ref("MarketTradePage"), "A page of the market's trades") },
    { errors: [400, 403, 404] },
  ),
};

export function tradeRoutes(app: Api, ctx: AppContext): void {
  app.get("/markets/:slug/trades", { schema: tradeSchema }, async (req) => {
    const q = req.query;
    const { from, to } = timeRange(q.start_time, q.end_time);
    const market = await openMarket(ctx, req, req.params.slug);
    const total = await ctx.store.trades.countTrades(market.key, from, to);
    const rows =
      q.offset >= total
        ? []
        : await ctx.store.trades.tradePage(market.key, {
            order: q.order,
            limit: q.limit,
            offset: q.offset,
            from,
            to,
          });
    return {
      slug: market.slug,
      trades: rows.map((t) => tradeToWire(t, market)),
      total,
      limit: q.limit,
      offset: q.offset,
    };
  });
}
