import { type ExchangeBatch, type ExchangeCounts, symbolOf, type Venue } from "../../domain/exchange.ts";
import type { Coin } from "../../domain/market.ts";
import type { ExchangeStore } from "../../store/ports/exchange-store.ts";
import {
  aggTradeFrom,
  candleFromKlineEvent,
  depthFromEvent,
  fundingFrom,
  markPriceFromEvent,
  openInterestFrom,
  tradeFromEvent,
} from "./parse.ts";
import { BinanceBannedError, BinanceRest } from "./rest.ts";
import { errorMessage, type Logger, silentLogger } from "../../log.ts";
import { nowMillis, type Scheduler, systemScheduler } from "../scheduler.ts";
import { ReconnectingSocket, type SocketLoss } from "../socket/reconnecting-socket.ts";
import { type BinanceUrls, DEFAULT_BINANCE_URLS, DEFAULT_WEIGHT_LIMITS } from "./urls.ts";

/**
 * Live recording of Binance spot and futures over combined-stream WebSockets (one connection per
 * venue for every coin): depth20 snapshots kept at one a second per coin and venue, every trade
 * (futures: aggregate trades), 1m candles once closed, and on futures the mark price stream (one a
 * second). Rows are buffered and written in one transaction a second. Futures funding rates and open
 * interest, which have no stream, are polled over REST.
 *
 * Connections are ReconnectingSockets: a connection silent for `silenceMs` is dropped and made again;
 * a closed or failed one is made again after an exponential backoff with jitter (reset once a new
 * connection delivers); before Binance's 24-hour limit a fresh connection is opened and the old one
 * closed once the new one delivers, so the handover leaves no gap. Binance pings and the WebSocket
 * answers by itself, so there is no heartbeat of ours. Every connection subscribes to all the streams
 * in its URL, so a reconnect is a resubscription. Writes are idempotent, so an overlap never
 * duplicates.
 */

export interface RecorderEvent {
  type: "open" | "close" | "reconnect" | "rotate" | "message" | "flush" | "poll" | "error";
  venue?: Venue;
  /** open: the URL; close/reconnect: why; message: the stream; error: what. */
  detail?: string;
  /** reconnect: the backoff delay. */
  delayMs?: number;
  /** flush: rows newly stored. */
  counts?: ExchangeCounts;
}

export interface RecorderOptions {
  store: ExchangeStore;
  coins: Coin[];
  venues: Venue[];
  urls?: Partial<BinanceUrls>;
  scheduler?: Scheduler;
  log?: Logger;
  /** No message for this long: the connection is dropped and made again. Default 10 s. */
  silenceMs?: number;
  /** Buffered rows are written this often. Default 1 s. */
  flushMs?: number;
  /** First reconnect delay, doubled per failed attempt up to maxBackoffMs. Defaults 1 s and 60 s. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Connections are replaced after this long (Binance closes them at 24 h). Default 23 h 30 min. */
  maxConnectionMs?: number;
  /** Futures funding rates and open interest are polled this often over REST; 0: never. Default 5 min. */
  pollMs?: number;
  futuresWeightLimit?: number;
  /** Aborted when the process stops waiting for upstream calls: a REST poll in flight fails at once. */
  signal?: AbortSignal;
  /** 0..1, spreads reconnect delays by ±20 % so that replicas do not reconnect in step. */
  random?: () => number;
  onEvent?: (event: RecorderEvent) => void;
}

export interface BinanceRecorder {
  /** Closes the connections, cancels the timers and writes what is buffered. */
  stop(): Promise<void>;
}

/** Streams of one venue for the given coins, in the combined-stream URL's form. */
export function streamsOf(venue: Venue, coins: Coin[]): string[] {
  return coins.flatMap((coin) => {
    const s = symbolOf(coin).toLowerCase();
    return venue === "spot"
      ? [`${s}@depth20@1000ms`, `${s}@trade`, `${s}@kline_1m`]
      : [`${s}@depth20@500ms`, `${s}@aggTrade`, `${s}@kline_1m`, `${s}@markPrice@1s`];
  });
}

const MAX_BUFFERED_ROWS = 200_000;

export function startBinanceRecorder(options: RecorderOptions): BinanceRecorder {
  const recorder = new Recorder(options);
  recorder.start();
  return recorder;
}

