import { type TSchema, Type } from "typebox";
import { isoMicros, isoSeconds } from "../domain/time.ts";
import type { RunRecord, StrategyRecord } from "../store/ports/backtest-store.ts";
import type { StrategyDefinition } from "./definition.ts";
import { describeDefinition } from "./describe.ts";
import type { MarketResult } from "./engine.ts";
import type { Aggregate } from "./metrics.ts";

/**
 * The JSON shapes of backtests (DESIGN 3.7) as TypeBox schemas, and the records' wire forms. The
 * result schemas describe exactly what the engine (engine.ts) and metrics (metrics.ts) produce; a test
 * holds their output against these schemas, which the route schemas and the API document use.
 */

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Time = (description: string) => Type.String({ format: "date-time", description });
const Usdc = (description: string) => Type.Number({ description: `${description} (USDC)` });

const Level = Type.Object(
  { price: Type.Number(), size: Type.Number({ description: "Shares taken at this price" }) },
  { additionalProperties: false },
);

const Entry = Type.Object(
  {
    decision_time: Time("The snapshot whose features decided the entry"),
    fill_time: Time("The snapshot the order first filled against"),
    order_type: Type.Enum(["MARKET", "LIMIT"]),
    limit_price: Nullable(Type.Number()),
    price: Type.Number({ description: "Average fill price" }),
    size: Type.Number({ description: "Shares bought" }),
    shares_received: Type.Number({ description: "Shares held after the fee taken in shares" }),
    cost: Usdc("Paid for the shares"),
    fee_usdc: Usdc("The fee"),
    fee_shares: Type.Number({ description: "The fee as taken, in shares" }),
    maker_size: Type.Number({ description: "Of the shares, those bought by a resting limit order" }),
    mid_at_decision: Type.Number(),
    slippage_bps: Type.Number({
      description: "Average price against the mid at the decision; positive is worse",
    }),
    levels: Type.Array(Level),
  },
  { additionalProperties: false },
);

const ExitReasonSchema = Type.Enum(["take_profit", "stop_loss", "time_limit", "condition", "resolution"]);

const Exit = Type.Object(
  {
    reason: ExitReasonSchema,
    decision_time: Nullable(Time("The snapshot whose features decided the exit")),
    fill_time: Time("The snapshot the sale filled against"),
    price: Type.Number({ description: "Average sale price" }),
    size: Type.Number({ description: "Shares sold" }),
    proceeds: Usdc("Received, after the fee"),
    fee_usdc: Usdc("The fee"),
    mid_at_decision: Nullable(Type.Number()),
    slippage_bps: Nullable(Type.Number()),
    levels: Type.Array(Level),
  },
  { additionalProperties: false },
);

export const TradeSchema = Type.Object(
  {
    entry: Entry,
    exit: Nullable(Exit),
    settlement: Nullable(
      Type.Object(
        {
          shares: Type.Number(),
          payout_per_share: Type.Number({ description: "1 (won), 0 (lost) or 0.5 (50-50)" }),
          proceeds: Usdc("Paid out"),
        },
        { additionalProperties: false },
      ),
    ),
    exit_reason: ExitReasonSchema,
    closed_at: Time("When the position was closed: its sale, or the market's end"),
    held_s: Type.Number(),
    pnl: Usdc("Proceeds less cost, fees included"),
    roi: Type.Number({ description: "pnl / cost" }),
  },
  { $id: "BacktestTrade", additionalProperties: false },
);

export const MarketResultSchema = Type.Object(
  {
    slug: Type.String(),
    start_time: Time("The market's start"),
    end_time: Time("The market's end"),
    winner: Type.Enum(["Up", "Down", "50-50"]),
    snapshots: Type.Integer({ description: "Snapshots replayed" }),
    trades: Type.Array(Type.Ref("BacktestTrade")),
    orders_unfilled: Type.Integer({ description: "Orders that filled nothing" }),
    pnl: Usdc("Sum over the trades"),
    cost: Usdc("Paid for the entries"),
    roi: Nullable(Type.Number({ description: "pnl / cost; null without a trade" })),
    fees_usdc: Usdc("Fees of entries and exits"),
    time_in_market_s: Type.Number(),
  },
  { $id: "BacktestMarketResult", additionalProperties: false },
);

export const AggregateSchema = Type.Object(
  {
    markets: Type.Integer(),
    markets_traded: Type.Integer(),
    trades: Type.Integer(),
    pnl: Usdc("Total PnL"),
    cost: Usdc("Total paid for entries"),
    roi: Nullable(Type.Number({ description: "pnl / cost" })),
    win_rate: Nullable(Type.Number({ description: "Share of trades with a positive PnL" })),
    profit_factor: Nullable(
      Type.Number({ description: "Gross gains over gross losses; null without a loss" }),
    ),
    max_drawdown: Usdc("Largest fall of the equity curve from a peak"),
    sharpe: Nullable(Type.Number({ description: "Mean over standard deviation of the markets' returns" })),
    sortino: Nullable(Type.Number({ description: "Mean over downside deviation of the markets' returns" })),
    fees_paid: Usdc("All fees"),
    avg_slippage_bps: Nullable(Type.Number()),
    time_in_market_s: Type.Number(),
    time_in_market_pct: Type.Number({ description: "Of the replayed markets' total length" }),
    orders_unfilled: Type.Integer(),
    equity_curve: Type.Array(
      Type.Object(
        { time: Time("A trade's close"), equity: Usdc("Cumulative PnL") },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: "BacktestAggregate", additionalProperties: false },
);

const DefinitionText = Type.String({
  description: "The definition in plain words, a line per part (what the engine follows, nothing more)",
});

export const StrategySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    definition: Type.Ref("StrategyDefinition"),
    definition_text: DefinitionText,
    source: Type.Enum(["prompt", "preset", "definition"]),
    prompt: Nullable(Type.String()),
    preset: Nullable(Type.String()),
    generator: Nullable(Type.String({ description: "offline, or openai-compatible" })),
    model: Nullable(Type.String()),
    notes: Type.Array(Type.String(), { description: "What the generator could not use" }),
    created_at: Time("When it was stored"),
  },
  { $id: "Strategy", additionalProperties: false },
);

