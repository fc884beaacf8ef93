import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { parseIsoMicros } from "../../../src/domain/time.ts";
import { makeTestApp, type TestApp } from "../../helpers/app.ts";

// A run's files and runs side by side (issue 25, docs/backtests.md "Exports"): each file's rows are
// the API's own trades and results, byte for byte where the format fixes them.

/* eslint-disable @typescript-eslint/no-explicit-any -- the API's JSON, read field by field */
type Json = any;

const TRADE_HEADER =
  "slug,entry_decision_time,entry_fill_time,entry_last_fill_time,order_type,limit_price,entry_price," +
  "entry_size,entry_unfilled,shares_received,cost,entry_fee_usdc,maker_size,rebate_usdc," +
  "entry_mid_at_decision,entry_slippage_bps,exit_reason,exit_decision_time,exit_fill_time,exit_price," +
  "exit_size,exit_unsold,exit_proceeds,exit_fee_usdc,exit_slippage_bps,settlement_shares," +
  "settlement_payout_per_share,settlement_proceeds,closed_at,held_s,pnl,roi";

/** A trade of the API as the documented CSV row: absent values empty, numbers as JSON writes them. */
function tradeRow(slug: string, t: Json): string {
  const e = t.entry;
  const x = t.exit ?? {};
  const s = t.settlement ?? {};
  const cells = [
    slug,
    e.decision_time,
    e.fill_time,
    e.last_fill_time,
    e.order_type,
    e.limit_price,
    e.price,
    e.size,
    e.unfilled,
    e.shares_received,
    e.cost,
    e.fee_usdc,
    e.maker_size,
    e.rebate_usdc,
    e.mid_at_decision,
    e.slippage_bps,
    t.exit_reason,
    x.decision_time,
    x.fill_time,
    x.price,
    x.size,
    x.unsold,
    x.proceeds,
    x.fee_usdc,
    x.slippage_bps,
    s.shares,
    s.payout_per_share,
    s.proceeds,
    t.closed_at,
    t.held_s,
    t.pnl,
    t.roi,
  ];
  return cells.map((c) => (c === null || c === undefined ? "" : String(c))).join(",");
}

