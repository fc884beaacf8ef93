import type { FastifyRequest } from "fastify";
import { type Static, type TSchema, Type } from "typebox";
import {
  CANDLE_INTERVALS,
  MAX_SECOND_CANDLES_SPAN_US,
  parseVenue,
  SECOND_INTERVAL,
  symbolOf,
  VENUES,
} from "../../domain/exchange.ts";
import {
  DepthWireSchema,
  candleToWire,
  depthToWire,
  fundingToWire,
  markPriceToWire,
  openInterestToWire,
  tradeToWire,
} from "../../wire/exchange-wire.ts";
import { type Coin, knownCoin } from "../../domain/market.ts";
import type { RangeQuery } from "../../store/ports/exchange-store.ts";
import type { Api, AppContext } from "../context.ts";
import { notFound, validationError } from "../errors.ts";
import { requireFeature, timeRange } from "../params.ts";
import {
  answer,
  type ErrorStatus,
  Limit,
  Offset,
  Query,
  Order,
  PageOf,
  ref,
  TimeParam,
  v1Responses,
} from "../schemas.ts";

/**
 * Binance spot and futures data (DESIGN 3.6): `/v1/{coin}/spot/...` and `/v1/{coin}/futures/...`
 * (`future` accepted). An unknown coin or venue, or a futures-only resource under spot, is 404 like
 * any unknown path; a plan without the venue's feature gets 403.
 */

/** A configured coin (the document's Coin enum, from the `COINS` option); any case accepted. */
const CoinParam = Type.Unsafe<string>(Type.Ref("Coin"));

/** Routes of both venues; `future` and any case are accepted and read as the venue they name. */
const VenueParams = Type.Object({
  coin: CoinParam,
  venue: Type.Enum([...VENUES], { description: "spot, or futures (USDⓈ-M perpetual; `future` accepted)" }),
});

/** Futures-only routes name their venue in the path: they do not exist under spot. */
const CoinParams = Type.Object({ coin: CoinParam });

const RangeQuery = Query({
  limit: Limit(1000, 100),
  offset: Offset,
  order: Order,
  start_time: Type.Optional(TimeParam("At or after")),
  end_time: Type.Optional(TimeParam("At or before")),
});
type RangeQueryWire = Static<typeof RangeQuery>;

const LatestDepth = Type.Object(
  {
    coin: Type.Ref("Coin"),
    venue: Type.Enum([...VENUES]),
    symbol: Type.String({ examples: ["BTCUSDT"] }),
    ...DepthWireSchema.properties,
  },
  { $id: "LatestDepth", additionalProperties: false },
);

const LatestTrades = Type.Object(
  { data: Type.Array(ref("Trade")), limit: Type.Integer() },
  { $id: "LatestTrades", additionalProperties: false },
);

const pages = {
  DepthPage: "DepthSnapshot",
  CandlePage: "Candle",
  FundingRatePage: "FundingRate",
  OpenInterestPage: "OpenInterest",
  MarkPricePage: "MarkPrice",
};

export const exchangeComponents = [
  LatestDepth,
  LatestTrades,
  ...Object.entries(pages).map(([id, item]) => ({ ...PageOf(ref(item)), $id: id })),
];

const EXCHANGE_ERRORS = { errors: [400, 403, 404] as ErrorStatus[] };

function pageSchema<P extends TSchema>(
  operationId: string,
  summary: string,
  page: keyof typeof pages,
  params: P,
) {
  return {
    operationId,
    tags: ["exchange"],
    summary,
    params,
    querystring: RangeQuery,
    response: v1Responses({ 200: answer(ref(page), "A page, newest first by default") }, EXCHANGE_ERRORS),
  };
}

const latestSchema = {
  operationId: "getLatestDepth",
  tags: ["exchange"],
  summary: "The latest depth snapshot: mid price and the top 20 levels a side",
  params: VenueParams,
  response: v1Responses({ 200: answer(ref("LatestDepth"), "The latest depth snapshot") }, EXCHANGE_ERRORS),
};