class Recorder implements BinanceRecorder {
  private readonly options: RecorderOptions;
  private readonly scheduler: Scheduler;
  private readonly log: Logger;
  private readonly urls: BinanceUrls;
  private readonly sockets: ReconnectingSocket[] = [];
  private buffer: Required<ExchangeBatch> = emptyBatch();
  private buffered = 0;
  private flushing: Promise<void> = Promise.resolve();
  private cancelFlush: (() => void) | null = null;
  private cancelPoll: (() => void) | null = null;
  private polling: Promise<void> = Promise.resolve();
  private readonly rest: BinanceRest;
  private stopped = false;
  /** The second of the last depth snapshot kept, per coin and venue. */
  private readonly depthSecond = new Map<string, number>();

  constructor(options: RecorderOptions) {
    this.options = options;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.log = options.log ?? silentLogger;
    this.urls = { ...DEFAULT_BINANCE_URLS, ...options.urls };
    this.rest = new BinanceRest({
      baseUrl: this.urls.futuresRest,
      weightLimit: options.futuresWeightLimit ?? DEFAULT_WEIGHT_LIMITS.futures,
      scheduler: this.scheduler,
      log: this.log,
      maxAttempts: 2,
      signal: options.signal,
    });
  }

  private emit(event: RecorderEvent): void {
    this.options.onEvent?.(event);
  }

  start(): void {
    for (const venue of this.options.venues) {
      if (this.options.coins.length === 0) continue;
      const base = venue === "spot" ? this.urls.spotWs : this.urls.futuresWs;
      const url = `${base}/stream?streams=${streamsOf(venue, this.options.coins).join("/")}`;
      const socket = this.streamSocket(venue, url);
      this.sockets.push(socket);
      socket.start();
    }
    this.scheduleFlush();
    const pollMs = this.options.pollMs ?? 5 * 60_000;
    if (pollMs > 0 && this.options.venues.includes("futures")) this.schedulePoll(0, pollMs);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.cancelFlush?.();
    this.cancelPoll?.();
    await Promise.all(this.sockets.map((s) => s.stop()));
    await this.polling;
    await this.flush();
  }

  /** One venue's combined stream. */
  private streamSocket(venue: Venue, url: string): ReconnectingSocket {
    const o = this.options;
    return new ReconnectingSocket({
      name: `Binance ${venue} stream`,
      url,
      scheduler: this.scheduler,
      log: this.log,
      heartbeat: null,
      silenceMs: o.silenceMs ?? 10_000,
      backoff: {
        initialMs: o.backoffMs ?? 1000,
        maxMs: o.maxBackoffMs ?? 60_000,
        jitter: 0.2,
        random: o.random,
      },
      handoverAfterMs: o.maxConnectionMs ?? 23.5 * 3600_000,
      describe: binanceLoss,
      onMessage: (text) => this.handle(venue, text),
      onEvent: (event) => this.emit({ ...event, venue }),
    });
  }

  private scheduleFlush(): void {
    if (this.stopped) return;
    this.cancelFlush = this.scheduler.setTimeout(() => {
      void this.flush().then(() => this.scheduleFlush());
    }, this.options.flushMs ?? 1000);
  }