describe("a run's files", () => {
  let t: TestApp;
  let run: Json;
  /** Every trade of the run as the API pages them: [slug, trade]. */
  let trades: [string, Json][];
  let dir: string;

  before(async () => {
    t = await makeTestApp();
    dir = mkdtempSync(join(tmpdir(), "updown-run-files-"));
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/backtest-ai/run",
      payload: {
        coin: "btc",
        market_type: "5m",
        market_count: 2,
        definition: {
          side: "UP",
          entry: [{ feature: "price_up", op: "<", value: 0.6 }],
          exit: { take_profit_pct: 10, conditions: [] },
          max_entries_per_market: 3,
        },
        wait: 60,
      },
      headers: { "x-api-key": t.key },
    });
    assert.equal(res.statusCode, 200, res.body);
    run = res.json();
    trades = [];
    for (const r of run.results) {
      const page = (await t.get(`/v1/backtest-ai/runs/${run.run.id}/markets/${r.slug}/trades`)).json();
      for (const trade of page.trades) trades.push([r.slug, trade]);
    }
    assert.ok(trades.length >= 2, "the run traded");
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  const file = (what: string, format: string) =>
    t.get(`/v1/backtest-ai/runs/${run.run.id}/${what}?format=${format}`);

  test("trades as CSV: the documented header, then one row a trade equal to the API's trades", async () => {
    const res = await file("trades", "csv");
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "text/csv; charset=utf-8");
    assert.equal(res.headers["content-disposition"], `attachment; filename="run-${run.run.id}-trades.csv"`);
    const expected = [TRADE_HEADER, ...trades.map(([slug, tr]) => tradeRow(slug, tr))].join("\n");
    assert.equal(res.body, `${expected}\n`);
    // CSV is the default format.
    assert.equal((await t.get(`/v1/backtest-ai/runs/${run.run.id}/trades`)).body, res.body);
  });

  test("trades as NDJSON: each line the API's trade with its slug first", async () => {
    const res = await file("trades", "ndjson");
    assert.equal(res.headers["content-type"], "application/x-ndjson; charset=utf-8");
    const expected = trades.map(([slug, tr]) => `${JSON.stringify({ slug, ...tr })}\n`).join("");
    assert.equal(res.body, expected);
  });

  test("trades as Parquet, read back by DuckDB: typed columns and the API's values", async () => {
    const res = await file("trades", "parquet");
    assert.equal(res.headers["content-type"], "application/vnd.apache.parquet");
    const path = join(dir, "trades.parquet");
    writeFileSync(path, res.rawPayload);
    const db = await DuckDBInstance.create(":memory:");
    const c = await db.connect();
    const types = (
      await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path}')`)
    ).getRowObjectsJson();
    const typeOf = Object.fromEntries(types.map((r) => [r.column_name, r.column_type]));
    assert.equal(Object.keys(typeOf).join(","), TRADE_HEADER);
    assert.deepEqual(
      [typeOf.slug, typeOf.entry_fill_time, typeOf.exit_price, typeOf.pnl],
      ["VARCHAR", "TIMESTAMP WITH TIME ZONE", "DOUBLE", "DOUBLE"],
    );
    const rows = (
      await c.runAndReadAll(
        `SELECT slug, epoch_us(entry_fill_time)::VARCHAR AS fill, to_json(exit_price) AS exit_price,
           to_json(pnl) AS pnl, exit_reason FROM read_parquet('${path}')`,
      )
    ).getRowObjects();
    c.closeSync();
    assert.deepEqual(
      rows.map((r) => [
        String(r.slug),
        Number(r.fill),
        JSON.parse(String(r.exit_price)),
        JSON.parse(String(r.pnl)),
        String(r.exit_reason),
      ]),
      trades.map(([slug, tr]) => [
        slug,
        parseIsoMicros(tr.entry.fill_time),
        tr.exit?.price ?? null,
        tr.pnl,
        tr.exit_reason,
      ]),
    );
  });

  test("per-market results as CSV and NDJSON: the run answer's results", async () => {
    const csv = await file("results", "csv");
    assert.equal(csv.headers["content-disposition"], `attachment; filename="run-${run.run.id}-results.csv"`);
    const header =
      "slug,start_time,end_time,winner,snapshots,trades,orders_unfilled,pnl,cost,roi,fees_usdc,rebates_usdc,time_in_market_s";
    const rows = run.results.map((r: Json) =>
      [
        r.slug,
        r.start_time,
        r.end_time,
        r.winner,
        r.snapshots,
        r.trades.length,
        r.orders_unfilled,
        r.pnl,
        r.cost,
        r.roi ?? "",
        r.fees_usdc,
        r.rebates_usdc,
        r.time_in_market_s,
      ].join(","),
    );
    assert.equal(csv.body, `${[header, ...rows].join("\n")}\n`);
    const ndjson = await file("results", "ndjson");
    assert.equal(ndjson.body, run.results.map((r: Json) => `${JSON.stringify(r)}\n`).join(""));
    const parquet = await file("results", "parquet");
    assert.equal(parquet.statusCode, 200);
    assert.equal(parquet.rawPayload.subarray(0, 4).toString(), "PAR1");
  });

  test("the definition as a JSON file: the run's definition", async () => {
    const res = await t.get(`/v1/backtest-ai/runs/${run.run.id}/definition`);
    assert.equal(res.statusCode, 200);
    assert.equal(
      res.headers["content-disposition"],
      `attachment; filename="run-${run.run.id}-definition.json"`,
    );
    assert.deepEqual(res.json(), run.run.definition);
  });

  test("a bad format is a 400; another key's run, or none, is a 404; a starter key a 403", async () => {
    const bad = await file("trades", "xlsx");
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.code, "VALIDATION_ERROR");
    const other = await t.keyFor("pro");
    for (const what of ["trades", "results", "definition"]) {
      const res = await t.get(`/v1/backtest-ai/runs/${run.run.id}/${what}`, { "x-api-key": other });
      assert.equal(res.statusCode, 404, what);
      assert.equal(res.json().error.code, "RESOURCE_NOT_FOUND");
    }
    const starter = await t.keyFor("starter");
    const res = await t.get(`/v1/backtest-ai/runs/${run.run.id}/trades`, { "x-api-key": starter });
    assert.equal(res.json().error.code, "BACKTEST_AI_REQUIRED");
  });

  test("runs side by side: each run's figures in the order asked; 404 and 400 as documented", async () => {
    const second = await t.app.inject({
      method: "POST",
      url: "/v1/backtest-ai/run",
      payload: {
        coin: "btc",
        market_type: "5m",
        market_count: 2,
        definition: { side: "DOWN", entry: [] },
        seed: 5,
        wait: 60,
      },
      headers: { "x-api-key": t.key },
    });
    const b = second.json();
    const res = await t.get(`/v1/backtest-ai/runs?ids=${b.run.id},${run.run.id}`);
    assert.equal(res.statusCode, 200);
    const { runs } = res.json();
    assert.deepEqual(
      runs.map((r: Json) => [r.run.id, r.aggregate, r.benchmarks, r.intervals, r.sweep, r.walk_forward]),
      [b, run].map((a) => [a.run.id, a.aggregate, a.benchmarks, a.intervals, null, null]),
    );
    assert.equal(runs[0].intervals.seed, 5);
    const other = await t.keyFor("pro");
    const notOurs = await t.get(`/v1/backtest-ai/runs?ids=${run.run.id}`, { "x-api-key": other });
    assert.equal(notOurs.statusCode, 404);
    assert.equal(notOurs.json().error.message, `No run ${run.run.id}.`);
    const eleven = Array.from({ length: 11 }, (_, i) => `r${i}`).join(",");
    for (const ids of [eleven, `${run.run.id},${run.run.id}`, `${run.run.id},`]) {
      const refused = await t.get(`/v1/backtest-ai/runs?ids=${ids}`);
      assert.equal(refused.statusCode, 400, ids);
      assert.equal(refused.json().error.details.parameter, "ids");
    }
    assert.equal((await t.get("/v1/backtest-ai/runs")).statusCode, 400);
  });
});
