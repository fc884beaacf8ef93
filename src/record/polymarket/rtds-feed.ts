import { type Coin, DEFAULT_COINS, parseCoin, type Settlement } from "../../domain/market.ts";
import { settlementName } from "../../domain/settlement.ts";
import { type CoinEvent, type CoinEventTopic, COIN_EVENT_TOPICS } from "../../domain/event.ts";
import type { Clock } from "../../domain/time.ts";
import { PriceFeed, scaledDecimalToNumber } from "../../upstream/price-feed.ts";
import { SocketFeed, type SocketFeedOptions } from "./socket-feed.ts";

/**
 * Coin prices from Polymarket's real-time data socket: the Chainlink topic settles 4h markets and the
 * 5m and 15m ones from before the switch to TWAP, the TWAP topics (30 s and 60 s lookback) the 5m and
 * 15m ones after it, the Binance topic gives 1h and 24h markets their coin price (DESIGN 3.4). Every
 * tick goes into a PriceFeed per stream and coin, the same code the importer settles recorded markets
 * with.
 */

const TOPIC_STREAM: Record<string, Settlement> = {
  crypto_prices_chainlink: { source: "chainlink", lookbackS: null },
  crypto_prices_twap_thirty: { source: "chainlink_twap", lookbackS: 30 },
  crypto_prices_twap_sixty: { source: "chainlink_twap", lookbackS: 60 },
  crypto_prices: { source: "binance", lookbackS: null },
};

/** Chainlink's streams name pairs `btc/usd`, the Binance topic `btcusdt`. */
function coinOfSymbol(symbol: string): Coin | null {
  const lower = symbol.toLowerCase();
  const code = lower.endsWith("/usd")
    ? lower.slice(0, -4)
    : lower.endsWith("usdt")
      ? lower.slice(0, -4)
      : null;
  return code === null ? null : parseCoin(code);
}

export interface RtdsFeedOptions extends SocketFeedOptions {
  /** The coins whose Binance prices are asked for (the Chainlink topics send every pair). Default DEFAULT_COINS. */
  coins?: readonly Coin[];
}

/**
 * The most exact value a payload carries: Chainlink's `full_accuracy_value` is an integer scaled by
 * 1e18, the Binance topic's a plain decimal string; `value` is a double rounded upstream.
 */
function tickValue(payload: Record<string, unknown>): number {
  const full = payload.full_accuracy_value;
  if (typeof full === "string" && /^-?\d{19,}$/.test(full)) return scaledDecimalToNumber(full);
  if (typeof full === "string" && full.trim() !== "" && Number.isFinite(Number(full))) return Number(full);
  if (typeof payload.value === "number" && Number.isFinite(payload.value)) return payload.value;
  throw new Error("price update without a value");
}

export class RtdsFeed extends SocketFeed {
  private readonly clock: Clock;
  private readonly feeds = new Map<string, PriceFeed>();
  private readonly coins: readonly Coin[];
  private keeping = false;
  private events: CoinEvent[] = [];

  constructor(opts: RtdsFeedOptions) {
    super("rtds", opts, { heartbeatIntervalMs: 5_000, silenceLimitMs: 20_000 });
    this.clock = opts.scheduler;
    this.coins = opts.coins ?? DEFAULT_COINS;
  }

  protected subscribe(send: (text: string) => void): void {
    send(
      JSON.stringify({
        action: "subscribe",
        subscriptions: [
          { topic: "crypto_prices", type: "update", filters: this.coins.map((c) => `${c}usdt`).join(",") },
          { topic: "crypto_prices_chainlink", type: "*", filters: "" },
          { topic: "crypto_prices_twap_thirty", type: "*", filters: "" },
          { topic: "crypto_prices_twap_sixty", type: "*", filters: "" },
        ],
      }),
    );
  }

  /** The ticks of one stream (a market's settlement) for one coin. */
  feed(stream: Settlement, coin: Coin): PriceFeed {
    const key = `${settlementName(stream)}:${coin}`;
    let feed = this.feeds.get(key);
    if (!feed) {
      feed = new PriceFeed();
      this.feeds.set(key, feed);
    }
    return feed;
  }

  /** From now on, keep every price update of the followed coins as an event (off by default). */
  keepEvents(): void {
    this.keeping = true;
  }

  /** The price updates received since the last call, in receive order. */
  takeEvents(): CoinEvent[] {
    const taken = this.events;
    this.events = [];
    return taken;
  }

  /** Forgets ticks older than `second`; settled markets no longer need them. */
  forgetBefore(second: number): void {
    for (const feed of this.feeds.values()) feed.dropBefore(second);
  }

  protected apply(m: Record<string, unknown>): void {
    const source = TOPIC_STREAM[String(m.topic)];
    if (!source || typeof m.payload !== "object" || m.payload === null) return;
    const payload = m.payload as Record<string, unknown>;
    const coin = coinOfSymbol(String(payload.symbol));
    if (!coin) return;
    const receivedUs = this.clock.nowMicros();
    if (this.keeping && this.coins.includes(coin)) this.keep(m, coin, receivedUs);
    const receivedMs = Math.floor(receivedUs / 1000);
    const feed = this.feed(source, coin);
    // On subscribing the socket sends recent history as one message with a `data` list.
    const ticks = Array.isArray(payload.data) ? (payload.data as Record<string, unknown>[]) : [payload];
    for (const tick of ticks) {
      const ms = tick.timestamp;
      if (typeof ms !== "number" || !Number.isFinite(ms)) throw new Error("tick without a timestamp");
      feed.addTick(Math.floor(ms / 1000), tickValue(tick), receivedMs);
    }
  }

  /** The update kept whole, under its coin and topic, stamped with the socket's send time. */
  private keep(m: Record<string, unknown>, coin: Coin, receivedUs: number): void {
    const topic = String(m.topic);
    const payload = m.payload as Record<string, unknown>;
    const ms = typeof m.timestamp === "number" ? m.timestamp : payload.timestamp;
    if (!isCoinEventTopic(topic) || typeof ms !== "number" || !Number.isSafeInteger(ms)) return;
    this.events.push({ coin, topic, receivedUs, timestampMs: ms, message: m });
  }
}

function isCoinEventTopic(topic: string): topic is CoinEventTopic {
  return (COIN_EVENT_TOPICS as readonly string[]).includes(topic);
}
