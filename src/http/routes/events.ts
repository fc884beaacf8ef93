import { pipeline, Readable } from "node:stream";
import { Type } from "typebox";
import {
  isMarketEventType,
  MARKET_EVENT_TYPES,
  type MarketEvent,
  type MarketEventType,
} from "../../domain/event.ts";
import { isoMicros } from "../../domain/time.ts";
import type { EventRange } from "../../store/ports/event-store.ts";
import { compressStream, negotiate } from "../compression.ts";
import type { Api, AppContext } from "../context.ts";
import { validationError } from "../errors.ts";
import { openMarket, timeRange } from "../params.ts";
import { answer, Limit, Offset, Order, Query, ref, SlugParams, TimeParam, v1Responses } from "../schemas.ts";
import { JSON_TYPE } from "../media-types.ts";

const EventQuery = Query({
  start_time: Type.Optional(TimeParam("Events whose upstream timestamp is at or after")),
  end_time: Type.Optional(TimeParam("Events whose upstream timestamp is at or before")),
  types: Type.Optional(
    Type.String({
      maxLength: 200,
      description: `Only these event types, comma-separated: ${MARKET_EVENT_TYPES.join(", ")}`,
    }),
  ),
  order: Order,
  limit: Limit(1000, 1000),
  offset: Offset,
  format: Type.Enum(["json", "ndjson"], {
    default: "json",
    description:
      "json: a page; ndjson: every event in the range, one a line, streamed (limit and offset unused)",
  }),
});

const MarketEventWire = Type.Object(
  {
    event_type: Type.Enum([...MARKET_EVENT_TYPES]),
    timestamp: Type.String({ description: "The upstream's timestamp, epoch milliseconds as it sent it" }),
    received_at: Type.String({
      format: "date-time",
      description: "When our collector received it, ISO 8601 with microseconds",
    }),
  },
  {
    $id: "MarketEvent",
    additionalProperties: true,
    description:
      "One market-channel message exactly as Polymarket sent it (every field, decimals as strings), plus received_at (docs/events.md)",
  },
);

const MarketEventPage = Type.Object(
  {
    slug: Type.String(),
    events: Type.Array(ref("MarketEvent")),
    total: Type.Integer({ description: "Events in the range; page until offset reaches it" }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: "MarketEventPage", additionalProperties: false },
);

export const eventComponents = [MarketEventWire, MarketEventPage];

const eventsSchema = {
  operationId: "listMarketEvents",
  tags: ["events"],
  summary: "A market's recorded market-channel messages (every book change), newest first unless order=asc",
  description:
    "Every message the collector received about the market's two tokens (book, price_change, last_trade_price, " +
    "tick_size_change, best_bid_ask, market_resolved), as Polymarket sent it, plus received_at. start_time and " +
    "end_time bound the upstream timestamp. Order is receive order (order=asc) or its reverse (desc, the default). format=ndjson streams every event of the range in receive order, in one " +
    "answer (compressed when accepted). One request either way; the plan opens the markets it opens for snapshots " +
    "(403 otherwise).",
  params: SlugParams,
  querystring: EventQuery,
  response: v1Responses(
    {
      200: answer(
        {
          content: {
            "application/json": { schema: ref("MarketEventPage") },
            "application/x-ndjson": {
              schema: { type: "string", description: "format=ndjson: one MarketEvent a line, streamed" },
            },
          },
        },
        "A page of the market's events, or (format=ndjson) all of them in the range",
        {
          "Content-Encoding": {
            type: "string",
            enum: ["br", "zstd", "gzip"],
            description: "The encoding the body is compressed in, when Accept-Encoding allows one",
          },
          Vary: { type: "string", required: true, description: "`Accept-Encoding`" },
        },
      ),
    },
    { errors: [400, 403, 404] },
  ),
};

/** `types=book,price_change` as the event types it names; 400 naming an unknown one. */
export function eventTypesParam(text: string | undefined): MarketEventType[] | undefined {
  if (text === undefined) return undefined;
  const types: MarketEventType[] = [];
  for (const part of text.split(",")) {
    const name = part.trim();
    if (!isMarketEventType(name)) {
      throw validationError(
        `types: ${name || "(empty)"} is not an event type; types are ${MARKET_EVENT_TYPES.join(", ")}`,
        {
          parameter: "types",
          rule: "enum",
        },
      );
    }
    if (!types.includes(name)) types.push(name);
  }
  return types;
}

/** The event range of start_time..end_time (µs, bounding the upstream's ms timestamp) and types. */
export function eventRange(
  start: string | undefined,
  end: string | undefined,
  types: string | undefined,
): EventRange {
  const { from, to } = timeRange(start, end);
  return {
    fromMs: from === undefined ? undefined : Math.ceil(from / 1000),
    toMs: to === undefined ? undefined : Math.floor(to / 1000),
    types: eventTypesParam(types),
  };
}

/** An event as the API serves it: the upstream's object with `received_at` after its own fields. */
export function eventJson(event: MarketEvent): string {
  const text = JSON.stringify(event.message);
  const at = `"received_at":"${isoMicros(event.receivedUs)}"}`;
  return text.length === 2 ? `{${at}` : `${text.slice(0, -1)},${at}`;
}

async function* ndjsonChunks(events: AsyncIterable<MarketEvent[]>): AsyncGenerator<string> {
  for await (const block of events) {
    let chunk = "";
    for (const event of block) chunk += `${eventJson(event)}\n`;
    if (chunk !== "") yield chunk;
  }
}

export function eventRoutes(app: Api, ctx: AppContext): void {
  app.get("/markets/:slug/events", { schema: eventsSchema }, async (req, reply) => {
    const q = req.query;
    const range = eventRange(q.start_time, q.end_time, q.types);
    const market = await openMarket(ctx, req, req.params.slug);
    if (q.format === "ndjson") {
      reply.type("application/x-ndjson; charset=utf-8").header("vary", "Accept-Encoding");
      const encoding = negotiate(req.headers["accept-encoding"]);
      // Read a block at a time as the client takes it: a whole market never sits in memory.
      let body: Readable = Readable.from(
        ndjsonChunks(ctx.store.events.streamMarketEvents(market.key, range)),
        {
          objectMode: false,
        },
      );
      if (encoding !== null) {
        reply.header("content-encoding", encoding);
        body = pipeline(body, compressStream(encoding), () => {});
      }
      return reply.send(body);
    }
    const total = await ctx.store.events.countMarketEvents(market.key, range);
    const events =
      q.offset >= total
        ? []
        : await ctx.store.events.marketEventPage(market.key, {
            ...range,
            order: q.order,
            limit: q.limit,
            offset: q.offset,
          });
    const body =
      `{"slug":${JSON.stringify(market.slug)},"events":[${events.map(eventJson).join(",")}],` +
      `"total":${total},"limit":${q.limit},"offset":${q.offset}}`;
    return reply.type(JSON_TYPE).send(body);
  });
}
