import {
  addIntegrity,
  type BookIntegrity,
  isMarketEventType,
  type MarketEvent,
  marketEventOf,
  NO_INTEGRITY,
} from "../../domain/event.ts";
import type { Clock, Micros } from "../../domain/time.ts";
import type { TradeSide } from "../../domain/trade.ts";
import { applyMarketMessage, decimal, TokenBook, tokensOfMessage } from "../../events/event-book.ts";
import type { SocketDownCause } from "../socket/reconnecting-socket.ts";
import { SocketFeed, type SocketFeedOptions } from "./socket-feed.ts";

/**
 * The CLOB market channel: subscribes token ids, keeps each token's book by the one book rule
 * (src/events/event-book.ts, the rule snapshots are derived from events by), counts its integrity,
 * and says per token whether its book can be trusted right now (a full book received on the current
 * connection) or why not. When asked to (`keepEvents`), it also keeps every message about a followed
 * token as an event, stamped with its receive time, until the collector takes them (`takeEvents`).
 */

/** A message received, as an event, with the followed tokens it is about. */
export interface ReceivedEvent {
  event: MarketEvent;
  tokens: string[];
}

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
  /** The message's `transaction_hash`, when it carries one. */
  transactionHash: string | null;
}

/** A `market_resolved` message: the winning token of a market whose tokens are `assetIds`. */
export interface MarketResolved {
  assetIds: string[];
  winningAssetId: string;
  timeMs: number | null;
}

interface TokenState {
  book: TokenBook;
  /** Null when the book is trustworthy. */
  notReady: NotReady | null;
}

export class ClobFeed extends SocketFeed {
  private readonly tokens = new Map<string, TokenState>();
  private trades: ReceivedTrade[] = [];
  /** By each token of the resolved market. */
  private readonly resolved = new Map<string, MarketResolved>();
  private readonly clock: Clock;
  private keeping = false;
  private events: ReceivedEvent[] = [];
  /**
   * No event is stamped earlier than this: receive times never go back, and an event received after
   * a tick took its snapshot at `now` is stamped after `now` (the rule's `receivedUs <= T` then puts
   * it after that snapshot, as it was), even within the same microsecond or on a clock set by hand.
   */
  private floorUs: Micros = 0;

  constructor(opts: SocketFeedOptions) {
    super("clob", opts, { heartbeatIntervalMs: 10_000, silenceLimitMs: 30_000 });
    this.clock = opts.scheduler;
  }

  /** From now on, keep every message about a followed token as an event (off by default). */
  keepEvents(): void {
    this.keeping = true;
  }

  /**
   * The events received since the last call, in receive order; every later one is stamped after
   * `now`. The caller takes its snapshots at `now` before anything else is received (same turn).
   */
  takeEvents(now: Micros): ReceivedEvent[] {
    const taken = this.events;
    this.events = [];
    this.floorUs = Math.max(this.floorUs, now + 1);
    return taken;
  }

  /** The integrity counts of these tokens since the last call (src/domain/event.ts BookIntegrity). */
  takeIntegrity(ids: readonly string[]): BookIntegrity {
    let sum = NO_INTEGRITY;
    for (const id of ids) {
      const counts = this.tokens.get(id)?.book.takeIntegrity();
      if (counts) sum = addIntegrity(sum, counts);
    }
    return sum;
  }

  protected subscribe(send: (text: string) => void): void {
    const ids = [...this.tokens.keys()];
    // custom_feature_enabled: the channel sends market_resolved (and new_market) only when asked.
    if (ids.length > 0)
      send(JSON.stringify({ assets_ids: ids, type: "market", custom_feature_enabled: true }));
  }

  protected override down(cause: SocketDownCause, detail: string): void {
    for (const state of this.tokens.values()) {
      state.notReady ??= { cause, detail };
      // Messages are missed until the next connection's books: the rebuilt books are not compared.
      state.book.invalidate();
    }
  }

  /** Starts following tokens; their books are not ready until the upstream sends them. */
  follow(ids: string[]): void {
    const added = ids.filter((id) => !this.tokens.has(id));
    if (added.length === 0) return;
    for (const id of added) {
      this.tokens.set(id, {
        book: new TokenBook(),
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

  book(id: string): TokenBook | null {
    return this.tokens.get(id)?.book ?? null;
  }

  /** Null when the token's book is current; otherwise why not. */
  notReady(id: string): NotReady | null {
    const state = this.tokens.get(id);
    if (!state) return { cause: "no_book", detail: "token not followed" };
    if (!this.socket.connected) return state.notReady ?? { cause: "not_connected", detail: "connecting" };
    return state.notReady;
  }

  /**
   * One market-channel object. A message of a kept type that cannot be read as an event (no
   * timestamp) is malformed (thrown, counted by SocketFeed) and applied to nothing, so that the books
   * kept live are exactly those rebuilt from the stored events.
   */
  protected apply(m: Record<string, unknown>): void {
    const type = m.event_type;
    // new_market and types to come: nothing the collector keeps.
    if (typeof type !== "string" || !isMarketEventType(type)) return;
    const receivedUs = Math.max(this.clock.nowMicros(), this.floorUs);
    this.floorUs = receivedUs;
    const event = marketEventOf(m, receivedUs);
    if ("problem" in event) throw new Error(event.problem);
    const followed = tokensOfMessage(m).filter((id) => this.tokens.has(id));
    if (followed.length === 0) return;
    if (this.keeping) this.events.push({ event, tokens: followed });
    applyMarketMessage(m, (id) => this.tokens.get(id)?.book);
    switch (type) {
      case "book": {
        const state = this.tokens.get(String(m.asset_id));
        if (state) state.notReady = null;
        return;
      }
      case "last_trade_price": {
        const id = String(m.asset_id);
        if (this.tokens.has(id) && m.size !== undefined) this.trades.push(tradeOf(id, decimal(m.price), m));
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
      default:
        return;
    }
  }
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
    transactionHash:
      typeof m.transaction_hash === "string" && m.transaction_hash !== "" ? m.transaction_hash : null,
  };
}
