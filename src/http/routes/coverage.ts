import { Type } from "typebox";
import { computeCoverage } from "../../domain/coverage.ts";
import { isResolved } from "../../domain/market.ts";
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

const Coverage = Type.Object(
  {
    slug: Type.String(),
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
  },
  { $id: "Coverage", additionalProperties: false },
);

export const coverageComponents = [Gap, Coverage];

const coverageSchema = {
  operationId: "getMarketCoverage",
  tags: ["markets"],
  summary:
    "How completely a market was recorded: expected and recorded snapshots, and every gap with its cause",
  description:
    "Gaps are found from the stored snapshots (consecutive snapshots more than 1.5 cadences apart, and missing " +
    "stretches after the start or before the end) and take their cause from what the collector recorded. Causes: " +
    "not_recording, collector_down, upstream_disconnected, upstream_silent, not_connected, no_book, no_coin_price, " +
    "no_price, store_error, unknown (docs/collector.md).",
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
  });
}
