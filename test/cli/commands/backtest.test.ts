import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { after, before, describe, test } from "node:test";
import type { StrategyDefinition } from "../../../src/backtest/definition.ts";
import { describeDefinition } from "../../../src/backtest/describe.ts";
import { presetDefinition } from "../../../src/backtest/generate/presets.ts";
import { BIN } from "../../helpers/serve.ts";

// `updown backtest` as a user runs it: a real process over a seeded SQLite file.

describe("updown backtest", { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "updown-backtest-cli-"));
  const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, "db.sqlite")}` };
  const updown = (...args: string[]) => {
    const res = spawnSync(process.execPath, [BIN, ...args], { env, encoding: "utf8" });
    return { code: res.status, stdout: res.stdout, stderr: res.stderr };
  };

  before(() => {
    const seeded = updown(
      "seed",
      "--counts",
      "5m=6,15m=0,1h=0,4h=0,24h=0",
      "--coins",
      "btc",
      "--anchor",
      "2026-07-24T00:20:34Z",
    );
    assert.equal(seeded.code, 0, seeded.stderr);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("a preset: progress on stderr, the definition in words, a table of the markets and the aggregate on stdout", () => {
    const res = updown(
      "backtest",
      "--preset",
      "mean_reversion",
      "--coin",
      "btc",
      "--type",
      "5m",
      "--count",
      "3",
    );
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /Replaying: 3 markets, \d+ trades in/);
    const [words, tableText] = res.stdout.split("\n\n");
    assert.equal(words, describeDefinition(presetDefinition("mean_reversion") as StrategyDefinition));
    assert.match(words, /^"Mean reversion" \(definition version 2\)\nBuy Up: 100 shares per entry/);
    const lines = tableText.split("\n");
    assert.match(lines[0], /^market\s+winner\s+trades\s+pnl\s+roi\s+fees$/);
    assert.equal(lines.filter((l) => /^btc-updown-5m-\d+ /.test(l)).length, 3);
    assert.match(res.stdout, /^markets 3 \(\d traded\), trades \d+/m);
    assert.match(res.stdout, /^max drawdown .* sharpe .* sortino/m);
  });

  test("--json: the full result, the same as a second time; the overrides in the definition", () => {
    const args = [
      "backtest",
      "--prompt",
      "buy up below 60c and hold to resolution",
      "--coin",
      "btc",
      "--type",
      "5m",
    ];
    const res = updown(...args, "--json", "--position-size", "10", "--latency-ms", "0");
    assert.equal(res.code, 0, res.stderr);
    const result = JSON.parse(res.stdout);
    assert.deepEqual(Object.keys(result), [
      "definition",
      "definition_text",
      "aggregate",
      "results",
      "unresolved",
      "benchmarks",
      "intervals",
      "sweep",
      "walk_forward",
    ]);
    assert.deepEqual(
      result.benchmarks.map((b: { name: string }) => b.name),
      ["always_up", "always_down", "favourite", "random"],
    );
    assert.deepEqual([result.intervals.seed, result.sweep, result.walk_forward], [1, null, null]);
    assert.equal(result.definition_text, describeDefinition(result.definition));
    assert.deepEqual([result.definition.position_size, result.definition.latency_ms], [10, 0]);
    assert.equal(result.results.length, 5, "the five resolved markets of six");
    assert.equal(result.unresolved.length, 1);
    assert.equal(updown(...args, "--json", "--position-size", "10", "--latency-ms", "0").stdout, res.stdout);
  });

  test("a time of day in the prompt: only the market of the minutes it names trades", () => {
    const res = updown(
      "backtest",
      "--prompt",
      "buy up before 00:05 utc and hold to resolution",
      "--coin",
      "btc",
      "--type",
      "5m",
      "--json",
    );
    assert.equal(res.code, 0, res.stderr);
    const result = JSON.parse(res.stdout);
    assert.deepEqual(result.definition.entry, [{ feature: "minute_of_day_utc", op: "<", value: 5 }]);
    assert.match(result.definition_text, /Enter when: the minute of the day \(UTC, 0-1439\) is below 5\./);
    // The resolved markets open 23:55 to 00:15: only the one of 00:00 to 00:05 has a minute below 5.
    const traded = (result.results as { slug: string; trades: { entry: { decision_time: string } }[] }[])
      .filter((r) => r.trades.length > 0)
      .map((r) => [r.slug, r.trades[0].entry.decision_time.slice(0, 16)]);
    assert.deepEqual(traded, [["btc-updown-5m-1784851200", "2026-07-24T00:00"]]);
  });

  test("a prompt with a clause the generator cannot read: exit 2 quoting it, nothing replayed", () => {
    const res = updown(
      "backtest",
      "--prompt",
      "buy up below 0.4, cancel after 20 seconds",
      "--coin",
      "btc",
      "--type",
      "5m",
    );
    assert.equal(res.code, 2);
    assert.match(res.stderr, /"cancel after 20 seconds" \(an expiry needs a limit order/);
    assert.equal(res.stdout, "");
  });

  test("a definition file that breaks a rule: exit 2 with the field's pointer; no strategy: exit 2", () => {
    const file = join(dir, "bad.json");
    writeFileSync(
      file,
      JSON.stringify({ side: "UP", entry: [{ feature: "price_up", op: "~", value: 0.4 }] }),
    );
    const bad = updown("backtest", "--definition", file, "--coin", "btc", "--type", "5m");
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /bad\.json: \/entry\/0\/op must be one of/);
    const none = updown("backtest", "--coin", "btc", "--type", "5m");
    assert.equal(none.code, 2);
    assert.match(none.stderr, /one of --definition FILE, --preset NAME or --prompt TEXT/);
  });

  test("a coin the service does not know: exit 2 with the coins it knows, as the API's 400; no table", () => {
    const res = updown("backtest", "--preset", "mean_reversion", "--coin", "doge2", "--type", "5m");
    assert.equal(res.code, 2);
    assert.equal(res.stdout, "");
    assert.equal(
      res.stderr,
      "error: --coin doge2: must be one of btc, eth, sol, xrp, doge, bnb, hype (COINS)\n",
    );
  });

  test("a definition file that is not there: one line naming it, exit 2", () => {
    const res = updown("backtest", "--definition", join(dir, "nope.json"), "--coin", "btc", "--type", "5m");
    assert.equal(res.code, 2);
    assert.equal(res.stderr, `error: --definition ${join(dir, "nope.json")}: no such file or folder\n`);
  });

  test("--sweep, --walk-forward and --export: the grid's table, the split, and every trade in the file", () => {
    const file = join(dir, "cheap-up.json");
    writeFileSync(
      file,
      JSON.stringify({ side: "UP", entry: [{ feature: "price_up", op: "<", value: 0.6 }] }),
    );
    const csv = join(dir, "trades.csv");
    const args = ["backtest", "--definition", file, "--coin", "btc", "--type", "5m"];
    const sweep = ["--sweep", "exit.take_profit_pct=10,20", "--sweep", "entry.0.value=0.4:0.6:0.1"];
    const res = updown(...args, ...sweep, "--walk-forward", "0.6", "--export", csv, "--json");
    assert.equal(res.code, 0, res.stderr);
    const result = JSON.parse(res.stdout);
    assert.deepEqual(
      [result.sweep.fields, result.sweep.combinations],
      [["exit.take_profit_pct", "entry.0.value"], 6],
    );
    assert.deepEqual(result.sweep.rows[1].values, { "exit.take_profit_pct": 10, "entry.0.value": 0.5 });
    // Five resolved markets: three (0.6 of them) train, two test.
    assert.deepEqual([result.walk_forward.train_markets, result.walk_forward.test_markets], [3, 2]);
    const lines = readFileSync(csv, "utf8").trimEnd().split("\n");
    assert.match(lines[0], /^slug,entry_decision_time,entry_fill_time,/);
    const trades = result.results.flatMap((r: { slug: string; trades: { pnl: number }[] }) =>
      r.trades.map((t) => [r.slug, String(t.pnl)]),
    );
    assert.deepEqual(
      lines.slice(1).map((l) => {
        const cells = l.split(",");
        return [cells[0], cells.at(-2)];
      }),
      trades,
    );
    // The summary shows the benchmarks, the intervals, the grid and the split.
    const text = updown(...args, ...sweep, "--walk-forward", "0.6");
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^benchmark\s+trades\s+pnl\s+roi\s+win rate$/m);
    assert.match(text.stdout, /^95% intervals \(bootstrap over markets, seed 1\): pnl /m);
    assert.match(text.stdout, /^exit\.take_profit_pct\s+entry\.0\.value\s+trades\s+pnl/m);
    assert.match(
      text.stdout,
      /^walk-forward: chose exit\.take_profit_pct=\d+, entry\.0\.value=[\d.]+ on 3 markets/m,
    );
  });

  test("--export FILE.parquet: every trade, read back by DuckDB with the --json answer's slug and pnl", async () => {
    const file = join(dir, "cheap-up.json");
    writeFileSync(
      file,
      JSON.stringify({ side: "UP", entry: [{ feature: "price_up", op: "<", value: 0.6 }] }),
    );
    const args = ["backtest", "--definition", file, "--coin", "btc", "--type", "5m"];
    const parquet = join(dir, "trades.parquet");
    const res = updown(...args, "--export", parquet, "--json");
    assert.equal(res.code, 0, res.stderr);
    const trades = (
      JSON.parse(res.stdout) as { results: { slug: string; trades: { pnl: number }[] }[] }
    ).results.flatMap((r) => r.trades.map((t) => [r.slug, t.pnl]));
    assert.ok(trades.length > 0);
    assert.equal(readFileSync(parquet).subarray(0, 4).toString("latin1"), "PAR1");
    const db = await DuckDBInstance.create(":memory:");
    const c = await db.connect();
    const read = await c.runAndReadAll(`SELECT slug, pnl FROM read_parquet('${parquet}')`);
    c.closeSync();
    assert.deepEqual(read.getRows(), trades);
  });

  test("a mistyped --sweep, --walk-forward or --export: one line, exit 2, nothing replayed", () => {
    const file = join(dir, "cheap-up.json");
    const args = ["backtest", "--definition", file, "--coin", "btc", "--type", "5m"];
    const cases: [string[], string][] = [
      [["--sweep", "side=1,2"], "error: --sweep/0/field side is not a numeric field (it is string)\n"],
      [["--sweep", "exit.nope=1"], "error: --sweep/0/field exit.nope is not a field of the definition\n"],
      [["--sweep", "position_size=ten"], 'error: --sweep position_size=ten: "ten" is not a number\n'],
      [
        ["--sweep", "position_size=1:1000:1"],
        "error: --sweep: gives 1000 values; a sweep has at most 100 combinations\n",
      ],
      [
        ["--walk-forward", "0.5"],
        "error: --walk-forward needs --sweep: it chooses among the sweep's combinations\n",
      ],
      [
        ["--export", join(dir, "out.xlsx")],
        `error: --export ${join(dir, "out.xlsx")}: the file must end .csv, .ndjson or .parquet\n`,
      ],
    ];
    for (const [extra, line] of cases) {
      const res = updown(...args, ...extra);
      assert.equal(res.code, 2, extra.join(" "));
      assert.equal(res.stderr, line);
      assert.equal(res.stdout, "");
    }
    const fraction = updown(...args, "--sweep", "position_size=10,20", "--walk-forward", "1.5");
    assert.equal(fraction.code, 2);
    assert.match(
      fraction.stderr,
      /^error: --walk-forward must be a fraction between 0 and 1, e\.g\. 0\.7, got "1\.5"\n/,
    );
  });

  test("a mistyped flag: which one, the nearest the command takes, and its usage; exit 2", () => {
    const res = updown("backtest", "--preset", "mean_reversion", "--cion", "btc", "--type", "5m");
    assert.equal(res.code, 2);
    const [first, blank, usage] = res.stderr.split("\n");
    assert.equal(first, "error: unknown option --cion (did you mean --coin?)");
    assert.equal(blank, "");
    assert.match(usage, /^updown backtest \(--definition FILE/);
    assert.match(res.stderr, /Run 'updown backtest --help' for its options\.\n$/);
    assert.doesNotMatch(res.stderr, /"|To specify a positional/);
  });
});
