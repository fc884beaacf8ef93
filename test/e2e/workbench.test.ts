import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import type { Browser, BrowserContext, Page } from "playwright-core";
import {
  bps,
  count,
  percent,
  price,
  ratio,
  remainingOf,
  shares,
  usdc,
  usdcText,
} from "../../client/src/format.ts";
import type { BacktestRunAnswer, BacktestTrade, MarketSeries, MarketTrade } from "../../client/src/index.ts";
import { seedDemo } from "../../src/demo/seed.ts";
import { SqliteStore } from "../../src/store/dialects/sqlite/sqlite-store.ts";
import { ANCHOR, makeTestApp, type TestApp } from "../helpers/app.ts";
import {
  DOC_SCREENSHOTS,
  drawn,
  launchBrowser,
  NO_BROWSER,
  nextFrame,
  plotRows,
  RGB,
} from "../helpers/browser.ts";
import { ROOT } from "../helpers/paths.ts";

/**
 * The page as a workbench (issue 25, part 5), driven in Chromium against a real server over a seeded
 * SQLite file: the price to beat drawn on the coin's scale, the trade tape as the API answers it, the
 * definition that ran back into the editor, every trade as the API's, a download's bytes, the
 * copy-as-code snippets run as written (curl, python3 with the repository's client, TypeScript on
 * the pinned node), and the account after a generation is spent. Its screenshots at 1280 and 390
 * pixels wide are the README's (docs/screenshots/) with UPDATE_DOC_SCREENSHOTS=1.
 */

const run = promisify(execFile);

declare const document: {
  querySelector(selector: string): { textContent: string | null } | null;
  documentElement: { scrollWidth: number };
  activeElement: { id: string } | null;
};
declare const window: { innerWidth: number };
declare const navigator: { clipboard: { readText(): Promise<string> } };

/** The cells of a table's body rows, as text. */
function cells(page: Page, selector: string): Promise<string[][]> {
  return page.$$eval(`${selector} tbody tr`, (rows) =>
    rows.map((r) =>
      Array.from(r.children).map((c) => (c as { textContent: string | null }).textContent ?? ""),
    ),
  );
}

/** A fact of the run's aggregate as shown (`<dd data-fact="PnL">`). */
function fact(page: Page, name: string): Promise<string> {
  return page.locator(`#backtest-aggregate dd[data-fact="${name}"]`).innerText();
}

const utcText = (iso: string | null) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : "n/a");

/** A trade of the API as the trades table must show it (the columns of the page's table). */
function expectedRow(slug: string, t: BacktestTrade): string[] {
  return [
    slug,
    utcText(t.entry.fill_time),
    price(t.entry.price),
    shares(t.entry.size),
    usdc(t.entry.fee_usdc),
    bps(t.entry.slippage_bps),
    utcText(t.exit?.fill_time ?? t.closed_at),
    price(t.exit?.price),
    usdc(t.exit?.fee_usdc),
    bps(t.exit?.slippage_bps),
    t.exit_reason.replaceAll("_", " "),
    usdc(t.pnl),
  ];
}

