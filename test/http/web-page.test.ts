import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { pino } from "pino";
import type { Browser, BrowserContext, Page, Response } from "playwright-core";
import type { StrategyDefinition } from "../../src/backtest/definition.ts";
import { describeDefinition } from "../../src/backtest/describe.ts";
import { buildApp } from "../../src/http/app.ts";
import { PAGE_CSP } from "../../src/http/web-page.ts";
import { seedDemo } from "../../src/demo/seed.ts";
import { SqliteStore } from "../../src/store/dialects/sqlite/sqlite-store.ts";
import { encodeBooks } from "../../src/wire/book-codec.ts";
import { ANCHOR, HAND_MARKET, makeTestApp, type TestApp } from "../helpers/app.ts";
import { decoded } from "../helpers/contract.ts";
import {
  drawn,
  launchBrowser,
  NO_BROWSER,
  RGB,
  TEST_SCREENSHOTS as SCREENSHOTS,
} from "../helpers/browser.ts";

/**
 * The page at `/` (issue 15, items 2 and 4): its serving, and the page itself driven in a real
 * Chromium (Debian's, through playwright-core) against a real server over a seeded SQLite file.
 * Screenshots at 1280 and 390 pixels wide go to test/screenshots/ (git-ignored).
 */

/*
 * The browser's globals that the functions run in the page use (this file is type-checked with
 * Node's types, not the DOM's).
 */
declare const document: {
  querySelector(selector: string): { textContent: string | null } | null;
  documentElement: { scrollWidth: number };
};
declare const window: { innerWidth: number };

describe("serving the page", () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ seed: false });
  });
  after(() => t.close());

  test("/ is the page, with its CSP; its assets are hashed, cached a year and compressed", async () => {
    const page = await t.app.inject({ method: "GET", url: "/" });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers["content-type"]), /^text\/html/);
    assert.equal(page.headers["content-security-policy"], PAGE_CSP);
    assert.equal(page.headers["cache-control"], "no-cache");
    assert.match(page.body, /<a href="\/docs">/, "the page links the API reference");
    const assets = [...page.body.matchAll(/"\/assets\/(main-[A-Z0-9]+\.(?:js|css))"/g)].map((m) => m[1]);
    assert.equal(assets.length, 2, page.body);
    for (const name of assets) {
      const plain = await t.app.inject({ method: "GET", url: `/assets/${name}` });
      assert.equal(plain.statusCode, 200);
      assert.equal(plain.headers["cache-control"], "public, max-age=31536000, immutable");
      const br = await t.app.inject({
        method: "GET",
        url: `/assets/${name}`,
        headers: { "accept-encoding": "br, gzip" },
      });
      assert.equal(br.headers["content-encoding"], "br");
      assert.equal(br.headers.vary, "Accept-Encoding");
      assert.ok(br.rawPayload.length < plain.rawPayload.length / 2, `${name} compresses`);
      assert.deepEqual(decoded(br.rawPayload, "br"), plain.rawPayload);
      const again = await t.app.inject({
        method: "GET",
        url: `/assets/${name}`,
        headers: { "if-none-match": String(plain.headers.etag) },
      });
      assert.equal(again.statusCode, 304);
    }
  });

  test("HEAD answers like GET; an unknown asset is a 404 in the envelope; neither is in the document", async () => {
    const head = await t.app.inject({ method: "HEAD", url: "/" });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, "");
    const missing = await t.app.inject({ method: "GET", url: "/assets/nothing.js" });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().error.code, "RESOURCE_NOT_FOUND");
    const posted = await t.app.inject({ method: "POST", url: "/" });
    assert.equal(posted.statusCode, 405);
    const document = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json();
    assert.equal(document.paths["/"], undefined);
    assert.equal(document.paths["/assets/{file}"], undefined);
  });

  test("a page that cannot be built is a logged 500 in the envelope, and the next request tries again", async () => {
    const webDir = mkdtempSync(join(tmpdir(), "updown-web-broken-"));
    mkdirSync(join(webDir, "src"));
    writeFileSync(join(webDir, "index.html"), "<!doctype html><title>x</title>");
    writeFileSync(join(webDir, "src", "main.ts"), "import { nothing } from './missing.ts';\nnothing(;\n");
    const logged: string[] = [];
    const log = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged.push(chunk.toString());
        done();
      },
    });
    const store = new SqliteStore(":memory:");
    await store.migrate();
    const app = await buildApp({ store, webDir, loggerInstance: pino({ level: "error" }, log) });
    try {
      const broken = await app.inject({ method: "GET", url: "/" });
      assert.equal(broken.statusCode, 500);
      assert.equal(broken.json().error.code, "INTERNAL_ERROR");
      assert.match(logged.join(""), /"err":\{.*main\.ts:2:8: ERROR.*"msg":"the web page could not be built"/);
      writeFileSync(join(webDir, "src", "main.ts"), "document.title = 'fixed';\n");
      const fixed = await app.inject({ method: "GET", url: "/" });
      assert.equal(fixed.statusCode, 200, "a failed build is not kept");
    } finally {
      await app.close();
      await store.close();
      rmSync(webDir, { recursive: true, force: true });
    }
  });
});

