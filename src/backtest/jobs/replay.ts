import { setImmediate as yieldToLoop } from "node:timers/promises";
import type { MarketType } from "../../domain/market.ts";
import type { SnapshotRow } from "../../domain/snapshot.ts";
import { isoSeconds } from "../../domain/time.ts";
import type { MarketStore, StoredMarket } from "../../store/ports/market-store.ts";
import type { BacktestStore } from "../../store/ports/backtest-store.ts";
import type { TradeStore } from "../../store/ports/trade-store.ts";
import { parseStoredDefinition, type StrategyDefinition } from "../definition.ts";
import {
  BENCHMARK_NAMES,
  type BenchmarkName,
  benchmarkDefinitions,
  benchmarksOf,
  bootstrapIntervals,
} from "../benchmarks.ts";
import { NO_RESEARCH, type Research, type ResearchSpec } from "../research.ts";
import { type MarketResult, prepareMarket, replayPrepared } from "../engine.ts";
import type { ReplayMarket } from "../features.ts";
import { type Print, printsOfTrades } from "../fills.ts";
import { type Aggregate, aggregate } from "../metrics.ts";
import { combinations, sweepTable, walkForward } from "../sweep.ts";
import { renderAggregate, renderMarketResult, type StoredSelection, type UnresolvedWire } from "../wire.ts";

/**
 * Executing a run (DESIGN 3.7): select its markets, read each one's snapshots with their books and its
 * recorded trades oldest first, hand them to the engine, and keep each market's result as it comes. The worker threads run
 * this with a store connection of their own; `updown backtest` runs the same replay in its process.
 */

/** Snapshots read from the store at a time. */
const PAGE_ROWS = 5000;

export interface SelectedMarkets {
  /** The resolved markets to replay, oldest first. */
  replay: StoredMarket[];
  /** Markets in the selection's span that have not resolved, newest first. */
  unresolved: UnresolvedWire[];
}

/** The latest `market_count` resolved markets of the series (within the range, when given), and the unresolved ones beside them. */
export async function selectMarkets(markets: MarketStore, sel: StoredSelection): Promise<SelectedMarkets> {
  if (sel.slugs !== undefined) return namedMarkets(markets, sel.slugs);
  const filter = {
    coin: sel.coin,
    marketType: sel.market_type as MarketType,
    startFrom: sel.start_time ?? undefined,
    startTo: sel.end_time ?? undefined,
    hiddenBefore: sel.hidden.map((h) => ({ ...h, marketType: h.marketType as MarketType })),
    offset: 0,
  };
  const resolved = await markets.listMarkets({ ...filter, resolved: true, limit: sel.market_count });
  const replay = resolved.markets.reverse();
  const oldest = replay[0]?.startTime;
  const open = await markets.listMarkets({
    ...filter,
    resolved: false,
    startFrom: oldest === undefined ? filter.startFrom : Math.max(oldest, filter.startFrom ?? oldest),
    limit: 100,
  });
  const unresolved = open.markets.map((m) => ({
    slug: m.slug,
    start_time: isoSeconds(m.startTime),
    end_time: isoSeconds(m.endTime),
  }));
  return { replay, unresolved };
}

/** Markets named by slug (`POST /v1/replay`), in the order named; the ones not resolved left out and listed. */
async function namedMarkets(markets: MarketStore, slugs: readonly string[]): Promise<SelectedMarkets> {
  const out: SelectedMarkets = { replay: [], unresolved: [] };
  for (const slug of slugs) {
    const m = await markets.getMarket(slug);
    if (m === null) continue;
    if (m.winner === null) {
      out.unresolved.push({
        slug: m.slug,
        start_time: isoSeconds(m.startTime),
        end_time: isoSeconds(m.endTime),
      });
    } else {
      out.replay.push(m);
    }
  }
  return out;
}

export function replayMarketOf(m: StoredMarket): ReplayMarket {
  return {
    slug: m.slug,
    coin: m.coin,
    marketType: m.marketType,
    startTime: m.startTime,
    endTime: m.endTime,
    coinPriceStart: m.coinPriceStart,
    winner: m.winner,
    feeSchedule: m.feeSchedule,
  };
}

/** Every snapshot of a market with its books, oldest first, read a page at a time by time. */
export async function readSnapshots(markets: MarketStore, key: number): Promise<SnapshotRow[]> {
  const out: SnapshotRow[] = [];
  let from: number | undefined;
  for (;;) {
    const page = await markets.snapshotPage(key, {
      order: "asc",
      limit: PAGE_ROWS,
      offset: 0,
      from,
      books: true,
    });
    for (const row of page) out.push(row);
    if (page.length < PAGE_ROWS) return out;
    from = page[page.length - 1].time + 1;
  }
}

