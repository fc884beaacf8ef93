import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import type { RateLimiter } from "../../../src/access/limiter/limiter.ts";
import { MemoryLimiter } from "../../../src/access/limiter/memory.ts";
import { loadPlans } from "../../../src/access/plans.ts";
import { isoMicros, parseIsoMicros } from "../../../src/domain/time.ts";
import { makeTestApp, type TestApp } from "../../helpers/app.ts";
import { openRedisLimiter, SKIP_WITHOUT_REDIS } from "../../helpers/redis.ts";

interface Book {
  bids: { price: number; size: number }[];
  asks: { price: number; size: number }[];
}
interface Snap {
  slug?: string;
  time: string;
  coin_price: number;
  price_up: number;
  price_down: number;
  orderbook_up: Book;
  orderbook_down: Book;
}

// The seeded btc 5m series: 00:10, 00:15 (resolved) and 00:20 (live since the anchor, 00:20:34). The
// range starts inside the first and ends after the last snapshot, so the export covers three markets.
const FROM = "2026-07-24T00:12:30Z";
const TO = "2026-07-24T00:21:40.5Z";
const RANGE = `coin=BTC&market_type=5m&start_time=${FROM}&end_time=${TO}`;

let t: TestApp;
let dir: string;
before(async () => {
  t = await makeTestApp();
  dir = mkdtempSync(join(os.tmpdir(), "updown-bulk-"));
});
after(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The same range through the paged API: every overlapping market's snapshots with books, oldest first. */
async function paged(): Promise<Snap[]> {
  const markets = (await t.get("/v1/markets?coin=btc&market_type=5m")).json().markets as { slug: string }[];
  const out: Snap[] = [];
  for (const { slug } of markets.reverse()) {
    const url = `/v1/markets/${slug}/snapshots?order=asc&include_orderbook=true&start_time=${FROM}&end_time=${TO}`;
    const page = (await t.get(url)).json() as { snapshots: Snap[]; total: number };
    assert.ok(page.total < 1000);
    out.push(...page.snapshots.map((s) => ({ slug, ...s })));
  }
  return out;
}

async function duckRows(file: string): Promise<Snap[]> {
  const db = await DuckDBInstance.create(":memory:");
  const c = await db.connect();
  const types = (await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`)).getRowObjectsJson();
  assert.deepEqual(Object.fromEntries(types.map((r) => [r.column_name, r.column_type])), {
    slug: "VARCHAR",
    time: "TIMESTAMP WITH TIME ZONE",
    coin_price: "DOUBLE",
    price_up: "DOUBLE",
    price_down: "DOUBLE",
    orderbook_up:
      "STRUCT(bids STRUCT(price DOUBLE, size DOUBLE)[], asks STRUCT(price DOUBLE, size DOUBLE)[])",
    orderbook_down:
      "STRUCT(bids STRUCT(price DOUBLE, size DOUBLE)[], asks STRUCT(price DOUBLE, size DOUBLE)[])",
  });
  // Doubles as JSON text (exactly as DuckDB holds them), the time as its integer microseconds.
  const reader = await c.runAndReadAll(
    `SELECT slug, epoch_us(time)::VARCHAR AS us, to_json(coin_price) AS coin, to_json(price_up) AS up,
       to_json(price_down) AS down, to_json(orderbook_up) AS bu, to_json(orderbook_down) AS bd
     FROM read_parquet('${file}')`,
  );
  c.closeSync();
  return reader.getRowObjects().map((r) => ({
    slug: String(r.slug),
    time: isoMicros(Number(r.us)),
    coin_price: JSON.parse(String(r.coin)),
    price_up: JSON.parse(String(r.up)),
    price_down: JSON.parse(String(r.down)),
    orderbook_up: JSON.parse(String(r.bu)),
    orderbook_down: JSON.parse(String(r.bd)),
  }));
}

describe("GET /v1/snapshots/export (bulk export of a series)", () => {
  test("its rows equal the paged API's for the same range, in NDJSON, CSV and Parquet", async () => {
    const expected = await paged();
    assert.equal(expected.length, 150 + 300 + 35);
    assert.equal(new Set(expected.map((s) => s.slug)).size, 3);

    const ndjson = await t.get(`/v1/snapshots/export?${RANGE}&include_orderbook=true`);
    assert.equal(ndjson.statusCode, 200);
    assert.equal(ndjson.headers["x-export-markets"], "3");
    const lines = ndjson.body
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(lines.filter((l) => l.type === "market").length, 3);
    const fromNdjson = lines
      .filter((l) => l.type === "snapshot")
      .map((l) => ({ slug: l.slug, ...l.snapshot }));
    assert.deepEqual(fromNdjson, expected);

    const csv = await t.get(`/v1/snapshots/export?${RANGE}&include_orderbook=true&format=csv`);
    assert.equal(csv.headers["content-type"], "text/csv; charset=utf-8");
    const rows = csv.body.trimEnd().split("\n");
    assert.equal(rows[0], "slug,time,coin_price,price_up,price_down,orderbook_up,orderbook_down");
    const fromCsv = rows.slice(1).map((row) => {
      const m = /^([^,]+),([^,]+),([^,]+),([^,]+),([^,]+),"(.*)","(.*)"$/.exec(row);
      assert.ok(m, row);
      const unquote = (s: string) => JSON.parse(s.replaceAll('""', '"'));
      return {
        slug: m[1],
        time: m[2],
        coin_price: Number(m[3]),
        price_up: Number(m[4]),
        price_down: Number(m[5]),
        orderbook_up: unquote(m[6]),
        orderbook_down: unquote(m[7]),
      };
    });
    assert.deepEqual(fromCsv, expected);

    const pq = await t.get(`/v1/snapshots/export?${RANGE}&include_orderbook=true&format=parquet`);
    assert.equal(pq.statusCode, 200);
    assert.equal(pq.headers["content-type"], "application/vnd.apache.parquet");
    assert.equal(pq.headers["content-encoding"], undefined);
    assert.equal(pq.rawPayload.subarray(0, 4).toString(), "PAR1");
    const file = join(dir, "range.parquet");
    writeFileSync(file, pq.rawPayload);
    assert.deepEqual(await duckRows(file), expected);
  });

  test("without books, Parquet has the prices alone; an empty range gives an empty file", async () => {
    const pq = await t.get(`/v1/snapshots/export?${RANGE}&format=parquet`);
    const file = join(dir, "prices.parquet");
    writeFileSync(file, pq.rawPayload);
    const db = await DuckDBInstance.create(":memory:");
    const c = await db.connect();
    const cols = (await c.runAndReadAll(`DESCRIBE SELECT * FROM '${file}'`)).getRowObjectsJson();
    assert.deepEqual(
      cols.map((r) => r.column_name),
      ["slug", "time", "coin_price", "price_up", "price_down"],
    );
    const first = (
      await c.runAndReadAll(`SELECT epoch_us(min(time))::VARCHAR AS t FROM '${file}'`)
    ).getRowObjects();
    assert.equal(isoMicros(Number(first[0].t)), "2026-07-24T00:12:30.000000Z");
    c.closeSync();

    const empty = await t.get(
      "/v1/snapshots/export?coin=sol&market_type=5m&start_time=2020-01-01T00:00:00Z&end_time=2020-01-02T00:00:00Z&format=parquet",
    );
    assert.equal(empty.statusCode, 200);
    assert.equal(empty.headers["x-export-markets"], "0");
    const emptyFile = join(dir, "empty.parquet");
    writeFileSync(emptyFile, empty.rawPayload);
    const c2 = await (await DuckDBInstance.create(":memory:")).connect();
    const n = (await c2.runAndReadAll(`SELECT count(*)::INT AS n FROM '${emptyFile}'`)).getRowObjects();
    assert.equal(n[0].n, 0);
    c2.closeSync();
  });

  test("NDJSON and CSV are compressed when accepted; Parquet never (it is compressed within)", async () => {
    const { brotliDecompressSync } = await import("node:zlib");
    const plain = await t.get(`/v1/snapshots/export?${RANGE}&format=csv`);
    const br = await t.get(`/v1/snapshots/export?${RANGE}&format=csv`, { "accept-encoding": "br" });
    assert.equal(br.headers["content-encoding"], "br");
    assert.equal(brotliDecompressSync(br.rawPayload).toString(), plain.body);
    const pq = await t.get(`/v1/snapshots/export?${RANGE}&format=parquet`, { "accept-encoding": "br" });
    assert.equal(pq.headers["content-encoding"], undefined);
  });

  test("bad parameters are 400s naming them", async () => {
    for (const [query, parameter] of [
      ["market_type=5m", "coin"],
      ["coin=btc", "market_type"],
      ["coin=pepe&market_type=5m", "coin"],
      ["coin=btc&market_type=2m", "market_type"],
      ["coin=btc&market_type=5m&format=xlsx", "format"],
      [`coin=btc&market_type=5m&start_time=${TO}&end_time=${FROM}`, "start_time"],
    ]) {
      const res = await t.get(`/v1/snapshots/export?${query}`);
      assert.equal(res.statusCode, 400, query);
      assert.equal(res.json().error.details.parameter, parameter, query);
    }
  });
});

describe("the cost of a bulk export (DESIGN 3.8)", () => {
  for (const [name, open, skip] of [
    ["memory", async () => new MemoryLimiter(), false],
    ["Redis", () => openRedisLimiter(), SKIP_WITHOUT_REDIS],
  ] as const) {
    test(
      `one request per market covered, counted in the day before the first byte; 429 when the day has less (${name} limiter)`,
      { skip },
      async () => {
        const plans = loadPlans();
        const limiter: RateLimiter = await open();
        const tight = await makeTestApp({
          plans: { ...plans, starter: { ...plans.starter, requestsPerDay: 4 } },
          limiter,
        });
        try {
          const starter = await tight.keyFor("starter");
          const as = { "x-api-key": starter };
          const usedToday = async () => (await tight.get("/v1/account", as)).json().usage.day.used as number;

          // Three markets: this request and two more; 4 - 3 = 1 left.
          const ok = await tight.get(`/v1/snapshots/export?${RANGE}&format=csv`, as);
          assert.equal(ok.statusCode, 200);
          assert.equal(ok.headers["x-ratelimit-remaining"], "1");
          assert.equal(await usedToday(), 3);

          // Three more do not fit in the one left: refused before any byte of the file, nothing more counted
          // than the request itself.
          const refused = await tight.get(`/v1/snapshots/export?${RANGE}&format=parquet`, as);
          assert.equal(refused.statusCode, 429);
          assert.equal(refused.headers["content-type"], "application/json; charset=utf-8");
          const error = refused.json().error;
          assert.equal(error.code, "RATE_LIMIT_EXCEEDED");
          assert.deepEqual(
            [error.details.window, error.details.cost, error.details.remaining],
            ["day", 3, 0],
          );
          assert.match(error.message, /costs 3 requests/);
          assert.ok(Number(refused.headers["retry-after"]) >= 1);
          assert.equal(await usedToday(), 4);

          // The day is now full: any request is refused by the limiter itself.
          const next = await tight.get(`/v1/snapshots/export?coin=eth&market_type=5m&format=csv`, as);
          assert.equal(next.statusCode, 429);
          assert.equal(await usedToday(), 4);
        } finally {
          await tight.close();
          await limiter.close();
        }
      },
    );
  }

  test("the markets a plan does not open are left out and not charged", async () => {
    const plans = loadPlans();
    const strict = await makeTestApp({
      plans: {
        ...plans,
        starter: {
          ...plans.starter,
          history: { ...plans.starter.history, btc: { "5m": 1, "15m": 1, "1h": 1, "4h": 1, "24h": 1 } },
        },
      },
    });
    try {
      const starter = await strict.keyFor("starter");
      const res = await strict.get("/v1/snapshots/export?coin=btc&market_type=5m", { "x-api-key": starter });
      assert.equal(res.headers["x-export-markets"], "1");
      const slugs = res.body
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l))
        .filter((l) => l.type === "market")
        .map((l) => l.market.slug);
      assert.deepEqual(slugs, ["btc-updown-5m-1784852400"]);
      assert.ok(parseIsoMicros("2026-07-24T00:20:00Z"));
    } finally {
      await strict.close();
    }
  });
});
