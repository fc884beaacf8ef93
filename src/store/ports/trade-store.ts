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
 * Polymarket trades of each market's outcome tokens. Implementations: sqlite/trade-store.ts and
 * postgres/trade-store.ts; one contract suite (test/contracts/trade-store.ts) runs against each.
 *
 * Invariants every implementation keeps:
 * - a trade is identified by its market and all its values but the fee (the upstream gives no trade
 *   id): inserting it again is a no-op, so a replay, a reconnect or a restart never duplicates;
 * - a page is in time order (ties in one fixed order of outcome, side, price, size) and the same on
 *   every implementation; counts match what paging returns.
 */
export interface TradeStore {
  /** Inserts the trades of several markets in one transaction; returns how many were new. */
  insertTrades(batch: TradeBatch[]): Promise<number>;
  countTrades(marketKey: number, from?: Micros, to?: Micros): Promise<number>;
  tradePage(marketKey: number, query: TradeQuery): Promise<TradeRow[]>;
}

/** The pages' SQL, the same in both dialects but for how a parameter is written. */
export function tradeSql(p: (i: number) => string): {
  insert: string;
  count: string;
  page: Record<SortOrder, string>;
} {
  const range = `market = ${p(1)} AND time_us >= ${p(2)} AND time_us <= ${p(3)}`;
  const columns = "time_us, outcome, side, price, size, fee_rate_bps";
  return {
    insert: `INSERT INTO market_trades (market, ${columns}) VALUES (${[1, 2, 3, 4, 5, 6, 7].map(p).join(", ")})
      ON CONFLICT DO NOTHING`,
    count: `SELECT count(*) AS n FROM market_trades WHERE ${range}`,
    page: {
      asc: `SELECT ${columns} FROM market_trades WHERE ${range}
        ORDER BY time_us, outcome, side, price, size LIMIT ${p(4)} OFFSET ${p(5)}`,
      desc: `SELECT ${columns} FROM market_trades WHERE ${range}
        ORDER BY time_us DESC, outcome DESC, side DESC, price DESC, size DESC LIMIT ${p(4)} OFFSET ${p(5)}`,
    },
  };
}

/** A stored trade row (columns as tradeSql selects them) as a TradeRow. */
export function tradeFromArray(r: readonly unknown[]): TradeRow {
  return {
    time: r[0] as number,
    outcome: r[1] as TradeRow["outcome"],
    side: r[2] as TradeRow["side"],
    price: r[3] as number,
    size: r[4] as number,
    feeRateBps: r[5] as number,
  };
}

export function tradeValues(marketKey: number, t: TradeRow): (string | number)[] {
  return [marketKey, t.time, t.outcome, t.side, t.price, t.size, t.feeRateBps];
}
