import { type TSchema, Type } from "typebox";
import { isoMicros, isoSeconds } from "../domain/time.ts";
import type { RunRecord, StrategyRecord } from "../store/ports/backtest-store.ts";
import type { StrategyDefinition } from "./definition.ts";
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

export const StrategySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    definition: Type.Ref("StrategyDefinition"),
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
    generated_strategy: Nullable(
      Type.Ref("StrategyDefinition", {
        description:
          "PolyHistorical's name: the definition the run replays when its strategy was generated (a prompt or preset); else null",
      }),
    ),
    aggregate: Nullable(Type.Ref("BacktestAggregate")),
    results: Type.Array(Type.Ref("BacktestMarketResult"), {
      description: "One per market replayed, oldest first: the page results_limit and results_offset ask for",
    }),
    results_page: Type.Object(
      {
        total: Type.Integer({ description: "Markets replayed so far" }),
        limit: Type.Integer(),
        offset: Type.Integer(),
      },
      { additionalProperties: false },
    ),
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
  /** The markets named by slug instead (`POST /v1/replay`); the fields above then only describe them. */
  slugs?: string[];
}

export interface UnresolvedWire {
  slug: string;
  start_time: string;
  end_time: string;
}

export function strategyToWire(s: StrategyRecord) {
  return {
    id: s.id,
    name: s.name,
    definition: JSON.parse(s.definition) as StrategyDefinition,
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
  return {
    id: r.id,
    status: r.status,
    strategy_id: r.strategyId,
    coin: sel.coin,
    market_type: sel.market_type,
    market_count: sel.market_count,
    start_time: sel.start_time === null ? null : isoSeconds(sel.start_time),
    end_time: sel.end_time === null ? null : isoSeconds(sel.end_time),
    definition: JSON.parse(r.definition) as StrategyDefinition,
    progress: { markets_done: r.marketsDone, markets_total: r.marketsTotal },
    error: r.error,
    created_at: isoMicros(r.createdAt),
    started_at: r.startedAt === null ? null : isoMicros(r.startedAt),
    finished_at: r.finishedAt === null ? null : isoMicros(r.finishedAt),
  };
}

/** A page of a run's results. */
export interface ResultsPage {
  total: number;
  limit: number;
  offset: number;
}

/** A run answer's bytes, and the run's id and status for the route (Location, 200 or 202). */
export interface RenderedRunAnswer {
  runId: string;
  done: boolean;
  json: string;
}

/**
 * `{run, strategy, generated_strategy, aggregate, results, results_page, unresolved}`: a run as stored,
 * whatever its status. The aggregate and the results are spliced in as the worker rendered them, so
 * that a request never parses nor serializes a big result (issue 24: 3-4 MB answers stalled requests).
 */
export function renderRunAnswer(
  run: RunRecord,
  strategy: StrategyRecord | null,
  results: readonly string[],
  page: ResultsPage,
): RenderedRunAnswer {
  const generated = strategy !== null && strategy.source !== "definition" ? run.definition : "null";
  const json =
    `{"run":${JSON.stringify(runToWire(run))}` +
    `,"strategy":${strategy === null ? "null" : JSON.stringify(strategyToWire(strategy))}` +
    `,"generated_strategy":${generated}` +
    `,"aggregate":${run.aggregate ?? "null"}` +
    `,"results":[${results.join(",")}]` +
    `,"results_page":${JSON.stringify(page)}` +
    `,"unresolved":${run.unresolved ?? "[]"}}`;
  return { runId: run.id, done: run.status === "complete" || run.status === "failed", json };
}

/** A market's result as the worker stores it: its JSON, and its trades apart, one JSON line a trade. */
export function renderMarketResult(result: MarketResult): { result: string; trades: string } {
  return { result: JSON.stringify(result), trades: result.trades.map((t) => JSON.stringify(t)).join("\n") };
}

const CURVE_KEY = ',"equity_curve":';

/** The aggregate as the worker stores it: the equity curve last, so that a reader can cut it off unparsed. */
export function renderAggregate(a: Aggregate): string {
  const { equity_curve: curve, ...rest } = a;
  return `${JSON.stringify(rest).slice(0, -1)}${CURVE_KEY}${JSON.stringify(curve)}}`;
}

/** A stored aggregate (renderAggregate) as its figures without the curve, and the curve. */
export function splitAggregate(text: string): { figures: string; curve: string } {
  const at = text.lastIndexOf(CURVE_KEY);
  return { figures: `${text.slice(0, at)}}`, curve: text.slice(at + CURVE_KEY.length, -1) };
}

/** A page of trade lines (renderMarketResult's `trades`) as a JSON array's elements, without parsing them. */
export function tradeLinesPage(
  lines: string,
  limit: number,
  offset: number,
): { items: string; total: number } {
  const all = lines === "" ? [] : lines.split("\n");
  return { items: all.slice(offset, offset + limit).join(","), total: all.length };
}
