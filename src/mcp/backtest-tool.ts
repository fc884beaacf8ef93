import * as z from "zod";
import { count, percent, usdc, usdcText } from "../../client/src/format.ts";
import type * as Api from "../../client/src/index.ts";
import { type UpdownClient } from "../../client/src/index.ts";
import { coinField, marketTypeField, slugField, timeField } from "./schemas.ts";
import { defineTool, ToolInputError } from "./tool.ts";

/**
 * run_backtest: a strategy (preset, prompt, definition or stored id) replayed over one market or the
 * latest resolved markets of a series, through the backtest endpoints (docs/backtests.md). The POST
 * itself waits up to `wait_seconds` for the run; a run still going then is answered with its id, and
 * the same tool called with `run_id` reads it later.
 */

export const MAX_WAIT_SECONDS = 60;
export const FIRST_TRADES = 5;
export const FIRST_MARKETS = 10;

const input = {
  preset: z.enum(["mean_reversion", "dip_buying", "momentum_entry", "quick_scalp"]).optional(),
  prompt: z
    .string()
    .min(1)
    .max(2000)
    .optional()
    .describe("The strategy in words (the built-in generator's phrasings)"),
  definition: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      "A strategy definition (JSON schema: GET /v1/backtest-ai/schema); fields left out take defaults",
    ),
  strategy_id: z.string().min(1).optional().describe("A strategy this key stored earlier"),
  run_id: z.string().min(1).optional().describe("Read an earlier run instead of starting one"),
  slug: slugField.optional().describe("Replay this one market (instead of coin and market_type)"),
  coin: coinField.optional(),
  market_type: marketTypeField.optional(),
  market_count: z.number().int().min(1).max(100).optional().describe("Latest resolved markets, default 10"),
  start_time: timeField.optional().describe("Markets starting at or after"),
  end_time: timeField.optional().describe("Markets starting at or before"),
  position_size: z.number().min(1).max(10_000).optional().describe("Shares per entry"),
  order_type: z.enum(["MARKET", "LIMIT"]).optional(),
  wait_seconds: z
    .number()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .optional()
    .describe(`How long to wait for the run, 0..${MAX_WAIT_SECONDS} s, default 25`),
};

const nullableNumber = z.number().nullable();

const output = z.object({
  run_id: z.string(),
  status: z.enum(["queued", "running", "complete", "failed"]),
  error: z.string().nullable(),
  progress: z.object({ markets_done: z.number().int(), markets_total: z.number().int().nullable() }),
  strategy: z.object({ id: z.string(), name: z.string(), source: z.string() }).nullable(),
  definition: z.record(z.string(), z.unknown()),
  definition_text: z.string().describe("The definition that ran, in plain words"),
  aggregate: z
    .object({
      markets: z.number().int(),
      markets_traded: z.number().int(),
      trades: z.number().int(),
      pnl: z.number(),
      cost: z.number(),
      roi: nullableNumber,
      win_rate: nullableNumber,
      profit_factor: nullableNumber,
      max_drawdown: z.number(),
      sharpe: nullableNumber,
      sortino: nullableNumber,
      fees_paid: z.number(),
      rebates_usdc: z.number(),
      avg_slippage_bps: nullableNumber,
      time_in_market_pct: z.number(),
      orders_unfilled: z.number().int(),
    })
    .nullable()
    .describe("null until the run completes"),
  markets: z
    .array(z.object({ slug: z.string(), winner: z.string(), trades: z.number().int(), pnl: z.number() }))
    .describe(`The first ${FIRST_MARKETS} markets replayed, oldest first`),
  first_trades: z
    .array(
      z.object({
        slug: z.string(),
        entry_time: z.string(),
        entry_price: z.number(),
        shares: z.number(),
        exit_reason: z.string(),
        exit_time: z.string().nullable(),
        exit_price: nullableNumber,
        pnl: z.number(),
      }),
    )
    .describe(`The first ${FIRST_TRADES} trades`),
  unresolved: z.number().int().describe("Markets of the selection left out: not resolved yet"),
  benchmarks: z
    .array(z.object({ name: z.string(), trades: z.number().int(), pnl: z.number(), roi: nullableNumber }))
    .nullable()
    .describe(
      "always_up, always_down, favourite, random on the same markets and fill rules; null until complete",
    ),
  intervals: z
    .object({
      pnl: z.object({ low: nullableNumber, high: nullableNumber }),
      roi: z.object({ low: nullableNumber, high: nullableNumber }),
      win_rate: z.object({ low: nullableNumber, high: nullableNumber }),
    })
    .nullable()
    .describe("Bootstrap 95% intervals over markets (seeded); null until complete"),
});