/** A resolved SOL 5m market whose recording stops for a minute (from 100 s to 160 s after its start). */
const GAPPED = {
  ...HAND_MARKET,
  slug: "sol-updown-5m-1784851500",
  marketType: "5m" as const,
  startTime: 1784851500,
  endTime: 1784851800,
  resolvedAt: 1784851805,
};

async function insertGappedMarket(store: SqliteStore): Promise<void> {
  const { key } = await store.markets.upsertMarket(GAPPED);
  const rows = [];
  for (let s = 0; s < 300; s++) {
    if (s > 100 && s < 160) continue;
    const mid = 0.5 + 0.2 * Math.sin(s / 30);
    const cents = Math.round(mid * 100);
    const up = cents / 100;
    const book = {
      bids: [
        { price: (cents - 1) / 100, size: 100 + s },
        { price: (cents - 2) / 100, size: 250 },
      ],
      asks: [
        { price: (cents + 1) / 100, size: 80 + s },
        { price: (cents + 2) / 100, size: 300 },
      ],
    };
    const down = {
      bids: book.asks.map((l) => ({ price: (100 - Math.round(l.price * 100)) / 100, size: l.size })),
      asks: book.bids.map((l) => ({ price: (100 - Math.round(l.price * 100)) / 100, size: l.size })),
    };
    rows.push({
      time: (GAPPED.startTime + s) * 1e6,
      coinPrice: 150 + s / 10,
      priceUp: up,
      priceDown: (100 - cents) / 100,
      books: encodeBooks(book, down),
    });
  }
  await store.markets.insertSnapshots(key, rows);
}

