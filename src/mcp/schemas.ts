import * as z from "zod";
import { component, fieldsOf } from "./wire-schemas.ts";

/**
 * The MCP tools' inputs and answers, in zod (what `@modelcontextprotocol/sdk` 1.32 takes for a tool's
 * schemas; the SDK brings zod 4 as its peer). They are the one definition of each tool's shape: the
 * SDK turns them into the JSON Schemas `tools/list` declares and checks every answer against them, and
 * the handlers' types derive from them. What a tool answers is a compact view of API answers: each
 * field the API has is taken from the API's document (wire-schemas.ts), and only the view's own fields
 * (a count, a flag, a shortened list) are written here. A coin stays a string: the document lists the
 * default coins, where a service may be configured with others.
 */

const time = z.string().describe("ISO 8601 UTC");
const nullableNumber = z.number().nullable();
export const coinField = z.string().describe("A coin code: btc, eth, sol, xrp, doge, bnb, hype (configured)");
export const marketTypeField = component("MarketType");
export const slugField = z
  .string()
  .min(1)
  .max(200)
  // Letters, digits, - and _ only: a slug is one path segment, and `..`, `/` or `%2F` would make it others.
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, "a slug is letters, digits, - and _")
  .describe("A market's slug (btc-updown-5m-1784851200) or Polymarket's alias of an hourly or daily market");
export const timeField = z
  .string()
  .min(1)
  .max(40)
  .describe("ISO 8601 (2026-07-24T00:10:00Z) or epoch milliseconds");

// ---- list_series ----

export const seriesOutput = z.object({
  ...fieldsOf("SeriesList", ["as_of"]),
  series: z.array(
    z.object({
      coin: z.string(),
      ...fieldsOf("Series", ["market_type", "markets", "snapshots"]),
      first_market_start: time,
      last_market: z.string().describe("The latest market's slug"),
      coverage_24h: nullableNumber.describe("Recorded / expected snapshots over the last 24 hours"),
      coverage_overall: nullableNumber,
    }),
  ),
});

// ---- list_markets ----

export const MAX_MARKETS = 50;

export const listMarketsInput = {
  coin: coinField.optional(),
  market_type: marketTypeField.optional(),
  resolved: z.boolean().optional().describe("true: resolved markets only; false: live ones only"),
  start_time: timeField.optional().describe("Markets starting at or after this time"),
  end_time: timeField.optional().describe("Markets starting at or before this time"),
  limit: z.number().int().min(1).max(MAX_MARKETS).optional().describe(`Rows, 1..${MAX_MARKETS}, default 20`),
  offset: z.number().int().min(0).optional().describe("Rows to skip, for the next page"),
};

export const marketRow = z.object({
  ...fieldsOf("Market", [
    "slug",
    "market_type",
    "start_time",
    "end_time",
    "winner",
    "coin_price_start",
    "coin_price_end",
    "final_volume",
  ]),
  coin: z.string(),
  resolved: z.boolean(),
});

export const listMarketsOutput = z.object({
  ...fieldsOf("MarketList", ["total", "offset", "warning"]),
  markets: z.array(marketRow).describe("Newest first"),
});

// ---- market_summary ----

export const pricePoint = z.object(fieldsOf("Snapshot", ["time", "coin_price", "price_up", "price_down"]));

export const MAX_GAPS = 5;

export const marketSummaryOutput = z.object({
  market: marketRow.extend(
    fieldsOf("Market", ["resolved_at", "final_liquidity", "settlement", "fee_schedule"]),
  ),
  coverage: z.object({
    ...fieldsOf("Coverage", ["expected_snapshots", "recorded_snapshots", "coverage", "largest_gap_seconds"]),
    gap_count: z.number().int(),
    gaps: z
      .array(z.object(fieldsOf("RecordingGap", ["from", "to", "seconds", "cause"])))
      .describe(`The first ${MAX_GAPS} gaps`),
  }),
  first_snapshot: pricePoint.nullable(),
  last_snapshot: pricePoint.nullable(),
});

// ---- market_chart ----

export const MAX_POINTS = 500;

export const marketChartInput = {
  slug: slugField,
  points: z
    .number()
    .int()
    .min(8)
    .max(MAX_POINTS)
    .optional()
    .describe(`The most points answered, 8..${MAX_POINTS}, default 100`),
  start_time: timeField.optional(),
  end_time: timeField.optional(),
};

export const marketChartOutput = z.object({
  ...fieldsOf("MarketSeries", ["slug", "total", "bucket_us"]),
  points: z.array(pricePoint).describe("Oldest first; each bucket's first, last, lows and highs"),
});

// ---- book_at ----

export const MAX_LEVELS = 50;

const level = component("Level");
const bookSide = z.object({
  bids: z.array(level).describe("Best first"),
  asks: z.array(level).describe("Best first"),
  bid_levels: z.number().int().describe("Levels the recorded book had"),
  ask_levels: z.number().int(),
});

export const bookAtInput = {
  slug: slugField,
  time: timeField.describe("The moment: the latest snapshot at or before it is used"),
  levels: z
    .number()
    .int()
    .min(1)
    .max(MAX_LEVELS)
    .optional()
    .describe(`Levels a side, 1..${MAX_LEVELS}, default 10`),
};

export const bookAtOutput = z.object({
  ...fieldsOf("SnapshotAt", ["slug", "requested_time", "distance_us"]),
  snapshot_time: time,
  ...fieldsOf("Snapshot", ["coin_price", "price_up", "price_down"]),
  up: bookSide.nullable().describe("null when no book was recorded that second"),
  down: bookSide.nullable(),
});

// ---- price_order ----

export const MAX_TAKEN_LEVELS = 20;

const order = fieldsOf("ExecutionPrice", ["outcome", "side"]);

export const priceOrderInput = {
  slug: slugField,
  ...order,
  size: z.number().positive().describe("Shares"),
  time: timeField,
};

export const priceOrderOutput = z.object({
  ...fieldsOf("ExecutionPrice", [
    "slug",
    "outcome",
    "side",
    "size",
    "time",
    "snapshot_time",
    "mid",
    "best_price",
    "average_price",
    "slippage_bps",
    "filled",
    "unfilled",
    "notional",
    "fee_usdc",
    "fee_shares",
  ]),
  levels: z.array(level).describe(`The levels taken, best first (at most ${MAX_TAKEN_LEVELS})`),
  levels_taken: z.number().int(),
});

export type MarketRow = z.infer<typeof marketRow>;
export type PricePoint = z.infer<typeof pricePoint>;
export type BookAtOutput = z.infer<typeof bookAtOutput>;
