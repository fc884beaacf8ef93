import { addIntegrity, type BookIntegrity, type CoinEvent, NO_INTEGRITY } from "../../domain/event.ts";
import type { Micros } from "../../domain/time.ts";
import { errorMessage, type Logger } from "../../log.ts";
import type { EventStore, MarketEventBatch } from "../../store/ports/event-store.ts";
import type { StoredMarket } from "../../store/ports/market-store.ts";
import type { ClobFeed } from "./clob-feed.ts";
import type { RtdsFeed } from "./rtds-feed.ts";

export interface EventRecorderOptions {
  events: EventStore;
  clob: ClobFeed;
  rtds: RtdsFeed;
  log: Logger;
}

/** What one tick takes from the feeds, written before the tick's snapshots. */
export interface TakenEvents {
  markets: MarketEventBatch[];
  coins: CoinEvent[];
  integrity: Map<number, BookIntegrity>;
}

/** Ticks of a store write that failed, kept for the next (a bounded backlog, the oldest dropped first). */
const MAX_UNWRITTEN_TICKS = 600;

/**
 * Every market-channel message about a followed market, and every coin-price update, kept as events
 * (DESIGN 3.10): each tick takes what the feeds received since the last one (`take`, in the same
 * synchronous stretch as the tick's snapshots, so that those are the state after exactly these
 * events) and writes it (`write`) before the snapshots, with the markets' book-integrity counts. A
 * message about the tokens of two markets is kept under each. A failed write is tried again with the
 * next tick's; appending an event again is a no-op (the store's identity), so a retried batch or a
 * restart never duplicates. A killed collector loses the events received since the last write.
 */
export class EventRecorder {
  private readonly opts: EventRecorderOptions;
  /** The market of each followed token. */
  private readonly owners = new Map<string, number>();
  /** Tokens of markets no longer followed, forgotten after the next take (their last events kept). */
  private leaving: string[] = [];
  private unwritten: TakenEvents[] = [];
  /** New market events written so far. */
  written = 0;
  /** New coin-price updates written so far. */
  coinsWritten = 0;

  constructor(options: EventRecorderOptions) {
    this.opts = options;
    options.clob.keepEvents();
    options.rtds.keepEvents();
  }

  follow(market: StoredMarket): void {
    this.leaving = this.leaving.filter((t) => t !== market.clobTokenUp && t !== market.clobTokenDown);
    this.owners.set(market.clobTokenUp, market.key);
    this.owners.set(market.clobTokenDown, market.key);
  }

  unfollow(market: StoredMarket): void {
    this.leaving.push(market.clobTokenUp, market.clobTokenDown);
  }

  /** The events received up to `now`, by market, and the integrity counts since the last take. */
  take(now: Micros): TakenEvents {
    const byMarket = new Map<number, MarketEventBatch>();
    for (const { event, tokens } of this.opts.clob.takeEvents(now)) {
      for (const token of tokens) {
        const key = this.owners.get(token);
        if (key === undefined) continue;
        let batch = byMarket.get(key);
        if (!batch) byMarket.set(key, (batch = { marketKey: key, events: [] }));
        // Both tokens of a market, usually: the event is filed once under it.
        if (batch.events.at(-1) !== event) batch.events.push(event);
      }
    }
    const integrity = new Map<number, BookIntegrity>();
    const tokensOf = new Map<number, string[]>();
    for (const [token, key] of this.owners) tokensOf.set(key, [...(tokensOf.get(key) ?? []), token]);
    for (const [key, tokens] of tokensOf) {
      const counts = this.opts.clob.takeIntegrity(tokens);
      if (!isZero(counts)) integrity.set(key, counts);
    }
    for (const token of this.leaving) this.owners.delete(token);
    this.leaving = [];
    return { markets: [...byMarket.values()], coins: this.opts.rtds.takeEvents(), integrity };
  }

  /** Writes what was taken (and what earlier ticks could not write). */
  async write(taken: TakenEvents): Promise<void> {
    const backlog = [...this.unwritten, taken];
    const { events } = this.opts;
    try {
      const markets = backlog.flatMap((t) => t.markets);
      const coins = backlog.flatMap((t) => t.coins);
      if (markets.length > 0) this.written += await events.appendMarketEvents(markets);
      if (coins.length > 0) this.coinsWritten += await events.appendCoinEvents(coins);
      const integrity = new Map<number, BookIntegrity>();
      for (const t of backlog)
        for (const [key, c] of t.integrity)
          integrity.set(key, addIntegrity(integrity.get(key) ?? NO_INTEGRITY, c));
      // Counts are added, not set: a tick's counts are written once, after its events.
      for (const [key, c] of integrity) {
        await events.addBookIntegrity(key, c);
        for (const t of backlog) t.integrity.delete(key);
      }
      this.unwritten = [];
    } catch (err) {
      this.unwritten = backlog.slice(-MAX_UNWRITTEN_TICKS);
      this.opts.log.warn({ err: errorMessage(err) }, `events not written yet: ${errorMessage(err)}`);
    }
  }
}

function isZero(c: BookIntegrity): boolean {
  return c.bookMatches === 0 && c.bookMismatches === 0 && c.bestMatches === 0 && c.bestMismatches === 0;
}
