import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import type { MarketEvent } from "../../src/domain/event.ts";
import {
  decodeCoinUpdates,
  decodeEventBlockIndex,
  decodeMarketEvents,
  encodeCoinUpdates,
  encodeMarketEvents,
} from "../../src/wire/event-block.ts";

const FORMS = ["tail", "sealed"] as const;

/** Keys that spell paths alike ("a.b" and {a: {b}}), or look like the codec's own suffixes. */
const key = fc.oneof(
  fc.constantFrom("a", "b", "a.b", "[]", "a[]", ":k", "__proto__", "", "price", "size"),
  fc.string({ maxLength: 4 }),
);

/** Any JSON value, with the values a codec gets wrong most easily mixed in. */
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(
      null,
      true,
      false,
      0,
      -0,
      NaN,
      Infinity,
      -Infinity,
      2 ** 53,
      -(2 ** 50),
      2 ** 50 - 1,
      1e-300,
    ),
    fc.double(),
    fc.integer(),
    fc.constantFrom(
      "0",
      "0.0",
      "0.510",
      "150.0",
      "007",
      "1e5",
      "-0.5",
      ".5",
      "5.",
      "123456789012345",
      "1234567890123456",
    ),
    fc.stringMatching(/^(0|[1-9]\d{0,17})(\.\d{1,18})?$/),
    fc.stringMatching(/^(0x)?([0-9a-fA-F]{2}){0,24}$/),
    fc.string({ unit: "binary", maxLength: 12 }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 4 }),
  ),
})).value;

/** As JSON.parse makes them: ordinary objects (fast-check makes some without a prototype). */
const message = fc.dictionary(key, value, { maxKeys: 6 }).map((m) => structuredClone(m));

test("any JSON message, and -0, NaN and the infinities, decode as they were encoded", () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ dUs: fc.nat({ max: 1e9 }), dTs: fc.integer({ min: -1e6, max: 1e6 }), message }), {
        maxLength: 30,
      }),
      (specs) => {
        let us = 1_786_604_000_000_000;
        const events: MarketEvent[] = specs.map(({ dUs, dTs, message: m }, i) => {
          us += dUs;
          return {
            receivedUs: us,
            timestampMs: Math.floor(us / 1000) + dTs,
            type: i % 3 === 0 ? "book" : "price_change",
            message: m,
          };
        });
        for (const form of FORMS) {
          const back = decodeMarketEvents(encodeMarketEvents(events, form));
          assert.deepStrictEqual(back, events);
          // Key order too.
          assert.deepStrictEqual(
            back.map((e) => JSON.stringify(e.message)),
            events.map((e) => JSON.stringify(e.message)),
          );
          assert.deepStrictEqual(decodeEventBlockIndex(encodeMarketEvents(events, form)), {
            receivedUs: events.map((e) => e.receivedUs),
            timestampMs: events.map((e) => e.timestampMs),
            types: events.map((e) => e.type),
          });
        }
      },
    ),
    { numRuns: 300, seed: 22 },
  );
});

test("a block's index gives the times and types without the messages", () => {
  const events: MarketEvent[] = [
    { receivedUs: 5_000_123, timestampMs: 4_990, type: "book", message: { a: "1" } },
    { receivedUs: 5_000_123, timestampMs: 5_001, type: "last_trade_price", message: { a: "2" } },
    { receivedUs: 7_999_999, timestampMs: 7_999, type: "book", message: {} },
  ];
  assert.deepEqual(decodeEventBlockIndex(encodeMarketEvents(events, "sealed")), {
    receivedUs: [5_000_123, 5_000_123, 7_999_999],
    timestampMs: [4_990, 5_001, 7_999],
    types: ["book", "last_trade_price", "book"],
  });
});

test("a message's own timestamp, as text or number, comes back as it was", () => {
  const events: MarketEvent[] = [0, 1_786_604_072_222].flatMap((ts) =>
    [String(ts), ts, -0, `${ts}.0`, `0${ts}`, ts + 1].map((timestamp) => ({
      receivedUs: 1_786_604_072_222_000,
      timestampMs: ts,
      type: "book" as const,
      message: { timestamp, nested: [timestamp] },
    })),
  );
  for (const form of FORMS)
    assert.deepStrictEqual(decodeMarketEvents(encodeMarketEvents(events, form)), events);
});

test("coin updates keep their message whole", () => {
  const updates = [
    {
      receivedUs: 1_786_179_814_147_400,
      timestampMs: 1_786_179_814_147,
      message: {
        connection_id: "11111111-2222-3333-4444-555555555555",
        payload: {
          full_accuracy_value: "64997.81000000",
          symbol: "btcusdt",
          timestamp: 1786179814000,
          value: 64997.81,
        },
        timestamp: 1786179814147,
        topic: "crypto_prices",
        type: "update",
      },
    },
  ];
  for (const form of FORMS)
    assert.deepStrictEqual(decodeCoinUpdates(encodeCoinUpdates(updates, form)), updates);
});

test("values JSON does not have are refused, not stored as something else", () => {
  for (const [bad, form] of FORMS.flatMap((f) =>
    [undefined, 1n, new Date(0), () => 1].map((b) => [b, f] as const),
  )) {
    assert.throws(
      () => encodeMarketEvents([{ receivedUs: 1, timestampMs: 1, type: "book", message: { bad } }], form),
      TypeError,
    );
  }
});
