/** JSON schemas shared by routes: they validate input and generate /openapi.json. */

export const nullable = (type: string, extra: Record<string, unknown> = {}) => ({
  type: [type, "null"],
  ...extra,
});

export const marketSchema = {
  $id: "Market",
  type: "object",
  description: "A market record. Fields known only after resolution are null until then.",
  properties: {
    slug: { type: "string", examples: ["btc-updown-5m-1784851200"] },
    winner: { type: ["string", "null"], enum: ["Up", "Down", null] },
    market_id: { type: "string" },
    event_id: { type: "string" },
    market_type: { type: "string", enum: ["5m", "15m", "1h", "4h", "24h"] },
    start_time: { type: "string", format: "date-time", description: "Second precision" },
    end_time: { type: "string", format: "date-time", description: "Second precision" },
    coin_price_start: nullable("number"),
    coin_price_end: nullable("number"),
    condition_id: { type: "string" },
    clob_token_up: { type: "string" },
    clob_token_down: { type: "string" },
    final_volume: nullable("number"),
    final_liquidity: nullable("number"),
    resolved_at: nullable("string", { format: "date-time" }),
    created_at: { type: "string", format: "date-time", description: "Microsecond precision" },
    updated_at: { type: "string", format: "date-time", description: "Microsecond precision" },
    coin: { type: "string", enum: ["btc", "eth", "sol"] },
    polymarket_slug: nullable("string", {
      description: "Polymarket's own slug (hourly, daily); an alias in paths",
    }),
  },
  required: [
    "slug",
    "winner",
    "market_id",
    "event_id",
    "market_type",
    "start_time",
    "end_time",
    "coin_price_start",
    "coin_price_end",
    "condition_id",
    "clob_token_up",
    "clob_token_down",
    "final_volume",
    "final_liquidity",
    "resolved_at",
    "created_at",
    "updated_at",
    "coin",
    "polymarket_slug",
  ],
} as const;

const levelSchema = {
  type: "object",
  properties: { price: { type: "number" }, size: { type: "number" } },
  required: ["price", "size"],
};

const orderBookSchema = {
  type: "object",
  description: "Best first: bids by price descending, asks ascending",
  properties: { bids: { type: "array", items: levelSchema }, asks: { type: "array", items: levelSchema } },
  required: ["bids", "asks"],
};

export const snapshotSchema = {
  $id: "Snapshot",
  type: "object",
  properties: {
    time: { type: "string", format: "date-time", description: "Microsecond precision" },
    coin_price: { type: "number", description: "Settlement feed of the market's type at this time" },
    price_up: {
      type: "number",
      description: "Displayed price of Up: midpoint, or last trade when spread > 0.10",
    },
    price_down: { type: "number" },
    orderbook_up: orderBookSchema,
    orderbook_down: orderBookSchema,
  },
  required: ["time", "coin_price", "price_up", "price_down"],
} as const;

export const errorSchema = {
  $id: "Error",
  type: "object",
  properties: {
    success: { type: "boolean", const: false },
    error: {
      type: "object",
      properties: {
        code: { type: "string" },
        message: { type: "string" },
        details: { type: "object", additionalProperties: true },
      },
      required: ["code", "message"],
    },
    request_id: { type: "string" },
    timestamp: { type: "string", format: "date-time" },
  },
  required: ["success", "error", "request_id", "timestamp"],
} as const;

export const errorResponses = {
  400: { $ref: "Error#" },
  401: { $ref: "Error#" },
  403: { $ref: "Error#" },
  404: { $ref: "Error#" },
  429: { $ref: "Error#" },
};

export const slugParams = {
  type: "object",
  properties: {
    slug: {
      type: "string",
      maxLength: 200,
      description: "Our slug (`btc-updown-5m-1784851200`) or Polymarket's alias of an hourly or daily market",
    },
  },
  required: ["slug"],
} as const;

export const timeParam = (description: string) => ({
  type: "string",
  maxLength: 40,
  description: `${description}: ISO 8601, or epoch milliseconds`,
});
