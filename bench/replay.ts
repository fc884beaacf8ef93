import { fork } from "node:child_process";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import WebSocket from "ws";
import { type MarketEvent, marketEventOf } from "../src/domain/event.ts";
import type { Market } from "../src/domain/market.ts";
import { buildApp } from "../src/http/app.ts";
import { SqliteStore } from "../src/store/dialects/sqlite/sqlite-store.ts";

/**
 * Replay throughput (issue 22): one market's recorded events replayed at speed=max over
 * GET /v1/replay/ws to a WebSocket client in a process of its own (it counts frames), as messages per
 * second, against reading and decoding the same events from the store (streamMarketEvents) and
 * discarding them, in the same run on the same SQLite file. Target: the ratio at least 0.5.
 */

export interface ReplayBenchResult {
  events: number;
  /** Bytes of the messages' JSON, in all. */
  messageBytes: number;
  readPerSecond: number;
  replayPerSecond: number;
  ratio: number;
  target: number;
  pass: boolean;
}

const TARGET = 0.5;
const START = 1784851200;

const MARKET: Market = {
  slug: `btc-updown-15m-${START}`,
  polymarketSlug: null,
  coin: "btc",
  marketType: "15m",
  marketId: "1",
  eventId: "1",
  startTime: START,
  endTime: START + 900,
  coinPriceStart: 100_000,
  coinPriceEnd: 100_100,
  conditionId: "0xbench",
  clobTokenUp: "1111111111111111111111111111111111111111111111111111111111111111111111111111",
  clobTokenDown: "2222222222222222222222222222222222222222222222222222222222222222222222222222",
  winner: "Up",
  finalVolume: 1,
  finalLiquidity: 1,
  resolvedAt: START + 918,
  createdAt: 0,
  updatedAt: 0,
  settlement: { source: "chainlink", lookbackS: null },
  feeSchedule: null,
};

/**
 * A busy market's stream as the upstream sends it: mostly one-entry price changes, a trade every 20th
 * message, a 20-level book of each token every 500th, over 15 minutes.
 */
function events(count: number): MarketEvent[] {
  const out: MarketEvent[] = [];
  const t0 = START * 1000;
  for (let i = 0; i < count; i++) {
    const ts = t0 + Math.floor((i * 900_000) / count);
    const asset = i % 2 === 0 ? MARKET.clobTokenUp : MARKET.clobTokenDown;
    const price = (0.3 + (i % 40) / 100).toFixed(2);
    let message: Record<string, unknown>;
    if (i % 500 === 0 || i % 500 === 1) {
      const levels = (from: number, dir: number) =>
        Array.from({ length: 20 }, (_, k) => ({
          price: (from + dir * k * 0.01).toFixed(2),
          size: `${100 + k}.5`,
        }));
      message = {
        market: MARKET.conditionId,
        asset_id: asset,
        timestamp: String(ts),
        hash: `0x${i.toString(16).padStart(40, "0")}`,
        bids: levels(0.3, -0.5),
        asks: levels(0.7, 0.5),
        tick_size: "0.01",
        event_type: "book",
        last_trade_price: "0.50",
      };
    } else if (i % 20 === 0) {
      message = {
        event_type: "last_trade_price",
        market: MARKET.conditionId,
        asset_id: asset,
        fee_rate_bps: "0",
        price,
        side: "BUY",
        size: `${i % 97}.25`,
        timestamp: String(ts),
      };
    } else {
      message = {
        event_type: "price_change",
        market: MARKET.conditionId,
        price_changes: [
          {
            asset_id: asset,
            price,
            side: i % 3 === 0 ? "SELL" : "BUY",
            size: `${(i * 7) % 5000}.0`,
            hash: `0x${i.toString(16).padStart(40, "0")}`,
            best_bid: "0.49",
            best_ask: "0.51",
          },
        ],
        timestamp: String(ts),
      };
    }
    const e = marketEventOf(message, ts * 1000 + (i % 1000));
    if ("problem" in e) throw new Error(e.problem);
    out.push(e);
  }
  return out;
}

/** The client's side (a process of its own): connect, subscribe, count frames until the close. */
async function client(url: string, slug: string): Promise<void> {
  const ws = new WebSocket(url);
  await once(ws, "open");
  let frames = 0;
  ws.on("message", () => frames++);
  const started = performance.now();
  ws.send(JSON.stringify({ assets_ids: [slug], type: "market" }));
  const [code] = (await once(ws, "close")) as [number];
  process.send?.({ frames, ms: performance.now() - started, code });
}

export async function measureReplay(options: { tmp: string; events?: number }): Promise<ReplayBenchResult> {
  const store = new SqliteStore(join(options.tmp, "replay.db"));
  await store.migrate();
  const app = await buildApp({ store, unmetered: true });
  try {
    const all = events(options.events ?? 300_000);
    const { key } = await store.markets.upsertMarket(MARKET);
    for (let i = 0; i < all.length; i += 20_000) {
      await store.events.appendMarketEvents([{ marketKey: key, events: all.slice(i, i + 20_000) }]);
    }
    const messageBytes = all.reduce((n, e) => n + JSON.stringify(e.message).length, 0);

    // Reading and decoding, discarded: the floor of any replay; measured before and after the replay
    // (their mean is used), as the machine's load drifts.
    const readRate = async () => {
      let read = 0;
      const t0 = performance.now();
      for await (const block of store.events.streamMarketEvents(key)) read += block.length;
      if (read !== all.length) throw new Error(`read ${read} of ${all.length} events`);
      return read / ((performance.now() - t0) / 1000);
    };
    const readBefore = await readRate();

    await app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = app.server.address() as AddressInfo;
    const from = new Date(START * 1000 - 60_000).toISOString();
    const to = new Date((START + 960) * 1000).toISOString();
    const url = `ws://127.0.0.1:${port}/v1/replay/ws?from=${from}&to=${to}&speed=max`;
    const child = fork(import.meta.filename, ["client", url, MARKET.slug], { stdio: "inherit" });
    const [answer] = (await once(child, "message")) as [{ frames: number; ms: number; code: number }];
    await once(child, "exit");
    if (answer.code !== 1000 || answer.frames !== all.length)
      throw new Error(`replay: ${answer.frames} of ${all.length} frames, close ${answer.code}`);
    const readPerSecond = (readBefore + (await readRate())) / 2;
    const replayPerSecond = answer.frames / (answer.ms / 1000);
    const ratio = replayPerSecond / readPerSecond;
    return {
      events: all.length,
      messageBytes,
      readPerSecond,
      replayPerSecond,
      ratio,
      target: TARGET,
      pass: ratio >= TARGET,
    };
  } finally {
    await app.close();
    await store.close();
  }
}

if (process.argv[2] === "client") await client(process.argv[3], process.argv[4]);
