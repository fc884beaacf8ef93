import type { Coin, MarketType } from "../../domain/market.ts";
import { type Clock, isoSeconds, type Micros } from "../../domain/time.ts";
import type { Logger } from "../../log.ts";
import type { EventStore } from "../../store/ports/event-store.ts";
import type { MarketStore, StoredMarket } from "../../store/ports/market-store.ts";
import type { TradeStore } from "../../store/ports/trade-store.ts";
import { BackgroundWork } from "./background-work.ts";
import { EventRecorder } from "./event-recorder.ts";
import type { ClobFeed } from "./clob-feed.ts";
import type { GammaClient } from "./gamma-client.ts";
import { MarketDiscovery } from "./market-discovery.ts";
import { MarketSettlement } from "./market-settlement.ts";
import type { RtdsFeed } from "./rtds-feed.ts";
import type { CandleSource } from "./settlement-price.ts";
import { TickRecorder } from "./tick-recorder.ts";
import { TradeRecorder } from "./trade-recorder.ts";

export interface CollectorOptions {
  store: MarketStore;
  /** Where the trades go. */
  trades: TradeStore;
  /**
   * Where every market-channel message and coin-price update goes, as events (DESIGN 3.10); null
   * records none (`--no-events`). Default null.
   */
  events?: EventStore | null;
  /**
   * Binance's 1m candles, which settle 1h and 24h markets (the Binance recorder stores them). Without
   * it, or while a candle is missing for longer than `candleWaitS`, the Binance price in effect at the
   * start or end second stands in.
   */
  candles?: CandleSource | null;
  /** Seconds after a candle closes to wait for it before the stand-in. Default 120. */
  candleWaitS?: number;
  clock: Clock;
  gamma: GammaClient;
  clob: ClobFeed;
  rtds: RtdsFeed;
  log: Logger;
  coins: readonly Coin[];
  marketTypes: readonly MarketType[];
  /** Markets after the live one to discover ahead, per series. Default 1. */
  lookahead?: number;
  /** Seconds between Gamma discovery rounds. Default 30. */
  discoveryEveryS?: number;
  /** Seconds between resolution polls of an ended market. Default 15. */
  resolutionEveryS?: number;
  /** Liquidity is read from Gamma this many seconds before the close (it reads 0 after). Default 20. */
  liquidityBeforeCloseS?: number;
  /** A settlement tick older than this cannot give a start or end price. Default 10. */
  maxFeedStalenessS?: number;
  /** The cadence: at most one snapshot per market in each slot of this length. Default 1000. */
  intervalMs?: number;
}

const DEFAULTS = {
  events: null,
  candles: null,
  candleWaitS: 120,
  lookahead: 1,
  discoveryEveryS: 30,
  resolutionEveryS: 15,
  liquidityBeforeCloseS: 20,
  maxFeedStalenessS: 10,
  intervalMs: 1000,
} as const;

/**
 * The live recorder of Polymarket's Up or Down markets, an orchestrator over parts with one job each:
 * - `MarketDiscovery` finds the live and next markets of every series on Gamma (and, on a start, the
 *   unresolved markets a previous run left) and stores their records;
 * - `TickRecorder` writes, once a second (`tick`), one snapshot of every live market followed, all in
 *   one transaction, or a gap with the cause for a market that cannot be recorded that second;
 * - `TradeRecorder` writes the trades the market channel reported since the last tick;
 * - `EventRecorder` (when events are on) writes, each tick before its snapshots, every market-channel
 *   message and coin-price update received since the last, and the markets' book-integrity counts;
 * - `MarketSettlement` captures the start and end prices from the feed each market's record settles
 *   on (a TWAP stream, Chainlink's instantaneous stream, or Binance's 1m candles: DESIGN 3.4), takes
 *   the final liquidity before the close, and learns the resolution from the market channel's
 *   `market_resolved`, polling Gamma as the fallback; Gamma's own price to beat and final price, when
 *   it has them, are kept over ours (a disagreement is logged and counted: `settlementDisagreements`).
 * The collector owns the set of markets followed: it hands each part a market when it is found and
 * takes it from all of them (and from the market channel) when it is resolved.
 *
 * Invariants:
 * - at most one snapshot per market per tick, written idempotently on (market, time), so a restart
 *   or a replayed batch never duplicates;
 * - a snapshot is the state after exactly the events received up to its time (src/events/derive.ts):
 *   the tick takes the events and the snapshots in one synchronous stretch, and writes the events first;
 * - every second of a followed live market either has a snapshot or lies in a recorded gap, including
 *   the time the collector itself was not running (found on start from the last stored snapshot);
 * - a market record changes only by upsert of the whole record, after the store accepted it.
 */
