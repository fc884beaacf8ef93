import * as z from "zod";
import type * as Api from "../../client/src/index.ts";
import { slugField, timeField } from "./schemas.ts";
import { defineTool } from "./tool.ts";

/**
 * market_events: what happened in a market between two times, from its recorded market-channel
 * messages (GET /v1/markets/{slug}/events), compactly: how many of each type, the largest trades, and
 * each change of the best bid or ask. Reads at most MAX_PAGES pages of 1000 events.
 */

export const MAX_PAGES = 10;
export const LARGEST_TRADES = 5;
export const TOP_CHANGES = 20;

const PAGE = 1000;

const input = {
  slug: slugField,
  start_time: timeField.describe("From (the upstream's timestamps)"),
  end_time: timeField.describe("To, inclusive"),
};

const outcome = z.enum(["Up", "Down"]).nullable().describe("null for a token of another market");
const decimal = z.string().describe("As the upstream wrote it");

const output = z.object({
  slug: z.string(),
  start_time: z.string(),
  end_time: z.string(),
  events: z.number().int().describe("Events read"),
  truncated: z
    .boolean()
    .describe(`True when the range holds more than ${MAX_PAGES * PAGE} events (the rest unread)`),
  counts: z.record(z.string(), z.number().int()).describe("Events by type"),
  largest_trades: z
    .array(z.object({ received_at: z.string(), outcome, side: z.string(), price: decimal, size: decimal }))
    .describe(`The ${LARGEST_TRADES} largest trades by size`),
  top_of_book_changes: z.number().int().describe("Times the best bid or best ask of a token changed"),
  top_of_book: z
    .array(
      z.object({
        received_at: z.string(),
        outcome,
        best_bid: z.number().nullable(),
        best_ask: z.number().nullable(),
      }),
    )
    .describe(`The first ${TOP_CHANGES} changes of the top of book, oldest first`),
});

type Top = { bid: number | null; ask: number | null };

/** The best bid and ask a message gives each token it names: a book's levels, a price change's fields. */
function topsOf(m: Api.MarketEvent): [string, Top][] {
  const msg = m as Record<string, unknown>;
  if (msg.event_type === "book") {
    const prices = (levels: unknown) =>
      Array.isArray(levels) ? levels.map((l) => Number((l as { price?: unknown }).price)) : [];
    const bids = prices(msg.bids);
    const asks = prices(msg.asks);
    return [
      [
        String(msg.asset_id),
        { bid: bids.length ? Math.max(...bids) : null, ask: asks.length ? Math.min(...asks) : null },
      ],
    ];
  }
  if (msg.event_type === "price_change" || msg.event_type === "best_bid_ask") {
    const entries = Array.isArray(msg.price_changes)
      ? (msg.price_changes as Record<string, unknown>[])
      : [msg];
    return entries
      .filter((e) => e.best_bid !== undefined && e.best_ask !== undefined)
      .map((e) => [
        String(e.asset_id ?? msg.asset_id),
        {
          bid: e.best_bid === "" ? null : Number(e.best_bid),
          ask: e.best_ask === "" ? null : Number(e.best_ask),
        },
      ]);
  }
  return [];
}

export const marketEventsTool = defineTool({
  name: "market_events",
  title: "What happened in a market",
  description:
    "What happened in a market between two times, from every market-channel message recorded: counts by " +
    `event type, the ${LARGEST_TRADES} largest trades, and each change of the best bid or ask of Up and Down ` +
    `(the first ${TOP_CHANGES} listed). Reads at most ${MAX_PAGES * PAGE} events (truncated says so).` +
    ` Cost: 1 read (GET /v1/markets/{slug}) plus 1 per 1000 events (GET /v1/markets/{slug}/events), plus 1 request for the /mcp call over HTTP.`,
  readOnly: true,
  input,
  output,
  async run(client, { slug, start_time, end_time }, signal) {
    const market = await client.market(slug, { signal });
    const outcomeOf = (token: string) =>
      token === market.clob_token_up ? "Up" : token === market.clob_token_down ? "Down" : null;
    const counts: Record<string, number> = {};
    const trades: z.infer<typeof output>["largest_trades"] = [];
    const tops = new Map<string, Top>();
    const top: z.infer<typeof output>["top_of_book"] = [];
    let changes = 0;
    let read = 0;
    let truncated = false;
    const events = client.events(slug, { start_time, end_time, order: "asc", limit: PAGE }, { signal });
    for await (const e of events) {
      if (read === MAX_PAGES * PAGE) {
        truncated = true;
        break;
      }
      read++;
      counts[e.event_type] = (counts[e.event_type] ?? 0) + 1;
      const msg = e as Record<string, unknown>;
      if (e.event_type === "last_trade_price") {
        trades.push({
          received_at: e.received_at,
          outcome: outcomeOf(String(msg.asset_id)),
          side: String(msg.side),
          price: String(msg.price),
          size: String(msg.size),
        });
        trades.sort((a, b) => Number(b.size) - Number(a.size));
        trades.length = Math.min(trades.length, LARGEST_TRADES);
      }
      for (const [token, now] of topsOf(e)) {
        const before = tops.get(token);
        if (before && before.bid === now.bid && before.ask === now.ask) continue;
        tops.set(token, now);
        changes++;
        if (top.length < TOP_CHANGES)
          top.push({
            received_at: e.received_at,
            outcome: outcomeOf(token),
            best_bid: now.bid,
            best_ask: now.ask,
          });
      }
    }
    const byType = Object.entries(counts)
      .map(([type, n]) => `${n} ${type}`)
      .join(", ");
    const biggest = trades[0]
      ? ` Largest trade: ${trades[0].side} ${trades[0].size} ${trades[0].outcome ?? "?"} @ ${trades[0].price}.`
      : "";
    return {
      structured: {
        slug: market.slug,
        start_time,
        end_time,
        events: read,
        truncated,
        counts,
        largest_trades: trades,
        top_of_book_changes: changes,
        top_of_book: top,
      },
      text:
        `${market.slug} from ${start_time} to ${end_time}: ${read}${truncated ? "+" : ""} events (${byType || "none"}).` +
        `${biggest} Top of book changed ${changes} times.`,
    };
  },
});