export const RunSchema = Type.Object(
  {
    id: Type.String(),
    status: Type.Enum(["queued", "running", "complete", "failed"]),
    strategy_id: Nullable(Type.String()),
    coin: Type.String(),
    market_type: Type.String(),
    market_count: Type.Integer(),
    start_time: Nullable(Time("Markets starting at or after")),
    end_time: Nullable(Time("Markets starting at or before")),
    definition: Type.Ref("StrategyDefinition"),
    definition_text: DefinitionText,
    progress: Type.Object(
      { markets_done: Type.Integer(), markets_total: Nullable(Type.Integer()) },
      { additionalProperties: false },
    ),
    error: Nullable(Type.String()),
    created_at: Time("When it was stored"),
    started_at: Nullable(Time("When a worker began it")),
    finished_at: Nullable(Time("When it completed or failed")),
  },
  { $id: "BacktestRun", additionalProperties: false },
);

const Unresolved = Type.Object(
  { slug: Type.String(), start_time: Time("The market's start"), end_time: Time("The market's end") },
  { additionalProperties: false },
);

export const RunAnswerSchema = Type.Object(
  {
    run: Type.Ref("BacktestRun"),
    strategy: Nullable(Type.Ref("Strategy")),
    aggregate: Nullable(Type.Ref("BacktestAggregate")),
    results: Type.Array(Type.Ref("BacktestMarketResult"), {
      description: "One per market replayed, oldest first",
    }),
    unresolved: Type.Array(Unresolved, {
      description: "Markets of the selection left out: not resolved yet",
    }),
  },
  { $id: "BacktestRunAnswer", additionalProperties: false },
);

export const BACKTEST_SCHEMAS = [
  TradeSchema,
  MarketResultSchema,
  AggregateSchema,
  StrategySchema,
  RunSchema,
  RunAnswerSchema,
];

/** Which markets a run replays, as stored with it (RunRecord.selection). */
export interface StoredSelection {
  coin: string;
  market_type: string;
  market_count: number;
  /** Unix seconds. */
  start_time: number | null;
  end_time: number | null;
  /** Series the caller's plan hides before a start time (a MarketFilter's hiddenBefore). */
  hidden: { coin: string; marketType: string; startTime: number }[];
}

export interface UnresolvedWire {
  slug: string;
  start_time: string;
  end_time: string;
}

export function strategyToWire(s: StrategyRecord) {
  const definition = JSON.parse(s.definition) as StrategyDefinition;
  return {
    id: s.id,
    name: s.name,
    definition,
    definition_text: describeDefinition(definition),
    source: s.source,
    prompt: s.prompt,
    preset: s.preset,
    generator: s.generator,
    model: s.model,
    notes: JSON.parse(s.notes) as string[],
    created_at: isoMicros(s.createdAt),
  };
}

export function runToWire(r: RunRecord) {
  const sel = JSON.parse(r.selection) as StoredSelection;
  const definition = JSON.parse(r.definition) as StrategyDefinition;
  return {
    id: r.id,
    status: r.status,
    strategy_id: r.strategyId,
    coin: sel.coin,
    market_type: sel.market_type,
    market_count: sel.market_count,
    start_time: sel.start_time === null ? null : isoSeconds(sel.start_time),
    end_time: sel.end_time === null ? null : isoSeconds(sel.end_time),
    definition,
    definition_text: describeDefinition(definition),
    progress: { markets_done: r.marketsDone, markets_total: r.marketsTotal },
    error: r.error,
    created_at: isoMicros(r.createdAt),
    started_at: r.startedAt === null ? null : isoMicros(r.startedAt),
    finished_at: r.finishedAt === null ? null : isoMicros(r.finishedAt),
  };
}

/** `{run, strategy, aggregate, results, unresolved}`: a run as stored, whatever its status. */
export function runAnswer(run: RunRecord, strategy: StrategyRecord | null, results: string[]) {
  return {
    run: runToWire(run),
    strategy: strategy === null ? null : strategyToWire(strategy),
    aggregate: run.aggregate === null ? null : (JSON.parse(run.aggregate) as Aggregate),
    results: results.map((r) => JSON.parse(r) as MarketResult),
    unresolved: run.unresolved === null ? [] : (JSON.parse(run.unresolved) as UnresolvedWire[]),
  };
}
