import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, test } from "node:test";
import { ManualClock, systemClock } from "../../../src/domain/time.ts";
import { SqliteStore } from "../../../src/store/dialects/sqlite/sqlite-store.ts";
import { makeTestApp } from "../../helpers/app.ts";
import { BinanceUpstream } from "../../helpers/binance-upstream.ts";
import {
  gammaMarket,
  type PolymarketUpstream,
  startPolymarketUpstream,
  until,
} from "../../helpers/polymarket-upstream.ts";
import { BIN } from "../../helpers/paths.ts";

/**
 * `updown collect` as a real process against local upstream servers, killed with SIGKILL mid-market
 * and started again: no second, no trade and no event is recorded twice, the database is intact, and the
 * coverage endpoint shows the time it was down as a gap with its cause. Real processes run on the wall clock, so this
 * test waits for events of real time (snapshots stored, the feed's prices of later seconds); it is kept short.
 */

let upstream: PolymarketUpstream;
let dir: string;
let prices: NodeJS.Timeout;
/** The second of the settlement feed's latest price: the upstream's own clock, seen by the test. */
let lastPriceSecond = 0;
let trades: NodeJS.Timeout;
const children: ChildProcess[] = [];

before(async () => {
  upstream = await startPolymarketUpstream();
  let id = 9000;
  upstream.gamma.fallback = (slug) =>
    /^btc-updown-15m-\d+$/.test(slug) ? gammaMarket(slug, ++id, [`${slug}-up`, `${slug}-down`]) : null;
  upstream.clob.autoBook = () => ({
    bids: [
      { price: 0.47, size: 120 },
      { price: 0.48, size: 55.5 },
    ],
    asks: [
      { price: 0.5, size: 80 },
      { price: 0.49, size: 10.25 },
    ],
  });
  // The settlement feed ticks every 200 ms of real time, as Chainlink's does about once a second.
  prices = setInterval(() => {
    lastPriceSecond = Math.floor(Date.now() / 1000);
    upstream.rtds.price("chainlink", "btc", lastPriceSecond * 1000, "65000120000000000000000");
  }, 200);
  // A trade of every subscribed token every 250 ms, each told apart by its size. A new subscription
  // is sent the last trades again, so a restarted collector receives trades it may have stored.
  upstream.clob.replayTrades = 40;
  let n = 0;
  trades = setInterval(() => {
    for (const id of upstream.clob.subscribedTokens) {
      upstream.clob.trade(id, 0.49, { timestampMs: Date.now(), size: String(++n), side: "BUY" });
    }
  }, 250);
  upstream.clob.sent = [];
  dir = mkdtempSync(join(tmpdir(), "updown-collect-"));
});

