import type { FastifyInstance } from "fastify";
import { computeCoverage } from "../../domain/coverage.ts";
import { isResolved } from "../../domain/market.ts";
import { isoMicros, isoSeconds } from "../../domain/time.ts";
import type { AppContext } from "../app.ts";
import { openMarket } from "../params.ts";
import { errorResponses, slugParams } from "../schemas.ts";

const seconds = (us: number) => Math.round(us / 1e3) / 1e3;

const coverageSchema = {
  tags: ["markets"],
  summary:
    "How completely a market was recorded: expected and recorded snapshots, and every gap with its cause",
  description:
    "Gaps are found from the stored snapshots (consecutive snapshots more than 1.5 cadences apart, and missing " +
    "stretches after the start or before the end) and take their cause from what the collector recorded. Causes: " +
    "not_recording, collector_down, upstream_disconnected, upstream_silent, not_connected, no_book, no_coin_price, " +
    "no_price, store_error, unknown (docs/collector.md).",
  params: slugParams,
  response: {
    200: {
      type: "object",
      properties: {
        slug: { type: "string" },
        start_time: { type: "string", format: "date-time" },
        end_time: { type: "string", format: "date-time" },
        resolved: { type: "boolean" },
        cadence_seconds: { type: "number" },
        until: {
          type: "string",
          format: "date-time",
          description: "End of the span judged: the market's end, or now while it is live",
        },
        expected_snapshots: { type: "integer" },
        recorded_snapshots: { type: "integer" },
        missing_snapshots: { type: "integer" },
        coverage: {
          type: ["number", "null"],
          description: "recorded / expected, at most 1; null before the market starts",
        },
        largest_gap_seconds: { type: "number" },
        gaps: {
          type: "array",
          items: {
            type: "object",
            properties: {
              from: {
                type: "string",
                format: "date-time",
                description: "Last snapshot before, or the start",
              },
              to: { type: "string", format: "date-time", description: "First snapshot after, or until" },
              seconds: { type: "number" },
              missing_snapshots: { type: "integer" },
              cause: { type: "string" },
              detail: { type: ["string", "null"] },
            },
            required: ["from", "to", "seconds", "missing_snapshots", "cause", "detail"],
          },
        },
      },
      required: [
        "slug",
        "start_time",
        "end_time",
        "resolved",
        "cadence_seconds",
        "until",
        "expected_snapshots",
        "recorded_snapshots",
        "missing_snapshots",
        "coverage",
        "largest_gap_seconds",
        "gaps",
      ],
    },
    ...errorResponses,
  },
};

export function coverageRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Params: { slug: string } }>(
    "/markets/:slug/coverage",
    { schema: coverageSchema },
    async (req) => {
      const market = await openMarket(ctx, req, req.params.slug);
      const cadence = ctx.config.snapshotIntervalMs * 1000;
      const [span, gaps] = await Promise.all([
        ctx.store.markets.snapshotSpan(market.key, 1.5 * cadence),
        ctx.store.markets.listGaps(market.key),
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
      };
    },
  );
}
