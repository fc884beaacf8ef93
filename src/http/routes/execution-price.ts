import { Type } from "typebox";
import { type ExecutionQuote, executionQuote } from "../../backtest/quote.ts";
import { feeScheduleToWire } from "../../wire/wire.ts";
import { isoMicros } from "../../domain/time.ts";
import type { Api, AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { openMarket, timeParam } from "../params.ts";
import { answer, Nullable, Query, ref, SlugParams, TimeParam, v1Responses } from "../schemas.ts";

/**
 * `GET /v1/markets/{slug}/execution-price` (DESIGN 3.7): what a market order of a size would have paid
 * or got at a moment, by the backtest engine's own fill code, against the book in effect then (the
 * latest snapshot at or before the time).
 */

const PriceQuery = Query({
  outcome: Type.Enum(["up", "down"], { description: "The outcome token traded" }),
  side: Type.Enum(["buy", "sell"], { description: "buy walks the asks, sell the bids" }),
  size: Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: "Shares" }),
  time: TimeParam("The moment of the order"),
});

const Level = Type.Object({ price: Type.Number(), size: Type.Number() }, { additionalProperties: false });

const ExecutionPrice = Type.Object(
  {
    slug: Type.String(),
    outcome: Type.Enum(["up", "down"]),
    side: Type.Enum(["buy", "sell"]),
    size: Type.Number({ description: "Shares asked for" }),
    time: Type.String({ format: "date-time", description: "The moment asked for" }),
    snapshot_time: Type.String({ format: "date-time", description: "The snapshot whose book was used" }),
    mid: Type.Number({
      description: "Midpoint of the token's best bid and ask (the displayed price if a side is empty)",
    }),
    best_price: Nullable(Type.Number({ description: "The first level taken" })),
    average_price: Nullable(Type.Number({ description: "Volume-weighted over the levels taken" })),
    slippage_bps: Nullable(Type.Number({ description: "Average price against the mid; positive is worse" })),
    filled: Type.Number({ description: "Shares the book had for the order" }),
    unfilled: Type.Number({ description: "Shares left when depth ran out" }),
    notional: Type.Number({ description: "USDC exchanged before fees" }),
    fee_usdc: Type.Number({ description: "The taker fee (a buy pays it in shares: fee_shares)" }),
    fee_shares: Type.Number(),
    levels: Type.Array(Level),
    fee_schedule: Nullable(ref("FeeSchedule")),
  },
  { $id: "ExecutionPrice", additionalProperties: false },
);

export const executionPriceComponents = [ExecutionPrice];

const priceSchema = {
  operationId: "getExecutionPrice",
  tags: ["markets"],
  summary: "What a market order of a size would have paid (or got) at a moment, level by level, with fees",
  params: SlugParams,
  querystring: PriceQuery,
  response: v1Responses(
    { 200: answer(ref("ExecutionPrice"), "The fill the recorded book gave") },
    { errors: [400, 403, 404] },
  ),
};

export function executionPriceRoutes(app: Api, ctx: AppContext): void {
  app.get("/markets/:slug/execution-price", { schema: priceSchema }, async (req) => {
    const q = req.query;
    const time = timeParam("time", q.time) as number;
    const market = await openMarket(ctx, req, req.params.slug);
    const snapshot = await ctx.store.markets.snapshotAtOrBefore(market.key, time, true);
    if (snapshot === null) throw notFound(`No snapshot of ${market.slug} at or before ${isoMicros(time)}.`);
    if (snapshot.books === null) {
      throw notFound(`The snapshot of ${market.slug} at ${isoMicros(snapshot.time)} has no recorded books.`);
    }
    const quote: ExecutionQuote = executionQuote(market, snapshot, q.outcome, q.side, q.size);
    return {
      slug: market.slug,
      outcome: q.outcome,
      side: q.side,
      size: q.size,
      time: isoMicros(time),
      snapshot_time: isoMicros(snapshot.time),
      ...quote,
      fee_schedule: feeScheduleToWire(market.feeSchedule),
    };
  });
}