const tradesLatestSchema = {
  operationId: "listLatestTrades",
  tags: ["exchange"],
  summary: "The latest trades, newest first",
  params: VenueParams,
  querystring: Query({ limit: Limit(1000, 100) }),
  response: v1Responses({ 200: answer(ref("LatestTrades"), "The latest trades") }, EXCHANGE_ERRORS),
};

const INTERVALS = Object.keys(CANDLE_INTERVALS);

const FUTURES_ONLY = /^\/v1\/[^/]+\/[^/]+\/(funding-rates|open-interest|mark-price)\/?$/;

/** What a 404 says of a futures-only series asked for under another venue, or null for other paths. */
export function futuresOnlyHint(path: string): string | null {
  const resource = FUTURES_ONLY.exec(path)?.[1];
  return resource ? `${resource} exists for futures only: /v1/{coin}/futures/${resource}.` : null;
}

/**
 * Reads the coin and venue of a path as the canonical names the schema's enums hold (any case;
 * `future` for futures), and answers an unknown one with 404 like any unknown path.
 */
const canonicalPath =
  (coins: readonly Coin[]) =>
  async (req: FastifyRequest): Promise<void> => {
    const params = req.params as { coin?: string; venue?: string };
    if (params.coin !== undefined) {
      const coin = knownCoin(params.coin, coins);
      if (!coin) throw notFound(`No coin ${params.coin}; coins are ${coins.join(", ")}.`);
      params.coin = coin;
    }
    if (params.venue !== undefined) {
      const venue = parseVenue(params.venue);
      if (!venue) throw notFound(`No venue ${params.venue}; venues are spot and futures.`);
      params.venue = venue;
    }
  };

function rangeQuery(q: RangeQueryWire): RangeQuery {
  const { from, to } = timeRange(q.start_time, q.end_time);
  return { order: q.order, limit: q.limit, offset: q.offset, from, to };
}

/**
 * 1s candles come a day to 86,400: a query of them names its range, at most a day long, so that a page
 * is never read at an offset deep into months of them.
 */
