import { Type } from "typebox";
import { isoMicros } from "../../domain/time.ts";
import { type BookAt, bookAtFromBlocks, type TokenState } from "../../events/derive.ts";
import type { StoredMarket } from "../../store/ports/market-store.ts";
import type { Api, AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { openMarket, timeParam } from "../params.ts";
import { answer, Nullable, Query, ref, SlugParams, TimeParam, v1Responses } from "../schemas.ts";

const TokenBookWire = Type.Object(
  {
    token_id: Type.String(),
    book: ref("OrderBook"),
    has_book: Type.Boolean({
      description: "False until the token's first book message: the levels are then only the changes seen",
    }),
    last_trade_price: Nullable(Type.Number()),
    tick_size: Nullable(Type.Number()),
  },
  { $id: "TokenBook", additionalProperties: false },
);

const BookAtWire = Type.Object(
  {
    slug: Type.String(),
    requested_time: Type.String({ format: "date-time" }),
    last_event_at: Type.String({
      format: "date-time",
      description: "Receive time of the last event applied (µs): the book is as it stood from then on",
    }),
    last_event_type: Type.String(),
    up: ref("TokenBook"),
    down: ref("TokenBook"),
  },
  { $id: "BookAt", additionalProperties: false },
);

export const bookComponents = [TokenBookWire, BookAtWire];

const bookSchema = {
  operationId: "getBookAt",
  tags: ["events"],
  summary: "The full book of both outcomes at any moment, rebuilt from the market's events",
  description:
    "Every event received at or before time applied in receive order (the market's first book message and the " +
    "changes after it). 404 when the market has no event at or before time. One request.",
  params: SlugParams,
  querystring: Query({ time: TimeParam("The moment (µs precision accepted)") }),
  response: v1Responses({ 200: answer(ref("BookAt"), "The book at that time") }, { errors: [400, 403, 404] }),
};

/** The book of a market at `time` (µs) from its stored events; null when no event was received by then. */
export async function bookOfMarketAt(
  ctx: AppContext,
  market: StoredMarket,
  time: number,
): Promise<BookAt | null> {
  // The stream is read from the market's first event and closed at the first one after `time`.
  const tokens = { up: market.clobTokenUp, down: market.clobTokenDown };
  const at = await bookAtFromBlocks(ctx.store.events.streamMarketEvents(market.key), tokens, time);
  return at.lastEvent === null ? null : at;
}

function tokenWire(token: string, s: TokenState) {
  return {
    token_id: token,
    book: s.book,
    has_book: s.hasBook,
    last_trade_price: s.lastTradePrice,
    tick_size: s.tickSize,
  };
}

export function bookRoutes(app: Api, ctx: AppContext): void {
  app.get("/markets/:slug/book", { schema: bookSchema }, async (req) => {
    const time = timeParam("time", req.query.time) as number;
    const market = await openMarket(ctx, req, req.params.slug);
    const at = await bookOfMarketAt(ctx, market, time);
    if (at === null || at.lastEvent === null)
      throw notFound(`Market ${market.slug} has no event received at or before ${isoMicros(time)}.`);
    return {
      slug: market.slug,
      requested_time: isoMicros(time),
      last_event_at: isoMicros(at.lastEvent.receivedUs),
      last_event_type: at.lastEvent.type,
      up: tokenWire(market.clobTokenUp, at.up),
      down: tokenWire(market.clobTokenDown, at.down),
    };
  });
}
