import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { injectFetch } from "../../src/http/inject-fetch.ts";
import { inProcessMcpServer } from "../../src/mcp/mcp-server.ts";
import { LARGEST_TRADES, TOP_CHANGES } from "../../src/mcp/events-tool.ts";
import { isoMicros } from "../../src/domain/time.ts";
import { HAND_MARKET, makeTestApp, type TestApp } from "../helpers/app.ts";
import { marketEvents, recordMarket } from "../helpers/recorded-events.ts";

// market_events called through the SDK's client over an in-memory transport, its reads answered by
// the app itself: its counts, trades and top-of-book changes held against the events stored.

const EVENTS = marketEvents(HAND_MARKET, { changes: 60 });

let t: TestApp;
let client: Client;
before(async () => {
  t = await makeTestApp({ seed: false });
  await recordMarket(t.store, HAND_MARKET, EVENTS);
  const fetch = injectFetch(t.app, {
    remoteAddress: "127.0.0.1",
    host: "localhost",
    requestId: "events-tool",
    onAnswer: () => {},
  });
  const server = inProcessMcpServer(fetch, t.key);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: "events-tool-test", version: "1.0.0" });
  await client.connect(clientSide);
});
after(async () => {
  await client.close();
  await t.close();
});

describe("market_events", () => {
  test("counts by type, the largest trades and the top-of-book changes of a range", async () => {
    const from = EVENTS[10].timestampMs;
    const to = EVENTS[60].timestampMs;
    const result = (await client.callTool({
      name: "market_events",
      arguments: { slug: HAND_MARKET.slug, start_time: String(from), end_time: String(to) },
    })) as CallToolResult;
    assert.equal(result.isError, undefined, JSON.stringify(result.content));
    const s = result.structuredContent as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the tool's answer read field by field
    const inRange = EVENTS.filter((e) => e.timestampMs >= from && e.timestampMs <= to);
    assert.equal(s.events, inRange.length);
    assert.equal(s.truncated, false);
    const counts: Record<string, number> = {};
    for (const e of inRange) counts[e.type] = (counts[e.type] ?? 0) + 1;
    assert.deepEqual(s.counts, counts);

    const trades = inRange
      .filter((e) => e.type === "last_trade_price")
      .sort((a, b) => Number(b.message.size) - Number(a.message.size))
      .slice(0, LARGEST_TRADES);
    assert.deepEqual(
      s.largest_trades.map((x: { received_at: string; size: string }) => [x.received_at, x.size]),
      trades.map((e) => [isoMicros(e.receivedUs), e.message.size]),
    );
    assert.equal(s.largest_trades[0].outcome, "Up");
    // Every price change here moves its token's best bid or ask (the fixture's 0.51/0.52 the first time).
    assert.ok(s.top_of_book_changes >= 1);
    assert.ok(s.top_of_book.length <= TOP_CHANGES);
    assert.match((result.content[0] as { text: string }).text, /events \(\d+ price_change/);
  });

  test("an unknown market is a tool error with the service's code", async () => {
    const result = (await client.callTool({
      name: "market_events",
      arguments: { slug: "sol-updown-15m-1", start_time: "0", end_time: "1" },
    })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.match((result.content[0] as { text: string }).text, /RESOURCE_NOT_FOUND/);
  });
});
