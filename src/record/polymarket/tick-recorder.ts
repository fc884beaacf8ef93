import { snapshotOf, tokenState } from "../../events/derive.ts";
import { settlementName } from "../../domain/settlement.ts";
import type { SnapshotRow } from "../../domain/snapshot.ts";
import type { Micros } from "../../domain/time.ts";
import { errorMessage, type Logger } from "../../log.ts";
import type {
  MarketStore,
  RecordingGap,
  SnapshotBatch,
  StoredMarket,
} from "../../store/ports/market-store.ts";
import type { BackgroundWork } from "./background-work.ts";
import type { ClobFeed } from "./clob-feed.ts";
import type { RtdsFeed } from "./rtds-feed.ts";

export interface TickRecorderOptions {
  store: MarketStore;
  clob: ClobFeed;
  rtds: RtdsFeed;
  log: Logger;
  /** Where a gap whose cause changed mid-tick is written, not holding up the tick. */
  background: BackgroundWork;
  /** A settlement tick older than this gives no coin price: the second is a gap. */
  maxFeedStalenessS: number;
  /** The cadence: at most one snapshot per market in each slot of this length. */
  intervalMs: number;
}

/** A gap still open: the market has missed ticks since `from`. */
interface OpenGap {
  from: Micros;
  lastMissed: Micros;
  cause: string;
  detail: string;
}

interface Recording {
  market: StoredMarket;
  gap: OpenGap | null;
  /** The cadence slot of the last snapshot, stored or written: never two in one slot. */
  lastSlot: number;
}

/** A tick's snapshots, taken and not yet written. */
export interface PreparedTick {
  now: Micros;
  slot: number;
  batch: SnapshotBatch[];
  recorded: Recording[];
}

/** Why a live market has no snapshot this tick: a gap's cause and detail. */
type Miss = { cause: string; detail: string };

/**
 * The per-second record of the markets followed: each tick, one snapshot of every live market not yet
 * recorded in this cadence slot, all in one transaction; a market that cannot be recorded (socket
 * down, book not received, no coin price, the store failing) extends its open gap with the cause, and
 * the gap is written when the market is recorded again (or its cause changes, or recording stops).
 * Every second of a followed live market has a snapshot or lies in a gap, the time before following
 * it (a previous run's stop, a late start) included.
 */
export class TickRecorder {
  private readonly opts: TickRecorderOptions;
  private readonly recordings = new Map<string, Recording>();
  /** Snapshots written so far; for logs, progress and the benchmark. */
  written = 0;

  constructor(options: TickRecorderOptions) {
    this.opts = options;
  }

  /** Starts recording a market, opening the gap a previous run (or a late start) left in it. */
  async follow(market: StoredMarket, now: Micros): Promise<void> {
    const r: Recording = { market, gap: null, lastSlot: -1 };
    const startUs = market.startTime * 1e6;
    const liveUntil = Math.min(now, market.endTime * 1e6);
    if (liveUntil > startUs + 1e6) {
      const last = await this.opts.store.snapshotAtOrBefore(market.key, now, false);
      if (last) r.lastSlot = this.slotOf(last.time);
      r.gap = missedBefore(last?.time ?? null, startUs, liveUntil);
      // A market that already ended has nothing more to record: its gap is final now.
      if (r.gap && now >= market.endTime * 1e6) await this.closeGap(r);
    }
    this.recordings.set(market.slug, r);
  }

  /** Stops recording a market; a gap still open is not written. */
  unfollow(slug: string): void {
    this.recordings.delete(slug);
  }

  /** The snapshots of one tick, and the gaps of the markets that have none. */
  async record(now: Micros): Promise<void> {
    await this.commit(this.prepare(now));
  }

  /**
   * The snapshots of one tick, taken from the books as they are now (synchronously: no message is
   * received in between, so each is the state after exactly the events received up to `now`).
   */
  prepare(now: Micros): PreparedTick {
    const second = Math.floor(now / 1e6);
    const slot = this.slotOf(now);
    const batch: SnapshotBatch[] = [];
    const recorded: Recording[] = [];
    for (const r of this.recordings.values()) {
      const m = r.market;
      // A timer firing early, or a restart within a slot, must not record a slot twice.
      if (second < m.startTime || second >= m.endTime || slot <= r.lastSlot) continue;
      const row = this.safeSnapshotOf(m, now, second);
      if ("cause" in row) {
        this.miss(r, now, row);
        continue;
      }
      batch.push({ marketKey: m.key, rows: [row] });
      recorded.push(r);
    }
    return { now, slot, batch, recorded };
  }