export class Collector {
  private readonly opts: Required<CollectorOptions>;
  /** The markets followed, by slug. */
  private readonly followed = new Map<string, StoredMarket>();
  private readonly background: BackgroundWork;
  private readonly discovery: MarketDiscovery;
  private readonly ticks: TickRecorder;
  private readonly trades: TradeRecorder;
  private readonly events: EventRecorder | null;
  private readonly settlement: MarketSettlement;

  constructor(options: CollectorOptions) {
    const o: Required<CollectorOptions> = { ...DEFAULTS, ...options };
    this.opts = o;
    this.background = new BackgroundWork(o.log);
    this.discovery = new MarketDiscovery({
      ...o,
      isFollowed: (slug) => this.followed.has(slug),
      follow: (market, now) => this.follow(market, now),
    });
    this.ticks = new TickRecorder({ ...o, background: this.background });
    this.trades = new TradeRecorder(o);
    this.events = o.events ? new EventRecorder({ ...o, events: o.events }) : null;
    this.settlement = new MarketSettlement({
      ...o,
      prices: {
        feed: (m) => o.rtds.feed(m.settlement, m.coin),
        candles: o.candles,
        candleWaitS: o.candleWaitS,
        maxFeedStalenessS: o.maxFeedStalenessS,
      },
      background: this.background,
      done: (market) => this.unfollow(market),
    });
  }

  /** Snapshots written so far; for logs, progress and the benchmark. */
  get written(): number {
    return this.ticks.written;
  }

  /** Trades written so far (new ones; a trade received twice is stored once). */
  get tradesWritten(): number {
    return this.trades.written;
  }

  /** New market events written so far (0 with events off). */
  get eventsWritten(): number {
    return this.events?.written ?? 0;
  }

  /** New coin-price updates written so far (0 with events off). */
  get coinEventsWritten(): number {
    return this.events?.coinsWritten ?? 0;
  }

  /** Start or end prices of ours that Gamma's own disagreed with (Gamma's kept); logged each. */
  get settlementDisagreements(): number {
    return this.settlement.disagreements;
  }

  /** Markets followed now, by slug; for tests and status lines. */
  get followedSlugs(): string[] {
    return [...this.followed.keys()];
  }

  /** Connects, discovers the markets of the moment, and takes over unresolved ones left by a previous run. */
  async start(): Promise<void> {
    this.opts.clob.start();
    this.opts.rtds.start();
    await this.discovery.resumeUnresolved();
    await this.discovery.discover();
  }

  /** Waits for the background work started so far (discovery, polls); tests use it between ticks. */
  settled(): Promise<void> {
    return this.background.settled();
  }

  async stop(): Promise<void> {
    await this.settled();
    await this.ticks.closeGaps();
    await Promise.all([this.opts.clob.stop(), this.opts.rtds.stop()]);
    // What was received since the last tick: a clean stop loses no event.
    if (this.events) await this.events.write(this.events.take(this.opts.clock.nowMicros()));
  }

  /** The work of one second. */
  async tick(): Promise<void> {
    const now = this.opts.clock.nowMicros();
    const second = Math.floor(now / 1e6);
    this.opts.clob.maintain();
    this.opts.rtds.maintain();
    // No message is received between these two: the snapshots are the state after exactly these events.
    const events = this.events?.take(now);
    const snapshots = this.ticks.prepare(now);
    if (events) await this.events?.write(events);
    await this.ticks.commit(snapshots);
    await this.trades.record(this.followed.values());
    this.settlement.afterTick(second);
    if (this.discovery.isDue(second)) this.background.start(() => this.discovery.discover());
    // Prices older than an hour settle nothing any more (start and end prices are taken seconds after).
    if (second % 60 === 0) this.opts.rtds.forgetBefore(second - 3600);
  }

  /** Hands a market to every part, opening the gap a previous run (or a late start) left in it. */
  private async follow(market: StoredMarket, now: Micros): Promise<void> {
    await this.ticks.follow(market, now);
    this.events?.follow(market);
    this.settlement.follow(market);
    this.followed.set(market.slug, market);
    this.opts.clob.follow([market.clobTokenUp, market.clobTokenDown]);
    this.opts.log.info(
      { market: market.slug },
      `following ${market.slug} (${isoSeconds(market.startTime)} to ${isoSeconds(market.endTime)})`,
    );
  }

  private unfollow(market: StoredMarket): void {
    this.followed.delete(market.slug);
    this.ticks.unfollow(market.slug);
    this.events?.unfollow(market);
    this.settlement.unfollow(market.slug);
    this.opts.clob.unfollow([market.clobTokenUp, market.clobTokenDown]);
  }
}