describe("the page in a browser", { skip: NO_BROWSER }, () => {
  let dir: string;
  let t: TestApp;
  let base: string;
  let browser: Browser;
  /** Page errors and CSP refusals of every page opened; none may happen. */
  const faults: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "updown-web-"));
    const store = new SqliteStore(join(dir, "updown.db"));
    await store.migrate();
    await seedDemo(store, {
      seed: 7,
      anchor: ANCHOR,
      counts: { "5m": 8, "15m": 2, "1h": 1, "4h": 1, "24h": 0 },
      coins: ["btc", "eth"],
      exchange: false,
    });
    await insertGappedMarket(store);
    t = await makeTestApp({ store, seed: false });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A new page at `/`, once it is ready; `consoleErrors` collects what its console reports as errors. */
  async function openPage(width = 1280) {
    const context: BrowserContext = await browser.newContext({ viewport: { width, height: 900 } });
    const page: Page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on("pageerror", (err) => faults.push(`page error: ${err.message}`));
    page.on("console", (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) faults.push(`CSP: ${msg.text()}`);
      if (msg.type() === "error") consoleErrors.push(msg.text());
    });
    await page.goto(base);
    await page.waitForSelector("body[data-ready=true]");
    return { context, page, consoleErrors };
  }

  async function useKey(page: Page, key: string): Promise<void> {
    await page.getByRole("textbox", { name: "API key" }).fill(key);
    await page.getByRole("button", { name: "Use key" }).click();
  }

  test("a pro key: account, filtered markets, a market's chart and books, a backtest with its curve and trades", async () => {
    const { context, page, consoleErrors } = await openPage();
    const counted: Response[] = [];
    page.on("response", (r) => {
      if (r.url().includes("/v1/") && r.headers()["x-ratelimit-remaining"] !== undefined) counted.push(r);
    });
    await useKey(page, t.key);
    await page.waitForSelector("#account-plan:text('pro')");

    // Filter: BTC, 5m, resolved.
    const filters = page.locator("#markets-panel");
    await filters.getByLabel("Coin").selectOption("btc");
    await filters.getByLabel("Type").selectOption("5m");
    await filters.getByLabel("Resolved").selectOption("true");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForSelector("#markets-range:text(' of 7')");
    const slugs = await page.$$eval("#markets-table button[data-slug]", (b) => b.map((x) => x.textContent));
    assert.equal(slugs.length, 7);
    assert.ok(
      slugs.every((s) => /^btc-updown-5m-\d+$/.test(s ?? "")),
      slugs.join(),
    );

    // A market: its chart draws the three lines.
    const slug = slugs[1] as string;
    await page.locator(`#markets-table button[data-slug="${slug}"]`).click();
    await page.waitForSelector("#market-record");
    for (const [name, rgb] of Object.entries({ up: RGB.up, down: RGB.down, coin: RGB.coin })) {
      assert.ok((await drawn(page, "#price-chart", rgb)) >= 40, `${name} line drawn`);
    }
    assert.match(await page.locator("#market-record").innerText(), new RegExp(slug));

    // The slider moves the books shown.
    await page.waitForSelector("#book-snapshot");
    const before = await page.locator("#book-levels").innerText();
    // Read before the slider moves: read after it, a fast answer could already be on screen, and the
    // wait would be for a second change that never comes (the cause of a timeout seen under load).
    const shown = await page.locator("#book-levels").textContent();
    const slider = page.getByLabel("Moment");
    const max = Number(await slider.getAttribute("max"));
    await slider.fill(String(max - 30));
    await page.waitForFunction((old) => document.querySelector("#book-levels")?.textContent !== old, shown);
    const afterMove = await page.locator("#book-levels").innerText();
    assert.notEqual(afterMove, before);
    assert.match(afterMove, /Up book, best first/);
    assert.match(afterMove, /Down book, best first/);
    assert.match(afterMove, /The books mirror each other/);
    assert.ok((await drawn(page, "#depth-chart", RGB.up)) > 0, "the depth chart draws the bids");

    // A definition that breaks the schema is refused in the browser, by JSON pointer.
    await page.getByLabel("a definition").check();
    await page.waitForSelector("#definition-problems .ok");
    const editor = page.getByLabel("Definition (JSON)");
    const good = await editor.inputValue();
    await editor.fill(
      good.replace('"op": "<"', '"op": "below"').replace('"position_size": 100', '"position_size": 0'),
    );
    await page.waitForSelector("#definition-problems .problem");
    const problems = await page.locator("#definition-problems").innerText();
    assert.match(problems, /\/entry\/0\/op/);
    assert.match(problems, /\/position_size/);
    const postsBefore = counted.filter((r) => r.request().method() === "POST").length;
    await page.getByRole("button", { name: "Run backtest" }).click();
    await page.waitForSelector("#backtest-message .error");
    assert.equal(
      counted.filter((r) => r.request().method() === "POST").length,
      postsBefore,
      "nothing was sent",
    );

    // The valid definition runs: results, an equity curve, and the trades on the market's chart.
    await editor.fill(good);
    await page.waitForSelector("#definition-problems .ok");
    await page.getByLabel("Latest resolved markets").fill("6");
    await page.getByRole("button", { name: "Run backtest" }).click();
    await page.waitForSelector("#backtest-aggregate", { timeout: 30_000 });
    assert.equal(await page.locator("#backtest-results tbody tr").count(), 6);
    // The definition that ran, in the API's words (describeDefinition), beside the results.
    assert.equal(
      await page.locator("#backtest-definition-text").innerText(),
      describeDefinition(JSON.parse(good) as StrategyDefinition),
    );
    assert.ok((await drawn(page, "#equity-chart", RGB.equity)) >= 20, "equity curve drawn");
    const traded = await page.$$eval("#backtest-results tbody tr", (rows) =>
      rows
        .filter((r) => r.children[3]?.textContent !== "0")
        .map((r) => r.querySelector("button")?.textContent),
    );
    assert.ok(traded.length > 0, "the strategy traded somewhere");
    await page.locator("#backtest-results button", { hasText: traded[0] as string }).click();
    await page.waitForSelector(`#market-title:text('${traded[0]}')`);
    assert.ok((await drawn(page, "#price-chart", RGB.entry, 5)) >= 5, "the entry is marked on the chart");

    // The account panel shows what the server's headers say is left.
    const answer = page.waitForResponse((r) => r.url().includes("/v1/markets?"));
    await page.getByRole("button", { name: "Search" }).click();
    const last = await answer;
    const remaining = Number(last.headers()["x-ratelimit-remaining"]);
    await page.waitForFunction(
      (n) => document.querySelector("#day-remaining")?.textContent?.replaceAll(",", "") === String(n),
      remaining,
    );
    const usage = (await t.get("/v1/account")).json().usage;
    assert.equal(usage.day.remaining, remaining, "the header is the server's own count");
    const minute = /"minute";r=(\d+)/.exec(last.headers()["ratelimit"])![1];
    assert.equal((await page.locator("#minute-remaining").innerText()).replaceAll(",", ""), minute);

    await page.screenshot({ path: join(SCREENSHOTS, "page-1280.png"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator(`#market-title`).scrollIntoViewIfNeeded();
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(widths[0] <= widths[1], `no horizontal scroll at 390 px: ${widths.join(" > ")}`);
    await page.screenshot({ path: join(SCREENSHOTS, "page-390.png"), fullPage: true });
    await context.close();
    assert.deepEqual(faults, []);
    assert.deepEqual(consoleErrors, [], "a pro key's tour loads every resource and logs no error");
  });

  test("a recording gap is marked on the chart and listed", async () => {
    const { context, page } = await openPage();
    await useKey(page, t.key);
    await page.locator("#markets-panel").getByLabel("Coin").selectOption("sol");
    await page.getByRole("button", { name: "Search" }).click();
    await page.locator(`#markets-table button[data-slug="${GAPPED.slug}"]`).click();
    await page.waitForSelector("#market-gaps");
    assert.match(await page.locator("#market-gaps").innerText(), /1 gap\(s\), the largest 60\.0 s/);
    assert.ok((await drawn(page, "#price-chart", RGB.gap, 200)) >= 200, "the gap is shaded");
    await page.screenshot({ path: join(SCREENSHOTS, "gap-1280.png") });
    await context.close();
    assert.deepEqual(faults, []);
  });

  test("a wrong key is named as such; a 403 names the plan that opens it", async () => {
    const { context, page } = await openPage(390);
    await useKey(page, "ud_wrongkey_00000000000000000000000000000000");
    assert.match(await page.locator("#account-body .error").innerText(), /key was refused \(401\)/);

    await useKey(page, await t.keyFor("starter"));
    await page.waitForSelector("#account-plan:text('starter')");
    await page.getByLabel("a preset").check();
    await page.getByRole("button", { name: "Run backtest" }).click();
    const message = await page.locator("#backtest-message .error").innerText();
    assert.match(message, /needs the pro plan/);
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(widths[0] <= widths[1], `no horizontal scroll at 390 px: ${widths.join(" > ")}`);
    await context.close();
    assert.deepEqual(faults, []);
  });

  test("a 429 says when to retry, from Retry-After", async () => {
    const { key } = await t.keys.create({ plan: "enterprise", account: "web-429", perMinuteLimit: 2 });
    const { context, page } = await openPage();
    const refusals: Response[] = [];
    page.on("response", (r) => {
      if (r.status() === 429) refusals.push(r);
    });
    await useKey(page, key); // the account (not counted), then the markets: 1
    await page.waitForSelector("#markets-table");
    await page.getByRole("button", { name: "Search" }).click(); // 2
    await page.waitForSelector("#markets-table");
    await page.getByRole("button", { name: "Search" }).click(); // 3: over the limit
    const message = await page.locator("#markets-list .error").innerText();
    assert.equal(refusals.length, 1, "a long Retry-After is not waited out");
    const retryAfter = Number(refusals[0].headers()["retry-after"]);
    assert.ok(retryAfter > 0);
    assert.match(
      message,
      new RegExp(
        `Too many requests \\(the minute window is full\\)\\. Retry in ${retryAfter} s \\(at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\)`,
      ),
    );
    await context.close();
    assert.deepEqual(faults, []);
  });
});
