import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { usdcText } from "../../client/src/format.ts";
import { loadPlans } from "../../src/access/plans.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { BIN } from "../helpers/serve.ts";

// The MCP server of issue 15 driven by the SDK's own client, over streamable HTTP at /mcp (the app
// listening on a port) and over stdio (a real `updown mcp` process reading that same app): every tool
// is called and its answer held against the HTTP API's answer to the same question with the same key.

const TOOL_NAMES = [
  "list_series",
  "list_markets",
  "market_summary",
  "market_chart",
  "book_at",
  "price_order",
  "market_events",
  "run_backtest",
];

/** A resolved BTC 5m market of the demo data, and the live one after it (makeTestApp's seed). */
const RESOLVED = "btc-updown-5m-1784852100";
const OLDER = "btc-updown-5m-1784851800";
const IN_MARKET = "2026-07-24T00:17:30Z";
const DEFINITION = { side: "UP", entry: [{ feature: "price_up", op: "<", value: 0.6 }] };

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- API answers read field by field

let t: TestApp;
let base: string;

async function api(path: string, key: string, init: RequestInit = {}): Promise<Json> {
  const res = await fetch(`${base}${path}`, {
    ...init,
    headers: { "x-api-key": key, "content-type": "application/json", ...init.headers },
  });
  return (await res.json()) as Json;
}

const minuteUsed = async (key: string) => (await api("/v1/account", key)).usage.minute.used as number;

interface Connected {
  client: Client;
  /** What the process wrote on stderr (stdio only). */
  stderr(): string;
}

async function overHttp(key: string): Promise<Connected> {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { "x-api-key": key } },
  });
  await client.connect(transport);
  return { client, stderr: () => "" };
}

function stdioTransport(
  key: string | null,
  url = base,
): { transport: StdioClientTransport; stderr(): string } {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", UPDOWN_URL: url };
  if (key !== null) env.UPDOWN_API_KEY = key;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp"],
    env,
    stderr: "pipe",
  });
  let text = "";
  transport.stderr?.on("data", (chunk: Buffer) => (text += chunk.toString()));
  return { transport, stderr: () => text };
}

async function overStdio(key: string): Promise<Connected> {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  const { transport, stderr } = stdioTransport(key);
  await client.connect(transport);
  return { client, stderr };
}

const CONNECT = { http: overHttp, stdio: overStdio };

