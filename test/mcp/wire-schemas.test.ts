import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";
import * as z from "zod";
import { component, fieldsOf, inlined } from "../../src/mcp/wire-schemas.ts";

const DOCUMENT = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../openapi.json"), "utf8")) as {
  components: { schemas: Record<string, unknown> };
};

const MARKET = {
  slug: "btc-updown-5m-1784851200",
  winner: "Up",
  market_id: "1",
  event_id: "2",
  market_type: "5m",
  start_time: "2026-07-24T00:00:00Z",
  end_time: "2026-07-24T00:05:00Z",
  coin_price_start: 118000.5,
  coin_price_end: 118010,
  condition_id: "0xc",
  clob_token_up: "11",
  clob_token_down: "12",
  final_volume: null,
  final_liquidity: null,
  resolved_at: "2026-07-24T00:05:02Z",
  created_at: "2026-07-24T00:00:00.123456Z",
  updated_at: "2026-07-24T00:05:02.654321Z",
  coin: "btc",
  polymarket_slug: "btc-updown-5m-1784851200",
  settlement: { source: "chainlink", lookback_s: null },
  fee_schedule: null,
};

test("a component's references are put in place: nothing of the document is left to resolve", () => {
  const market = JSON.stringify(inlined(DOCUMENT.components.schemas.Market));
  assert.ok(!market.includes("$ref"));
  assert.match(market, /"enum":\["Up","Down","50-50"\]/, "the Winner component, inlined");
});

test("the converted component accepts the API's answer and refuses what the document refuses", () => {
  const market = component("Market");
  assert.deepEqual(market.parse(MARKET), MARKET);
  for (const broken of [
    { ...MARKET, winner: "Sideways" },
    { ...MARKET, market_type: "2m" },
    { ...MARKET, start_time: "yesterday" },
    { ...MARKET, settlement: { source: "chainlink" } },
    { ...MARKET, extra: 1 },
  ]) {
    assert.equal(market.safeParse(broken).success, false, JSON.stringify(broken));
  }
});

test("picked fields are the component's, and only its required ones may be picked", () => {
  const row = z.object(fieldsOf("Market", ["slug", "winner", "coin_price_start"]));
  assert.deepEqual(row.parse({ slug: "s", winner: null, coin_price_start: 1 }), {
    slug: "s",
    winner: null,
    coin_price_start: 1,
  });
  assert.equal(row.safeParse({ slug: "s", winner: "up", coin_price_start: 1 }).success, false);
  const json = z.toJSONSchema(row) as { properties: Record<string, unknown> };
  assert.deepEqual(json.properties.coin_price_start, { type: ["number", "null"] });
  assert.throws(
    () => fieldsOf("Snapshot", ["orderbook_up"]),
    /Snapshot\.orderbook_up is not a required field/,
  );
});