type Args = z.infer<z.ZodObject<typeof input>>;
type Output = z.infer<typeof output>;

function tradesOf(results: Api.BacktestMarketResult[]): Output["first_trades"] {
  return results
    .flatMap((r) => r.trades.map((t) => ({ slug: r.slug, t })))
    .slice(0, FIRST_TRADES)
    .map(({ slug, t }) => ({
      slug,
      entry_time: t.entry.fill_time,
      entry_price: t.entry.price,
      shares: t.entry.shares_received,
      exit_reason: t.exit_reason,
      exit_time: t.exit?.fill_time ?? null,
      exit_price: t.exit?.price ?? null,
      pnl: t.pnl,
    }));
}

function aggregateOf(a: Api.BacktestAggregate | null): Output["aggregate"] {
  if (a === null) return null;
  const { equity_curve: _curve, time_in_market_s: _seconds, ...rest } = a;
  return rest;
}

export function backtestAnswerOf(answer: Api.BacktestRunAnswer): Output {
  const { run } = answer;
  return {
    run_id: run.id,
    status: run.status,
    error: run.error,
    progress: run.progress,
    strategy: answer.strategy
      ? { id: answer.strategy.id, name: answer.strategy.name, source: answer.strategy.source }
      : null,
    definition: run.definition as Record<string, unknown>,
    definition_text: run.definition_text,
    aggregate: aggregateOf(answer.aggregate),
    markets: answer.results
      .slice(0, FIRST_MARKETS)
      .map((r) => ({ slug: r.slug, winner: r.winner, trades: r.trades.length, pnl: r.pnl })),
    first_trades: tradesOf(answer.results),
    unresolved: answer.unresolved.length,
    benchmarks:
      answer.benchmarks?.map((b) => ({ name: b.name, trades: b.trades, pnl: b.pnl, roi: b.roi })) ?? null,
    intervals:
      answer.intervals === null
        ? null
        : { pnl: answer.intervals.pnl, roi: answer.intervals.roi, win_rate: answer.intervals.win_rate },
  };
}

/** The run in words, and after it the definition that ran (the API's definition_text). */
function textOf(o: Output): string {
  return `${summaryOf(o)}\n\nThe definition that ran:\n${o.definition_text}`;
}

function summaryOf(o: Output): string {
  const head = `Run ${o.run_id} (${o.definition.name ?? "strategy"}): ${o.status}`;
  if (o.status === "failed") return `${head}: ${o.error ?? "no reason given"}.`;
  if (o.aggregate === null) {
    const done = `${o.progress.markets_done} of ${o.progress.markets_total ?? "?"} markets done`;
    return `${head}, ${done}. Call run_backtest with run_id "${o.run_id}" to read it when complete.`;
  }
  const a = o.aggregate;
  return (
    `${head}. ${count(a.markets)} markets, ${count(a.trades)} trades, PnL ${usdcText(a.pnl)} on ${usdc(a.cost)} ` +
    `(ROI ${percent(a.roi)}), win rate ${percent(a.win_rate)}, max drawdown ${usdc(a.max_drawdown)}, ` +
    `fees ${usdc(a.fees_paid)}.` +
    (o.unresolved > 0 ? ` ${count(o.unresolved)} unresolved markets left out.` : "") +
    (o.intervals === null
      ? ""
      : ` 95% interval of PnL ${usdc(o.intervals.pnl.low)} to ${usdc(o.intervals.pnl.high)} USDC.`) +
    (o.benchmarks === null
      ? ""
      : ` Benchmarks' PnL: ${o.benchmarks.map((b) => `${b.name} ${usdcText(b.pnl)}`).join(", ")}.`)
  );
}

