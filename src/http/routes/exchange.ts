import type { FastifyInstance, FastifyRequest } from "fastify";
import { CANDLE_INTERVALS, parseVenue, symbolOf, type Venue } from "../../domain/exchange.ts";
import {
  candleToWire,
  depthToWire,
  fundingToWire,
  markPriceToWire,
  openInterestToWire,
  tradeToWire,
} from "../../domain/exchange-wire.ts";
import { COINS, type Coin, parseCoin } from "../../domain/market.ts";
import type { SortOrder } from "../../domain/snapshot.ts";
import type { RangeQuery } from "../../store/exchange-store.ts";
import type { AppContext } from "../app.ts";
import { notFound } from "../errors.ts";
import { requireFeature, timeRange } from "../params.ts";
import { errorResponses, nullable, timeParam } from "../schemas.ts";

/**
 * Binance spot and futures data (DESIGN 3.6): `/v1/{coin}/spot/...` and `/v1/{coin}/futures/...`
 * (`future` accepted). An unknown coin or venue, or a futures-only resource under spot, is 404 like
 * any unknown path; a plan without the venue's feature gets 403.
 */

interface PathParams {
  coin: string;
  venue: string;
}

interface PageQuery {
  limit: number;
  offset: number;
  order: SortOrder;
  start_time?: string;
  end_time?: string;
}

const params = {
  type: "object",
  properties: {
    coin: { type: "string", maxLength: 20, description: "btc, eth or sol (any case)" },
    venue: {
      type: "string",
      maxLength: 20,
      description: "spot, or futures (USDⓈ-M perpetual; `future` accepted)",
    },
  },
  required: ["coin", "venue"],
} as const;

const levelSchema = {
  type: "object",
  properties: { price: { type: "number" }, size: { type: "number" } },
  required: ["price", "size"],
} as const;

const timeFields = {
  time: { type: "string", format: "date-time", description: "ISO 8601 UTC, millisecond precision" },
  timestamp: { type: "integer", description: "The same instant in epoch milliseconds" },
} as const;

const depthSchema = {
  type: "object",
  properties: {
    ...timeFields,
    price: nullable("number", { description: "Midpoint of best bid and best ask" }),
    bids: { type: "array", items: levelSchema, description: "Best (highest) first, up to 20" },
    asks: { type: "array", items: levelSchema, description: "Best (lowest) first, up to 20" },
  },
  required: ["time", "timestamp", "price", "bids", "asks"],
} as const;

const tradeSchema = {
  type: "object",
  properties: {
    id: { type: "integer", description: "Binance's trade id (spot) or aggregate trade id (futures)" },
    ...timeFields,
    price: { type: "number" },
    size: { type: "number", description: "Base asset quantity" },
    side: { type: "string", enum: ["buy", "sell"], description: "The taker's side" },
    is_buyer_maker: { type: "boolean" },
  },
  required: ["id", "time", "timestamp", "price", "size", "side", "is_buyer_maker"],
} as const;

const candleSchema = {
  type: "object",
  properties: {
    open_time: { type: "string", format: "date-time" },
    close_time: { type: "string", format: "date-time", description: "Last millisecond of the candle" },
    timestamp: { type: "integer", description: "Open time in epoch milliseconds" },
    open: { type: "number" },
    high: { type: "number" },
    low: { type: "number" },
    close: { type: "number" },
    volume: { type: "number", description: "Base asset volume" },
    quote_volume: { type: "number", description: "USDT volume" },
    trades: { type: "integer" },
    taker_buy_volume: { type: "number" },
    taker_buy_quote_volume: { type: "number" },
  },
  required: [
    "open_time",
    "close_time",
    "timestamp",
    "open",
    "high",
    "low",
    "close",
    "volume",
    "quote_volume",
    "trades",
    "taker_buy_volume",
    "taker_buy_quote_volume",
  ],
} as const;

const fundingSchema = {
  type: "object",
  properties: {
    ...timeFields,
    funding_rate: { type: "number" },
    mark_price: nullable("number"),
  },
  required: ["time", "timestamp", "funding_rate", "mark_price"],
} as const;

