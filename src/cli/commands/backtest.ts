import { readFileSync } from "node:fs";
import {
  bps,
  count,
  percent,
  percentOf,
  ratio,
  seconds,
  usdc,
  usdcText,
} from "../../../client/src/format.ts";
import { DefinitionError, type StrategyDefinition } from "../../backtest/definition.ts";
import { GenerationError, type StrategyGenerator } from "../../backtest/generate/generator.ts";
import { OfflineGenerator } from "../../backtest/generate/offline.ts";
import { OpenAiCompatibleGenerator } from "../../backtest/generate/openai.ts";
import { presetDefinition } from "../../backtest/generate/presets.ts";
import { describeDefinition } from "../../backtest/describe.ts";
import { normalizeDefinition } from "../../backtest/input.ts";
import { replayMarkets, selectMarkets } from "../../backtest/jobs/replay.ts";
import type { MarketResult } from "../../backtest/engine.ts";
import type { Aggregate } from "../../backtest/metrics.ts";
import { applyOverrides } from "../../backtest/request.ts";
import type { Values } from "../../config/options.ts";
import { defineCommand, requireFile, UsageError, withStore } from "../command.ts";
import { readOptions } from "../../config/read.ts";
import { knownCoin } from "../../domain/market.ts";
import { Progress } from "../progress.ts";

const HELP = `updown backtest (--definition FILE | --preset NAME | --prompt TEXT) --coin C --type T
                [--count N] [--from TIME] [--to TIME] [--position-size N] [--order-type MARKET|LIMIT]
                [--latency-ms N] [--max-loss-percent N] [--json]

Replays a strategy over the latest --count resolved markets of a series (within --from/--to when
given), against the recorded books with fees and latency, exactly as the API's runs do (docs/backtests.md).
The strategy is a definition file, a preset, or a prompt (the model at LLM_BASE_URL when set, else the
built-in generator). Progress goes to stderr; stdout gets the definition that ran in plain words, a
table of the markets and the aggregate, or with --json the full result: {definition, definition_text,
aggregate, results, unresolved}. Nothing is stored and no quota is spent.`;

type SourceValues = Values<
  "definitionFile" | "preset" | "prompt" | "llmBaseUrl" | "llmApiKey" | "llmModel" | "llmTimeoutMs"
>;

function generatorOf(v: SourceValues): StrategyGenerator {
  if (v.llmBaseUrl === null) return new OfflineGenerator();
  return new OpenAiCompatibleGenerator({
    baseUrl: v.llmBaseUrl,
    apiKey: v.llmApiKey,
    model: v.llmModel,
    timeoutMs: v.llmTimeoutMs,
  });
}

async function definitionOf(v: SourceValues): Promise<StrategyDefinition> {
  const given = [v.definitionFile, v.preset, v.prompt].filter((x) => x !== null);
  if (given.length !== 1)
    throw new UsageError("backtest needs one of --definition FILE, --preset NAME or --prompt TEXT");
  if (v.preset !== null) return presetDefinition(v.preset) as StrategyDefinition;
  if (v.prompt !== null) {
    try {
      return (await generatorOf(v).generate(v.prompt)).definition;
    } catch (err) {
      if (err instanceof GenerationError) throw new UsageError(err.message);
      throw err;
    }
  }
  const file = v.definitionFile as string;
  requireFile(file, "--definition");
  try {
    return normalizeDefinition(JSON.parse(readFileSync(file, "utf8")), "");
  } catch (err) {
    if (err instanceof DefinitionError || err instanceof SyntaxError)
      throw new UsageError(`${file}: ${err.message}`);
    throw err;
  }
}

/** The summary: the definition that ran in words, a line per market, then the aggregate. */
function table(definition: StrategyDefinition, results: MarketResult[], a: Aggregate): string {
  const rows = [["market", "winner", "trades", "pnl", "roi", "fees"]];
  for (const r of results) {
    rows.push([r.slug, r.winner, count(r.trades.length), usdc(r.pnl), percent(r.roi), usdc(r.fees_usdc)]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const lines = rows.map((row) =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  "),
  );
  const summary = [
    `markets ${count(a.markets)} (${count(a.markets_traded)} traded), trades ${count(a.trades)}, unfilled orders ${count(a.orders_unfilled)}`,
    `pnl ${usdcText(a.pnl)} on ${usdc(a.cost)} (roi ${percent(a.roi)}), win rate ${percent(a.win_rate)}, profit factor ${ratio(a.profit_factor)}`,
    `max drawdown ${usdc(a.max_drawdown)}, sharpe ${ratio(a.sharpe)}, sortino ${ratio(a.sortino)}, fees ${usdc(a.fees_paid)}, avg slippage ${bps(a.avg_slippage_bps)}`,
    `time in market ${seconds(a.time_in_market_s)} (${percentOf(a.time_in_market_pct)})`,
  ];
  return `${describeDefinition(definition)}\n\n${lines.join("\n")}\n\n${summary.join("\n")}\n`;
}

export const backtestCommand = defineCommand({
  name: "backtest",
  summary: "Replay a strategy over recorded markets, with fills, fees and latency",
  help: HELP,
  options: [
    "databaseUrl",
    "definitionFile",
    "preset",
    "prompt",
    "exportCoin",
    "exportType",
    "marketCount",
    "backtestFrom",
    "backtestTo",
    "positionSize",
    "orderType",
    "latencyMs",
    "maxLossPercent",
    "json",
    "llmBaseUrl",
    "llmApiKey",
    "llmModel",
    "llmTimeoutMs",
  ],
  run: async (v, _positionals, env) => {
    if (v.exportCoin === null || v.exportType === null)
      throw new UsageError("backtest needs --coin C and --type T");
    // As the API refuses it (400): a coin the service is not configured with has no markets to replay.
    const { coins } = readOptions(["coins"], [], env).values;
    if (knownCoin(v.exportCoin, coins) === null)
      throw new UsageError(`--coin ${v.exportCoin}: must be one of ${coins.join(", ")} (COINS)`);
    const overrides = {
      ...(v.positionSize === null ? {} : { position_size: v.positionSize }),
      ...(v.orderType === null ? {} : { order_type: v.orderType }),
      ...(v.latencyMs === null ? {} : { latency_ms: v.latencyMs }),
      ...(v.maxLossPercent === null ? {} : { max_loss_percent: v.maxLossPercent }),
    };
    const definition = applyOverrides(await definitionOf(v), overrides, null);
    await withStore(v.databaseUrl, async (store) => {
      const selected = await selectMarkets(store.markets, {
        coin: v.exportCoin as string,
        market_type: v.exportType as string,
        market_count: v.marketCount,
        start_time: v.backtestFrom === null ? null : Math.floor(v.backtestFrom / 1e6),
        end_time: v.backtestTo === null ? null : Math.floor(v.backtestTo / 1e6),
        hidden: [],
      });
      const progress = new Progress("Replaying");
      const total = selected.replay.length;
      const done = await replayMarkets(store, definition, selected.replay, {
        onMarket: async (seq) => {
          progress.update(seq + 1, total);
          return true;
        },
      });
      if (done === null) throw new Error("the replay stopped");
      progress.done(`${total} markets, ${done.aggregate.trades} trades`);
      const { results, aggregate } = done;
      process.stdout.write(
        v.json
          ? `${JSON.stringify({ definition, definition_text: describeDefinition(definition), aggregate, results, unresolved: selected.unresolved })}\n`
          : table(definition, results, aggregate),
      );
    });
  },
});
