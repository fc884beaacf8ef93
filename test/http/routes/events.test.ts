import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { after, before, describe, test } from "node:test";
import { loadPlans } from "../../../src/access/plans.ts";
import type { MarketEvent } from "../../../src/domain/event.ts";
import { isoMicros } from "../../../src/domain/time.ts";
import { HAND_MARKET, makeTestApp, type TestApp } from "../../helpers/app.ts";
import { marketEvents, recordMarket } from "../../helpers/recorded-events.ts";

const SLUG = HAND_MARKET.slug;
const EVENTS = marketEvents(HAND_MARKET);
const url = (query = "") => `/v1/markets/${SLUG}/events${query ? `?${query}` : ""}`;

/** An event as served: the upstream's object, received_at after its fields. */
const served = (e: MarketEvent) => ({ ...e.message, received_at: isoMicros(e.receivedUs) });

let t: TestApp;
before(async () => {
  const plans = loadPlans();
  // A starter plan that opens no SOL 15m market: the plan window of every market route.
  plans.starter = {
    ...plans.starter,
    history: { ...plans.starter.history, sol: { "5m": 0, "15m": 0, "1h": 0, "4h": 0, "24h": 0 } },
  };
  t = await makeTestApp({ seed: false, plans });
  await recordMarket(t.store, HAND_MARKET, EVENTS);
});
after(() => t.close());

describe("GET /v1/markets/{slug}/events", () => {
  test("pages every event in receive order (asc) or its reverse (desc, the default), each as the upstream sent it", async () => {
    const asc = await t.get(url("order=asc"));
    assert.equal(asc.statusCode, 200);
    const page = asc.json();
    assert.deepEqual(page, {
      slug: SLUG,
      events: EVENTS.map(served),
      total: EVENTS.length,
      limit: 1000,
      offset: 0,
    });
    // Decimals stay strings, byte for byte.
    assert.match(asc.body, /"price":"0\.01","size":"3149725\.72"/);
    assert.match(asc.body, /"received_at":"2026-07-23T23:59:55\.001234Z"/);

    const desc = (await t.get(url())).json();
    assert.deepEqual(desc.events, EVENTS.map(served).reverse());

    const second = (await t.get(url("order=asc&limit=5&offset=5"))).json();
    assert.deepEqual(second.events, EVENTS.slice(5, 10).map(served));
    assert.equal(second.total, EVENTS.length);
    const beyond = (await t.get(url(`offset=${EVENTS.length}`))).json();
    assert.deepEqual(beyond.events, []);
  });

  test("start_time and end_time bound the upstream timestamp (ISO or epoch ms); types filter", async () => {
    const ts = (e: MarketEvent) => e.timestampMs;
    const from = ts(EVENTS[3]);
    const to = ts(EVENTS[8]);
    const ranged = (
      await t.get(url(`order=asc&start_time=${from}&end_time=${new Date(to).toISOString()}`))
    ).json();
    const expected = EVENTS.filter((e) => ts(e) >= from && ts(e) <= to);
    assert.equal(ranged.total, expected.length);
    assert.deepEqual(ranged.events, expected.map(served));

    const trades = (await t.get(url("order=asc&types=last_trade_price,book"))).json();
    const wanted = EVENTS.filter((e) => e.type === "last_trade_price" || e.type === "book");
    assert.equal(trades.total, wanted.length);
    assert.deepEqual(trades.events, wanted.map(served));
  });

  test("every parameter's rule is a 400 naming it", async () => {
    const cases: [string, string][] = [
      ["types=book,trade", "types"],
      ["types=", "types"],
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["offset=-1", "offset"],
      ["order=up", "order"],
      ["format=csv", "format"],
      ["start_time=yesterday", "start_time"],
      ["end_time=2026-13-01", "end_time"],
      ["start_time=2026-07-24T01:00:00Z&end_time=2026-07-24T00:00:00Z", "start_time"],
    ];
    for (const [query, parameter] of cases) {
      const res = await t.get(url(query));
      assert.equal(res.statusCode, 400, query);
      assert.equal(res.json().error.code, "VALIDATION_ERROR", query);
      assert.equal(res.json().error.details.parameter, parameter, query);
    }
    assert.equal((await t.get("/v1/markets/sol-updown-15m-1/events")).statusCode, 404);
  });

  test("format=ndjson streams every event of the range, one a line, compressed when asked", async () => {
    const res = await t.get(url("format=ndjson&types=price_change"));
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers["content-type"]), /^application\/x-ndjson/);
    const lines = res.body
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as unknown);
    assert.deepEqual(lines, EVENTS.filter((e) => e.type === "price_change").map(served));

    const gz = await t.app.inject({
      method: "GET",
      url: url("format=ndjson"),
      headers: { "x-api-key": t.key, "accept-encoding": "gzip" },
    });
    assert.equal(gz.headers["content-encoding"], "gzip");
    const all = gunzipSync(gz.rawPayload).toString("utf8").trimEnd().split("\n");
    assert.deepEqual(
      all.map((l) => JSON.parse(l) as unknown),
      EVENTS.map(served),
    );
  });

  test("counts one request like a snapshot page, and the plan's window applies (403)", async () => {
    const first = await t.get(url("limit=1"));
    const second = await t.get(url("format=ndjson"));
    const left = (r: typeof first) => Number(r.headers["x-ratelimit-remaining"]);
    assert.equal(left(first) - left(second), 1);

    const starter = await t.keyFor("starter");
    const refused = await t.get(url(), { "x-api-key": starter });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().error.code, "TIER_ACCESS_DENIED");
  });
});