  /** Writes a prepared tick's snapshots in one transaction, and closes the gaps they end. */
  async commit({ now, slot, batch, recorded }: PreparedTick): Promise<void> {
    if (batch.length > 0 && !(await this.write(batch, recorded, now))) recorded = [];
    for (const r of recorded) {
      r.lastSlot = slot;
      await this.closeGap(r);
    }
  }

  /** Writes the gaps still open (on stop: their last missed second ends them). */
  async closeGaps(): Promise<void> {
    for (const r of this.recordings.values()) await this.closeGap(r);
  }

  /** One transaction for the tick's snapshots; when it fails, each market misses the second. */
  private async write(batch: SnapshotBatch[], recorded: Recording[], now: Micros): Promise<boolean> {
    try {
      this.written += await this.opts.store.insertSnapshotBatch(batch);
      return true;
    } catch (err) {
      const detail = `store write failed: ${err instanceof Error ? err.message : String(err)}`;
      for (const r of recorded) this.miss(r, now, { cause: "store_error", detail });
      return false;
    }
  }

  /** A market whose books cannot be encoded must not stop the others being recorded. */
  private safeSnapshotOf(m: StoredMarket, now: Micros, second: number): SnapshotRow | Miss {
    try {
      return this.snapshotOf(m, now, second);
    } catch (err) {
      return { cause: "bad_book", detail: err instanceof Error ? err.message : String(err) };
    }
  }

  /** One snapshot of a live market, or why there is none this second. */
  private snapshotOf(m: StoredMarket, now: Micros, second: number): SnapshotRow | Miss {
    const { clob } = this.opts;
    const notReady = clob.notReady(m.clobTokenUp) ?? clob.notReady(m.clobTokenDown);
    if (notReady) return notReady;
    const coinPrice = this.coinPriceAt(m, second);
    if (typeof coinPrice !== "number") return coinPrice;
    const upBook = clob.book(m.clobTokenUp);
    const downBook = clob.book(m.clobTokenDown);
    if (!upBook || !downBook) return { cause: "no_book", detail: "token not followed" };
    // The one rule from events to snapshots (src/events/derive.ts), on the books as they are at `now`.
    const row = snapshotOf(tokenState(upBook), tokenState(downBook), now, coinPrice);
    return row ?? { cause: "no_price", detail: "an empty book and no trade yet" };
  }

  /** The market's settlement feed's price in effect, unless there is none or it is stale. */
  private coinPriceAt(m: StoredMarket, second: number): number | Miss {
    const tick = this.opts.rtds.feed(m.settlement, m.coin).inEffectAt(second);
    const feedName = settlementName(m.settlement);
    if (!tick) return { cause: "no_coin_price", detail: `no ${feedName} price yet` };
    if (second - tick.tickSecond > this.opts.maxFeedStalenessS) {
      return { cause: "no_coin_price", detail: `${feedName} price ${second - tick.tickSecond} s old` };
    }
    return tick.value;
  }

  private miss(r: Recording, now: Micros, { cause, detail }: Miss): void {
    if (r.gap && r.gap.cause !== cause) {
      // A new cause starts a new gap, so that each recorded span has one reason.
      const closed = r.gap;
      r.gap = null;
      this.opts.background.start(() => this.writeGap(r.market, closed));
    }
    if (r.gap) r.gap.lastMissed = now;
    else r.gap = { from: now, lastMissed: now, cause, detail };
  }

  private async closeGap(r: Recording): Promise<void> {
    const gap = r.gap;
    if (!gap) return;
    r.gap = null;
    await this.writeGap(r.market, gap);
  }

  private async writeGap(market: StoredMarket, gap: OpenGap): Promise<void> {
    const record: RecordingGap = { from: gap.from, to: gap.lastMissed, cause: gap.cause, detail: gap.detail };
    try {
      await this.opts.store.recordGap(market.key, record);
    } catch (err) {
      this.opts.log.warn(
        { market: market.slug, err: errorMessage(err) },
        `gap of ${market.slug} not recorded: ${errorMessage(err)}`,
      );
    }
  }

  private slotOf(time: Micros): number {
    return Math.floor(time / (this.opts.intervalMs * 1000));
  }
}

/**
 * The gap a market has when it starts being followed while live: from the second after its last
 * stored snapshot (a previous run stopped), or from its start (none stored), to `liveUntil`.
 */
function missedBefore(lastStored: Micros | null, startUs: Micros, liveUntil: Micros): OpenGap | null {
  const gap =
    lastStored !== null
      ? {
          from: lastStored + 1e6,
          lastMissed: liveUntil,
          cause: "collector_down",
          detail: "the collector was not running",
        }
      : {
          from: startUs,
          lastMissed: liveUntil,
          cause: "not_recording",
          detail: "recording started after the market opened",
        };
  return gap.from > gap.lastMissed ? null : gap;
}
