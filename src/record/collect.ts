import type { Config } from "../config.ts";
import type { Coin, MarketType } from "../domain/market.ts";
import { type Clock, systemClock } from "../domain/time.ts";
import { ClobFeed } from "./polymarket/clob-feed.ts";
import { Collector } from "./polymarket/collector.ts";
import { GammaClient } from "./polymarket/gamma-client.ts";
import { RtdsFeed } from "./polymarket/rtds-feed.ts";
import type { SocketLog } from "./upstream-socket.ts";
import { type BinanceRecorder, startBinanceRecorder } from "./binance/recorder.ts";
import type { Venue } from "../domain/exchange.ts";
import { openStore } from "../store/open.ts";

/**
 * The thin runner of `updown collect`: opens the store, starts the collector, calls its tick at every
 * cadence boundary of the wall clock, prints a status line a minute, and on SIGTERM or SIGINT closes
 * the open gaps and the store before exiting 0. A kill without a signal loses nothing either: each
 * tick is one transaction, and the next start records the time it was down as a gap.
 */

export interface CollectOptions {
  coins: Coin[];
  /** Polymarket series to record; empty: none. */
  marketTypes: MarketType[];
  lookahead: number;
  /** Binance venues to record for the same coins; empty: none. */
  venues: Venue[];
}

const stderrLog: SocketLog = {
  info: (message) => process.stderr.write(`${new Date().toISOString()} ${message}\n`),
  warn: (message) => process.stderr.write(`${new Date().toISOString()} WARN ${message}\n`),
};

export async function collect(
  config: Config,
  options: CollectOptions,
  clock: Clock = systemClock,
): Promise<void> {
  const store = await openStore(config.databaseUrl);
  const log = stderrLog;
  const urls = config.polymarket;
  const collector = new Collector({
    store,
    clock,
    log,
    gamma: new GammaClient({ baseUrl: urls.gammaUrl }),
    clob: new ClobFeed({ url: urls.clobWsUrl, clock, log }),
    rtds: new RtdsFeed({ url: urls.rtdsUrl, clock, log }),
    coins: options.coins,
    marketTypes: options.marketTypes,
    lookahead: options.lookahead,
    intervalMs: config.snapshotIntervalMs,
  });

  let timer: NodeJS.Timeout | null = null;
  let stopping = false;
  let ticking: Promise<void> = Promise.resolve();
  const interval = config.snapshotIntervalMs;
  const schedule = () => {
    const nowMs = Math.floor(clock.nowMicros() / 1000);
    // A millisecond past the boundary: timers can fire a little early, and the tick must land in its slot.
    timer = setTimeout(onTimer, interval - (nowMs % interval) + 1);
  };
  let busy = false;
  const onTimer = () => {
    if (stopping) return;
    schedule();
    // A tick that overruns its interval is not stacked: the next one starts after it.
    if (busy) {
      log.warn("a tick took longer than the snapshot interval; skipping one");
      return;
    }
    busy = true;
    ticking = collector
      .tick()
      .catch((err: unknown) => log.warn(`tick failed: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => {
        busy = false;
      });
  };

  const status = setInterval(() => {
    log.info(`following ${collector.followedSlugs.length} markets; ${collector.written} snapshots written`);
  }, 60_000);

  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    if (timer) clearTimeout(timer);
    clearInterval(status);
    await ticking;
    await collector.stop();
    await binance?.stop();
    await store.close();
    log.info(`stopped; ${collector.written} snapshots written`);
    process.exit(0);
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);

  let binance: BinanceRecorder | null = null;
  if (options.venues.length > 0) {
    binance = startBinanceRecorder({
      store,
      coins: options.coins,
      venues: options.venues,
      urls: config.binance.urls,
      log,
    });
  }
  if (options.marketTypes.length === 0) {
    log.info(`recording Binance ${options.venues.join(",")} only`);
    return;
  }
  await collector.start();
  log.info(`collecting ${options.coins.join(",")} ${options.marketTypes.join(",")} every ${interval} ms`);
  process.stdout.write(`Collecting; following ${collector.followedSlugs.length} markets\n`);
  schedule();
}
