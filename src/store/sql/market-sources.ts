import { MARKET_SOURCES, type MarketSource } from "../../domain/market.ts";

/**
 * A market's sources as stored: a bit each (an INTEGER column in both stores), so that marking one is
 * a single atomic UPDATE. `sourcesOf` reads the column. The order of MARKET_SOURCES is the order of the bits.
 */
const SOURCE_BIT: Record<MarketSource, number> = { recorded: 1, pmxt: 2, gamma: 4 };

export function sourcesOf(bits: number): MarketSource[] {
  return MARKET_SOURCES.filter((s) => (bits & SOURCE_BIT[s]) !== 0);
}

/**
 * Marks a market's source by the rule of MarketSource: `gamma` only when the market has no source;
 * `recorded` or `pmxt` added, `gamma` taken out. Parameters: the source's bit, the market's key; answers the new `sources`.
 */
export function markSourceSql(p: (i: number) => string): string {
  const gamma = SOURCE_BIT.gamma;
  return `UPDATE markets SET sources = CASE
      WHEN ${p(1)} = ${gamma} THEN CASE WHEN sources = 0 THEN ${gamma} ELSE sources END
      ELSE (sources | ${p(1)}) & ~${gamma} END
    WHERE id = ${p(2)} RETURNING sources`;
}

export function sourceBit(source: MarketSource): number {
  return SOURCE_BIT[source];
}