const openInterestSchema = {
  type: "object",
  properties: {
    ...timeFields,
    open_interest: { type: "number", description: "Contracts (base asset)" },
    open_interest_value: nullable("number", { description: "USDT" }),
  },
  required: ["time", "timestamp", "open_interest", "open_interest_value"],
} as const;

const markPriceSchema = {
  type: "object",
  properties: {
    ...timeFields,
    mark_price: { type: "number" },
    index_price: nullable("number"),
    estimated_settle_price: nullable("number"),
    funding_rate: nullable("number", { description: "The rate the next settlement would apply" }),
    next_funding_time: nullable("string", { format: "date-time" }),
  },
  required: [
    "time",
    "timestamp",
    "mark_price",
    "index_price",
    "estimated_settle_price",
    "funding_rate",
    "next_funding_time",
  ],
} as const;

const pageProperties = {
  limit: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
  offset: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
  order: { type: "string", enum: ["desc", "asc"], default: "desc" },
  start_time: timeParam("At or after"),
  end_time: timeParam("At or before"),
} as const;

function pageSchema(summary: string, item: object, extra: Record<string, unknown> = {}) {
  return {
    tags: ["exchange"],
    summary,
    params,
    querystring: { type: "object", properties: { ...pageProperties, ...extra } },
    response: {
      200: {
        type: "object",
        properties: {
          data: { type: "array", items: item },
          total: { type: "integer", description: "Records in the range; page until offset reaches it" },
          limit: { type: "integer" },
          offset: { type: "integer" },
        },
        required: ["data", "total", "limit", "offset"],
      },
      ...errorResponses,
    },
  };
}

const latestSchema = {
  tags: ["exchange"],
  summary: "The latest depth snapshot: mid price and the top 20 levels a side",
  params,
  response: {
    200: {
      type: "object",
      properties: {
        coin: { type: "string" },
        venue: { type: "string", enum: ["spot", "futures"] },
        symbol: { type: "string", examples: ["BTCUSDT"] },
        ...depthSchema.properties,
      },
      required: ["coin", "venue", "symbol", ...depthSchema.required],
    },
    ...errorResponses,
  },
};

const tradesLatestSchema = {
  tags: ["exchange"],
  summary: "The latest trades, newest first",
  params,
  querystring: {
    type: "object",
    properties: { limit: { type: "integer", minimum: 1, maximum: 1000, default: 100 } },
  },
  response: {
    200: {
      type: "object",
      properties: { data: { type: "array", items: tradeSchema }, limit: { type: "integer" } },
      required: ["data", "limit"],
    },
    ...errorResponses,
  },
};

const INTERVALS = Object.keys(CANDLE_INTERVALS);

/** The coin and venue a path names (404 otherwise), once the caller's plan includes the venue. */
function seriesOf(
  ctx: AppContext,
  req: FastifyRequest<{ Params: PathParams }>,
): { coin: Coin; venue: Venue } {
  const coin = parseCoin(req.params.coin);
  if (!coin) throw notFound(`No coin ${req.params.coin}; coins are ${COINS.join(", ")}.`);
  const venue = parseVenue(req.params.venue);
  if (!venue) throw notFound(`No venue ${req.params.venue}; venues are spot and futures.`);
  requireFeature(ctx, req, venue);
  return { coin, venue };
}

function futuresOnly(venue: Venue, resource: string): void {
  if (venue !== "futures")
    throw notFound(`${resource} exists for futures only: /v1/{coin}/futures/${resource}.`);
}

function rangeQuery(q: PageQuery): RangeQuery {
  const { from, to } = timeRange(q.start_time, q.end_time);
  return { order: q.order, limit: q.limit, offset: q.offset, from, to };
}

/** `{data, total, limit, offset}`; the page is read only when the offset is inside the total. */
async function page<T>(
  q: RangeQuery,
  count: () => Promise<number>,
  read: () => Promise<T[]>,
): Promise<{ data: T[]; total: number; limit: number; offset: number }> {
  const total = await count();
  const data = q.offset >= total ? [] : await read();
  return { data, total, limit: q.limit, offset: q.offset };
}