async function call(client: Client, name: string, args: Json = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The structured answer of a call that must succeed, with its text beside it. */
async function answer(client: Client, name: string, args: Json = {}): Promise<{ data: Json; text: string }> {
  const res = await call(client, name, args);
  const text = res.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  assert.ok(!res.isError, `${name} failed: ${text}`);
  assert.ok(res.structuredContent, `${name} gave no structured content`);
  assert.ok(text.length > 0 && text.length < 1000, `${name}: a short text beside the data`);
  return { data: res.structuredContent as Json, text };
}

/** The text of a call that must fail as a tool error (never a protocol error or a crash). */
async function toolError(client: Client, name: string, args: Json): Promise<string> {
  const res = await call(client, name, args);
  assert.equal(res.isError, true, `${name} should fail`);
  return res.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

before(async () => {
  const plans = loadPlans();
  // The starter plan opens only the latest two BTC 5m markets here (the live one and RESOLVED), so
  // OLDER is a pro market.
  plans.starter.history.btc["5m"] = 2;
  t = await makeTestApp({ plans });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});

after(() => t.close());

for (const kind of ["http", "stdio"] as const) {
  describe(`the MCP tools over ${kind}`, () => {
    let key: string;
    let mcp: Connected;
    before(async () => {
      key = await t.keyFor("pro");
      mcp = await CONNECT[kind](key);
    });
    after(() => mcp.client.close());

    test("tools/list gives exactly the eight tools, each with both schemas and its cost", async () => {
      const { tools } = await mcp.client.listTools();
      assert.deepEqual(
        tools.map((tool) => tool.name),
        TOOL_NAMES,
      );
      for (const tool of tools) {
        assert.equal(tool.inputSchema.type, "object", tool.name);
        assert.equal(tool.outputSchema?.type, "object", tool.name);
        assert.match(tool.description ?? "", /Cost: .*1 request for the \/mcp call/, tool.name);
      }
    });

    test("list_series answers the catalog of GET /v1/series", async () => {
      const { data } = await answer(mcp.client, "list_series");
      const http = await api("/v1/series", key);
      assert.equal(data.as_of, http.as_of);
      assert.deepEqual(
        data.series,
        http.series.map((s: Json) => ({
          coin: s.coin,
          market_type: s.market_type,
          markets: s.markets,
          snapshots: s.snapshots,
          first_market_start: s.first_market.start_time,
          last_market: s.last_market.slug,
          coverage_24h: s.coverage_24h.coverage,
          coverage_overall: s.coverage_overall.coverage,
        })),
      );
    });

    test("list_markets answers GET /v1/markets with the same filters, at most 50 rows", async () => {
      const args = { coin: "btc", market_type: "5m", resolved: true, limit: 2 };
      const { data, text } = await answer(mcp.client, "list_markets", args);
      const http = await api("/v1/markets?coin=btc&market_type=5m&resolved=true&limit=2", key);
      assert.equal(data.total, http.total);
      assert.deepEqual(
        data.markets.map((m: Json) => [m.slug, m.winner, m.start_time, m.coin_price_start, m.coin_price_end]),
        http.markets.map((m: Json) => [m.slug, m.winner, m.start_time, m.coin_price_start, m.coin_price_end]),
      );
      assert.ok(text.includes(RESOLVED), text);
      assert.match(
        await toolError(mcp.client, "list_markets", { limit: 51 }),
        /^MCP error -32602: Input validation error: .*limit/s,
      );
    });

    test("market_summary answers the record, the coverage and the first and last prices", async () => {
      const { data } = await answer(mcp.client, "market_summary", { slug: RESOLVED });
      const record = await api(`/v1/markets/${RESOLVED}`, key);
      const coverage = await api(`/v1/markets/${RESOLVED}/coverage`, key);
      const first = (await api(`/v1/markets/${RESOLVED}/snapshots?limit=1&order=asc`, key)).snapshots[0];
      const last = (await api(`/v1/markets/${RESOLVED}/snapshots?limit=1&order=desc`, key)).snapshots[0];
      for (const field of [
        "slug",
        "winner",
        "start_time",
        "end_time",
        "coin_price_start",
        "coin_price_end",
      ]) {
        assert.deepEqual(data.market[field], record[field], field);
      }
      assert.deepEqual(
        [data.market.settlement, data.market.fee_schedule],
        [record.settlement, record.fee_schedule],
      );
      assert.equal(data.market.resolved, true);
      assert.deepEqual(
        [data.coverage.expected_snapshots, data.coverage.recorded_snapshots, data.coverage.coverage],
        [coverage.expected_snapshots, coverage.recorded_snapshots, coverage.coverage],
      );
      assert.equal(data.coverage.gap_count, coverage.gaps.length);
      const price = (s: Json) => ({
        time: s.time,
        coin_price: s.coin_price,
        price_up: s.price_up,
        price_down: s.price_down,
      });
      assert.deepEqual([data.first_snapshot, data.last_snapshot], [price(first), price(last)]);
    });

    test("market_chart answers GET /series downsampled to the points asked", async () => {
      const { data } = await answer(mcp.client, "market_chart", { slug: RESOLVED, points: 20 });
      const http = await api(`/v1/markets/${RESOLVED}/series?points=20`, key);
      assert.deepEqual([data.total, data.bucket_us], [http.total, http.bucket_us]);
      assert.ok(data.points.length <= 20 && data.points.length > 0);
      assert.deepEqual(
        data.points,
        http.snapshots.map((s: Json) => ({
          time: s.time,
          coin_price: s.coin_price,
          price_up: s.price_up,
          price_down: s.price_down,
        })),
      );
      assert.match(await toolError(mcp.client, "market_chart", { slug: RESOLVED, points: 501 }), /points/);
    });

    test("book_at answers the books of GET /snapshots/at, cut to the levels asked", async () => {
      const { data } = await answer(mcp.client, "book_at", { slug: RESOLVED, time: IN_MARKET, levels: 3 });
      const http = await api(
        `/v1/markets/${RESOLVED}/snapshots/at?time=${IN_MARKET}&include_orderbook=true`,
        key,
      );
      const s = http.snapshot;
      assert.deepEqual(
        [data.snapshot_time, data.distance_us, data.price_up, data.coin_price],
        [s.time, http.distance_us, s.price_up, s.coin_price],
      );
      for (const [side, book] of [
        ["up", s.orderbook_up],
        ["down", s.orderbook_down],
      ]) {
        assert.deepEqual(data[side].bids, book.bids.slice(0, 3), side);
        assert.deepEqual(data[side].asks, book.asks.slice(0, 3), side);
        assert.deepEqual(
          [data[side].bid_levels, data[side].ask_levels],
          [book.bids.length, book.asks.length],
        );
      }
      const ten = await answer(mcp.client, "book_at", { slug: RESOLVED, time: IN_MARKET });
      assert.equal(ten.data.up.asks.length, Math.min(10, s.orderbook_up.asks.length));
    });

    test("price_order answers GET /execution-price for the same order", async () => {
      const order = { outcome: "up", side: "buy", size: 250, time: IN_MARKET };
      const { data } = await answer(mcp.client, "price_order", { slug: RESOLVED, ...order });
      const http = await api(
        `/v1/markets/${RESOLVED}/execution-price?outcome=up&side=buy&size=250&time=${IN_MARKET}`,
        key,
      );
      for (const field of [
        "snapshot_time",
        "mid",
        "best_price",
        "average_price",
        "slippage_bps",
        "filled",
        "unfilled",
        "fee_usdc",
        "levels",
      ]) {
        assert.deepEqual(data[field], http[field], field);
      }
      assert.equal(data.levels_taken, http.levels.length);
    });

    test("run_backtest runs a definition over one market as POST /run does, with its metrics and trades", async () => {
      const { data, text } = await answer(mcp.client, "run_backtest", {
        definition: DEFINITION,
        slug: RESOLVED,
      });
      assert.equal(data.status, "complete", text);
      const http = await api("/v1/backtest-ai/run", key, {
        method: "POST",
        body: JSON.stringify({
          definition: DEFINITION,
          coin: "btc",
          market_type: "5m",
          market_count: 1,
          start_time: "2026-07-24T00:15:00Z",
          end_time: "2026-07-24T00:15:00Z",
        }),
      });
      assert.equal(http.run.status, "complete");
      assert.deepEqual(
        data.markets,
        http.results.map((r: Json) => ({
          slug: r.slug,
          winner: r.winner,
          trades: r.trades.length,
          pnl: r.pnl,
        })),
      );
      const { equity_curve: _curve, time_in_market_s: _s, ...metrics } = http.aggregate;
      assert.deepEqual(data.aggregate, metrics);
      // The definition that ran, in the API's words, in the result and at the end of the text.
      assert.equal(data.definition_text, http.run.definition_text);
      assert.ok(text.endsWith(`The definition that ran:\n${http.run.definition_text}`), text);
      const trade = http.results[0].trades[0];
      assert.deepEqual(data.first_trades[0], {
        slug: RESOLVED,
        entry_time: trade.entry.fill_time,
        entry_price: trade.entry.price,
        shares: trade.entry.shares_received,
        exit_reason: trade.exit_reason,
        exit_time: trade.exit?.fill_time ?? null,
        exit_price: trade.exit?.price ?? null,
        pnl: trade.pnl,
      });
      // Issue 25: the benchmarks and intervals beside the run, as the API answers them.
      assert.deepEqual(
        data.benchmarks,
        http.benchmarks.map((b: Json) => ({ name: b.name, trades: b.trades, pnl: b.pnl, roi: b.roi })),
      );
      assert.deepEqual(data.intervals, {
        pnl: http.intervals.pnl,
        roi: http.intervals.roi,
        win_rate: http.intervals.win_rate,
      });
      // In the one number format (client/src/format.ts): USDC with 2 decimals and its unit.
      const upPnl = http.benchmarks.find((b: Json) => b.name === "always_up").pnl;
      assert.ok(text.includes(`Benchmarks' PnL: always_up ${usdcText(upPnl)}, always_down`), text);
      assert.match(text, /\(ROI -?[\d,]+\.\d\d%\)/);
      const again = await answer(mcp.client, "run_backtest", { run_id: data.run_id });
      assert.deepEqual(again.data, data);
    });

    test("run_backtest with a preset over a series spends one generation, as POST /strategy does", async () => {
      const quota = async () => (await api("/v1/backtest-ai/quota", key)).used as number;
      const before = await quota();
      const args = { preset: "momentum_entry", coin: "eth", market_type: "5m", market_count: 2 };
      const { data } = await answer(mcp.client, "run_backtest", args);
      assert.equal(await quota(), before + 1);
      assert.deepEqual(data.strategy.source, "preset");
      const run = await api(`/v1/backtest-ai/runs/${data.run_id}`, key);
      assert.deepEqual(
        data.markets.map((m: Json) => m.slug),
        run.results.map((r: Json) => r.slug),
      );
      assert.equal(data.unresolved, run.unresolved.length);
    });

    test("a tool's mistaken arguments and the API's refusals are tool errors with the service's code", async () => {
      assert.match(
        await toolError(mcp.client, "run_backtest", {
          preset: "dip_buying",
          definition: DEFINITION,
          slug: RESOLVED,
        }),
        /exactly one of preset, prompt, definition or strategy_id/,
      );
      assert.match(
        await toolError(mcp.client, "run_backtest", { preset: "dip_buying" }),
        /slug, or coin and market_type/,
      );
      assert.match(
        await toolError(mcp.client, "market_summary", { slug: "btc-updown-5m-1" }),
        /^RESOURCE_NOT_FOUND \(HTTP 404\)/,
      );
      assert.match(
        await toolError(mcp.client, "book_at", { slug: RESOLVED, time: "yesterday" }),
        /^VALIDATION_ERROR \(HTTP 400\): time/,
      );
    });
  });
}

describe("plans and keys on both transports", () => {
  test("a starter key gets a tool error naming the plan for a pro market and for a backtest", async () => {
    const starter = await t.keyFor("starter");
    assert.equal((await api(`/v1/markets/${OLDER}`, starter)).error.code, "TIER_ACCESS_DENIED");
    for (const connect of [overHttp, overStdio]) {
      const mcp = await connect(starter);
      try {
        const market = await toolError(mcp.client, "market_summary", { slug: OLDER });
        assert.match(market, /^TIER_ACCESS_DENIED \(HTTP 403\): .*Required plan: pro\./);
        const chart = await toolError(mcp.client, "market_chart", { slug: OLDER });
        assert.match(chart, /Required plan: pro\./);
        const backtest = await toolError(mcp.client, "run_backtest", {
          definition: DEFINITION,
          coin: "eth",
          market_type: "5m",
        });
        assert.match(backtest, /^BACKTEST_AI_REQUIRED \(HTTP 403\): .*starter.*Required plan: pro\./);
        // What the starter plan opens, it answers.
        await answer(mcp.client, "market_summary", { slug: RESOLVED });
      } finally {
        await mcp.client.close();
      }
    }
  });

  test("over HTTP a bad or missing key is refused with 401 when the client connects", async () => {
    for (const headers of [{ "x-api-key": "ud_not_a_key" }, {}]) {
      const client = new Client({ name: "mcp-test", version: "1.0.0" });
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers },
      });
      await assert.rejects(client.connect(transport), (err: Error & { code?: unknown }) => {
        assert.equal(err.code, 401);
        assert.match(err.message, /"code":"UNAUTHORIZED"/);
        return true;
      });
    }
  });

  test("over stdio a refused key stops updown mcp at start: one line naming it, exit status 2", async () => {
    const { transport, stderr } = stdioTransport("ud_not_a_key");
    const client = new Client({ name: "mcp-test", version: "1.0.0" });
    await assert.rejects(client.connect(transport));
    await client.close();
    assert.match(
      stderr(),
      /UPDOWN_API_KEY was refused by http:\/\/127\.0\.0\.1:\d+: A valid API key is required/,
    );
    assert.doesNotMatch(stderr(), /ud_not_a_key/, "the key itself is never written");

    const child = spawn(process.execPath, [BIN, "mcp"], {
      env: { PATH: process.env.PATH, UPDOWN_URL: base, UPDOWN_API_KEY: "ud_not_a_key" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const [code] = (await once(child, "exit")) as [number];
    assert.equal(code, 2);
    assert.equal(out, "", "nothing but protocol on stdout");
  });

  test("over stdio a service not reachable yet is a warning at start, and each tool call an error", async () => {
    const closed = createServer();
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    const port = (closed.address() as { port: number }).port;
    closed.close();
    await once(closed, "close");
    const { transport, stderr } = stdioTransport("ud_any_key", `http://127.0.0.1:${port}`);
    const client = new Client({ name: "mcp-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      assert.match(stderr(), /warning: cannot check the key at http:\/\/127\.0\.0\.1:\d+ now/);
      assert.match(await toolError(client, "list_series", {}), /^NETWORK: /);
    } finally {
      await client.close();
    }
  });

  test("updown mcp answers every call written before its stdin closed, then exits 0; stdout is only protocol", async () => {
    const key = await t.keyFor("pro");
    const child = spawn(process.execPath, [BIN, "mcp"], {
      env: { PATH: process.env.PATH, UPDOWN_URL: base, UPDOWN_API_KEY: key },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const messages = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "pipe", version: "1" },
        },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { ...toolCall("market_summary", { slug: RESOLVED }), id: 2 },
    ];
    child.stdin.end(messages.map((m) => `${JSON.stringify(m)}\n`).join(""));
    const [code] = (await once(child, "exit")) as [number];
    assert.equal(code, 0);
    const answers = out
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Json);
    assert.deepEqual(
      answers.map((a) => [a.jsonrpc, a.id]),
      [
        ["2.0", 1],
        ["2.0", 2],
      ],
    );
    assert.equal(answers[1].result.structuredContent.market.slug, RESOLVED);
  });

  test("updown mcp --help names every tool", async () => {
    const child = spawn(process.execPath, [BIN, "mcp", "--help"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    await once(child, "exit");
    for (const name of TOOL_NAMES) assert.ok(out.replaceAll("\n", " ").includes(name), name);
    assert.match(out, /UPDOWN_API_KEY \(environment only\)/);
  });

  test("updown mcp without UPDOWN_API_KEY says so and exits 2", async () => {
    const child = spawn(process.execPath, [BIN, "mcp"], {
      env: { PATH: process.env.PATH, UPDOWN_URL: base },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const [code] = (await once(child, "exit")) as [number];
    assert.equal(code, 2);
    assert.match(err, /UPDOWN_API_KEY is required/);
  });
});

/** A JSON-RPC request to /mcp as any HTTP client sends it, without the SDK. */
function rawMcp(key: string, body: Json, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: "POST",
    headers: {
      "x-api-key": key,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const toolCall = (name: string, args: Json) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name, arguments: args },
});

describe("counting /mcp like any request", () => {
  test("over HTTP a tool call costs one request plus its reads; over stdio its reads", async () => {
    const key = await t.keyFor("pro");
    const http = await overHttp(key);
    const stdio = await overStdio(key);
    try {
      for (const [mcp, extra] of [
        [http, 1],
        [stdio, 0],
      ] as const) {
        for (const [name, args, reads] of [
          ["list_series", {}, 1],
          ["list_markets", { coin: "eth" }, 1],
          ["market_summary", { slug: RESOLVED }, 3],
          ["book_at", { slug: RESOLVED, time: IN_MARKET }, 1],
          ["run_backtest", { definition: DEFINITION, slug: RESOLVED }, 2],
        ] as const) {
          const before = await minuteUsed(key);
          await answer(mcp.client, name, args);
          assert.equal(await minuteUsed(key), before + reads + extra, `${name}: ${reads} reads + ${extra}`);
        }
      }
    } finally {
      await http.client.close();
      await stdio.client.close();
    }
  });

  test("the /mcp answer carries its request id and the limit headers as they stand after its reads", async () => {
    const key = await t.keyFor("pro");
    const res = await rawMcp(key, toolCall("market_summary", { slug: RESOLVED }), {
      "x-request-id": "mcp-call-1",
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-request-id"), "mcp-call-1");
    assert.equal(res.headers.get("x-tier"), "pro");
    const account = await api("/v1/account", key);
    assert.equal(account.usage.day.used, 4);
    assert.equal(res.headers.get("x-ratelimit-remaining"), String(account.usage.day.remaining));
    assert.match(
      res.headers.get("ratelimit") ?? "",
      new RegExp(`"minute";r=${account.usage.minute.remaining};`),
    );
    const body = (await res.json()) as Json;
    assert.equal(body.result.structuredContent.market.slug, RESOLVED);

    // The reads a call makes carry the call's id with a suffix, so one log search finds them all.
    const failed = await rawMcp(key, toolCall("book_at", { slug: RESOLVED, time: "2026-07-24T00:10:00Z" }), {
      "x-request-id": "mcp-call-2",
    });
    const text = ((await failed.json()) as Json).result.content[0].text as string;
    assert.match(text, /^RESOURCE_NOT_FOUND \(HTTP 404\).*Request id: mcp-call-2\.1\./);
  });

  test("a key over its minute gets 429 for the /mcp call, and a tool whose read is refused says so", async () => {
    const { key } = await t.keys.create({ plan: "enterprise", account: "mcp-429", perMinuteLimit: 3 });
    // 1: the call; 2 and 3: market_summary's first two reads; its third read is refused.
    const partial = await rawMcp(key, toolCall("market_summary", { slug: RESOLVED }));
    assert.equal(partial.status, 200);
    const text = ((await partial.json()) as Json).result.content[0].text as string;
    assert.match(text, /^RATE_LIMIT_EXCEEDED \(HTTP 429\): .*Retry after \d+ s\./);
    assert.equal(partial.headers.get("ratelimit")?.startsWith('"minute";r=0;'), true);
    const refused = await rawMcp(key, toolCall("list_series", {}));
    assert.equal(refused.status, 429);
    assert.ok(refused.headers.get("retry-after"));
    assert.equal(((await refused.json()) as Json).error.code, "RATE_LIMIT_EXCEEDED");
  });

  test("what the MCP transport cannot read is a 400 in the service's envelope; GET is 405", async () => {
    const key = await t.keyFor("pro");
    const wrongAccept = await rawMcp(key, toolCall("list_series", {}), { accept: "application/json" });
    assert.equal(wrongAccept.status, 400);
    const body = (await wrongAccept.json()) as Json;
    assert.equal(body.error.code, "BAD_REQUEST");
    assert.match(body.error.message, /^MCP: Not Acceptable/);
    assert.equal(wrongAccept.headers.get("x-tier"), "pro", "counted, with its limit headers");
    const notJsonRpc = await rawMcp(key, { hello: "world" });
    assert.equal(notJsonRpc.status, 400);
    assert.equal(((await notJsonRpc.json()) as Json).error.code, "BAD_REQUEST");
    const before = await minuteUsed(key);
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(`${base}/mcp`, {
        method,
        headers: { "x-api-key": key, accept: "text/event-stream" },
      });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get("allow"), "OPTIONS, POST");
      assert.equal(((await res.json()) as Json).error.code, "METHOD_NOT_ALLOWED");
    }
    assert.equal(await minuteUsed(key), before, "a 405 outside /v1 counts nothing");
  });
});

describe("hostile tool arguments", () => {
  test("a slug that would leave its path segment (.., ., /, %2F, %2e%2e) is an invalid argument; no other route is read", async () => {
    const key = await t.keyFor("pro");
    for (const slug of ["..", ".", "a/b", "..%2F..%2Fseries", "%2e%2e", "btc-updown-5m-1/../..", "x?y=1"]) {
      for (const tool of ["market_summary", "market_chart", "book_at"]) {
        const before = await minuteUsed(key);
        const res = await rawMcp(key, toolCall(tool, { slug, time: IN_MARKET }));
        assert.equal(res.status, 200);
        const body = (await res.json()) as Json;
        assert.equal(body.result.isError, true, `${tool} ${slug}`);
        assert.match(body.result.content[0].text, /^MCP error -32602: Input validation error: .*slug/s);
        // The /mcp request itself and nothing else.
        assert.equal(await minuteUsed(key), before + 1, `${tool} ${slug}`);
      }
    }
  });

  test("arguments that are not an object, or a tool name that is not a string: JSON-RPC -32602, not -32603", async () => {
    const key = await t.keyFor("pro");
    for (const params of [
      { name: "list_markets", arguments: "x" },
      { name: "list_markets", arguments: [1] },
      { name: 5, arguments: {} },
      { arguments: {} },
    ]) {
      const res = await rawMcp(key, { jsonrpc: "2.0", id: 7, method: "tools/call", params });
      assert.equal(res.status, 200);
      const body = (await res.json()) as Json;
      assert.equal(body.id, 7);
      assert.equal(body.error.code, -32602, JSON.stringify(params));
      assert.match(body.error.message, /^Invalid params for tools\/call: params\./);
    }
  });
});
