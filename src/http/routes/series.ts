import { Type } from "typebox";
import { seriesCoverage, type SpanCoverage } from "../../domain/coverage.ts";
import { MARKET_SOURCES, type MarketSource } from "../../domain/market.ts";
import { formatSlug } from "../../domain/slug.ts";
import { isoMicros, isoSeconds } from "../../domain/time.ts";
import type { Api, AppContext } from "../context.ts";
import { answer, Nullable, ref, v1Responses } from "../schemas.ts";

const dateTime = (description?: string) => Type.String({ format: "date-time", description });

const SpanCoverageSchema = Type.Object(
  {
    expected_snapshots: Type.Integer(),
    recorded_snapshots: Type.Integer(),
    coverage: Nullable(
      Type.Number({ description: "recorded / expected, at most 1; null when none expected" }),
    ),
  },
  { $id: "SpanCoverage", additionalProperties: false },
);

const SeriesEntry = Type.Object(
  {
    coin: Type.Ref("Coin"),
    market_type: Type.Ref("MarketType"),
    markets: Type.Integer({ description: "Markets stored" }),
    markets_by_source: Type.Object(
      Object.fromEntries(MARKET_SOURCES.map((source) => [source, Type.Integer()])) as Record<
        MarketSource,
        ReturnType<typeof Type.Integer>
      >,
      {
        additionalProperties: false,
        description:
          "Markets holding data of each source (MarketSource): recorded live, imported from PMXT, Gamma's record " +
          "only. A market recorded live and filled in from PMXT counts under both, so the counts may add up to more " +
          "than markets; a market no importer or collector marked counts under none",
      },
    ),
    snapshots: Type.Integer({ description: "Snapshots stored over all its markets" }),
    first_market: Type.Object(
      { slug: Type.String(), start_time: dateTime() },
      { additionalProperties: false },
    ),
    last_market: Type.Object(
      { slug: Type.String(), start_time: dateTime(), end_time: dateTime() },
      { additionalProperties: false },
    ),
    coverage_24h: ref("SpanCoverage"),
    coverage_overall: ref("SpanCoverage"),
  },
  { $id: "Series", additionalProperties: false },
);

const SeriesList = Type.Object(
  {
    as_of: dateTime("The time the coverage is judged at"),
    cadence_seconds: Type.Number(),
    series: Type.Array(ref("Series")),
  },
  { $id: "SeriesList", additionalProperties: false },
);

export const seriesComponents = [SpanCoverageSchema, SeriesEntry, SeriesList];

const seriesSchema = {
  operationId: "listSeries",
  tags: ["markets"],
  summary: "Every recorded series (coin and type): its markets, snapshots and recording coverage",
  description:
    "One entry per coin and type with a stored market, in coin and type order. Coverage is recorded over " +
    "expected snapshots (one per cadence) from the series' first stored market's start until now, or its last " +
    "market's end if earlier: overall, and over the last 24 hours. Markets never recorded count as missing. " +
    "markets_by_source: how many of its markets hold data recorded live, imported from PMXT, or only Gamma's record.",
  response: v1Responses({ 200: answer(ref("SeriesList"), "The recorded series") }),
};

const coverageWire = (c: SpanCoverage) => ({
  expected_snapshots: c.expected,
  recorded_snapshots: c.recorded,
  coverage: c.coverage,
});

export function seriesRoutes(app: Api, ctx: AppContext): void {
  app.get("/series", { schema: seriesSchema }, async () => {
    const now = ctx.clock.nowMicros();
    const cadence = ctx.config.snapshotIntervalMs * 1000;
    const windowStart = Math.floor(now / 1e6) - 86_400;
    const rows = await ctx.store.markets.seriesSummary(windowStart);
    return {
      as_of: isoMicros(now),
      cadence_seconds: cadence / 1e6,
      series: rows.map((s) => {
        const c = seriesCoverage({ ...s, snapshotsInWindow: s.snapshotsSince, windowStart, now, cadence });
        return {
          coin: s.coin,
          market_type: s.marketType,
          markets: s.markets,
          markets_by_source: s.marketsBySource,
          snapshots: s.snapshots,
          first_market: {
            slug: formatSlug(s.coin, s.marketType, s.firstStart),
            start_time: isoSeconds(s.firstStart),
          },
          last_market: {
            slug: formatSlug(s.coin, s.marketType, s.lastStart),
            start_time: isoSeconds(s.lastStart),
            end_time: isoSeconds(s.lastEnd),
          },
          coverage_24h: coverageWire(c.recent),
          coverage_overall: coverageWire(c.overall),
        };
      }),
    };
  });
}
