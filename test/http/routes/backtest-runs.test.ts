import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { makeTestApp, openSeededTestStore, type TestApp } from "../../helpers/app.ts";
import { ClaimGate } from "../../helpers/claim-gate.ts";

// Sweeps and walk-forward through the API (issue 25, docs/backtests.md "Sweeps"): one job, one
// generation, the table in the run answer; bad sweeps refused in the error envelope, charging nothing.

const MARKETS = { coin: "btc", market_type: "5m", market_count: 2 };
const DEFINITION = { side: "UP", entry: [{ feature: "price_up", op: "<", value: 0.6 }] };

const gate = new ClaimGate();

describe("sweeps through POST /v1/backtest-ai/run and /strategy", () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ store: gate.wrap(await openSeededTestStore()), seed: false });
  });
  after(() => t.close());

  const post = (url: string, payload: object, key: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: "POST", url, payload, headers: { "x-api-key": key, ...headers } });
  const used = async (key: string) =>
    (await t.get("/v1/backtest-ai/quota", { "x-api-key": key })).json().used;

  test("a sweep is one job and one generation: its table, walk-forward and progress in the run answer", async () => {
    const key = await t.keyFor("pro");
    const sweep = [
      { field: "entry.0.value", values: [0.4, 0.5, 0.6] },
      { field: "exit.take_profit_pct", from: 10, to: 30, step: 10 },
    ];
    const body = { ...MARKETS, definition: DEFINITION, sweep, train_fraction: 0.5, wait: 60 };
    const res = await post("/v1/backtest-ai/run", body, key, { "idempotency-key": "sweep-1" });
    assert.equal(res.statusCode, 200, res.body);
    const a = res.json();
    assert.deepEqual(a.run.progress, { markets_done: 2, markets_total: 2 });
    assert.deepEqual([a.sweep.fields, a.sweep.combinations], [["entry.0.value", "exit.take_profit_pct"], 9]);
    assert.deepEqual(a.sweep.rows[5].values, { "entry.0.value": 0.5, "exit.take_profit_pct": 30 });
    for (const row of a.sweep.rows) assert.equal(row.markets, 2);
    assert.deepEqual([a.walk_forward.train_markets, a.walk_forward.test_markets], [1, 1]);
    assert.ok(
      a.sweep.rows.some(
        (r: { values: object }) => JSON.stringify(r.values) === JSON.stringify(a.walk_forward.chosen),
      ),
    );
    // The swept definition is stored as the run's strategy, bought with one generation.
    assert.equal(a.strategy.source, "definition");
    assert.equal(await used(key), 1);
    // A retry with the same Idempotency-Key is the same run, charged once.
    const again = await post("/v1/backtest-ai/run", body, key, { "idempotency-key": "sweep-1" });
    assert.equal(again.json().run.id, a.run.id);
    assert.equal(await used(key), 1);
    // A run without a sweep spends nothing; a /strategy with a sweep spends its one generation only.
    await post("/v1/backtest-ai/run", { ...MARKETS, definition: DEFINITION, wait: 60 }, key);
    assert.equal(await used(key), 1);
    const viaStrategy = await post("/v1/backtest-ai/strategy", { ...body, wait: 60 }, key);
    assert.equal(viaStrategy.statusCode, 200);
    assert.equal(viaStrategy.json().sweep.combinations, 9);
    assert.equal(await used(key), 2);
    // The same sweep gives the same bytes of research.
    const { run: _r, strategy: _s, ...first } = a;
    const { run: _r2, strategy: _s2, ...second } = viaStrategy.json();
    assert.deepEqual(second, first);
  });

  test("bad sweeps are 400s in the error envelope, pointing at the field, and charge nothing", async () => {
    const key = await t.keyFor("pro");
    const refused = async (extra: object, pointer: string, message: RegExp) => {
      const res = await post("/v1/backtest-ai/run", { ...MARKETS, definition: DEFINITION, ...extra }, key);
      assert.equal(res.statusCode, 400, res.body);
      const { error } = res.json();
      assert.equal(error.code, "VALIDATION_ERROR");
      assert.equal(error.details.pointer, pointer);
      assert.match(error.message, message);
    };
    await refused(
      {
        sweep: [
          { field: "position_size", from: 1, to: 11, step: 1 },
          { field: "latency_ms", from: 0, to: 900, step: 100 },
        ],
      },
      "/sweep",
      /110 combinations; at most 100/,
    );
    await refused(
      { sweep: [{ field: "exit.nope", values: [1] }] },
      "/sweep/0/field",
      /not a field of the definition/,
    );
    await refused({ sweep: [{ field: "side", values: [1, 2] }] }, "/sweep/0/field", /not a numeric field/);
    await refused({ sweep: [{ field: "position_size", values: [0, 10] }] }, "/sweep", /position_size = 0/);
    await refused({ train_fraction: 0.5 }, "/train_fraction", /needs a sweep/);
    await refused(
      { sweep: [{ field: "position_size", values: [10] }], train_fraction: 1 },
      "/train_fraction",
      /from 0.01 to 0.99/,
    );
    await refused({ seed: -1 }, "/seed", /from 0 to 4294967295/);
    assert.equal(await used(key), 0);
  });

  test("every run answers its benchmarks and seeded intervals, the same for the same seed", async () => {
    const key = await t.keyFor("pro");
    const run = async (seed: number) =>
      (await post("/v1/backtest-ai/run", { ...MARKETS, definition: DEFINITION, seed, wait: 60 }, key)).json();
    const a = await run(3);
    const b = await run(3);
    assert.deepEqual(
      a.benchmarks.map((x: { name: string }) => x.name),
      ["always_up", "always_down", "favourite", "random"],
    );
    assert.deepEqual([b.benchmarks, b.intervals], [a.benchmarks, a.intervals]);
    assert.deepEqual([a.intervals.seed, a.intervals.samples, a.intervals.level], [3, 1000, 0.95]);
    assert.deepEqual([a.sweep, a.walk_forward], [null, null]);
    // A run still queued answers its research as null (held queued until the answer is in: ClaimGate).
    await gate.closedDuring(async () => {
      const queued = await post("/v1/backtest-ai/run", { ...MARKETS, definition: DEFINITION, wait: 0 }, key);
      assert.equal(queued.statusCode, 202);
      assert.equal(queued.json().benchmarks, null);
    });
  });
});