/** What a market traded, oldest first, as the engine's resting orders fill from it: its recorded trades. */
export async function readPrints(trades: TradeStore, key: number): Promise<Print[]> {
  const rows = [];
  for (let offset = 0; ; offset += PAGE_ROWS) {
    const page = await trades.tradePage(key, { order: "asc", limit: PAGE_ROWS, offset });
    rows.push(...page);
    if (page.length < PAGE_ROWS) return printsOfTrades(rows);
  }
}

export interface ReplayProgress {
  /** Called after each market; false stops the replay (the run is no longer ours). */
  onMarket?(seq: number, market: StoredMarket, result: MarketResult): Promise<boolean>;
}

export interface Replayed {
  results: MarketResult[];
  aggregate: Aggregate;
  research: Research;
}

/**
 * Replays the selected markets in order, each on its own (max_loss_percent is per position): the
 * definition, the benchmarks and every combination of a sweep, each market read and decoded once and
 * shared by all of them (engine.ts: prepareMarket). `combos` are the sweep's checked combinations.
 */
export async function replayMarkets(
  stores: { markets: MarketStore; trades: TradeStore },
  definition: StrategyDefinition,
  replay: readonly StoredMarket[],
  progress: ReplayProgress = {},
  spec: ResearchSpec = NO_RESEARCH,
): Promise<Replayed | null> {
  const combos = spec.sweep === null ? [] : combinations(definition, spec.sweep);
  const results: MarketResult[] = [];
  const benchmarks: Record<BenchmarkName, MarketResult[]> = {
    always_up: [],
    always_down: [],
    favourite: [],
    random: [],
  };
  const swept: MarketResult[][] = combos.map(() => []);
  for (let seq = 0; seq < replay.length; seq++) {
    const m = replay[seq];
    const prepared = prepareMarket(replayMarketOf(m), await readSnapshots(stores.markets, m.key));
    const prints = await readPrints(stores.trades, m.key);
    const result = replayPrepared(definition, prepared, prints);
    results.push(result);
    const defs = benchmarkDefinitions(definition, prepared, spec);
    for (const name of BENCHMARK_NAMES) benchmarks[name].push(replayPrepared(defs[name], prepared, prints));
    for (let i = 0; i < combos.length; i++)
      swept[i].push(replayPrepared(combos[i].definition, prepared, prints));
    if (progress.onMarket && !(await progress.onMarket(seq, m, result))) return null;
    // Lets a process replaying on its own event loop (an in-memory store) answer between markets.
    await yieldToLoop();
  }
  const research: Research = {
    benchmarks: benchmarksOf(benchmarks),
    intervals: bootstrapIntervals(results, spec.seed),
    sweep: spec.sweep === null ? null : sweepTable(spec.sweep, combos, swept),
    walk_forward:
      spec.sweep === null || spec.train_fraction === null
        ? null
        : walkForward(spec.train_fraction, combos, swept),
  };
  return { results, aggregate: aggregate(results), research };
}

export interface RunStores {
  markets: MarketStore;
  trades: TradeStore;
  backtests: BacktestStore;
}

/**
 * Executes a run claimed by `runner`: selects, replays and records it, and finishes it complete, or
 * failed with the reason. Stops without a word once the run is no longer the runner's (a lease lost).
 */
export async function executeRun(
  stores: RunStores,
  runId: string,
  runner: string,
  now: () => number,
): Promise<void> {
  const run = await stores.backtests.getRun(runId);
  if (run === null || run.runner !== runner || run.status !== "running") return;
  try {
    const definition = parseStoredDefinition(run.definition);
    const selection = JSON.parse(run.selection) as StoredSelection;
    const selected = await selectMarkets(stores.markets, selection);
    const unresolved = JSON.stringify(selected.unresolved);
    if (!(await stores.backtests.setSelected(runId, runner, selected.replay.length, unresolved))) return;
    const done = await replayMarkets(
      stores,
      definition,
      selected.replay,
      {
        // Rendered here, on the worker thread: a request splices these bytes, never serializing a result.
        onMarket: (seq, m, result) => {
          const rendered = renderMarketResult(result);
          return stores.backtests.putResult(runId, runner, seq, m.slug, rendered.result, rendered.trades);
        },
      },
      selection.research ?? NO_RESEARCH,
    );
    if (done === null) return;
    const outcome = {
      status: "complete" as const,
      aggregate: renderAggregate(done.aggregate),
      research: JSON.stringify(done.research),
    };
    await stores.backtests.finishRun(runId, runner, outcome, now());
  } catch (err) {
    const error = `The run failed: ${(err as Error).message}`;
    await stores.backtests.finishRun(runId, runner, { status: "failed", error }, now());
  }
}
