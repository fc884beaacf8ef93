import type { Pool } from "pg";
import type { ImportMarks, RowGroupMark } from "../../ports/import-marks.ts";
import { inTransaction } from "./pg-util.ts";

type Row = Record<string, unknown>;

/** An archive import's progress in PostgreSQL (see ImportMarks). */
export class PostgresImportMarks implements ImportMarks {
  private readonly pool: Pool;

  constructor(pool: Pool) {
    this.pool = pool;
  }

  async importedRowGroups(archive: string, file: string): Promise<Map<number, RowGroupMark>> {
    const { rows } = await this.pool.query<Row>(
      "SELECT row_group, rows, kept FROM archive_row_groups WHERE archive = $1 AND file = $2",
      [archive, file],
    );
    return new Map(rows.map((r) => [Number(r.row_group), { rows: Number(r.rows), kept: Number(r.kept) }]));
  }

  async markRowGroup(
    archive: string,
    file: string,
    mark: RowGroupMark & { rowGroup: number },
    markets: string[],
  ): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query(
        `INSERT INTO archive_row_groups (archive, file, row_group, rows, kept) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT DO NOTHING`,
        [archive, file, mark.rowGroup, mark.rows, mark.kept],
      );
      if (markets.length > 0)
        await client.query(
          `INSERT INTO archive_pending_markets (archive, market)
           SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
          [archive, markets],
        );
    });
  }

  async pendingMarkets(archive: string): Promise<string[]> {
    const { rows } = await this.pool.query<Row>(
      "SELECT market FROM archive_pending_markets WHERE archive = $1 ORDER BY market",
      [archive],
    );
    return rows.map((r) => String(r.market));
  }

  async setCoinPriceSource(marketKey: number, source: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO market_coin_price_sources (market, source) VALUES ($1, $2)
       ON CONFLICT (market) DO UPDATE SET source = excluded.source`,
      [marketKey, source],
    );
  }

  async coinPriceSource(marketKey: number): Promise<string | null> {
    const { rows } = await this.pool.query<Row>(
      "SELECT source FROM market_coin_price_sources WHERE market = $1",
      [marketKey],
    );
    return rows.length === 0 ? null : String(rows[0].source);
  }

  async clearPendingMarket(archive: string, market: string): Promise<void> {
    await this.pool.query("DELETE FROM archive_pending_markets WHERE archive = $1 AND market = $2", [
      archive,
      market,
    ]);
  }
}
