import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
    ]);
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
