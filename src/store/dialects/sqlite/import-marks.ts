import type { SQLOutputValue } from "node:sqlite";
import type { ImportMarks, RowGroupMark } from "../../ports/import-marks.ts";
import type { SqliteConnection } from "./connection.ts";

type Row = Record<string, SQLOutputValue>;

/** An archive import's progress in the embedded store (see ImportMarks). */
export class SqliteImportMarks implements ImportMarks {
  private readonly conn: SqliteConnection;

  constructor(conn: SqliteConnection) {
    this.conn = conn;
  }

  async importedRowGroups(archive: string, file: string): Promise<Map<number, RowGroupMark>> {
    const rows = this.conn
      .stmt("SELECT row_group, rows, kept FROM archive_row_groups WHERE archive = ? AND file = ?")
      .all(archive, file) as Row[];
    return new Map(
      rows.map((r) => [r.row_group as number, { rows: r.rows as number, kept: r.kept as number }]),
    );
  }

  async markRowGroup(
    archive: string,
    file: string,
    mark: RowGroupMark & { rowGroup: number },
    markets: string[],
  ): Promise<void> {
    this.conn.transaction(() => {
      this.conn
        .stmt(
          `INSERT INTO archive_row_groups (archive, file, row_group, rows, kept) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT DO NOTHING`,
        )
        .run(archive, file, mark.rowGroup, mark.rows, mark.kept);
      const pending = this.conn.stmt(
        "INSERT INTO archive_pending_markets (archive, market) VALUES (?, ?) ON CONFLICT DO NOTHING",
      );
      for (const m of markets) pending.run(archive, m);
    });
  }

  async pendingMarkets(archive: string): Promise<string[]> {
    const rows = this.conn
      .stmt("SELECT market FROM archive_pending_markets WHERE archive = ? ORDER BY market")
      .all(archive) as Row[];
    return rows.map((r) => r.market as string);
  }

  async setCoinPriceSource(marketKey: number, source: string): Promise<void> {
    this.conn
      .stmt(
        `INSERT INTO market_coin_price_sources (market, source) VALUES (?, ?)
         ON CONFLICT (market) DO UPDATE SET source = excluded.source`,
      )
      .run(marketKey, source);
  }

  async coinPriceSource(marketKey: number): Promise<string | null> {
    const row = this.conn
      .stmt("SELECT source FROM market_coin_price_sources WHERE market = ?")
      .get(marketKey) as Row | undefined;
    return row ? (row.source as string) : null;
  }

  async clearPendingMarket(archive: string, market: string): Promise<void> {
    this.conn
      .stmt("DELETE FROM archive_pending_markets WHERE archive = ? AND market = ?")
      .run(archive, market);
  }
}
