import { type TSchema, Type } from "typebox";
import { isoMicros, isoSeconds } from "../domain/time.ts";
import type { RunRecord, StrategyRecord } from "../store/ports/backtest-store.ts";
import type { LentJson } from "../wire/json-bytes.ts";
import { parseStoredDefinition } from "./definition.ts";
import { describeDefinition } from "./describe.ts";
import { type MarketResult, round } from "./engine.ts";
import type { ResearchSpec } from "./research.ts";
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
    fill_time: Time(
      "The order's first fill: the snapshot it filled against, or a trade it filled from resting",
    ),
    last_fill_time: Time("The order's last fill"),
    order_type: Type.Enum(["MARKET", "LIMIT"]),
    limit_price: Nullable(Type.Number()),
    queue_ahead: Nullable(
      Type.Number({
        description:
          "Shares displayed at the limit price when the order's rest joined the book, which traded before it; null: it never rested",
      }),
    ),
    price: Type.Number({ description: "Average fill price" }),
    size: Type.Number({ description: "Shares bought" }),
    unfilled: Type.Number({
      description: "Shares of the order never bought (depth ran out, or the limit expired or was cancelled)",
    }),
    shares_received: Type.Number({ description: "Shares held after the fee taken in shares" }),
    cost: Usdc("Paid for the shares"),
    fee_usdc: Usdc("The fee"),
    fee_shares: Type.Number({ description: "The fee as taken, in shares" }),
    maker_size: Type.Number({ description: "Of the shares, those bought by a resting limit order" }),
    rebate_usdc: Usdc("Maker rebate earned, in PnL; 0 unless the definition's count_rebates"),
    mid_at_decision: Type.Number(),
    slippage_bps: Type.Number({
      description: "Average price against the mid at the decision; positive is worse",
    }),
    levels: Type.Array(Level),
  },
  { additionalProperties: false },
);

const ExitReasonSchema = Type.Enum([
  "take_profit",
  "stop_loss",
  "max_loss",
  "time_limit",
  "condition",
  "resolution",
]);

const ExitAttempt = Type.Object(
  {
    time: Time("The snapshot this attempt sold against"),
    size: Type.Number({ description: "Shares sold" }),
    price: Type.Number({ description: "Average price" }),
    proceeds: Usdc("Received, after the fee"),
    fee_usdc: Usdc("The fee"),
  },
  { additionalProperties: false },
);