  /** Writes the buffer in one transaction; on failure the rows go back for the next flush. */
  private flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.buffered === 0) return;
      const batch = this.buffer;
      const n = this.buffered;
      this.buffer = emptyBatch();
      this.buffered = 0;
      try {
        const counts = await this.options.store.insertBatch(batch);
        this.emit({ type: "flush", counts });
      } catch (err) {
        const message = errorMessage(err);
        this.log.warn(
          { rows: n, err: message },
          `Binance recorder: writing ${n} rows failed (${message}); retrying`,
        );
        this.emit({ type: "error", detail: message });
        if (n + this.buffered <= MAX_BUFFERED_ROWS) {
          const restore = <K extends keyof ExchangeBatch>(key: K) => {
            this.buffer[key] = batch[key].concat(this.buffer[key] as never[]) as Required<ExchangeBatch>[K];
          };
          for (const key of Object.keys(batch) as (keyof ExchangeBatch)[]) restore(key);
          this.buffered += n;
        } else {
          this.log.warn(
            { rows: n },
            `Binance recorder: dropped ${n} rows, the store has not answered for too long`,
          );
        }
      }
    });
    return this.flushing;
  }

  private add<K extends keyof ExchangeBatch>(key: K, row: Required<ExchangeBatch>[K][number]): void {
    (this.buffer[key] as unknown[]).push(row);
    this.buffered++;
  }

  /** One stream message (`{stream, data}`) of a venue's connection. */
  private handle(venue: Venue, text: string): void {
    let stream: string;
    let data: Record<string, unknown>;
    try {
      const msg = JSON.parse(text) as { stream?: unknown; data?: unknown };
      if (typeof msg.stream !== "string" || typeof msg.data !== "object" || msg.data === null) return;
      stream = msg.stream;
      data = msg.data as Record<string, unknown>;
    } catch {
      this.log.warn({ venue }, `Binance ${venue}: a message that is not JSON`);
      return;
    }
    const at = stream.indexOf("@");
    const coin = this.coinOf(stream.slice(0, at));
    if (!coin) return;
    const kind = stream.slice(at + 1);
    try {
      if (kind.startsWith("depth")) {
        const row = depthFromEvent(coin, venue, data, nowMillis(this.scheduler));
        const key = `${coin}:${venue}`;
        const second = Math.floor(row.time / 1_000_000);
        // One snapshot a second: the first of each second is kept.
        if (this.depthSecond.get(key) !== second) {
          this.depthSecond.set(key, second);
          this.add("depth", row);
        }
      } else if (kind === "trade") {
        this.add("trades", tradeFromEvent(coin, data));
      } else if (kind === "aggTrade") {
        this.add("trades", aggTradeFrom(coin, venue, data));
      } else if (kind.startsWith("kline_")) {
        const candle = candleFromKlineEvent(coin, venue, data);
        if (candle) this.add("candles", candle);
      } else if (kind.startsWith("markPrice")) {
        this.add("markPrices", markPriceFromEvent(coin, data));
      }
    } catch (err) {
      const message = errorMessage(err);
      this.log.warn(
        { venue, stream, err: message },
        `Binance ${venue} ${stream}: skipped a malformed event (${message})`,
      );
    }
    if (this.options.onEvent) this.emit({ type: "message", venue, detail: stream });
  }

  private coinOf(symbol: string): Coin | null {
    return this.options.coins.find((c) => symbolOf(c).toLowerCase() === symbol) ?? null;
  }

  private schedulePoll(delayMs: number, everyMs: number): void {
    if (this.stopped) return;
    this.cancelPoll = this.scheduler.setTimeout(() => {
      this.polling = this.poll().then(() => this.schedulePoll(everyMs, everyMs));
    }, delayMs);
  }

  /** The latest settled funding rates and 5-minute open interest of each coin. */
  private async poll(): Promise<void> {
    for (const coin of this.options.coins) {
      if (this.stopped) return;
      const symbol = symbolOf(coin);
      try {
        const funding = await this.rest.get<Record<string, unknown>[]>(
          "/fapi/v1/fundingRate",
          { symbol, limit: 3 },
          1,
        );
        const oi = await this.rest.get<Record<string, unknown>[]>(
          "/futures/data/openInterestHist",
          { symbol, period: "5m", limit: 3 },
          1,
        );
        for (const f of funding) this.add("funding", fundingFrom(coin, f));
        for (const o of oi) this.add("openInterest", openInterestFrom(coin, o));
        this.emit({ type: "poll", venue: "futures", detail: symbol });
      } catch (err) {
        const message = errorMessage(err);
        this.log.warn({ symbol, err: message }, `Binance poll of ${symbol}: ${message}`);
        this.emit({ type: "error", venue: "futures", detail: message });
        if (err instanceof BinanceBannedError) return;
      }
    }
  }
}

function emptyBatch(): Required<ExchangeBatch> {
  return { depth: [], trades: [], candles: [], funding: [], openInterest: [], markPrices: [] };
}

/** How a stream connection ended, in the recorder's words. */
function binanceLoss(loss: SocketLoss): string {
  if (loss.cause === "upstream_silent") return `silent for ${Math.round(loss.idleMs / 1000)} s`;
  if (loss.failed) return "connection failed";
  return `closed (${loss.code}${loss.reason ? ` ${loss.reason}` : ""})`;
}
