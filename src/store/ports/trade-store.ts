import type { SortOrder } from "../../domain/snapshot.ts";
import type { TradeRow } from "../../domain/trade.ts";
import type { Micros } from "../../domain/time.ts";

export interface TradeQuery {
  order: SortOrder;
  limit: number;
  offset: number;
  /** Inclusive bounds on trade time. */
  from?: Micros;
  to?: Micros;
}

/** One market's trades of a batch written in one transaction. */
export interface TradeBatch {
  marketKey: number;
  rows: TradeRow[];
}

/**
 * Polymarket trades of each market's outcome tokens. Implementations: dialects/sqlite/trade-store.ts and
 * dialects/postgres/trade-store.ts; one contract suite (test/contracts/trade-store.ts) runs against each.
 *
 * Invariants every implementation keeps:
 * - a trade is identified by its market and all its values but the fee and the transaction hash (the
 *   upstream gives no trade id): inserting it again is a no-op, so a replay, a reconnect or a restart
 *   never duplicates; but a copy with a hash fills in the hash of a stored trade that has none (a trade
 *   recorded live without it, imported from PMXT with it) and is still not counted new;
 * - a page is in time order (ties in one fixed order of outcome, side, price, size) and the same on
 *   every implementation; counts match what paging returns.
 */
export interface TradeStore {
  /** Inserts the trades of several markets in one transaction; returns how many were new. */
  insertTrades(batch: TradeBatch[]): Promise<number>;
  countTrades(marketKey: number, from?: Micros, to?: Micros): Promise<number>;
  tradePage(marketKey: number, query: TradeQuery): Promise<TradeRow[]>;
}