function requireSecondSpan(q: RangeQuery): void {
  const rule = `interval=1s needs start_time and end_time at most ${MAX_SECOND_CANDLES_SPAN_US / 3_600_000_000} hours apart`;
  if (q.from === undefined) throw validationError(rule, { parameter: "start_time", rule: "required" });
  if (q.to === undefined) throw validationError(rule, { parameter: "end_time", rule: "required" });
  if (q.to - q.from > MAX_SECOND_CANDLES_SPAN_US)
    throw validationError(rule, { parameter: "end_time", rule: "range" });
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

export function exchangeRoutes(app: Api, ctx: AppContext): void {
  app.addHook("preValidation", canonicalPath(ctx.config.coins));
  venueRoutes(app, ctx);
  futuresRoutes(app, ctx);
}

/** Routes of both venues: depth, trades and candles. */
function venueRoutes(app: Api, ctx: AppContext): void {
  const ex = ctx.store.exchange;

  app.get("/:coin/:venue/latest", { schema: latestSchema }, async (req) => {
    const { coin, venue } = req.params;
    requireFeature(ctx, req, venue);
    const row = await ex.latestDepth(coin, venue);
    if (!row) throw notFound(`No depth snapshot of ${symbolOf(coin)} ${venue} is recorded yet.`);
    return { coin, venue, symbol: symbolOf(coin), ...depthToWire(row) };
  });

  app.get("/:coin/:venue/trades/latest", { schema: tradesLatestSchema }, async (req) => {
    const { coin, venue } = req.params;
    requireFeature(ctx, req, venue);
    const trades = await ex.latestTrades(coin, venue, req.query.limit);
    return { data: trades.map(tradeToWire), limit: req.query.limit };
  });

  const depthSchema = pageSchema(
    "listDepthSnapshots",
    "Depth snapshots (one a second)",
    "DepthPage",
    VenueParams,
  );
  app.get("/:coin/:venue/snapshots", { schema: depthSchema }, async (req) => {
    const { coin, venue } = req.params;
    requireFeature(ctx, req, venue);
    const q = rangeQuery(req.query);
    const result = await page(
      q,
      () => ex.countDepth(coin, venue, q.from, q.to),
      () => ex.depthPage(coin, venue, q),
    );
    return { ...result, data: result.data.map(depthToWire) };
  });

  const candleSchema = pageSchema("listCandles", "OHLCV candles", "CandlePage", VenueParams);
  const interval = Type.Enum(INTERVALS, {
    default: "1m",
    description:
      "Binance's kline intervals; 1m is recorded, wider ones are aggregated from it; 1s is served where " +
      "imported (`updown import binance-vision`), for a range of at most a day: start_time and end_time " +
      "are required with it",
  });
  const candleQuery = Query({ ...RangeQuery.properties, interval });
  app.get("/:coin/:venue/candles", { schema: { ...candleSchema, querystring: candleQuery } }, async (req) => {
    const { coin, venue } = req.params;
    requireFeature(ctx, req, venue);
    const q = rangeQuery(req.query);
    const { interval } = req.query;
    if (interval === SECOND_INTERVAL) requireSecondSpan(q);
    const result = await page(
      q,
      () => ex.countCandles(coin, venue, interval, q.from, q.to),
      () => ex.candlePage(coin, venue, interval, q),
    );
    return { ...result, data: result.data.map((c) => candleToWire(interval, c)) };
  });
}

/** A futures-only series: how to count and read a page of it. */
interface FuturesSeries {
  resource: string;
  schema: ReturnType<typeof pageSchema<typeof CoinParams>>;
  count(coin: Coin, q: RangeQuery): Promise<number>;
  read(coin: Coin, q: RangeQuery): Promise<object[]>;
}

/**
 * Futures-only series, under `/{coin}/futures/` (and its `future` alias, left out of the document).
 * Each is one paged read of a store series.
 */
function futuresRoutes(app: Api, ctx: AppContext): void {
  const ex = ctx.store.exchange;
  const series: FuturesSeries[] = [
    {
      resource: "funding-rates",
      schema: pageSchema("listFundingRates", "Settled funding rates", "FundingRatePage", CoinParams),
      count: (coin: Coin, q: RangeQuery) => ex.countFunding(coin, q.from, q.to),
      read: async (coin: Coin, q: RangeQuery) => (await ex.fundingPage(coin, q)).map(fundingToWire),
    },
    {
      resource: "open-interest",
      schema: pageSchema("listOpenInterest", "Open interest every 5 minutes", "OpenInterestPage", CoinParams),
      count: (coin: Coin, q: RangeQuery) => ex.countOpenInterest(coin, q.from, q.to),
      read: async (coin: Coin, q: RangeQuery) => (await ex.openInterestPage(coin, q)).map(openInterestToWire),
    },
    {
      resource: "mark-price",
      schema: pageSchema(
        "listMarkPrices",
        "Mark price, index price and funding estimate, one a second",
        "MarkPricePage",
        CoinParams,
      ),
      count: (coin: Coin, q: RangeQuery) => ex.countMarkPrices(coin, q.from, q.to),
      read: async (coin: Coin, q: RangeQuery) => (await ex.markPricePage(coin, q)).map(markPriceToWire),
    },
  ];
  for (const { resource, schema, count, read } of series) {
    for (const venuePath of ["futures", "future"]) {
      const routeSchema =
        venuePath === "futures" ? schema : { ...schema, hide: true, operationId: undefined };
      app.get(`/:coin/${venuePath}/${resource}`, { schema: routeSchema }, async (req) => {
        const { coin } = req.params;
        requireFeature(ctx, req, "futures");
        const q = rangeQuery(req.query);
        return page(
          q,
          () => count(coin, q),
          () => read(coin, q),
        );
      });
    }
  }
}
