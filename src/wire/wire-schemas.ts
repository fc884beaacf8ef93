import { type TSchema, Type } from "typebox";
import { type Coin, DEFAULT_COINS, MARKET_TYPES, type SettlementSource, WINNERS } from "../domain/market.ts";

/*
 * The JSON schemas of the wire shapes, apart from their writers and readers (wire.ts): building them
 * loads TypeBox, about 370 modules and 0.2 s of CPU, which a command that only opens a store (the
 * stores render snapshots through wire.ts) has no use for.
 */

/** A JSON-schema field that may be null (OpenAPI 3.1 style: the type or null). */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const dateTime = (description: string) => Type.String({ format: "date-time", description });

/**
 * The enums of the contract, from the domain's own lists. The coins are configuration (`COINS`): the
 * app adds the `Coin` component from its configured list, and the committed document holds the default.
 */
export function coinSchema(coins: readonly Coin[] = DEFAULT_COINS) {
  return Type.Enum([...coins], { $id: "Coin", description: "A coin of the recorded series (configured)" });
}
export const MarketTypeSchema = Type.Enum([...MARKET_TYPES], {
  $id: "MarketType",
  description: "The market's length",
});
export const OutcomeSchema = Type.Enum(["Up", "Down"], { $id: "Outcome" });
export const WinnerSchema = Type.Enum([...WINNERS], {
  $id: "Winner",
  description: "Up, Down, or 50-50 when the upstream split the payout (served as the upstream resolved it)",
});

const SETTLEMENT_SOURCES: SettlementSource[] = ["chainlink", "chainlink_twap", "binance"];

export const SettlementSchema = Type.Object(
  {
    source: Type.Enum(SETTLEMENT_SOURCES, {
      description:
        "chainlink: the instantaneous stream; chainlink_twap: the TWAP stream of lookback_s; binance: 1m candles",
    }),
    lookback_s: Nullable(Type.Integer({ description: "The TWAP stream's lookback; null otherwise" })),
  },
  {
    $id: "Settlement",
    additionalProperties: false,
    description: "The feed the market settles on, from its upstream record (coin_price follows it)",
  },
);

export const FeeScheduleSchema = Type.Object(
  {
    rate: Type.Number(),
    exponent: Type.Number(),
    taker_only: Type.Boolean(),
    rebate_rate: Type.Number({ description: "Share of taker fees paid back to makers" }),
  },
  {
    $id: "FeeSchedule",
    additionalProperties: false,
    description: "A taker fill of C shares at price p pays C * rate * (p * (1 - p)) ^ exponent USDC",
  },
);

/**
 * The JSON shapes the service speaks: the API's market record and snapshot, which are also the lines
 * of our own export format. These schemas are the one definition of those shapes: the route schemas,
 * /openapi.json and the TypeScript types of wire.ts all come from them. Field names and order follow the
 * spec (sections 2.1 and 2.2); `coin` and `polymarket_slug` are additions at the end.
 */
export const MarketWireSchema = Type.Object(
  {
    slug: Type.String({ examples: ["btc-updown-5m-1784851200"] }),
    winner: Nullable(Type.Ref("Winner")),
    market_id: Type.String(),
    event_id: Type.String(),
    market_type: Type.Ref("MarketType"),
    start_time: dateTime("Second precision"),
    end_time: dateTime("Second precision"),
    coin_price_start: Nullable(Type.Number()),
    coin_price_end: Nullable(Type.Number()),
    condition_id: Type.String(),
    clob_token_up: Type.String(),
    clob_token_down: Type.String(),
    final_volume: Nullable(Type.Number()),
    final_liquidity: Nullable(Type.Number()),
    resolved_at: Nullable(dateTime("Second precision")),
    created_at: dateTime("Microsecond precision"),
    updated_at: dateTime("Microsecond precision"),
    coin: Type.Ref("Coin"),
    polymarket_slug: Nullable(
      Type.String({ description: "Polymarket's own slug (hourly, daily); an alias in paths" }),
    ),
    settlement: Type.Ref("Settlement"),
    fee_schedule: Nullable(Type.Ref("FeeSchedule")),
  },
  {
    $id: "Market",
    additionalProperties: false,
    description: "A market record. Fields known only after resolution are null until then.",
  },
);

export const LevelSchema = Type.Object(
  { price: Type.Number(), size: Type.Number() },
  { $id: "Level", additionalProperties: false, description: "One price level of a book" },
);

export const OrderBookSchema = Type.Object(
  { bids: Type.Array(Type.Ref("Level")), asks: Type.Array(Type.Ref("Level")) },
  {
    $id: "OrderBook",
    additionalProperties: false,
    description: "Best first: bids by price descending, asks ascending",
  },
);

export const SnapshotWireSchema = Type.Object(
  {
    time: dateTime("Microsecond precision"),
    coin_price: Type.Number({ description: "Settlement feed of the market's type at this time" }),
    price_up: Type.Number({
      description: "Displayed price of Up: midpoint, or last trade when spread > 0.10",
    }),
    price_down: Type.Number(),
    orderbook_up: Type.Optional(Type.Ref("OrderBook")),
    orderbook_down: Type.Optional(Type.Ref("OrderBook")),
  },
  {
    $id: "Snapshot",
    additionalProperties: false,
    description: "One second of a market; the books only when asked for (include_orderbook)",
  },
);

/** One Polymarket trade of a market's token, as the market channel reported it. */
export const TradeWireSchema = Type.Object(
  {
    time: dateTime("Microsecond precision (the upstream stamps trades in milliseconds)"),
    outcome: Type.Ref("Outcome"),
    token_id: Type.String({ description: "The outcome's CLOB token" }),
    side: Type.Enum(["BUY", "SELL"], { description: "The taker's side" }),
    price: Type.Number(),
    size: Type.Number({ description: "Shares" }),
    fee_rate_bps: Type.Number({ description: "The fee rate the upstream reported, in basis points" }),
    transaction_hash: Nullable(
      Type.String({
        description:
          "The on-chain transaction that settled the trade, when the upstream's message carried one " +
          "(PMXT's archive does; the live market channel may not): null otherwise",
      }),
    ),
  },
  {
    $id: "MarketTrade",
    additionalProperties: false,
    description: "One Polymarket trade of an outcome token",
  },
);

/** The wire schemas that are named components of the API document (Coin is added from the configuration). */
export const WIRE_SCHEMAS = [
  MarketTypeSchema,
  OutcomeSchema,
  WinnerSchema,
  SettlementSchema,
  FeeScheduleSchema,
  TradeWireSchema,
  LevelSchema,
  OrderBookSchema,
  MarketWireSchema,
  SnapshotWireSchema,
];