const Exit = Type.Object(
  {
    reason: ExitReasonSchema,
    decision_time: Nullable(Time("The snapshot whose features decided the exit")),
    fill_time: Nullable(Time("The first sale; null: nothing sold")),
    price: Nullable(Type.Number({ description: "Average sale price; null: nothing sold" })),
    size: Type.Number({ description: "Shares sold" }),
    unsold: Type.Number({ description: "Shares the exit could not sell before the market's end (settled)" }),
    proceeds: Usdc("Received, after the fee"),
    fee_usdc: Usdc("The fee"),
    mid_at_decision: Nullable(Type.Number()),
    slippage_bps: Nullable(Type.Number()),
    attempts: Type.Array(ExitAttempt, {
      description: "Each sale, in order: an exit not filled at once keeps selling at each later snapshot",
    }),
    empty_attempts: Type.Integer({ description: "Attempts that found no bid to sell to (then tried again)" }),
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
    pnl: Usdc("Proceeds less cost, fees (and counted rebates) included"),
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
    rebates_usdc: Usdc("Maker rebates counted (count_rebates)"),
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
    sharpe: Nullable(
      Type.Number({
        description:
          "Per market, not annualized: mean over sample standard deviation of every replayed market's ROI (a market without a trade is 0)",
      }),
    ),
    sortino: Nullable(
      Type.Number({
        description:
          "Per market, not annualized: mean over downside deviation of every replayed market's ROI (a market without a trade is 0)",
      }),
    ),
    fees_paid: Usdc("All fees"),
    rebates_usdc: Usdc("All maker rebates counted"),
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

const figureFields = {
  pnl: Usdc("Total PnL"),
  roi: Nullable(Type.Number({ description: "pnl / cost; null without a trade" })),
  win_rate: Nullable(
    Type.Number({ description: "Share of trades with a positive PnL; null without a trade" }),
  ),
  trades: Type.Integer(),
  markets: Type.Integer({ description: "Markets replayed" }),
  markets_traded: Type.Integer(),
  max_drawdown: Usdc("Largest fall of the equity curve from a peak"),
  sharpe: Nullable(Type.Number({ description: "As the aggregate's: per market, not annualized" })),
};

const Figures = Type.Object(figureFields, { additionalProperties: false });

const Benchmark = Type.Object(
  {
    name: Type.Enum(["always_up", "always_down", "favourite", "random"], {
      description:
        "always_up, always_down: buy at the first snapshot; favourite: the side priced higher at favourite_at_pct of the market; random: a seeded side and second",
    }),
    ...figureFields,
  },
  { additionalProperties: false },
);

const Interval = Type.Object(
  { low: Nullable(Type.Number()), high: Nullable(Type.Number()) },
  { additionalProperties: false },
);

const Intervals = Type.Object(
  {
    level: Type.Number({ description: "0.95" }),
    samples: Type.Integer({ description: "Bootstrap resamples of the run's markets (0 without a market)" }),
    seed: Type.Integer(),
    pnl: Interval,
    roi: Interval,
    win_rate: Interval,
  },
  {
    additionalProperties: false,
    description: "Percentile bootstrap over markets, seeded: the same run gives the same bounds",
  },
);

const SweepValues = Type.Record(Type.String(), Type.Number(), {
  description: "Each swept field (dotted path) and its value in this combination",
});

const SweepTable = Type.Object(
  {
    fields: Type.Array(Type.String(), { description: "The swept fields, in axis order" }),
    combinations: Type.Integer(),
    rows: Type.Array(Type.Object({ values: SweepValues, ...figureFields }, { additionalProperties: false }), {
      description: "One per combination, the first axis varying slowest",
    }),
  },
  { additionalProperties: false },
);

const WalkForwardSchema = Type.Object(
  {
    train_fraction: Type.Number(),
    metric: Type.Enum(["pnl"], { description: "What the choice maximizes on the training markets" }),
    train_markets: Type.Integer({ description: "The first markets, oldest first" }),
    test_markets: Type.Integer({ description: "The rest" }),
    chosen: Nullable(SweepValues),
    train: Nullable(Figures),
    test: Nullable(Figures),
  },
  { additionalProperties: false },
);

/** The run answer's research fields (src/backtest/research.ts), null until the run is complete. */
export const researchFields = {
  benchmarks: Nullable(
    Type.Array(Benchmark, { description: "The same markets and fill rules, held to resolution" }),
  ),
  intervals: Nullable(Intervals),
  sweep: Nullable(SweepTable),
  walk_forward: Nullable(WalkForwardSchema),
};

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
    ...researchFields,
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
  /** A sweep, its walk-forward and the benchmarks' settings; absent: none, and the default settings. */
  research?: ResearchSpec;
}

export interface UnresolvedWire {
  slug: string;
  start_time: string;
  end_time: string;
}

export function strategyToWire(s: StrategyRecord) {
  const definition = parseStoredDefinition(s.definition);
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
  const definition = parseStoredDefinition(r.definition);
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

/**
 * A market's result as stored. One stored before issue 24's fields existed gets them as that engine made
 * them: no rebates counted, one sale per exit and no empty tries, shares an exit left unsold those it
 * settled, what an entry did not buy the rest of its position size; its queue ahead is unknown (null).
 */
export function storedResult(text: string, positionSize: number): MarketResult {
  const r = JSON.parse(text) as MarketResult;
  if (r.rebates_usdc !== undefined) return r;
  const trades = r.trades.map((t) => {
    const e = t.entry;
    const entry = {
      ...e,
      last_fill_time: e.fill_time,
      queue_ahead: null,
      unfilled: round(Math.max(0, positionSize - e.size)),
      rebate_usdc: 0,
    };
    const x = t.exit;
    const attempt = x && x.fill_time !== null && x.price !== null ? [x] : [];
    const exit = x && {
      ...x,
      unsold: t.settlement?.shares ?? 0,
      attempts: attempt.map((a) => ({
        time: a.fill_time as string,
        size: a.size,
        price: a.price as number,
        proceeds: a.proceeds,
        fee_usdc: a.fee_usdc,
      })),
      empty_attempts: 0,
    };
    return { ...t, entry, exit };
  });
  return { ...r, trades, rebates_usdc: 0 };
}

/** In every result and aggregate the engine has stored since issue 24; absent from older ones. */
const REBATES_KEY = '"rebates_usdc":';

/** An aggregate as stored, given the rebates older ones lack (the curve kept last). */
function storedAggregate(text: string): string {
  if (text.includes(REBATES_KEY)) return text;
  return renderAggregate({ ...(JSON.parse(text) as Aggregate), rebates_usdc: 0 });
}

/** The run's figures side by side with others' (`GET /v1/backtest-ai/runs?ids=`): the run, its aggregate and research. */
export function renderComparedRun(run: RunRecord): string {
  return (
    `{"run":${JSON.stringify(runToWire(run))}` +
    `,"aggregate":${run.aggregate === null ? "null" : storedAggregate(run.aggregate)}` +
    `,${researchJson(run)}}`
  );
}

/** A page of a run's results. */
export interface ResultsPage {
  total: number;
  limit: number;
  offset: number;
}

/** A run answer's bytes, and the run's id and status for the route (Location, 200 or 202). */
export interface RenderedRunAnswer<Json = string | LentJson> {
  runId: string;
  done: boolean;
  /** The answer's JSON: as text, or as bytes lent by a page reader thread (src/http/page-readers.ts). */
  json: Json;
}

/** Whether a run has finished (complete or failed): its answer will not change. */
export const isFinished = (run: RunRecord): boolean => run.status === "complete" || run.status === "failed";

/**
 * `{run, strategy, generated_strategy, aggregate, results, results_page, unresolved, benchmarks,
 * intervals, sweep, walk_forward}`: a run as stored,
 * whatever its status. The aggregate and the results are spliced in as the worker rendered them, so
 * that a request never parses nor serializes a big result (issue 24: 3-4 MB answers stalled requests).
 */
export function renderRunAnswer(
  run: RunRecord,
  strategy: StrategyRecord | null,
  results: readonly string[],
  page: ResultsPage,
): RenderedRunAnswer<string> {
  const generated =
    strategy !== null && strategy.source !== "definition"
      ? JSON.stringify(parseStoredDefinition(run.definition))
      : "null";
  const positionSize = parseStoredDefinition(run.definition).position_size;
  const json =
    `{"run":${JSON.stringify(runToWire(run))}` +
    `,"strategy":${strategy === null ? "null" : JSON.stringify(strategyToWire(strategy))}` +
    `,"generated_strategy":${generated}` +
    `,"aggregate":${run.aggregate === null ? "null" : storedAggregate(run.aggregate)}` +
    `,"results":[${results.map((r) => (r.includes(REBATES_KEY) ? r : JSON.stringify(storedResult(r, positionSize)))).join(",")}]` +
    `,"results_page":${JSON.stringify(page)}` +
    `,"unresolved":${run.unresolved ?? "[]"}` +
    `,${researchJson(run)}}`;
  return { runId: run.id, done: isFinished(run), json };
}

const NO_RESEARCH_JSON = '"benchmarks":null,"intervals":null,"sweep":null,"walk_forward":null';

/** The run's research fields as the worker stored them (one object of the four keys), unwrapped. */
export function researchJson(run: RunRecord): string {
  return run.research === null ? NO_RESEARCH_JSON : run.research.slice(1, -1);
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
