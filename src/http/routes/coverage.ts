import { Type } from "typebox";
import { computeCoverage } from "../../domain/coverage.ts";
import { isResolved, MARKET_SOURCES } from "../../domain/market.ts";
import { isoMicros, isoSeconds } from "../../domain/time.ts";
import type { Api, AppContext } from "../context.ts";
import { openMarket } from "../params.ts";
import { answer, Nullable, ref, SlugParams, v1Responses } from "../schemas.ts";

const seconds = (us: number) => Math.round(us / 1e3) / 1e3;

const dateTime = (description?: string) => Type.String({ format: "date-time", description });

const Gap = Type.Object(
  {
    from: dateTime("Last snapshot before, or the start"),
    to: dateTime("First snapshot after, or until"),
    seconds: Type.Number(),
    missing_snapshots: Type.Integer(),
    cause: Type.String(),
    detail: Nullable(Type.String()),
  },
  { $id: "RecordingGap", additionalProperties: false },
);

const EventCoverage = Type.Object(
  {
    count: Type.Integer({ description: "Market-channel messages recorded (GET /v1/markets/{slug}/events)" }),
    first_timestamp: dateTime("The first event's upstream timestamp"),
    last_timestamp: dateTime("The last event's upstream timestamp"),
    first_received_at: dateTime("When the first was received (µs)"),
    last_received_at: dateTime("When the last was received (µs)"),
  },
  { $id: "EventCoverage", additionalProperties: false },
);

const BookIntegrityWire = Type.Object(
  {
    book_matches: Type.Integer({ description: "book messages equal to the book rebuilt before them" }),
    book_mismatches: Type.Integer({ description: "book messages that differed (never repaired)" }),
    best_matches: Type.Integer({
      description: "price_change entries whose best bid and ask the rebuilt book had",
    }),
    best_mismatches: Type.Integer({
      description: "price_change entries whose best bid or ask it did not have",
    }),
  },
  {
    $id: "BookIntegrity",
    additionalProperties: false,
    description: "The book rebuilt from events checked against what the upstream said (DESIGN 3.10)",
  },
);

const MarketSourceSchema = Type.Enum([...MARKET_SOURCES], {
  $id: "MarketSource",
  description:
    "Where a market's data came from: recorded (our collector followed it live), pmxt (its events and " +
    "snapshots imported from the PMXT archive), gamma (only its record, from Gamma: no book data). " +
    "recorded and pmxt combine; gamma appears alone (docs/archives.md)",
});

const Coverage = Type.Object(
  {
    slug: Type.String(),
    sources: Type.Array(ref("MarketSource"), {
      description:
        "Where its data came from, in the order recorded, pmxt, gamma; empty for a market no importer or " +
        "collector marked",
    }),
    start_time: dateTime(),
    end_time: dateTime(),
    resolved: Type.Boolean(),
    cadence_seconds: Type.Number(),
    until: dateTime("End of the span judged: the market's end, or now while it is live"),
    expected_snapshots: Type.Integer(),
    recorded_snapshots: Type.Integer(),
    missing_snapshots: Type.Integer(),
    coverage: Nullable(
      Type.Number({ description: "recorded / expected, at most 1; null before the market starts" }),
    ),
    largest_gap_seconds: Type.Number(),
    gaps: Type.Array(ref("RecordingGap")),
    events: Type.Union([ref("EventCoverage"), Type.Null()], {
      description: "What the market's events cover; null without events",
    }),
    book_integrity: Type.Union([ref("BookIntegrity"), Type.Null()], {
      description: "The book-integrity counts of its events; null when never counted",
    }),
    coin_price_source: Nullable(
      Type.String({
        description:
          "Where the coin prices of snapshots imported from an archive came from (docs/archives.md): the feed's " +
          "name (chainlink, chainlink_twap 60 s) or binance_1s; null when none were imported (recorded live: " +
          "the market's settlement feed)",
      }),
    ),
  },
  { $id: "Coverage", additionalProperties: false },
);

export const coverageComponents = [MarketSourceSchema, EventCoverage, BookIntegrityWire, Gap, Coverage];

const coverageSchema = {
  operationId: "getMarketCoverage",
  tags: ["markets"],
  summary:
    "How completely a market was recorded: expected and recorded snapshots, and every gap with its cause",
  description:
    "Gaps are found from the stored snapshots (consecutive snapshots more than 1.5 cadences apart, and missing " +
    "stretches after the start or before the end) and take their cause from what the collector recorded. Causes: " +
    "not_recording, collector_down, upstream_disconnected, upstream_silent, not_connected, no_book, no_coin_price, " +
    "no_price, store_error, unknown (docs/collector.md). sources: where its data came from (recorded live, PMXT, " +
    "or Gamma's record only; docs/archives.md). events and book_integrity: what the recorded " +
    "market-channel messages cover, and how often the book rebuilt from them agreed with the upstream (docs/events.md).",
  params: SlugParams,
  response: v1Responses(
    { 200: answer(ref("Coverage"), "The market's coverage") },
    { errors: [400, 403, 404] },
  ),
};

export function coverageRoutes(app: Api, ctx: AppContext): void {
  app.get("/markets/:slug/coverage", { schema: coverageSchema }, async (req) => {
    const market = await openMarket(ctx, req, req.params.slug);
    const cadence = ctx.config.snapshotIntervalMs * 1000;
    const [span, gaps, events, integrity, coinPriceSource] = await Promise.all([
      ctx.store.markets.snapshotSpan(market.key, 1.5 * cadence),
      ctx.store.markets.listGaps(market.key),
      ctx.store.events.marketEventSpan(market.key),
      ctx.store.events.bookIntegrity(market.key),
      ctx.store.imports.coinPriceSource(market.key),
    ]);
    const c = computeCoverage({
      startTime: market.startTime,
      endTime: market.endTime,
      now: ctx.clock.nowMicros(),
      cadence,
      recorded: market.snapshotCount,
      ...span,
      gaps,
    });
    return {
      slug: market.slug,
      sources: market.sources,
      start_time: isoSeconds(market.startTime),
      end_time: isoSeconds(market.endTime),
      resolved: isResolved(market),
      cadence_seconds: cadence / 1e6,
      until: isoMicros(c.until),
      expected_snapshots: c.expected,
      recorded_snapshots: c.recorded,
      missing_snapshots: c.missing,
      coverage: c.expected === 0 ? null : Math.min(1, Math.round((c.recorded / c.expected) * 1e4) / 1e4),
      largest_gap_seconds: seconds(c.largestGap),
      gaps: c.holes.map((h) => ({
        from: isoMicros(h.from),
        to: isoMicros(h.to),
        seconds: seconds(h.to - h.from),
        missing_snapshots: h.missing,
        cause: h.cause,
        detail: h.detail,
      })),
      events:
        events === null
          ? null
          : {
              count: events.count,
              first_timestamp: isoMicros(events.firstTimestampMs * 1000),
              last_timestamp: isoMicros(events.lastTimestampMs * 1000),
              first_received_at: isoMicros(events.firstReceivedUs),
              last_received_at: isoMicros(events.lastReceivedUs),
            },
      book_integrity:
        integrity === null
          ? null
          : {
              book_matches: integrity.bookMatches,
              book_mismatches: integrity.bookMismatches,
              best_matches: integrity.bestMatches,
              best_mismatches: integrity.bestMismatches,
            },
      coin_price_source: coinPriceSource,
    };
  });
}
