import type { SortOrder } from "../../domain/snapshot.ts";
import type { TradeRow } from "../../domain/trade.ts";

/** The pages' SQL, the same in both dialects but for how a parameter is written. */
export function tradeSql(p: (i: number) => string): {
  insert: string;
  fillHash: string;
  count: string;
  page: Record<SortOrder, string>;
} {
  const range = `market = ${p(1)} AND time_us >= ${p(2)} AND time_us <= ${p(3)}`;
  const columns = "time_us, outcome, side, price, size, fee_rate_bps, tx_hash";
  const identity = `market = ${p(2)} AND time_us = ${p(3)} AND outcome = ${p(4)} AND side = ${p(5)}
      AND price = ${p(6)} AND size = ${p(7)}`;
  return {
    insert: `INSERT INTO market_trades (market, ${columns}) VALUES (${[1, 2, 3, 4, 5, 6, 7, 8].map(p).join(", ")})
      ON CONFLICT DO NOTHING`,
    // The hash is not part of a trade's identity: a stored trade without one takes it from a later copy.
    fillHash: `UPDATE market_trades SET tx_hash = ${p(1)} WHERE ${identity} AND tx_hash IS NULL`,
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
    transactionHash: (r[6] as string | null) ?? null,
  };
}

export function tradeValues(marketKey: number, t: TradeRow): (string | number | null)[] {
  return [marketKey, t.time, t.outcome, t.side, t.price, t.size, t.feeRateBps, t.transactionHash];
}

/** The fillHash statement's values: the hash, then the trade's identity (SQLite's `?` go in order). */
export function hashValues(marketKey: number, t: TradeRow): (string | number | null)[] {
  return [t.transactionHash, marketKey, t.time, t.outcome, t.side, t.price, t.size];
}
