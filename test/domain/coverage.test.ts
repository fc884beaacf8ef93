import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { computeCoverage } from "../../src/domain/coverage.ts";
import { liveMarketStart, nextMarketStart, upcomingMarkets } from "../../src/domain/series.ts";

const sec = (iso: string) => Date.parse(iso) / 1000;

describe("series: when markets open upstream", () => {
  test("5m, 15m, 1h and 4h markets open on UTC multiples of their length", () => {
    const t = sec("2026-07-24T00:20:34Z");
    assert.equal(liveMarketStart("5m", t), sec("2026-07-24T00:20:00Z"));
    assert.equal(liveMarketStart("15m", t), sec("2026-07-24T00:15:00Z"));
    assert.equal(liveMarketStart("1h", t), sec("2026-07-24T00:00:00Z"));
    assert.equal(liveMarketStart("4h", sec("2026-07-24T07:59:59Z")), sec("2026-07-24T04:00:00Z"));
  });

  test("daily markets run noon to noon US Eastern, 16:00 UTC in summer and 17:00 UTC in winter", () => {
    assert.equal(liveMarketStart("24h", sec("2026-07-24T15:59:59Z")), sec("2026-07-23T16:00:00Z"));
    assert.equal(liveMarketStart("24h", sec("2026-07-24T16:00:00Z")), sec("2026-07-24T16:00:00Z"));
    assert.equal(liveMarketStart("24h", sec("2026-11-21T16:30:00Z")), sec("2026-11-20T17:00:00Z"));
    assert.equal(liveMarketStart("24h", sec("2026-11-21T17:00:00Z")), sec("2026-11-21T17:00:00Z"));
    // Across the end of daylight saving time (1 November 2026) the market lasts 25 hours.
    assert.equal(nextMarketStart("24h", sec("2026-10-31T16:00:00Z")), sec("2026-11-01T17:00:00Z"));
  });

  test("the live market and the next ones, with the slug Gamma knows each by", () => {
    const [live, next] = upcomingMarkets("eth", "1h", sec("2026-07-24T07:30:00Z"), 1);
    assert.equal(live.slug, `eth-updown-1h-${sec("2026-07-24T07:00:00Z")}`);
    assert.equal(live.upstreamSlug, "ethereum-up-or-down-july-24-2026-3am-et");
    assert.equal(next.startTime, live.endTime);
    const [five] = upcomingMarkets("btc", "5m", sec("2026-07-24T00:20:34Z"), 0);
    assert.equal(five.upstreamSlug, five.slug);
  });
});

describe("coverage", () => {
  const base = { startTime: 1000, endTime: 1300, cadence: 1e6, gaps: [] };

  test("a market recorded every second has no gaps", () => {
    const c = computeCoverage({
      ...base,
      now: 2e9,
      recorded: 300,
      first: 1000.2e6,
      last: 1299.2e6,
      holes: [],
    });
    assert.deepEqual(c, {
      until: 1300e6,
      expected: 300,
      recorded: 300,
      missing: 0,
      largestGap: 0,
      holes: [],
    });
  });

  test("missing seconds at the start, inside and at the end, each with the overlapping cause", () => {
    const c = computeCoverage({
      ...base,
      now: 2e9,
      recorded: 290,
      first: 1003.2e6,
      last: 1296.2e6,
      holes: [{ after: 1100.2e6, before: 1104.2e6 }],
      gaps: [{ from: 1101.2e6, to: 1103.2e6, cause: "upstream_silent", detail: "quiet" }],
    });
    assert.deepEqual(
      c.holes.map((h) => [h.from, h.to, h.missing, h.cause]),
      [
        [1000e6, 1003.2e6, 3, "unknown"],
        [1100.2e6, 1104.2e6, 3, "upstream_silent"],
        [1296.2e6, 1300e6, 3, "unknown"],
      ],
    );
    assert.equal(c.missing, 9);
    assert.equal(c.largestGap, 4e6);
  });

  test("a live market is judged up to now; a market not yet open expects nothing", () => {
    const live = computeCoverage({
      ...base,
      now: 1100.5e6,
      recorded: 100,
      first: 1000.2e6,
      last: 1099.2e6,
      holes: [],
    });
    assert.equal(live.expected, 100);
    assert.deepEqual(live.holes, []);
    // Its second in progress recorded already: expected with it, not 101 of 100.
    const current = computeCoverage({
      ...base,
      now: 1100.5e6,
      recorded: 101,
      first: 1000.2e6,
      last: 1100.2e6,
      holes: [],
    });
    assert.deepEqual([current.expected, current.recorded, current.missing], [101, 101, 0]);
    const unopened = computeCoverage({
      ...base,
      now: 900e6,
      recorded: 0,
      first: null,
      last: null,
      holes: [],
    });
    assert.equal(unopened.expected, 0);
    assert.deepEqual(unopened.holes, []);
    const never = computeCoverage({ ...base, now: 2e9, recorded: 0, first: null, last: null, holes: [] });
    assert.deepEqual(
      never.holes.map((h) => [h.missing, h.cause]),
      [[300, "unknown"]],
    );
  });
});
