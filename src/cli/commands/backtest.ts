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
import { writeFile } from "node:fs/promises";
import { extname } from "node:path";
// The engine, its definitions (typebox), the generators and Parquet are imported where they are used,
// not here: `updown --help` and `updown backtest --help` load this module, not the engine.
import type { ExportFormat } from "../../backtest/exports.ts";
import type { Research } from "../../backtest/research.ts";
import type { Figures, SweepAxis } from "../../backtest/sweep.ts";
import type { StrategyDefinition } from "../../backtest/definition.ts";
import type { StrategyGenerator } from "../../backtest/generate/generator.ts";
import type { MarketResult } from "../../backtest/engine.ts";
import type { Aggregate } from "../../backtest/metrics.ts";
import type { Values } from "../../config/options.ts";
import { defineCommand, requireFile, UsageError, withStore } from "../command.ts";
import { readOptions } from "../../config/read.ts";
import { knownCoin } from "../../domain/market.ts";
import { Progress } from "../progress.ts";

const HELP = `updown backtest (--definition FILE | --preset NAME | --prompt TEXT) --coin C --type T
                [--count N] [--from TIME] [--to TIME] [--position-size N] [--order-type MARKET|LIMIT]
                [--latency-ms N] [--max-loss-percent N] [--sweep FIELD=V1,V2|FIELD=FROM:TO:STEP]...
                [--walk-forward FRACTION] [--export FILE.csv|.ndjson|.parquet] [--json]

Replays a strategy over the latest --count resolved markets of a series (within --from/--to when
given), against the recorded books with fees and latency, exactly as the API's runs do (docs/backtests.md).
The strategy is a definition file, a preset, or a prompt (the model at LLM_BASE_URL when set, else the
built-in generator). Progress goes to stderr; stdout gets the definition that ran in plain words, a
table of the markets and the aggregate, the benchmarks and the bootstrap intervals (and a sweep's
table and walk-forward), or with --json the full result: {definition, definition_text, aggregate,
results, unresolved, benchmarks, intervals, sweep, walk_forward}. --sweep varies a numeric field over
a grid (repeat it for more axes; at most 100 combinations), every market read once for all of them;
--walk-forward chooses the best combination on that fraction of the markets and reports it on the
rest; --export writes every trade to a file (CSV, NDJSON or Parquet, by its extension). Nothing is
stored and no quota is spent.`;

/** The formats --export writes, by the file's extension. */
const EXPORT_EXTENSIONS: Record<string, ExportFormat> = {
  ".csv": "csv",
  ".ndjson": "ndjson",
  ".jsonl": "ndjson",
  ".parquet": "parquet",
};

function exportFormatOf(file: string): ExportFormat {
  const format = EXPORT_EXTENSIONS[extname(file).toLowerCase()];
  if (format === undefined)
    throw new UsageError(`--export ${file}: the file must end .csv, .ndjson or .parquet`);
  return format;
}

/**
 * --sweep's texts as the API's axes: `field=v1,v2` (the option splits at commas, so values without a
 * field belong to the axis before them) or `field=from:to:step`.
 */
export async function sweepAxes(items: readonly string[]): Promise<SweepAxis[]> {
  const [{ readSweep }, { DefinitionError }] = await Promise.all([
    import("../../backtest/sweep.ts"),
    import("../../backtest/definition.ts"),
  ]);
  const body: { field: string; values?: number[]; from?: number; to?: number; step?: number }[] = [];
  const num = (text: string, item: string) => {
    const n = text.trim() === "" ? Number.NaN : Number(text);
    if (!Number.isFinite(n)) throw new UsageError(`--sweep ${item}: ${JSON.stringify(text)} is not a number`);
    return n;
  };
  for (const item of items) {
    const at = item.indexOf("=");
    if (at < 0) {
      const last = body.at(-1);
      if (last?.values === undefined)
        throw new UsageError(`--sweep ${item}: give FIELD=V1,V2 or FIELD=FROM:TO:STEP`);
      last.values.push(num(item, item));
      continue;
    }
    const field = item.slice(0, at);
    const rest = item.slice(at + 1);
    const range = rest.split(":");
    if (range.length === 3) {
      const [from, to, step] = range.map((x) => num(x, item));
      body.push({ field, from, to, step });
    } else {
      body.push({ field, values: [num(rest, item)] });
    }
  }
  try {
    return readSweep(body, "");
  } catch (err) {
    if (err instanceof DefinitionError) throw new UsageError(`--sweep: ${err.rule}`);
    throw err;
  }
}

async function writeExport(file: string, format: ExportFormat, results: readonly MarketResult[]) {
  const { csvHeaderOf, csvRowOf, TRADE_COLUMNS, tradeLine } = await import("../../backtest/exports.ts");
  const rows = results.flatMap((r) => r.trades.map((trade) => ({ slug: r.slug, trade })));
  if (format === "parquet") {
    // Arrow and parquet-wasm only for a Parquet file, as the server loads them.
    const [{ parquetOfTable }, { arrowTableOf }] = await Promise.all([
      import("../../archive/parquet.ts"),
      import("../../backtest/export-columns.ts"),
    ]);
    await writeFile(file, parquetOfTable(arrowTableOf(TRADE_COLUMNS, rows)));
    return;
  }
  await writeFile(
    file,
    format === "csv"
      ? csvHeaderOf(TRADE_COLUMNS) + rows.map((r) => csvRowOf(TRADE_COLUMNS, r)).join("")
      : rows.map(tradeLine).join(""),
  );
}

