import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { parseIsoMicros } from "../../../src/domain/time.ts";
import { seedDemo } from "../../../src/demo/seed.ts";
import { ANCHOR, makeTestApp, type TestApp } from "../../helpers/app.ts";

interface Snap {
  time: string;
  coin_price: number;
  price_up: number;
  price_down: number;
}

const HOUR = "btc-updown-1h-1784847600"; // resolved, 3600 snapshots
const FIVE = "btc-updown-5m-1784851800"; // resolved, 300 snapshots

let t: TestApp;
before(async () => {
  t = await makeTestApp({ seed: false });
  await seedDemo(t.store, {
    seed: 7,
    anchor: ANCHOR,
    counts: { "5m": 3, "15m": 0, "1h": 2, "4h": 0, "24h": 0 },
    coins: ["btc"],
  });
});
after(async () => {
  await t.close();
});

/** Every snapshot of a market through the paged API, oldest first. */
async function allSnapshots(slug: string): Promise<Snap[]> {
  const out: Snap[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = (await t.get(`/v1/markets/${slug}/snapshots?order=asc&offset=${offset}`)).json() as {
      snapshots: Snap[];
      total: number;
    };
    out.push(...page.snapshots);
    if (offset + 1000 >= page.total) return out;
  }
}

const us = (s: Snap) => parseIsoMicros(s.time) as number;
const SERIES: (keyof Snap)[] = ["price_up", "price_down", "coin_price"];

describe("GET /v1/markets/{slug}/series", () => {
  test("keeps the first and last snapshot and every bucket's extremes of Up, Down and coin price", async () => {
    const all = await allSnapshots(HOUR);
    assert.equal(all.length, 3600);
    for (const points of [8, 100, 1000]) {
      const res = await t.get(`/v1/markets/${HOUR}/series?points=${points}`);
      assert.equal(res.statusCode, 200);
      const body = res.json() as { points: number; total: number; bucket_us: number; snapshots: Snap[] };
      assert.equal(body.total, 3600);
      assert.ok(body.snapshots.length <= points, `${body.snapshots.length} <= ${points}`);
      assert.deepEqual(body.snapshots[0], all[0]);
      assert.deepEqual(body.snapshots.at(-1), all.at(-1));
      // Every kept row is a recorded snapshot, as the pages give it, in time order.
      const byTime = new Map(all.map((s) => [s.time, s]));
      for (const s of body.snapshots) assert.deepEqual(s, byTime.get(s.time));
      const first = us(all[0]);
      const bucketOf = (s: Snap) => Math.floor((us(s) - first) / body.bucket_us);
      const buckets = new Map<number, Snap[]>();
      for (const s of all) buckets.set(bucketOf(s), [...(buckets.get(bucketOf(s)) ?? []), s]);
      for (const [bucket, rows] of buckets) {
        const kept = body.snapshots.filter((s) => bucketOf(s) === bucket);
        assert.deepEqual(kept[0], rows[0], `bucket ${bucket} keeps its first`);
        assert.deepEqual(kept.at(-1), rows.at(-1), `bucket ${bucket} keeps its last`);
        for (const field of SERIES) {
          const values = rows.map((r) => r[field] as number);
          const keptValues = kept.map((r) => r[field] as number);
          assert.equal(Math.min(...keptValues), Math.min(...values), `${field} min of bucket ${bucket}`);
          assert.equal(Math.max(...keptValues), Math.max(...values), `${field} max of bucket ${bucket}`);
        }
      }
    }
  });

  test("with no more snapshots than points, all of them; a time range narrows it", async () => {
    const all = await allSnapshots(FIVE);
    const res = (await t.get(`/v1/markets/${FIVE}/series?points=300`)).json() as {
      bucket_us: number | null;
      snapshots: Snap[];
    };
    assert.equal(res.bucket_us, null);
    assert.deepEqual(res.snapshots, all);
    const ranged = (
      await t.get(`/v1/markets/${FIVE}/series?start_time=${all[10].time}&end_time=${all[19].time}`)
    ).json() as { total: number; snapshots: Snap[] };
    assert.equal(ranged.total, 10);
    assert.deepEqual(ranged.snapshots, all.slice(10, 20));
  });

  test("a resolved market's series has an ETag and answers If-None-Match with 304", async () => {
    const a = await t.get(`/v1/markets/${HOUR}/series?points=200`);
    const etag = String(a.headers.etag);
    assert.match(etag, /^"/);
    const b = await t.get(`/v1/markets/${HOUR}/series?points=200`, { "if-none-match": etag });
    assert.equal(b.statusCode, 304);
    const c = await t.get(`/v1/markets/${HOUR}/series?points=200`);
    assert.equal(c.body, a.body);
  });

  test("points below 8 or above 20000 is a 400; an unknown market a 404", async () => {
    for (const points of ["7", "20001", "x"]) {
      const res = await t.get(`/v1/markets/${HOUR}/series?points=${points}`);
      assert.equal(res.statusCode, 400, points);
      assert.equal(res.json().error.details.parameter, "points");
    }
    assert.equal((await t.get("/v1/markets/btc-updown-5m-1/series")).statusCode, 404);
  });
});
