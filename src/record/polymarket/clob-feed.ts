import type { Level } from "../../domain/book.ts";
import type { TradeSide } from "../../domain/trade.ts";
import type { SocketDownCause } from "../socket/reconnecting-socket.ts";
import { SocketFeed, type SocketFeedOptions } from "./socket-feed.ts";
import { LocalBook } from "./local-book.ts";

/**
 * The CLOB market channel: subscribes token ids, keeps a local book per token from `book` and
 * `price_change` messages, and says per token whether its book can be trusted right now (a full book
 * received on the current connection) or why not.
 */

/** Why a token's book cannot be recorded at the moment. */
export interface NotReady {
  cause: SocketDownCause | "no_book";
  detail: string;
}

/** A trade of a followed token, as `last_trade_price` reported it; the collector knows its market. */
export interface ReceivedTrade {
  assetId: string;
  timeMs: number;
  side: TradeSide;
  price: number;
  size: number;
  feeRateBps: number;
}

/** A `market_resolved` message: the winning token of a market whose tokens are `assetIds`. */
export interface MarketResolved {
  assetIds: string[];
  winningAssetId: string;
  timeMs: number | null;
}

interface TokenState {
  book: LocalBook;
  /** Null when the book is trustworthy. */
  notReady: NotReady | null;
}

export class ClobFeed extends SocketFeed {
  private readonly tokens = new Map<string, TokenState>();
  private trades: ReceivedTrade[] = [];
  /** By each token of the resolved market. */
  private readonly resolved = new Map<string, MarketResolved>();

  constructor(opts: SocketFeedOptions) {
    super("clob", opts, { heartbeatIntervalMs: 10_000, silenceLimitMs: 30_000 });
  }

  protected subscribe(send: (text: string) => void): void {
    const ids = [...this.tokens.keys()];
    // custom_feature_enabled: the channel sends market_resolved (and new_market) only when asked.
    if (ids.length > 0)
      send(JSON.stringify({ assets_ids: ids, type: "market", custom_feature_enabled: true }));
  }

  protected override down(cause: SocketDownCause, detail: string): void {
    for (const state of this.tokens.values()) state.notReady ??= { cause, detail };
  }

  /** Starts following tokens; their books are not ready until the upstream sends them. */
  follow(ids: string[]): void {
    const added = ids.filter((id) => !this.tokens.has(id));
    if (added.length === 0) return;
    for (const id of added) {
      this.tokens.set(id, {
        book: new LocalBook(),
        notReady: { cause: "no_book", detail: "no book received yet" },
      });
    }
    if (this.socket.connected) {
      this.socket.send(JSON.stringify({ assets_ids: added, operation: "subscribe" }));
    }
  }

  /**
   * Stops following tokens. The channel has no reliable unsubscribe, so their messages may keep
   * coming until the next reconnect; they are ignored.
   */
  unfollow(ids: string[]): void {
    for (const id of ids) {
      this.tokens.delete(id);
      this.resolved.delete(id);
    }
  }

  /** The trades received since the last call, oldest first. */
  takeTrades(): ReceivedTrade[] {
    const taken = this.trades;
    this.trades = [];
    return taken;
  }

  /** The resolution the channel announced for the market holding this token, if any. */
  resolutionOf(id: string): MarketResolved | null {
    return this.resolved.get(id) ?? null;
  }

  book(id: string): LocalBook | null {
    return this.tokens.get(id)?.book ?? null;
  }

  /** Null when the token's book is current; otherwise why not. */
  notReady(id: string): NotReady | null {
    const state = this.tokens.get(id);
    if (!state) return { cause: "no_book", detail: "token not followed" };
    if (!this.socket.connected) return state.notReady ?? { cause: "not_connected", detail: "connecting" };
    return state.notReady;
  }

  protected apply(m: Record<string, unknown>): void {
    switch (m.event_type) {
      case "book": {
        const state = this.tokens.get(String(m.asset_id));
        if (!state) return;
        state.book.replace(levels(m.bids), levels(m.asks));
        if (m.last_trade_price !== undefined && m.last_trade_price !== "") {
          state.book.lastTradePrice = decimal(m.last_trade_price);
        }
        if (m.tick_size !== undefined) state.book.tickSize = decimal(m.tick_size);
        state.notReady = null;
        return;
      }
      case "price_change": {
        // Since September 2025 each entry names its token; before, the message did.
        const entries = Array.isArray(m.price_changes)
          ? m.price_changes
          : Array.isArray(m.changes)
            ? m.changes
            : [];
        for (const raw of entries as Record<string, unknown>[]) {
          const state = this.tokens.get(String(raw.asset_id ?? m.asset_id));
          // A change before the book is received would be applied to nothing; the book will include it.
          if (!state || state.notReady) continue;
          const side = raw.side === "BUY" ? "BUY" : raw.side === "SELL" ? "SELL" : null;
          if (side === null) throw new Error(`price_change side ${String(raw.side)}`);
          state.book.setLevel(side, decimal(raw.price), decimal(raw.size));
        }
        return;
      }
      case "last_trade_price": {
        const id = String(m.asset_id);
        const state = this.tokens.get(id);
        if (!state) return;
        const price = decimal(m.price);
        state.book.lastTradePrice = price;
        if (m.size !== undefined) this.trades.push(tradeOf(id, price, m));
        return;
      }
      case "market_resolved": {
        const ids = Array.isArray(m.assets_ids) ? m.assets_ids.map(String) : [];
        const winning = String(m.winning_asset_id ?? "");
        if (!ids.includes(winning)) throw new Error("market_resolved names no winner among its tokens");
        const timeMs = m.timestamp === undefined ? null : decimal(m.timestamp);
        for (const id of ids)
          if (this.tokens.has(id)) this.resolved.set(id, { assetIds: ids, winningAssetId: winning, timeMs });
        return;
      }
      case "tick_size_change": {
        const state = this.tokens.get(String(m.asset_id));
        if (state) state.book.tickSize = decimal(m.new_tick_size);
        return;
      }
      default:
        // best_bid_ask, new_market and future types: nothing the collector needs.
        return;
    }
  }
}

/** Upstream numbers are decimal strings ("0.51"); Number() gives the nearest double, as the codec expects. */
function decimal(v: unknown): number {
  const n = typeof v === "string" ? Number(v) : typeof v === "number" ? v : Number.NaN;
  if (!Number.isFinite(n) || (typeof v === "string" && v.trim() === "")) {
    throw new Error(`not a decimal: ${JSON.stringify(v)}`);
  }
  return n;
}

function tradeOf(assetId: string, price: number, m: Record<string, unknown>): ReceivedTrade {
  const side = m.side === "BUY" || m.side === "SELL" ? m.side : null;
  if (side === null) throw new Error(`last_trade_price side ${String(m.side)}`);
  return {
    assetId,
    timeMs: decimal(m.timestamp),
    side,
    price,
    size: decimal(m.size),
    feeRateBps: m.fee_rate_bps === undefined ? 0 : decimal(m.fee_rate_bps),
  };
}

function levels(v: unknown): Level[] {
  if (!Array.isArray(v)) throw new Error("book side is not a list");
  return v.map((l: Record<string, unknown>) => ({ price: decimal(l.price), size: decimal(l.size) }));
}