after(async () => {
  clearInterval(prices);
  clearInterval(trades);
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

function startCollector(
  extra: string[] = ["--types", "15m", "--venues", "none"],
  env: Record<string, string> = {},
  db = "collect.db",
): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [BIN, "collect", "--coins", "btc", "--lookahead", "0", ...extra], {
    env: {
      ...process.env,
      ...env,
      DATABASE_URL: `sqlite:${join(dir, db)}`,
      POLYMARKET_GAMMA_URL: upstream.gammaUrl,
      POLYMARKET_CLOB_WS_URL: upstream.clobUrl,
      POLYMARKET_RTDS_URL: upstream.rtdsUrl,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (out += c.toString()));
  return { child, output: () => out };
}

function snapshotsPerMarket(): Map<string, { times: number[]; count: number }> {
  const path = join(dir, "collect.db");
  // Until the collector has created it, there is nothing to read.
  if (!existsSync(path)) return new Map();
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const out = new Map<string, { times: number[]; count: number }>();
    for (const m of db.prepare("SELECT id, slug, snapshot_count FROM markets").all()) {
      const times = db
        .prepare("SELECT time_us FROM snapshots WHERE market = ? ORDER BY time_us")
        .all(m.id as number)
        .map((r) => r.time_us as number);
      out.set(m.slug as string, { times, count: m.snapshot_count as number });
    }
    return out;
  } catch {
    return new Map();
  } finally {
    db.close();
  }
}

const total = () => [...snapshotsPerMarket().values()].reduce((n, m) => n + m.times.length, 0);

async function waitFor(condition: () => boolean, what: string | (() => string)): Promise<void> {
  await until(condition, what, 20_000);
}

test("killed with SIGKILL mid-market and restarted: no duplicates, and the gap is reported", async () => {
  const first = startCollector();
  await waitFor(
    () => total() >= 3,
    () => `three snapshots (output: ${first.output()})`,
  );
  first.child.kill("SIGKILL");
  await new Promise((resolve) => first.child.once("exit", resolve));
  const killedAt = systemClock.nowMicros();
  const connectionsOfFirst = upstream.clob.connections;
  const before = total();
  // Down for long enough that at least two ticks are missed whatever the restart takes: until the
  // settlement feed has published the price of the second two seconds after the kill.
  const killedSecond = Math.floor(killedAt / 1e6);
  await waitFor(() => lastPriceSecond >= killedSecond + 2, "the feed's price two seconds after the kill");

  const second = startCollector();
  await waitFor(
    () => total() >= before + 3,
    () => `snapshots after the restart (output: ${second.output()})`,
  );
  // Every frame sent until now has been received and written two ticks later, whatever the stop does.
  const sentBeforeStop = upstream.clob.sent?.length ?? 0;
  const snapshotsThen = total();
  await waitFor(() => total() >= snapshotsThen + 2, "two more ticks");
  second.child.kill("SIGTERM");
  const code = await new Promise((resolve) => second.child.once("exit", resolve));
  assert.equal(code, 0, second.output());

  const db = new DatabaseSync(join(dir, "collect.db"), { readOnly: true });
  assert.equal(db.prepare("PRAGMA integrity_check").get()?.integrity_check, "ok");
  // The trades of the second before the kill reached both runs (the second as a replay): each is
  // stored exactly once.
  const stored = db
    .prepare("SELECT size FROM market_trades")
    .all()
    .map((r) => r.size as number);
  assert.equal(new Set(stored).size, stored.length, "no trade recorded twice");
  const lastBeforeKill = upstream.clob.tradeLog.filter((t) => {
    const us = Number(t.timestamp) * 1000;
    return us < killedAt && us > killedAt - 1e6;
  });
  assert.ok(lastBeforeKill.length > 0);
  for (const t of lastBeforeKill)
    assert.ok(stored.includes(Number(t.size)), `trade ${String(t.size)} stored`);
  db.close();
  const markets = snapshotsPerMarket();
  for (const [slug, m] of markets) {
    assert.equal(m.count, m.times.length, `${slug}: snapshot_count equals the stored rows`);
    const seconds = new Set(m.times.map((t) => Math.floor(t / 1e6)));
    assert.equal(seconds.size, m.times.length, `${slug}: no second recorded twice`);
  }

  const killed = [...markets.entries()].find(
    ([, m]) => m.times.some((t) => t < killedAt) && m.times.at(-1)! > killedAt,
  );
  assert.ok(killed, "one market was recorded before and after the kill");
  const store = new SqliteStore(join(dir, "collect.db"));
  await store.migrate();
  await eventsStoredOnce(store, connectionsOfFirst, sentBeforeStop);
  const t = await makeTestApp({ store, seed: false, clock: new ManualClock(systemClock.nowMicros()) });
  try {
    const res = await t.get(`/v1/markets/${killed[0]}/coverage`);
    assert.equal(res.statusCode, 200);
    const gaps = res.json().gaps as { from: string; to: string; cause: string; missing_snapshots: number }[];
    const down = gaps.filter((g) => g.cause === "collector_down");
    assert.equal(down.length, 1, JSON.stringify(gaps));
    assert.ok(Date.parse(down[0].from) * 1000 < killedAt && Date.parse(down[0].to) * 1000 > killedAt);
    assert.ok(down[0].missing_snapshots >= 2);
  } finally {
    await t.close();
  }
});

/**
 * The events of the killed and restarted collector: each market-channel message the upstream sent is
 * stored at most as often as it was sent (a trade replayed to the new subscription was received
 * twice), and every message the restarted run received before its stop was stored exactly once.
 */
async function eventsStoredOnce(store: SqliteStore, connectionsOfFirst: number, sentBeforeStop: number) {
  const canonical = (m: unknown): string =>
    JSON.stringify(m, (_k, v: unknown) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
        : v,
    );
  const storedTimes = new Map<string, number>();
  for (const key of await store.events.marketsWithEvents()) {
    for await (const block of store.events.streamMarketEvents(key))
      for (const e of block)
        storedTimes.set(canonical(e.message), (storedTimes.get(canonical(e.message)) ?? 0) + 1);
  }
  const sent = (upstream.clob.sent ?? []).map((f, i) => ({ ...f, i }));
  const messagesOf = (text: string): unknown[] => {
    if (text === "PONG") return [];
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v : [v];
  };
  const sentTimes = new Map<string, number>();
  for (const f of sent)
    for (const m of messagesOf(f.text)) sentTimes.set(canonical(m), (sentTimes.get(canonical(m)) ?? 0) + 1);
  assert.ok(storedTimes.size > 0, "events were stored");
  for (const [m, n] of storedTimes)
    assert.ok(n <= (sentTimes.get(m) ?? 0), `stored ${n} times, sent fewer: ${m}`);
  const secondRun = sent.filter((f) => f.connection > connectionsOfFirst && f.i < sentBeforeStop);
  const received = secondRun.flatMap((f) => messagesOf(f.text));
  assert.ok(received.length > 0, "the restarted run received messages");
  for (const m of received)
    assert.ok((storedTimes.get(canonical(m)) ?? 0) >= 1, `lost after the restart: ${canonical(m)}`);
  // Those only the restarted run was sent (its own books, later trades) are stored exactly once.
  for (const m of received)
    if (sentTimes.get(canonical(m)) === 1) assert.equal(storedTimes.get(canonical(m)), 1, canonical(m));
}

test("collect records Binance beside Polymarket, into the same database the API serves", async () => {
  const binance = await BinanceUpstream.start(systemClock, Date.now() - 60_000, Date.now());
  const run = startCollector(
    ["--types", "none", "--venues", "spot"],
    {
      BINANCE_SPOT_WS_URL: binance.urls.spotWs,
      BINANCE_SPOT_REST_URL: binance.urls.spotRest,
      BINANCE_FUTURES_WS_URL: binance.urls.futuresWs,
      BINANCE_FUTURES_REST_URL: binance.urls.futuresRest,
    },
    "binance.db",
  );
  try {
    await binance.connected("spot", 1);
    const store = new SqliteStore(join(dir, "binance.db"));
    await store.migrate();
    binance.send("spot", "btcusdt@depth20@1000ms", {
      lastUpdateId: 7,
      bids: [["65000.01000000", "0.50000000"]],
      asks: [["65000.02000000", "1.25000000"]],
    });
    const t = await makeTestApp({ store, seed: false, clock: new ManualClock(systemClock.nowMicros()) });
    try {
      let body: { bids?: { price: number; size: number }[] } = {};
      await until(
        () => body.bids !== undefined,
        "the depth to be stored",
        20_000,
        async () => {
          const res = await t.get("/v1/btc/spot/latest");
          if (res.statusCode === 200) body = res.json();
        },
      );
      assert.deepEqual(body.bids, [{ price: 65000.01, size: 0.5 }]);
    } finally {
      await t.close();
    }
    run.child.kill("SIGTERM");
    assert.equal(await new Promise((resolve) => run.child.once("exit", resolve)), 0, run.output());
  } finally {
    await binance.close();
  }
});

test("SIGTERM while a Gamma look-up hangs: exit 0 at DRAIN_SECONDS, not at Gamma's timeout, database intact", async () => {
  // A 15m market that ended unresolved half an hour ago: the collector takes it over and polls Gamma
  // for its resolution at once, in the background; Gamma never answers for it (its own timeout: 10 s).
  const anchor = new Date(Date.now() - 30 * 60_000).toISOString();
  const db = "drain.db";
  const seeded = spawnSync(
    process.execPath,
    [BIN, "seed", "--coins", "btc", "--counts", "5m=0,15m=1,1h=0,4h=0,24h=0", "--anchor", anchor],
    { env: { ...process.env, DATABASE_URL: `sqlite:${join(dir, db)}` }, encoding: "utf8" },
  );
  assert.equal(seeded.status, 0, seeded.stderr);
  const store = new SqliteStore(join(dir, db));
  const [ended] = (await store.markets.listMarkets({ limit: 1, offset: 0 })).markets;
  await store.close();
  upstream.gamma.stalled.add(ended.slug);
  try {
    const asked = () => upstream.gamma.requests.some((r) => r.includes(ended.slug));
    const run = startCollector(["--types", "15m", "--venues", "none"], { DRAIN_SECONDS: "1" }, db);
    await waitFor(asked, () => `the resolution poll of ${ended.slug} (output: ${run.output()})`);
    const signalled = Date.now();
    run.child.kill("SIGTERM");
    const code = await new Promise((resolve) => run.child.once("exit", resolve));
    const ms = Date.now() - signalled;
    assert.equal(code, 0, run.output());
    assert.ok(ms < 1000 + 3000, `exited ${ms} ms after SIGTERM, not after Gamma's 10 s timeout`);
    assert.match(run.output(), /drain deadline of 1 s passed; abandoning upstream calls in flight/);
    const check = new DatabaseSync(join(dir, db), { readOnly: true });
    assert.equal(check.prepare("PRAGMA integrity_check").get()?.integrity_check, "ok");
    check.close();
  } finally {
    upstream.gamma.stalled.delete(ended.slug);
  }
});

test("collect refuses bad options with one line and exit status 2, and explains itself with --help", () => {
  for (const [args, message] of [
    [["--types", "7m"], /--types: 7m is not one of 5m, 15m, 1h, 4h, 24h/],
    [["--coins", "b@d"], /--coins\): b@d is not a coin code/],
    [["--venues", "margin"], /--venues: margin is not one of spot, futures, or none/],
    [["--lookahead", "99"], /--lookahead must be an integer from 0 to 10/],
  ] as const) {
    const res = spawnSync(process.execPath, [BIN, "collect", ...args], {
      env: { ...process.env, DATABASE_URL: `sqlite:${join(dir, "refused.db")}` },
      encoding: "utf8",
    });
    assert.equal(res.status, 2, res.stderr);
    assert.match(res.stderr, message);
  }
  const help = spawnSync(process.execPath, [BIN, "collect", "--help"], { encoding: "utf8" });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /POLYMARKET_CLOB_WS_URL/);
});
