import type { Config } from "../config.ts";
import type { Coin, MarketType } from "../domain/market.ts";
import { type Clock, systemClock } from "../domain/time.ts";
import { errorMessage, type Logger, stderrLogger } from "../log.ts";
import { ClobFeed } from "./polymarket/clob-feed.ts";
import { Collector } from "./polymarket/collector.ts";
import type { CandleSource } from "./polymarket/settlement-price.ts";
import { GammaClient } from "./polymarket/gamma-client.ts";
import { RtdsFeed } from "./polymarket/rtds-feed.ts";
import { type Scheduler, schedulerOn } from "./scheduler.ts";
import { type BinanceRecorder, startBinanceRecorder } from "./binance/recorder.ts";
import type { Venue } from "../domain/exchange.ts";
import type { ExchangeStore } from "../store/ports/exchange-store.ts";
import type { Store } from "../store/ports/store.ts";

/**
 * The thin runner of `updown collect`: over an opened store, starts the collector, calls its tick at
 * every cadence boundary of the wall clock, prints a status line a minute, and on SIGTERM or SIGINT
 * closes the open gaps, writes what is buffered and closes the store before exiting 0. Upstream calls
 * in flight (Gamma look-ups, Binance polls) are waited for up to the drain deadline, then abandoned;
 * what they would have fetched is fetched again by the next start. A kill without a signal loses
 * nothing either: each tick is one transaction, and the next start records the time it was down as a gap.
 */

export interface CollectOptions {
  coins: Coin[];
  /** Polymarket series to record; empty: none. */
  marketTypes: MarketType[];
  lookahead: number;
  /** Binance venues to record for the same coins; empty: none. */
  venues: Venue[];
  /** Keep every market-channel message and coin-price update as events (RECORD_EVENTS). */
  events: boolean;
}

/** Calls the collector's tick at every cadence boundary of the scheduler's clock, one at a time. */
function cadenceTicker(collector: Collector, intervalMs: number, scheduler: Scheduler, log: Logger) {
  let cancel: (() => void) | null = null;
  let stopping = false;
  let busy = false;
  let ticking: Promise<void> = Promise.resolve();
  const schedule = () => {
    const nowMs = Math.floor(scheduler.nowMicros() / 1000);
    // A millisecond past the boundary: timers can fire a little early, and the tick must land in its slot.
    cancel = scheduler.setTimeout(onTimer, intervalMs - (nowMs % intervalMs) + 1);
  };
  const onTimer = () => {
    if (stopping) return;
    schedule();
    // A tick that overruns its interval is not stacked: the next one starts after it.
    if (busy) {
      log.warn({}, "a tick took longer than the snapshot interval; skipping one");
      return;
    }
    busy = true;
    ticking = collector
      .tick()
      .catch((err: unknown) => log.warn({ err: errorMessage(err) }, `tick failed: ${errorMessage(err)}`))
      .finally(() => {
        busy = false;
      });
  };
  return {
    start: schedule,
    /** Resolves once no tick runs and none will. */
    stop: async () => {
      stopping = true;
      cancel?.();
      await ticking;
    },
  };
}

/** The status line of a minute. */
function logStatus(collector: Collector, log: Logger): void {
  const followed = collector.followedSlugs.length;
  const { written, tradesWritten, settlementDisagreements } = collector;
  log.info(
    { followed, written, tradesWritten, settlementDisagreements },
    `following ${followed} markets; ${written} snapshots and ${tradesWritten} trades written; ` +
      `${settlementDisagreements} start or end prices the upstream disagreed with`,
  );
}

/** A stored Binance spot 1m candle's open and close, by its open time. */
function candlesFrom(exchange: ExchangeStore): CandleSource {
  return async (coin, openTime) => {
    const at = openTime * 1e6;
    const [candle] = await exchange.candlePage(coin, "spot", "1m", {
      order: "asc",
      limit: 1,
      offset: 0,
      from: at,
      to: at,
    });
    return candle ? { open: candle.open, close: candle.close } : null;
  };
}

/**
 * On SIGTERM or SIGINT, runs `stop` once and exits 0. Upstream calls still in flight are abandoned
 * (`upstreamCalls` aborted) at the drain deadline, or at once on a second signal, so that a slow
 * upstream cannot hold the exit; the writes that follow them are local and quick.
 */
function exitOnSignals(
  stop: () => Promise<void>,
  upstreamCalls: AbortController,
  drainMs: number,
  log: Logger,
): void {
  let stopping = false;
  const abandon = (why: string) => {
    if (upstreamCalls.signal.aborted) return;
    log.warn({}, `${why}; abandoning upstream calls in flight`);
    upstreamCalls.abort();
  };
  const shutdown = async () => {
    const deadline = setTimeout(() => abandon(`drain deadline of ${drainMs / 1000} s passed`), drainMs);
    await stop();
    clearTimeout(deadline);
    process.exit(0);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return abandon(`a second ${signal}`);
    stopping = true;
    // A failed shutdown must still end the process loudly, not as an unheard rejection.
    shutdown().catch((err: unknown) => {
      log.error({ err: errorMessage(err) }, "shutdown failed");
      process.exit(1);
    });
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

export async function collect(
  store: Store,
  config: Config,
  options: CollectOptions,
  clock: Clock = systemClock,
): Promise<void> {
  const log = stderrLogger({ level: config.logLevel });
  const scheduler = schedulerOn(clock);
  const urls = config.polymarket;
  // Aborted at the drain deadline of a stop, so that no upstream call holds the exit for longer.
  const upstreamCalls = new AbortController();
  const collector = new Collector({
    store: store.markets,
    trades: store.trades,
    events: options.events ? store.events : null,
    // The Binance recorder stores the spot 1m candles that settle 1h and 24h markets.
    candles: options.venues.includes("spot") ? candlesFrom(store.exchange) : null,
    clock,
    log,
    gamma: new GammaClient({ baseUrl: urls.gammaUrl, signal: upstreamCalls.signal }),
    clob: new ClobFeed({ url: urls.clobWsUrl, scheduler, log }),
    rtds: new RtdsFeed({ url: urls.rtdsUrl, scheduler, log, coins: options.coins }),
    coins: options.coins,
    marketTypes: options.marketTypes,
    lookahead: options.lookahead,
    intervalMs: config.snapshotIntervalMs,
  });

  const interval = config.snapshotIntervalMs;
  const ticker = cadenceTicker(collector, interval, scheduler, log);

  const status = setInterval(() => logStatus(collector, log), 60_000);

  exitOnSignals(
    async () => {
      clearInterval(status);
      await ticker.stop();
      await collector.stop();
      await binance?.stop();
      await store.close();
      log.info({ written: collector.written }, `stopped; ${collector.written} snapshots written`);
    },
    upstreamCalls,
    config.drainMs,
    log,
  );

  let binance: BinanceRecorder | null = null;
  if (options.venues.length > 0) {
    binance = startBinanceRecorder({
      store: store.exchange,
      scheduler,
      coins: options.coins,
      venues: options.venues,
      urls: config.binance.urls,
      log,
      signal: upstreamCalls.signal,
    });
  }
  if (options.marketTypes.length === 0) {
    log.info({ venues: options.venues }, `recording Binance ${options.venues.join(",")} only`);
    return;
  }
  await collector.start();
  log.info(
    { coins: options.coins, types: options.marketTypes, intervalMs: interval },
    `collecting ${options.coins.join(",")} ${options.marketTypes.join(",")} every ${interval} ms`,
  );
  process.stdout.write(`Collecting; following ${collector.followedSlugs.length} markets\n`);
  ticker.start();
}