describe("the workbench in a browser", { skip: NO_BROWSER }, () => {
  let dir: string;
  let t: TestApp;
  let base: string;
  let browser: Browser;
  const faults: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "updown-workbench-"));
    const store = new SqliteStore(join(dir, "updown.db"));
    await store.migrate();
    await seedDemo(store, {
      seed: 7,
      anchor: ANCHOR,
      counts: { "5m": 8, "15m": 0, "1h": 0, "4h": 0, "24h": 0 },
      coins: ["btc"],
      exchange: false,
    });
    t = await makeTestApp({ store, seed: false });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    mkdirSync(DOC_SCREENSHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function openPage(key: string, width = 1280) {
    const context: BrowserContext = await browser.newContext({
      viewport: { width, height: 900 },
      acceptDownloads: true,
      permissions: ["clipboard-read", "clipboard-write"],
    });
    const page: Page = await context.newPage();
    page.on("pageerror", (err) => faults.push(`page error: ${err.message}`));
    page.on("console", (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) faults.push(`CSP: ${msg.text()}`);
    });
    await page.goto(base);
    await page.waitForSelector("body[data-ready=true]");
    await page.getByRole("textbox", { name: "API key" }).fill(key);
    await page.getByRole("button", { name: "Use key" }).click();
    await page.waitForSelector("#markets-table");
    return { context, page };
  }

  const getJson = async <T>(url: string, key = t.key): Promise<T> => {
    const res = await t.get(url, { "x-api-key": key });
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    return res.json() as T;
  };

  test("a market: the price to beat is a line on the coin's scale; the trade tape is the API's", async () => {
    const { context, page } = await openPage(t.key);
    // A market whose coin made its lowest and highest prices inside the chart, away from its left end
    // (where the line's axis label and the books' moment are drawn over the coin's first prices).
    const slugs = await page.$$eval("#markets-table button[data-slug]", (b) =>
      b.map((x) => x.textContent ?? ""),
    );
    let slug = "";
    let series: MarketSeries | null = null;
    for (const candidate of slugs) {
      series = await getJson<MarketSeries>(`/v1/markets/${candidate}/series?points=1000`);
      const coins = series.snapshots.map((x) => x.coin_price);
      const inside = (i: number) => i > coins.length * 0.2 && i < coins.length * 0.95;
      if (inside(coins.indexOf(Math.max(...coins))) && inside(coins.indexOf(Math.min(...coins)))) {
        slug = candidate;
        break;
      }
    }
    assert.ok(series && slug, "a demo market's coin turned inside its chart");
    await page.locator(`#markets-table button[data-slug="${slug}"]`).click();
    await page.waitForSelector("#market-record");
    await drawn(page, "#price-chart", RGB.coin);
    const market = await getJson<{ coin_price_start: number }>(`/v1/markets/${slug}`);
    assert.equal(
      Number(await page.locator("#price-chart").getAttribute("data-price-to-beat")),
      market.coin_price_start,
    );

    // The line: a row of its colour across most of the plot, where the coin's scale puts the price.
    let line: number[] = [];
    let plot = { width: 0, rows: [] as number[] };
    while (line.length === 0) {
      plot = await plotRows(page, "#price-chart", RGB.priceToBeat);
      line = plot.rows.flatMap((n, y) => (n > plot.width * 0.6 ? [y] : []));
      if (line.length === 0) await nextFrame(page);
    }
    const lineY = line.reduce((a, b) => a + b, 0) / line.length;
    // The coin's line spans its lowest and highest prices: the scale maps price to y linearly.
    const coin = await plotRows(page, "#price-chart", RGB.coin);
    const coinRows = coin.rows.flatMap((n, y) => (n > 0 ? [y] : []));
    const prices = series.snapshots.map((s) => s.coin_price);
    const [low, high] = [Math.min(...prices), Math.max(...prices)];
    const [top, bottom] = [Math.min(...coinRows), Math.max(...coinRows)];
    const expectedY = top + ((high - market.coin_price_start) / (high - low)) * (bottom - top);
    assert.ok(
      Math.abs(lineY - expectedY) <= 3,
      `the price to beat is drawn at y ${lineY}, the coin's scale puts ${market.coin_price_start} at ${expectedY.toFixed(1)}`,
    );

    // The tape at the market's last second: the API's trades up to then, newest first.
    await page.waitForSelector("#book-snapshot");
    const shown = await page.locator("#book-levels").textContent();
    const slider = page.getByLabel("Moment");
    const max = Number(await slider.getAttribute("max"));
    await slider.fill(String(max));
    await page.waitForFunction((old) => document.querySelector("#book-levels")?.textContent !== old, shown);
    const moment = new Date(max * 1000).toISOString();
    const tape = await getJson<{ trades: MarketTrade[] }>(
      `/v1/markets/${slug}/trades?end_time=${moment}&order=desc&limit=20`,
    );
    assert.ok(tape.trades.length > 0, "the demo market traded");
    assert.deepEqual(
      await cells(page, "#trade-tape"),
      tape.trades.map((x) => [
        x.time.slice(11, -1),
        x.outcome,
        x.side.toLowerCase(),
        price(x.price),
        shares(x.size),
      ]),
    );
    // The books as code: the snippet returns the snapshot shown.
    await page.getByLabel("Code for these books in").selectOption("python");
    const code = (await page.locator("#book-snippet-code").textContent()) as string;
    const env = { ...process.env, UPDOWN_API_KEY: t.key, PYTHONPATH: join(ROOT, "python") };
    const at = JSON.parse((await run("python3", ["-c", code], { env })).stdout) as {
      snapshot: { time: string; price_up: number; price_down: number };
    };
    assert.match(
      await page.locator("#book-snapshot").innerText(),
      new RegExp(`Up ${price(at.snapshot.price_up)}, Down ${price(at.snapshot.price_down)}`),
    );

    // One table per outcome, and the mirror said once.
    assert.equal(await page.locator("#book-up").count(), 1);
    assert.equal(await page.locator("#book-down").count(), 1);
    assert.match(
      await page.locator("#book-mirror").innerText(),
      /a bid for Up at p is an ask for Down at 1 - p/,
    );
    await context.close();
    assert.deepEqual(faults, []);
  });

  test("a backtest: its trades are the API's, the definition goes back into the editor, a download is the route's bytes, the snippets run", async () => {
    const { context, page } = await openPage(t.key);
    await page.getByLabel("a definition").check();
    await page.waitForSelector("#definition-problems .ok");
    await page.getByLabel("Latest resolved markets").fill("6");
    await page.getByRole("button", { name: "Run backtest" }).click();
    await page.waitForSelector("#backtest-aggregate", { timeout: 30_000 });
    const status = await page.locator("#backtest-status").innerText();
    const runId = /^Run (\S+):/.exec(status)?.[1] as string;
    const answer = await getJson<BacktestRunAnswer>(`/v1/backtest-ai/runs/${runId}`);

    // Every trade, row for row, as the per-market trades route answers them.
    const expected: string[][] = [];
    for (const r of answer.results) {
      const page1 = await getJson<{ trades: BacktestTrade[]; total: number }>(
        `/v1/backtest-ai/runs/${runId}/markets/${r.slug}/trades`,
      );
      assert.equal(page1.trades.length, page1.total);
      expected.push(...page1.trades.map((x) => expectedRow(r.slug, x)));
    }
    assert.ok(expected.length > 0, "the strategy traded");
    assert.deepEqual(await cells(page, "#backtest-trades"), expected);
    assert.equal(await fact(page, "PnL"), usdcText(answer.aggregate?.pnl));
    assert.equal(await fact(page, "ROI"), percent(answer.aggregate?.roi));

    // Benchmarks beside the run, and its intervals, as the API answered them.
    assert.ok(answer.benchmarks && answer.intervals, "a run answers its benchmarks and intervals");
    const benchmarkRows = await cells(page, "#benchmarks-table");
    assert.equal(benchmarkRows.length, 1 + answer.benchmarks.length);
    assert.deepEqual(
      benchmarkRows.map((r) => r.slice(1)),
      [answer.aggregate!, ...answer.benchmarks].map((b) => [
        usdc(b.pnl),
        percent(b.roi),
        percent(b.win_rate),
        count(b.trades),
        usdc(b.max_drawdown),
        ratio(b.sharpe),
      ]),
    );
    const { pnl } = answer.intervals;
    assert.equal(
      await page.locator('#backtest-intervals dd[data-interval="PnL (USDC)"]').innerText(),
      `${usdc(pnl.low)} to ${usdc(pnl.high)}`,
    );

    // Downloads: the bytes each route answers.
    const downloaded = async (button: string, url: string) => {
      const [file] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("button", { name: button }).click(),
      ]);
      const route = await t.get(url);
      assert.equal(route.statusCode, 200, route.body);
      assert.deepEqual(readFileSync(await file.path()), route.rawPayload, `${button}: the route's bytes`);
      return file.suggestedFilename();
    };
    assert.equal(
      await downloaded("Definition (JSON)", `/v1/backtest-ai/runs/${runId}/definition`),
      `run-${runId}-definition.json`,
    );
    assert.match(
      await downloaded("Trades (CSV)", `/v1/backtest-ai/runs/${runId}/trades?format=csv`),
      /\.csv$/,
    );
    assert.match(
      await downloaded("Trades (Parquet)", `/v1/backtest-ai/runs/${runId}/trades?format=parquet`),
      /\.parquet$/,
    );
    // The definition as JSON on the page is the run's definition.
    const definitionBytes = `${JSON.stringify(answer.run.definition, null, 2)}\n`;
    assert.equal(await page.locator("#backtest-definition-json").textContent(), definitionBytes);

    // The snippets, run as written with the key in UPDOWN_API_KEY: each returns the run on screen.
    const env = { ...process.env, UPDOWN_API_KEY: t.key, PYTHONPATH: join(ROOT, "python") };
    const shownRun = async (language: string, runIt: (code: string) => Promise<string>) => {
      await page.getByLabel("Code for the run in").selectOption(language);
      const code = (await page.locator("#run-snippet-code").textContent()) as string;
      const printed = JSON.parse(await runIt(code)) as BacktestRunAnswer;
      assert.equal(printed.run.id, runId, language);
      assert.equal(usdcText(printed.aggregate?.pnl), await fact(page, "PnL"), language);
      assert.equal(percent(printed.aggregate?.roi), await fact(page, "ROI"), language);
      assert.equal(count(printed.aggregate?.trades), await fact(page, "Trades"), language);
      return code;
    };
    const curl = await shownRun("curl", async (code) => (await run("sh", ["-c", code], { env })).stdout);
    assert.match(curl, /^curl .*\$UPDOWN_API_KEY/);
    assert.doesNotMatch(curl, new RegExp(t.key), "the key itself is never in a snippet");
    // Copy puts the snippet on the clipboard, as shown.
    await page.locator("#run-snippet-copy").click();
    await page.waitForSelector("#run-snippet :text('Copied.')");
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), curl);
    await shownRun("python", async (code) => (await run("python3", ["-c", code], { env })).stdout);
    await shownRun("typescript", async (code) => {
      const file = join(dir, "snippet.ts");
      writeFileSync(file, code);
      return (await run(join(ROOT, "node_modules", ".bin", "node"), [file], { env, cwd: dir })).stdout;
    });

    // By keyboard: the definition that ran goes back into the editor, ready to change.
    await page.locator("#definition-to-editor").focus();
    await page.keyboard.press("Enter");
    assert.equal(await page.getByLabel("Definition (JSON)").inputValue(), definitionBytes.trimEnd());
    assert.ok(await page.getByLabel("a definition").isChecked());
    assert.equal(
      await page.evaluate(() => document.activeElement?.id),
      "bt-definition",
      "the editor has the focus",
    );

    // For the screenshots: a traded market, its trades on the chart, the books and tape at its end.
    const traded = answer.results.find((r) => r.trades.length > 0)?.slug as string;
    await page.locator("#backtest-results button", { hasText: traded }).click();
    await page.waitForSelector("#book-snapshot");
    const shown = await page.locator("#book-levels").textContent();
    const slider = page.getByLabel("Moment");
    await slider.fill(String(await slider.getAttribute("max")));
    await page.waitForFunction((old) => document.querySelector("#book-levels")?.textContent !== old, shown);
    await drawn(page, "#price-chart", RGB.entry, 5);
    await page.screenshot({ path: join(DOC_SCREENSHOTS, "workbench-1280.png"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(widths[0] <= widths[1], `no horizontal scroll at 390 px: ${widths.join(" > ")}`);
    await page.screenshot({ path: join(DOC_SCREENSHOTS, "workbench-390.png"), fullPage: true });
    await context.close();
    assert.deepEqual(faults, []);
  });

  test("a preset spends a generation: the account panel says so when the run is shown", async () => {
    const key = await t.keyFor("pro");
    const { context, page } = await openPage(key);
    const before = await getJson<{ used: number; remaining: number; limit: number }>(
      "/v1/backtest-ai/quota",
      key,
    );
    await page.waitForSelector(`#quota:text('${remainingOf(before.remaining, before.limit)} left')`);
    await page.getByLabel("a preset").check();
    await page.getByLabel("Latest resolved markets").fill("2");
    await page.getByRole("button", { name: "Run backtest" }).click();
    await page.waitForSelector("#backtest-aggregate", { timeout: 30_000 });
    const spent = await getJson<{ used: number; remaining: number; limit: number }>(
      "/v1/backtest-ai/quota",
      key,
    );
    assert.equal(spent.used, before.used + 1);
    await page.waitForSelector(`#quota:text('${remainingOf(spent.remaining, spent.limit)} left')`);
    await context.close();
    assert.deepEqual(faults, []);
  });

  test("a sweep run from the page: its heat map and table are the API's rows, its walk-forward shown, a generation spent", async () => {
    const key = await t.keyFor("pro");
    const { context, page } = await openPage(key);
    const before = await getJson<{ used: number }>("/v1/backtest-ai/quota", key);
    await page.getByLabel("a definition").check();
    await page.waitForSelector("#definition-problems .ok");
    await page.getByLabel("Sweep field 1").fill("exit.take_profit_pct");
    await page.getByLabel("Values of field 1").fill("10, 20, 30");
    await page.getByLabel("Sweep field 2").fill("entry.0.value");
    await page.getByLabel("Values of field 2").fill("0.5:0.6:0.1");
    await page.getByLabel("Walk-forward: train on this fraction").fill("0.5");
    await page.getByLabel("Latest resolved markets").fill("6");
    await page.getByRole("button", { name: "Run backtest" }).click();
    await page.waitForSelector("#sweep-heatmap", { timeout: 60_000 });
    const runId = /^Run (\S+):/.exec(await page.locator("#backtest-status").innerText())?.[1] as string;
    const answer = await getJson<BacktestRunAnswer>(`/v1/backtest-ai/runs/${runId}`, key);
    const sweep = answer.sweep!;
    assert.deepEqual(sweep.fields, ["exit.take_profit_pct", "entry.0.value"]);
    assert.equal(sweep.rows.length, 6);

    // The heat map: take profit down, entry price across, each cell the combination's PnL.
    const grid = await cells(page, "#sweep-heatmap");
    assert.deepEqual(
      grid.map((r) => r[0]),
      ["10", "20", "30"],
    );
    const pnlOf = (tp: number, entry: number) =>
      sweep.rows.find((r) => r.values["exit.take_profit_pct"] === tp && r.values["entry.0.value"] === entry)!
        .pnl;
    assert.deepEqual(
      grid.map((r) => r.slice(1)),
      [10, 20, 30].map((tp) => [usdc(pnlOf(tp, 0.5)), usdc(pnlOf(tp, 0.6))]),
    );
    // Gains green, losses red: the colour says the sign.
    const colours = await page.$$eval("#sweep-heatmap td.heat", (c) =>
      c.map((x) => (x as unknown as { style: { background: string } }).style.background),
    );
    assert.deepEqual(
      colours.map((c) =>
        c.startsWith("rgba(27, 138, 58") ? "+" : c.startsWith("rgba(198, 40, 40") ? "-" : c,
      ),
      [10, 20, 30].flatMap((tp) => [0.5, 0.6].map((e) => (pnlOf(tp, e) >= 0 ? "+" : "-"))),
    );
    // The table: a row per combination, in the API's order.
    assert.deepEqual(
      (await cells(page, "#sweep-table")).map((r) => [r[0], r[1], r[2]]),
      sweep.rows.map((r) => [
        String(r.values["exit.take_profit_pct"]),
        String(r.values["entry.0.value"]),
        usdc(r.pnl),
      ]),
    );
    const walk = answer.walk_forward!;
    assert.match(
      await page.locator("#walk-forward").innerText(),
      new RegExp(`first ${walk.train_markets} markets .*reported on the other ${walk.test_markets}`),
    );
    assert.equal((await cells(page, "#walk-forward-table"))[1][1], usdc(walk.test?.pnl));

    const spent = await getJson<{ used: number; remaining: number; limit: number }>(
      "/v1/backtest-ai/quota",
      key,
    );
    assert.equal(spent.used, before.used + 1, "a sweep spends one generation");
    await page.waitForSelector(`#quota:text('${remainingOf(spent.remaining, spent.limit)} left')`);
    await page.locator("#backtest-sweep").screenshot({ path: join(DOC_SCREENSHOTS, "sweep-1280.png") });

    // A second run, without the sweep: the two side by side, as the compare route answers them.
    for (const label of ["Sweep field 1", "Values of field 1", "Sweep field 2", "Values of field 2"])
      await page.getByLabel(label).fill("");
    await page.getByLabel("Walk-forward: train on this fraction").fill("");
    await page.getByRole("button", { name: "Run backtest" }).click();
    await page.waitForSelector(`#backtest-status:not(:text('${runId}'))`);
    await page.waitForSelector("#backtest-aggregate", { timeout: 30_000 });
    const secondId = /^Run (\S+):/.exec(await page.locator("#backtest-status").innerText())?.[1] as string;
    await page.getByRole("button", { name: "Compare the last 2 runs" }).click();
    await page.waitForSelector("#compare-table");
    const compared = await getJson<{ runs: { run: { id: string }; aggregate: { pnl: number } | null }[] }>(
      `/v1/backtest-ai/runs?ids=${runId},${secondId}`,
      key,
    );
    assert.deepEqual(
      (await cells(page, "#compare-table")).map((r) => [r[0], r[3]]),
      compared.runs.map((c) => [c.run.id, usdc(c.aggregate?.pnl)]),
    );
    await context.close();
    assert.deepEqual(faults, []);
  });

  test("an enterprise key: every limit it does not have reads unlimited, once", async () => {
    const key = await t.keyFor("enterprise");
    const { context, page } = await openPage(key);
    await page.waitForSelector("#account-plan:text('enterprise')");
    const facts = await page.$$eval("#account-body dd", (dd) => dd.map((d) => d.textContent ?? ""));
    // The plan, the minute, the day, the generations: each limit said once, never "unlimited of unlimited".
    assert.deepEqual(facts.slice(1, 3), ["unlimited", "unlimited"]);
    assert.match(facts[3], /^unlimited \(0 used in \d{4}-\d\d\)$/);
    // The headers of later answers keep it so.
    const answered = page.waitForResponse((r) => r.url().includes("/v1/markets?"));
    await page.getByRole("button", { name: "Search" }).click();
    assert.equal((await answered).headers()["x-ratelimit-remaining"], "unlimited");
    await page.waitForSelector("#markets-range");
    assert.equal(await page.locator("#day-remaining").innerText(), "unlimited");
    await context.close();
    assert.deepEqual(faults, []);
  });
});
