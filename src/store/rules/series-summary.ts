import { type Coin, MARKET_SOURCES, type MarketSource, type MarketType } from "../../domain/market.ts";
import { sourceBit } from "../sql/market-sources.ts";

/** One recorded series (coin and type) as the store holds it; see MarketStore.seriesSummary. */
export interface SeriesSummaryRow {
  coin: Coin;
  marketType: MarketType;
  markets: number;
  snapshots: number;
  firstStart: number;
  lastStart: number;
  lastEnd: number;
  /** Snapshots at or after the `since` the summary was asked for. */
  snapshotsSince: number;
  /** Markets holding data of each source (a market of several sources counts under each). */
  marketsBySource: Record<MarketSource, number>;
}

const sourceCounts = MARKET_SOURCES.map(
  (s) => `sum(CASE WHEN (sources & ${sourceBit(s)}) <> 0 THEN 1 ELSE 0 END) AS ${s}_markets`,
).join(", ");

/**
 * Every series in one grouped scan of the markets. Snapshots since a time are the counts of the
 * markets that start then or later, plus a count in the snapshots of the (at most one per series)
 * market running across it: markets of a series follow each other without overlapping.
 */
export function seriesSummarySql(p: (i: number) => string): string {
  return `SELECT coin, market_type, count(*) AS markets, sum(snapshot_count) AS snapshots,
      min(start_time) AS first_start, max(start_time) AS last_start, max(end_time) AS last_end,
      sum(CASE WHEN start_time >= ${p(1)} THEN snapshot_count
               WHEN end_time > ${p(1)} THEN
                 (SELECT count(*) FROM snapshots s WHERE s.market = m.id AND s.time_us >= ${p(2)})
               ELSE 0 END) AS snapshots_since, ${sourceCounts}
    FROM markets m GROUP BY coin, market_type ORDER BY coin, market_type`;
}

/**
 * The markets running across `since` whose snapshots are in blocks (resolved ones: a 24h market can
 * still straddle a day ago). The grouped scan counts only the row tables, so their count since then is
 * read from the blocks and added by `addBlockCounts`.
 */
export function straddlingBlockedSql(p: (i: number) => string): string {
  return `SELECT id, coin, market_type FROM markets m
    WHERE start_time < ${p(1)} AND end_time > ${p(1)}
      AND EXISTS (SELECT 1 FROM snapshot_blocks b WHERE b.market = m.id)`;
}

/** Adds each straddling blocked market's count since the time to its series. */
export async function addBlockCounts(
  summary: SeriesSummaryRow[],
  straddling: Record<string, unknown>[],
  countSince: (marketKey: number) => Promise<number>,
): Promise<SeriesSummaryRow[]> {
  for (const r of straddling) {
    const s = summary.find((x) => x.coin === r.coin && x.marketType === r.market_type);
    if (s) s.snapshotsSince += await countSince(Number(r.id));
  }
  return summary;
}

export function seriesSummaryFromRow(r: Record<string, unknown>): SeriesSummaryRow {
  return {
    coin: r.coin as Coin,
    marketType: r.market_type as MarketType,
    markets: Number(r.markets),
    snapshots: Number(r.snapshots),
    firstStart: Number(r.first_start),
    lastStart: Number(r.last_start),
    lastEnd: Number(r.last_end),
    snapshotsSince: Number(r.snapshots_since),
    marketsBySource: {
      recorded: Number(r.recorded_markets),
      pmxt: Number(r.pmxt_markets),
      gamma: Number(r.gamma_markets),
    },
  };
}
