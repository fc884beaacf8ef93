/**
 * What an archive import has done, kept durably so that a killed import resumes where it stopped
 * (docs/archives.md): each row group of each file read and written, and the markets whose events an
 * import wrote and whose snapshots, trades and integrity counts are still to be derived from them.
 * Implementations: dialects/sqlite/import-marks.ts and dialects/postgres/import-marks.ts; one contract
 * suite (test/contracts/import-marks.ts) runs on each.
 *
 * Invariants: marking a row group again is a no-op (the first mark stays); a row group's mark and
 * the markets it leaves to derive are written in one transaction.
 */
export interface ImportMarks {
  /** The row groups of a file already imported: row group index -> rows read and kept then. */
  importedRowGroups(archive: string, file: string): Promise<Map<number, RowGroupMark>>;
  /** Marks a row group imported, and its markets as waiting for their derivation, in one transaction. */
  markRowGroup(
    archive: string,
    file: string,
    mark: RowGroupMark & { rowGroup: number },
    markets: string[],
  ): Promise<void>;
  /** The markets an import of this archive wrote events for and has not derived yet, by slug. */
  pendingMarkets(archive: string): Promise<string[]>;
  /** The market's derivation is done. */
  clearPendingMarket(archive: string, market: string): Promise<void>;
  /** Records where an import took a market's snapshot coin prices from (the latest import's word stays). */
  setCoinPriceSource(marketKey: number, source: string): Promise<void>;
  /** Where an import took the market's snapshot coin prices from; null when no import derived any. */
  coinPriceSource(marketKey: number): Promise<string | null>;
}

export interface RowGroupMark {
  rows: number;
  kept: number;
}
