import type { Outcome } from "../../domain/market.ts";
import type { TradeRow } from "../../domain/trade.ts";
import { errorMessage, type Logger } from "../../log.ts";
import type { StoredMarket } from "../../store/ports/market-store.ts";
import type { TradeBatch, TradeStore } from "../../store/ports/trade-store.ts";
import type { ClobFeed, ReceivedTrade } from "./clob-feed.ts";

export interface TradeRecorderOptions {
  trades: TradeStore;
  clob: ClobFeed;
  log: Logger;
}

/** Batches of a store write that failed, kept for the next: trades come once, unlike books. */
const MAX_UNWRITTEN_BATCHES = 1000;

/**
 * The trades of the markets followed: each tick, those the market channel reported since the last,
 * under their market and outcome, in one write. A failed write is tried again with the next tick's
 * trades (a bounded backlog, the oldest dropped first); a trade received twice is stored once.
 */
export class TradeRecorder {
  private readonly opts: TradeRecorderOptions;
  private unwritten: TradeBatch[] = [];
  /** Trades written so far (new ones). */
  written = 0;

  constructor(options: TradeRecorderOptions) {
    this.opts = options;
  }

  /** Writes the trades received since the last call; trades of tokens outside `markets` are dropped. */
  async record(markets: Iterable<StoredMarket>): Promise<void> {
    const received = this.opts.clob.takeTrades();
    if (received.length === 0 && this.unwritten.length === 0) return;
    const batch = [...this.unwritten, ...tradesByMarket(received, markets)];
    try {
      this.written += await this.opts.trades.insertTrades(batch);
      this.unwritten = [];
    } catch (err) {
      this.unwritten = batch.slice(-MAX_UNWRITTEN_BATCHES);
      this.opts.log.warn({ err: errorMessage(err) }, `trades not written yet: ${errorMessage(err)}`);
    }
  }
}

/** The received trades as rows under their market and outcome, found by token. */
function tradesByMarket(received: readonly ReceivedTrade[], markets: Iterable<StoredMarket>): TradeBatch[] {
  const owners = ownersOfTokens(markets);
  const byMarket = new Map<number, TradeRow[]>();
  for (const t of received) {
    const owner = owners.get(t.assetId);
    if (!owner) continue;
    const { assetId: _token, timeMs, ...values } = t;
    const rows = byMarket.get(owner.key) ?? [];
    rows.push({ ...values, time: Math.round(timeMs * 1000), outcome: owner.outcome });
    byMarket.set(owner.key, rows);
  }
  return [...byMarket].map(([marketKey, rows]) => ({ marketKey, rows }));
}

function ownersOfTokens(markets: Iterable<StoredMarket>): Map<string, { key: number; outcome: Outcome }> {
  const owners = new Map<string, { key: number; outcome: Outcome }>();
  for (const m of markets) {
    owners.set(m.clobTokenUp, { key: m.key, outcome: "Up" });
    owners.set(m.clobTokenDown, { key: m.key, outcome: "Down" });
  }
  return owners;
}
