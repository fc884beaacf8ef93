import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { isoMicros, readUserTime, USER_TIME_RANGE } from "../../src/domain/time.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

/**
 * Numbers and times an attacker tries first. Each was a 500 (or a 200 with `"offset":Infinity` in its
 * body) before the query's numbers were read as written; each is now a 400 naming the parameter, on
 * every route family that takes it.
 */

const RESOLVED = "btc-updown-5m-1784851800";

/** Routes by the parameters they take: the market list, snapshots, exports and the exchange pages. */
const PAGED = [
  "/v1/markets",
  `/v1/markets/${RESOLVED}/snapshots`,
  "/v1/btc/spot/snapshots",
  "/v1/eth/futures/candles",
  "/v1/sol/futures/funding-rates",
];
const LIMITED = [...PAGED, "/v1/btc/spot/trades/latest"];
const TIMED = [...PAGED, `/v1/markets/${RESOLVED}/snapshots/export`];

/** Texts that are not an integer as a user writes one, or not one a double holds. */
const BAD_INTEGERS = [
  "1e309",
  "Infinity",
  "-Infinity",
  "NaN",
  "-0",
  "1e21",
  "9".repeat(400),
  "0x10",
  "0b1",
  "1e3",
  " 5",
  "5 ",
  "+5",
  "1.5",
  "",
  "٣", // an Arabic-Indic digit
];

/** Texts that are not a time, or a time outside what the service holds. */
const BAD_TIMES = [
  "1e309",
  "Infinity",
  "9".repeat(400),
  "99999999999999999",
  "9007199254741", // epoch ms one past 2^53 - 1 µs
  "0001-01-01T00:00:00Z",
  "1969-12-31T23:59:59Z",
  "2255-06-05T23:47:34.740992Z",
  "9999-12-31T23:59:59Z",
  "-1",
  "0x10",
  "2026-02-30T00:00:00Z",
  "",
];

let t: TestApp;
let key: string;

before(async () => {
  t = await makeTestApp({ exchange: true });
  // Enterprise: no limit, so that the hundreds of requests below are never refused for volume.
  key = await t.keyFor("enterprise");
});
after(() => t.close());

async function expectNamed(url: string, parameter: string): Promise<void> {
  const res = await t.get(url, { "x-api-key": key });
  assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
  const body = res.json();
  assert.equal(body.error.code, "VALIDATION_ERROR", url);
  assert.equal(body.error.details.parameter, parameter, url);
  assert.match(body.error.message, new RegExp(`^${parameter} `), url);
}

const query = (name: string, value: string) => `${name}=${encodeURIComponent(value)}`;

describe("numbers in limit and offset", () => {
  test("every bad integer is a 400 naming limit, on every route that takes one", async () => {
    for (const path of LIMITED)
      for (const text of BAD_INTEGERS) await expectNamed(`${path}?${query("limit", text)}`, "limit");
  });

  test("every bad integer is a 400 naming offset, on every paged route", async () => {
    for (const path of PAGED)
      for (const text of BAD_INTEGERS) await expectNamed(`${path}?${query("offset", text)}`, "offset");
  });

  test("too many digits is out of range, with the bound the schema states", async () => {
    const res = await t.get(`/v1/markets?limit=${"9".repeat(400)}`, { "x-api-key": key });
    assert.equal(res.json().error.message, "limit must be <= 100");
    assert.equal(res.json().error.details.rule, "maximum");
    const negative = await t.get(`/v1/btc/spot/snapshots?offset=-${"9".repeat(30)}`, { "x-api-key": key });
    assert.equal(negative.json().error.message, "offset must be >= 0");
  });

  test("the largest offset a double holds is a page past the end, not an error", async () => {
    for (const path of PAGED) {
      const res = await t.get(`${path}?offset=${Number.MAX_SAFE_INTEGER}`, { "x-api-key": key });
      assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
      assert.equal(res.json().offset, Number.MAX_SAFE_INTEGER);
    }
    const beyond = await t.get(`/v1/markets?offset=${Number.MAX_SAFE_INTEGER + 1}`, { "x-api-key": key });
    assert.equal(beyond.statusCode, 400);
    assert.equal(beyond.json().error.details.parameter, "offset");
  });

  test("a repeated parameter is a 400 naming it", async () => {
    await expectNamed("/v1/markets?limit=1&limit=2", "limit");
    await expectNamed(`/v1/markets/${RESOLVED}/snapshots?offset=0&offset=0`, "offset");
  });
});

describe("times far outside the representable range", () => {
  test("start_time and end_time: every bad time is a 400 naming it, on every route that takes them", async () => {
    for (const path of TIMED) {
      for (const text of BAD_TIMES) {
        await expectNamed(`${path}?${query("start_time", text)}`, "start_time");
        await expectNamed(`${path}?${query("end_time", text)}`, "end_time");
      }
    }
  });

  test("/snapshots/at: every bad time is a 400 naming time", async () => {
    for (const text of BAD_TIMES)
      await expectNamed(`/v1/markets/${RESOLVED}/snapshots/at?${query("time", text)}`, "time");
  });

  test("the range's message states both ends", async () => {
    const res = await t.get(`/v1/markets/${RESOLVED}/snapshots/at?time=99999999999999999`, {
      "x-api-key": key,
    });
    assert.equal(
      res.json().error.message,
      "time must be between 1970-01-01T00:00:00Z and 2255-06-05T23:47:34.740991Z",
    );
    assert.equal(res.json().error.details.rule, "range");
  });

  test("both ends of the range are served", async () => {
    const at = (time: string) =>
      t.get(`/v1/markets/${RESOLVED}/snapshots/at?time=${encodeURIComponent(time)}`, { "x-api-key": key });
    const last = await at(isoMicros(USER_TIME_RANGE.max));
    assert.equal(last.statusCode, 200);
    assert.equal(last.json().requested_time, "2255-06-05T23:47:34.740991Z");
    // Nothing was recorded in 1970: the first instant is a valid question with no snapshot.
    assert.equal((await at("0")).statusCode, 404);
    assert.equal((await at("1970-01-01T00:00:00Z")).statusCode, 404);
  });
});

describe("reading a user's time", () => {
  test("epoch milliseconds and ISO 8601, inside the range", () => {
    assert.deepEqual(readUserTime("1784851200000"), { micros: 1784851200_000000 });
    assert.deepEqual(readUserTime("9007199254740"), { micros: 9007199254740_000 });
    assert.deepEqual(readUserTime("0050-01-01T00:00:00Z"), { problem: "range" });
    assert.deepEqual(readUserTime("9".repeat(400)), { problem: "range" });
    assert.deepEqual(readUserTime("Infinity"), { problem: "format" });
    assert.deepEqual(readUserTime("1e3"), { problem: "format" });
  });
});