type SourceValues = Values<
  "definitionFile" | "preset" | "prompt" | "llmBaseUrl" | "llmApiKey" | "llmModel" | "llmTimeoutMs"
>;

async function generatorOf(v: SourceValues): Promise<StrategyGenerator> {
  if (v.llmBaseUrl === null)
    return new (await import("../../backtest/generate/offline.ts")).OfflineGenerator();
  const { OpenAiCompatibleGenerator } = await import("../../backtest/generate/openai.ts");
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
  const [{ presetDefinition }, { GenerationError }, { normalizeDefinition }, { DefinitionError }] =
    await Promise.all([
      import("../../backtest/generate/presets.ts"),
      import("../../backtest/generate/generator.ts"),
      import("../../backtest/input.ts"),
      import("../../backtest/definition.ts"),
    ]);
  if (v.preset !== null) return presetDefinition(v.preset) as StrategyDefinition;
  if (v.prompt !== null) {
    try {
      return (await (await generatorOf(v)).generate(v.prompt)).definition;
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

/** Rows as aligned columns, the first left-aligned. */
function columns(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows
    .map((row) =>
      row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  "),
    )
    .join("\n");
}

const figureCells = (f: Figures) => [count(f.trades), usdc(f.pnl), percent(f.roi), percent(f.win_rate)];

/** A bootstrap interval's two ends. */
const between = (r: { low: number | null; high: number | null }, write: (n: number | null) => string) =>
  `${write(r.low)} to ${write(r.high)}`;

/** The benchmarks, the intervals, and a sweep's table and walk-forward, after the summary. */
function researchText(r: Research): string {
  const out = [
    columns([
      ["benchmark", "trades", "pnl", "roi", "win rate"],
      ...r.benchmarks.map((b) => [b.name, ...figureCells(b)]),
    ]),
    `95% intervals (bootstrap over markets, seed ${r.intervals.seed}): pnl ${between(r.intervals.pnl, usdc)}, ` +
      `roi ${between(r.intervals.roi, percent)}, win rate ${between(r.intervals.win_rate, percent)}`,
  ];
  if (r.sweep !== null) {
    const head = [...r.sweep.fields, "trades", "pnl", "roi", "win rate"];
    const rows = r.sweep.rows.map((row) => [
      ...r.sweep!.fields.map((f) => String(row.values[f])),
      ...figureCells(row),
    ]);
    out.push(columns([head, ...rows]));
  }
  const w = r.walk_forward;
  if (w !== null) {
    out.push(
      w.chosen === null || w.train === null || w.test === null
        ? `walk-forward: ${w.train_markets} market(s), too few to split`
        : `walk-forward: chose ${Object.entries(w.chosen)
            .map(([f, v]) => `${f}=${v}`)
            .join(
              ", ",
            )} on ${w.train_markets} markets (pnl ${usdc(w.train.pnl)}); on the next ${w.test_markets}: ` +
            `pnl ${usdc(w.test.pnl)}, roi ${percent(w.test.roi)}, win rate ${percent(w.test.win_rate)}`,
    );
  }
  return `${out.join("\n\n")}\n`;
}

/** The summary: the definition that ran in words (`described`), a line per market, then the aggregate. */
function table(described: string, results: MarketResult[], a: Aggregate): string {
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
  return `${described}\n\n${lines.join("\n")}\n\n${summary.join("\n")}\n`;
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
    "sweep",
    "walkForward",
    "backtestExport",
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
    const sweep = v.sweep === null ? null : await sweepAxes(v.sweep);
    if (v.walkForward !== null && sweep === null)
      throw new UsageError("--walk-forward needs --sweep: it chooses among the sweep's combinations");
    const exportFormat = v.backtestExport === null ? null : exportFormatOf(v.backtestExport);
    const [
      { applyOverrides },
      { combinations },
      { DefinitionError },
      { NO_RESEARCH },
      { replayMarkets, selectMarkets },
      { describeDefinition },
    ] = await Promise.all([
      import("../../backtest/request.ts"),
      import("../../backtest/sweep.ts"),
      import("../../backtest/definition.ts"),
      import("../../backtest/research.ts"),
      import("../../backtest/jobs/replay.ts"),
      import("../../backtest/describe.ts"),
    ]);
    const definition = applyOverrides(await definitionOf(v), overrides, null);
    if (sweep !== null) {
      try {
        combinations(definition, sweep, "--sweep");
      } catch (err) {
        if (err instanceof DefinitionError) throw new UsageError(err.message);
        throw err;
      }
    }
    const spec = {
      ...NO_RESEARCH,
      sweep,
      train_fraction: v.walkForward === null ? null : Number(v.walkForward),
    };
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
      const done = await replayMarkets(
        store,
        definition,
        selected.replay,
        {
          onMarket: async (seq) => {
            progress.update(seq + 1, total);
            return true;
          },
        },
        spec,
      );
      if (done === null) throw new Error("the replay stopped");
      progress.done(`${total} markets, ${done.aggregate.trades} trades`);
      const { results, aggregate, research } = done;
      if (exportFormat !== null) await writeExport(v.backtestExport as string, exportFormat, results);
      process.stdout.write(
        v.json
          ? `${JSON.stringify({ definition, definition_text: describeDefinition(definition), aggregate, results, unresolved: selected.unresolved, ...research })}\n`
          : `${table(describeDefinition(definition), results, aggregate)}\n${researchText(research)}`,
      );
    });
  },
});