/** Exactly one way of naming the strategy, or a tool error saying so. */
function strategySource(args: Args): Record<string, unknown> {
  const given = (["preset", "prompt", "definition", "strategy_id"] as const).filter(
    (k) => args[k] !== undefined,
  );
  if (given.length !== 1) {
    throw new ToolInputError(
      `Give exactly one of preset, prompt, definition or strategy_id (or run_id alone); got ${given.length === 0 ? "none" : given.join(", ")}.`,
    );
  }
  return { [given[0]]: args[given[0]] };
}

/** The markets: one market by slug (its series, starting exactly at its start), or a series. */
async function marketSelection(client: UpdownClient, args: Args, signal: AbortSignal) {
  if (args.slug !== undefined) {
    if (args.coin !== undefined || args.market_type !== undefined) {
      throw new ToolInputError("Give either slug or coin and market_type, not both.");
    }
    const m = await client.market(args.slug, { signal });
    return {
      coin: m.coin,
      market_type: m.market_type,
      market_count: 1,
      start_time: m.start_time,
      end_time: m.start_time,
    };
  }
  if (args.coin === undefined || args.market_type === undefined) {
    throw new ToolInputError("Give a slug, or coin and market_type, to say which markets to replay.");
  }
  const { coin, market_type, market_count, start_time, end_time } = args;
  return { coin, market_type, market_count, start_time, end_time };
}

async function startRun(
  client: UpdownClient,
  args: Args,
  signal: AbortSignal,
): Promise<Api.BacktestRunAnswer> {
  const source = strategySource(args);
  const markets = await marketSelection(client, args, signal);
  const wait = args.wait_seconds ?? 25;
  const body = {
    ...source,
    ...markets,
    position_size: args.position_size,
    order_type: args.order_type,
    wait,
  };
  // The POST holds the answer for up to `wait` seconds; the attempt's own limit must outlast it.
  const options = { signal, timeoutMs: (wait + 30) * 1000 };
  if ("preset" in source || "prompt" in source) {
    return client.runStrategy(body as Api.RunStrategyBody, options);
  }
  return client.runBacktest(body as Api.RunBacktestBody, options);
}

export const runBacktestTool = defineTool({
  name: "run_backtest",
  title: "Run a backtest",
  description:
    "Replays a strategy over recorded markets with real fills and fees (docs: /llms.txt, backtests): give " +
    "one of preset, prompt, definition or strategy_id, and either a market's slug or coin + market_type " +
    "(the latest market_count resolved markets, default 10). Waits up to wait_seconds (default 25) and " +
    "answers the aggregate metrics, the first markets and the first trades; a run still going answers " +
    "its run_id: call again with run_id alone to read it. Needs a plan with backtests (pro, enterprise). " +
    "A preset or prompt spends one generation of the month's quota; a definition or strategy_id spends " +
    "none. Cost: 1 request (the POST; with slug, 1 more read of the market; with run_id, 1 read " +
    "instead), plus 1 request for the /mcp call over HTTP.",
  readOnly: false,
  input,
  output,
  async run(client, args, signal) {
    let answer: Api.BacktestRunAnswer;
    if (args.run_id !== undefined) {
      const others = Object.keys(args).filter((k) => k !== "run_id" && k !== "wait_seconds");
      if (others.length > 0)
        throw new ToolInputError(`run_id reads an earlier run; leave out ${others.join(", ")}.`);
      answer = await client.backtestRun(args.run_id, { signal });
    } else {
      answer = await startRun(client, args, signal);
    }
    const structured = backtestAnswerOf(answer);
    return { structured, text: textOf(structured) };
  },
});
