import * as z from "zod";

/**
 * The MCP tools' inputs and answers, in zod (what `@modelcontextprotocol/sdk` 1.32 takes for a tool's
 * schemas; the SDK brings zod 4 as its peer). They are the one definition of each tool's shape: the
 * SDK turns them into the JSON Schemas `tools/list` declares and checks every answer against them, and
 * the handlers' types derive from them. What a tool answers is a compact view of API answers whose own
 * shapes come from openapi.json through the client.
 */

const time = z.string().describe("ISO 8601 UTC");
const nullableNumber = z.number().nullable();
export const coinField = z.string().describe("A coin code: btc, eth, sol, xrp, doge, bnb, hype (configured)");
export const marketTypeField = z.enum(["5m", "15m", "1h", "4h", "24h"]);
export const slugField = z
  .string()
  .min(1)
  .max(200)
  .describe("A market's slug (btc-updown-5m-1784851200) or Polymarket's alias of an hourly or daily market");
export const timeField = z
  .string()
  .min(1)
  .max(40)
  .describe("ISO 8601 (2026-07-24T00:10:00Z) or epoch milliseconds");

// ---- list_series ----

export const seriesOutput = z.object({
  as_of: time,
  series: z.array(
    z.object({
      coin: z.string(),
      market_type: z.string(),
      markets: z.number().int(),
      snapshots: z.number().int(),
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
  slug: z.string(),
  coin: z.string(),
  market_type: z.string(),
  start_time: time,
  end_time: time,
  resolved: z.boolean(),
  winner: z.string().nullable().describe("Up, Down or 50-50; null until resolved"),
  coin_price_start: nullableNumber,
  coin_price_end: nullableNumber,
  final_volume: nullableNumber,
});

export const listMarketsOutput = z.object({
  total: z.number().int().describe("Markets matching the filters"),
  offset: z.number().int(),
  markets: z.array(marketRow).describe("Newest first"),
  warning: z.string().nullable().describe("What the key's plan leaves out, if anything"),
});

// ---- market_summary ----

export const pricePoint = z.object({
  time,
  coin_price: z.number(),
  price_up: z.number(),
  price_down: z.number(),
});

export const MAX_GAPS = 5;

export const marketSummaryOutput = z.object({
  market: marketRow.extend({
    resolved_at: time.nullable(),
    final_liquidity: nullableNumber,
    settlement: z.object({ source: z.string(), lookback_s: z.number().int().nullable() }),
    fee_schedule: z
      .object({ rate: z.number(), exponent: z.number(), taker_only: z.boolean(), rebate_rate: z.number() })
      .nullable(),
  }),
  coverage: z.object({
    expected_snapshots: z.number().int(),
    recorded_snapshots: z.number().int(),
    coverage: nullableNumber,
    largest_gap_seconds: z.number(),
    gap_count: z.number().int(),
    gaps: z
      .array(z.object({ from: time, to: time, seconds: z.number(), cause: z.string() }))
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
  slug: z.string(),
  total: z.number().int().describe("Snapshots in the range"),
  bucket_us: z.number().int().nullable().describe("Bucket width in µs; null when every snapshot is here"),
  points: z.array(pricePoint).describe("Oldest first; each bucket's first, last, lows and highs"),
});

// ---- book_at ----

export const MAX_LEVELS = 50;

const level = z.object({ price: z.number(), size: z.number() });
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
  slug: z.string(),
  requested_time: time,
  snapshot_time: time,
  distance_us: z.number().int().describe("µs from the snapshot to the requested time"),
  coin_price: z.number(),
  price_up: z.number(),
  price_down: z.number(),
  up: bookSide.nullable().describe("null when no book was recorded that second"),
  down: bookSide.nullable(),
});

// ---- price_order ----

export const MAX_TAKEN_LEVELS = 20;

export const priceOrderInput = {
  slug: slugField,
  outcome: z.enum(["up", "down"]),
  side: z.enum(["buy", "sell"]),
  size: z.number().positive().describe("Shares"),
  time: timeField,
};

export const priceOrderOutput = z.object({
  slug: z.string(),
  outcome: z.string(),
  side: z.string(),
  size: z.number(),
  time,
  snapshot_time: time,
  mid: z.number(),
  best_price: nullableNumber,
  average_price: nullableNumber,
  slippage_bps: nullableNumber,
  filled: z.number(),
  unfilled: z.number(),
  notional: z.number().describe("USDC exchanged before fees"),
  fee_usdc: z.number(),
  fee_shares: z.number(),
  levels: z.array(level).describe(`The levels taken, best first (at most ${MAX_TAKEN_LEVELS})`),
  levels_taken: z.number().int(),
});

export type MarketRow = z.infer<typeof marketRow>;
export type PricePoint = z.infer<typeof pricePoint>;
export type BookAtOutput = z.infer<typeof bookAtOutput>;