export function exchangeRoutes(app: FastifyInstance, ctx: AppContext): void {
  const ex = ctx.store.exchange;
  type PageRequest = { Params: PathParams; Querystring: PageQuery };

  app.get<{ Params: PathParams }>("/:coin/:venue/latest", { schema: latestSchema }, async (req) => {
    const { coin, venue } = seriesOf(ctx, req);
    const row = await ex.latestDepth(coin, venue);
    if (!row) throw notFound(`No depth snapshot of ${symbolOf(coin)} ${venue} is recorded yet.`);
    return { coin, venue, symbol: symbolOf(coin), ...depthToWire(row) };
  });

  app.get<{ Params: PathParams; Querystring: { limit: number } }>(
    "/:coin/:venue/trades/latest",
    { schema: tradesLatestSchema },
    async (req) => {
      const { coin, venue } = seriesOf(ctx, req);
      const trades = await ex.latestTrades(coin, venue, req.query.limit);
      return { data: trades.map(tradeToWire), limit: req.query.limit };
    },
  );

  app.get<PageRequest>(
    "/:coin/:venue/snapshots",
    { schema: pageSchema("Depth snapshots (one a second), newest first", depthSchema) },
    async (req) => {
      const { coin, venue } = seriesOf(ctx, req);
      const q = rangeQuery(req.query);
      const result = await page(
        q,
        () => ex.countDepth(coin, venue, q.from, q.to),
        () => ex.depthPage(coin, venue, q),
      );
      return { ...result, data: result.data.map(depthToWire) };
    },
  );

  app.get<{ Params: PathParams; Querystring: PageQuery & { interval: string } }>(
    "/:coin/:venue/candles",
    {
      schema: pageSchema("OHLCV candles, newest first", candleSchema, {
        interval: {
          type: "string",
          enum: INTERVALS,
          default: "1m",
          description: "Binance's kline intervals; 1m is recorded, wider ones are aggregated from it",
        },
      }),
    },
    async (req) => {
      const { coin, venue } = seriesOf(ctx, req);
      const q = rangeQuery(req.query);
      const interval = req.query.interval;
      const result = await page(
        q,
        () => ex.countCandles(coin, venue, interval, q.from, q.to),
        () => ex.candlePage(coin, venue, interval, q),
      );
      return { ...result, data: result.data.map((c) => candleToWire(interval, c)) };
    },
  );

  app.get<PageRequest>(
    "/:coin/:venue/funding-rates",
    { schema: pageSchema("Settled funding rates (futures), newest first", fundingSchema) },
    async (req) => {
      const { coin, venue } = seriesOf(ctx, req);
      futuresOnly(venue, "funding-rates");
      const q = rangeQuery(req.query);
      const result = await page(
        q,
        () => ex.countFunding(coin, q.from, q.to),
        () => ex.fundingPage(coin, q),
      );
      return { ...result, data: result.data.map(fundingToWire) };
    },
  );

  app.get<PageRequest>(
    "/:coin/:venue/open-interest",
    { schema: pageSchema("Open interest every 5 minutes (futures), newest first", openInterestSchema) },
    async (req) => {
      const { coin, venue } = seriesOf(ctx, req);
      futuresOnly(venue, "open-interest");
      const q = rangeQuery(req.query);
      const result = await page(
        q,
        () => ex.countOpenInterest(coin, q.from, q.to),
        () => ex.openInterestPage(coin, q),
      );
      return { ...result, data: result.data.map(openInterestToWire) };
    },
  );

  app.get<PageRequest>(
    "/:coin/:venue/mark-price",
    {
      schema: pageSchema(
        "Mark price, index price and funding estimate (futures), one a second",
        markPriceSchema,
      ),
    },
    async (req) => {
      const { coin, venue } = seriesOf(ctx, req);
      futuresOnly(venue, "mark-price");
      const q = rangeQuery(req.query);
      const result = await page(
        q,
        () => ex.countMarkPrices(coin, q.from, q.to),
        () => ex.markPricePage(coin, q),
      );
      return { ...result, data: result.data.map(markPriceToWire) };
    },
  );
}
