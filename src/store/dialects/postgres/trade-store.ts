import type { Pool } from "pg";
import type { TradeRow } from "../../../domain/trade.ts";
import type { Micros } from "../../../domain/time.ts";
import type { TradeBatch, TradeQuery, TradeStore } from "../../ports/trade-store.ts";
import { hashValues, tradeFromArray, tradeSql, tradeValues } from "../../sql/trade-sql.ts";
import { inTransaction } from "./pg-util.ts";

const SQL = tradeSql((i) => `$${i}`);

/**
 * Polymarket trades in PostgreSQL (see TradeStore). A few a second at most over every market, so a
 * plain table and one statement a trade, in one transaction a batch.
 */
export class PostgresTradeStore implements TradeStore {
  private readonly pool: Pool;

  constructor(pool: Pool) {
    this.pool = pool;
  }

  async insertTrades(batch: TradeBatch[]): Promise<number> {
    if (batch.every((b) => b.rows.length === 0)) return 0;
    return inTransaction(this.pool, async (client) => {
      let added = 0;
      // Markets in key order and trades in time order, so that concurrent batches lock in one order.
      for (const b of batch.toSorted((x, y) => x.marketKey - y.marketKey)) {
        for (const t of b.rows.toSorted((x, y) => x.time - y.time)) {
          const isNew = (await client.query(SQL.insert, tradeValues(b.marketKey, t))).rowCount ?? 0;
          if (isNew === 0 && t.transactionHash !== null)
            await client.query(SQL.fillHash, hashValues(b.marketKey, t));
          added += isNew;
        }
      }
      return added;
    });
  }

  async countTrades(marketKey: number, from?: Micros, to?: Micros): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(SQL.count, [
      marketKey,
      from ?? Number.MIN_SAFE_INTEGER,
      to ?? Number.MAX_SAFE_INTEGER,
    ]);
    return Number(rows[0].n);
  }

  async tradePage(marketKey: number, q: TradeQuery): Promise<TradeRow[]> {
    const { rows } = await this.pool.query<unknown[]>({
      text: SQL.page[q.order],
      values: [
        marketKey,
        q.from ?? Number.MIN_SAFE_INTEGER,
        q.to ?? Number.MAX_SAFE_INTEGER,
        q.limit,
        q.offset,
      ],
      rowMode: "array",
    });
    return rows.map(tradeFromArray);
  }
}
