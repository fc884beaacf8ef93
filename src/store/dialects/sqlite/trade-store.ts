import type { SQLOutputValue } from "node:sqlite";
import type { TradeRow } from "../../../domain/trade.ts";
import type { Micros } from "../../../domain/time.ts";
import type { TradeBatch, TradeQuery, TradeStore } from "../../ports/trade-store.ts";
import { hashValues, tradeFromArray, tradeSql, tradeValues } from "../../sql/trade-sql.ts";
import type { SqliteConnection } from "./connection.ts";

const SQL = tradeSql(() => "?");

/** Polymarket trades in the embedded store (see TradeStore). */
export class SqliteTradeStore implements TradeStore {
  private readonly conn: SqliteConnection;

  constructor(conn: SqliteConnection) {
    this.conn = conn;
  }

  async insertTrades(batch: TradeBatch[]): Promise<number> {
    if (batch.every((b) => b.rows.length === 0)) return 0;
    const insert = this.conn.stmt(SQL.insert);
    const fillHash = this.conn.stmt(SQL.fillHash);
    return this.conn.transaction(() => {
      let added = 0;
      for (const b of batch) {
        for (const t of b.rows) {
          const isNew = Number(insert.run(...tradeValues(b.marketKey, t)).changes);
          if (isNew === 0 && t.transactionHash !== null) fillHash.run(...hashValues(b.marketKey, t));
          added += isNew;
        }
      }
      return added;
    });
  }

  async countTrades(marketKey: number, from?: Micros, to?: Micros): Promise<number> {
    const row = this.conn
      .stmt(SQL.count)
      .get(marketKey, from ?? Number.MIN_SAFE_INTEGER, to ?? Number.MAX_SAFE_INTEGER) as { n: number };
    return row.n;
  }

  async tradePage(marketKey: number, q: TradeQuery): Promise<TradeRow[]> {
    const rows = this.conn
      .arrayStmt(SQL.page[q.order])
      .all(
        marketKey,
        q.from ?? Number.MIN_SAFE_INTEGER,
        q.to ?? Number.MAX_SAFE_INTEGER,
        q.limit,
        q.offset,
      ) as unknown as SQLOutputValue[][];
    return rows.map(tradeFromArray);
  }
}
