import type { components, operations } from "./openapi.ts";

/**
 * Names for the wire shapes. Every one is derived from the generated `openapi.ts` (the committed
 * OpenAPI document is the one definition); nothing here spells a field out by hand.
 */

type Schemas = components["schemas"];
type OperationId = keyof operations;

/** The JSON answer of an operation's 200. */
export type AnswerOf<Op extends OperationId> = operations[Op]["responses"] extends {
  200: { content: { "application/json": infer Body } };
}
  ? Body
  : never;

/** An operation's query parameters, by the API's own (snake_case) names. */
export type QueryOf<Op extends OperationId> = NonNullable<operations[Op]["parameters"]["query"]>;

/** An operation's path parameters. */
export type PathOf<Op extends OperationId> = NonNullable<operations[Op]["parameters"]["path"]>;

/** An operation's JSON request body. */
export type BodyOf<Op extends OperationId> = operations[Op] extends {
  requestBody?: { content: { "application/json": infer Body } };
}
  ? Body
  : never;

export type Coin = Schemas["Coin"];
export type MarketType = Schemas["MarketType"];
export type Market = Schemas["Market"];
export type MarketPage = Schemas["MarketList"];
export type Snapshot = Schemas["Snapshot"];
export type SnapshotPage = Schemas["SnapshotPage"];
export type SnapshotAt = Schemas["SnapshotAt"];
export type MarketSeries = Schemas["MarketSeries"];
export type OrderBook = Schemas["OrderBook"];
export type Level = Schemas["Level"];
export type Coverage = Schemas["Coverage"];
export type SeriesCatalog = Schemas["SeriesList"];
export type Series = Schemas["Series"];
export type MarketTrade = Schemas["MarketTrade"];
export type MarketTradePage = Schemas["MarketTradePage"];
export type MarketEvent = Schemas["MarketEvent"];
export type MarketEventPage = Schemas["MarketEventPage"];
export type BookAt = Schemas["BookAt"];
export type Account = Schemas["Account"];
export type BacktestQuota = Schemas["BacktestQuota"];
export type ExecutionPrice = Schemas["ExecutionPrice"];
export type ErrorEnvelope = Schemas["Error"];
/** The error codes the server sends in its envelope. */
export type ApiErrorCode = ErrorEnvelope["error"]["code"];

export type ExchangeCoin = PathOf<"listCandles">["coin"];
export type Venue = PathOf<"listCandles">["venue"];
export type LatestDepth = Schemas["LatestDepth"];
export type LatestTrades = Schemas["LatestTrades"];
export type ExchangeTrade = Schemas["Trade"];
export type DepthSnapshot = Schemas["DepthSnapshot"];
export type DepthPage = Schemas["DepthPage"];
export type Candle = Schemas["Candle"];
export type CandlePage = Schemas["CandlePage"];
export type FundingRate = Schemas["FundingRate"];
export type FundingRatePage = Schemas["FundingRatePage"];
export type OpenInterest = Schemas["OpenInterest"];
export type OpenInterestPage = Schemas["OpenInterestPage"];
export type MarkPrice = Schemas["MarkPrice"];
export type MarkPricePage = Schemas["MarkPricePage"];

export type StrategyDefinition = Schemas["StrategyDefinition"];
export type Strategy = Schemas["Strategy"];
export type StrategyPage = Schemas["StrategyList"];
export type StrategySchema = AnswerOf<"getStrategySchema">;
export type GeneratedStrategy = Schemas["GenerateAnswer"];
export type BacktestRun = Schemas["BacktestRun"];
export type BacktestRunAnswer = Schemas["BacktestRunAnswer"];
export type BacktestAggregate = Schemas["BacktestAggregate"];
export type BacktestComparedRuns = Schemas["BacktestComparedRuns"];
export type BacktestMarketResult = Schemas["BacktestMarketResult"];
export type BacktestTrade = Schemas["BacktestTrade"];
export type BacktestMarketTrades = Schemas["BacktestMarketTrades"];
export type ReplayAnswer = Schemas["ReplayAnswer"];
export type ReplayPending = Schemas["ReplayPending"];

export type MarketsQuery = QueryOf<"listMarkets">;
export type SnapshotsQuery = QueryOf<"listSnapshots">;
export type SnapshotAtQuery = QueryOf<"getSnapshotAt">;
export type MarketSeriesQuery = QueryOf<"getSeries">;
export type TradesQuery = QueryOf<"listMarketTrades">;
export type EventsQuery = Omit<QueryOf<"listMarketEvents">, "format">;
export type BookAtQuery = QueryOf<"getBookAt">;
export type ReplayQuery = QueryOf<"replay">;
export type ExecutionPriceQuery = QueryOf<"getExecutionPrice">;
export type LatestTradesQuery = QueryOf<"listLatestTrades">;
export type DepthSnapshotsQuery = QueryOf<"listDepthSnapshots">;
export type CandlesQuery = QueryOf<"listCandles">;
export type FundingRatesQuery = QueryOf<"listFundingRates">;
export type OpenInterestQuery = QueryOf<"listOpenInterest">;
export type MarkPricesQuery = QueryOf<"listMarkPrices">;
export type StrategiesQuery = QueryOf<"listStrategies">;
export type BacktestRunQuery = QueryOf<"getBacktestRun">;
export type RunTradesQuery = QueryOf<"getBacktestRunTrades">;

export type GenerateStrategyBody = BodyOf<"generateStrategy">;
export type RunStrategyBody = BodyOf<"runStrategy">;
export type RunBacktestBody = BodyOf<"runBacktest">;
export type ReplayStrategyBody = BodyOf<"replayStrategy">;
