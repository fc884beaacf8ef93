import { type ExchangeBatch, type ExchangeCounts, symbolOf, type Venue } from "../../domain/exchange.ts";
import type { Coin } from "../../domain/market.ts";
import type { ExchangeStore } from "../../store/exchange-store.ts";
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
import { type BinanceLog, nowMillis, type Scheduler, silentLog, systemScheduler } from "./scheduler.ts";
import { type BinanceUrls, DEFAULT_BINANCE_URLS, DEFAULT_WEIGHT_LIMITS } from "./urls.ts";

/**
 * Live recording of Binance spot and futures over combined-stream WebSockets (one connection per
 * venue for every coin): depth20 snapshots kept at one a second per coin and venue, every trade
 * (futures: aggregate trades), 1m candles once closed, and on futures the mark price stream (one a
 * second). Rows are buffered and written in one transaction a second. Futures funding rates and open
 * interest, which have no stream, are polled over REST.
 *
 * Connections: a connection silent for `silenceMs` is dropped and made again; a closed or failed one
 * is made again after an exponential backoff (reset once a new connection delivers); before Binance's
 * 24-hour limit a fresh connection is opened and the old one closed once the new one delivers, so
 * rotation leaves no gap. Every connection subscribes to all the streams in its URL, so a reconnect is
 * a resubscription. Writes are idempotent, so the overlap never duplicates.
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
  log?: BinanceLog;
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
  readonly options: RecorderOptions;
  readonly scheduler: Scheduler;
  readonly log: BinanceLog;
  readonly urls: BinanceUrls;
  private readonly feeds: VenueFeed[] = [];
  private buffer: Required<ExchangeBatch> = emptyBatch();
  private buffered = 0;
  private flushing: Promise<void> = Promise.resolve();
  private cancelFlush: (() => void) | null = null;
  private cancelPoll: (() => void) | null = null;
  private polling: Promise<void> = Promise.resolve();
  private readonly rest: BinanceRest;
  stopped = false;
  /** The second of the last depth snapshot kept, per coin and venue. */
  private readonly depthSecond = new Map<string, number>();

  constructor(options: RecorderOptions) {
    this.options = options;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.log = options.log ?? silentLog;
    this.urls = { ...DEFAULT_BINANCE_URLS, ...options.urls };
    this.rest = new BinanceRest({
      baseUrl: this.urls.futuresRest,
      weightLimit: options.futuresWeightLimit ?? DEFAULT_WEIGHT_LIMITS.futures,
      scheduler: this.scheduler,
      log: this.log,
      maxAttempts: 2,
    });
  }

  emit(event: RecorderEvent): void {
    this.options.onEvent?.(event);
  }

  start(): void {
    for (const venue of this.options.venues) {
      if (this.options.coins.length === 0) continue;
      const base = venue === "spot" ? this.urls.spotWs : this.urls.futuresWs;
      const url = `${base}/stream?streams=${streamsOf(venue, this.options.coins).join("/")}`;
      const feed = new VenueFeed(this, venue, url);
      this.feeds.push(feed);
      feed.connect();
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
    for (const feed of this.feeds) feed.close();
    await this.polling;
    await this.flush();
  }

  private scheduleFlush(): void {
    if (this.stopped) return;
    this.cancelFlush = this.scheduler.setTimeout(() => {
      void this.flush().then(() => this.scheduleFlush());
    }, this.options.flushMs ?? 1000);
  }

  /** Writes the buffer in one transaction; on failure the rows go back for the next flush. */
  flush(): Promise<void> {
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
        this.log.warn(`Binance recorder: writing ${n} rows failed (${(err as Error).message}); retrying`);
        this.emit({ type: "error", detail: (err as Error).message });
        if (n + this.buffered <= MAX_BUFFERED_ROWS) {
          const restore = <K extends keyof ExchangeBatch>(key: K) => {
            this.buffer[key] = batch[key].concat(this.buffer[key] as never[]) as Required<ExchangeBatch>[K];
          };
          for (const key of Object.keys(batch) as (keyof ExchangeBatch)[]) restore(key);
          this.buffered += n;
        } else {
          this.log.warn(`Binance recorder: dropped ${n} rows, the store has not answered for too long`);
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
  handle(venue: Venue, text: string): void {
    let stream: string;
    let data: Record<string, unknown>;
    try {
      const msg = JSON.parse(text) as { stream?: unknown; data?: unknown };
      if (typeof msg.stream !== "string" || typeof msg.data !== "object" || msg.data === null) return;
      stream = msg.stream;
      data = msg.data as Record<string, unknown>;
    } catch {
      this.log.warn(`Binance ${venue}: a message that is not JSON`);
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
      this.log.warn(`Binance ${venue} ${stream}: skipped a malformed event (${(err as Error).message})`);
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
        const message = (err as Error).message;
        this.log.warn(`Binance poll of ${symbol}: ${message}`);
        this.emit({ type: "error", venue: "futures", detail: message });
        if (err instanceof BinanceBannedError) return;
      }
    }
  }
}

function emptyBatch(): Required<ExchangeBatch> {
  return { depth: [], trades: [], candles: [], funding: [], openInterest: [], markPrices: [] };
}

/** One venue's combined stream: the current connection, and during rotation its successor. */
class VenueFeed {
  private readonly recorder: Recorder;
  readonly venue: Venue;
  private readonly url: string;
  private current: Connection | null = null;
  private successor: Connection | null = null;
  private attempts = 0;
  private cancelReconnect: (() => void) | null = null;

  constructor(recorder: Recorder, venue: Venue, url: string) {
    this.recorder = recorder;
    this.venue = venue;
    this.url = url;
  }

  connect(): void {
    if (this.recorder.stopped) return;
    this.current = new Connection(this, this.url);
  }

  get scheduler(): Scheduler {
    return this.recorder.scheduler;
  }

  get options(): RecorderOptions {
    return this.recorder.options;
  }

  emit(event: Omit<RecorderEvent, "venue">): void {
    this.recorder.emit({ ...event, venue: this.venue });
  }

  message(conn: Connection, text: string): void {
    if (conn === this.successor) {
      // The new connection delivers: it takes over and the old one goes.
      const old = this.current;
      this.current = conn;
      this.successor = null;
      old?.retire("replaced before Binance's 24-hour limit");
    }
    if (conn !== this.current) return;
    this.attempts = 0;
    this.recorder.handle(this.venue, text);
  }

  /** Time to replace a connection: open its successor; the old one closes when the new one delivers. */
  rotate(conn: Connection): void {
    if (conn !== this.current || this.successor || this.recorder.stopped) return;
    this.emit({ type: "rotate", detail: "connection age limit" });
    this.successor = new Connection(this, this.url);
  }

  /** A connection ended (closed, failed or dropped for silence) without being retired. */
  lost(conn: Connection, reason: string): void {
    this.emit({ type: "close", detail: reason });
    if (conn === this.successor) {
      this.successor = null;
      return;
    }
    if (conn !== this.current || this.recorder.stopped) return;
    this.current = null;
    if (this.successor) {
      // The old connection died during rotation: its successor takes over at once.
      this.current = this.successor;
      this.successor = null;
      return;
    }
    const base = this.options.backoffMs ?? 1000;
    const max = this.options.maxBackoffMs ?? 60_000;
    const jitter = 0.8 + 0.4 * (this.options.random ?? Math.random)();
    const delayMs = Math.round(Math.min(max, base * 2 ** this.attempts) * jitter);
    this.attempts++;
    this.recorder.log.warn(`Binance ${this.venue} stream: ${reason}; reconnecting in ${delayMs} ms`);
    this.emit({ type: "reconnect", detail: reason, delayMs });
    this.cancelReconnect = this.scheduler.setTimeout(() => {
      this.cancelReconnect = null;
      this.connect();
    }, delayMs);
  }

  close(): void {
    this.cancelReconnect?.();
    this.current?.retire("recorder stopped");
    this.successor?.retire("recorder stopped");
    this.current = null;
    this.successor = null;
  }
}

/** One WebSocket with its silence watchdog and age limit. */
class Connection {
  private readonly feed: VenueFeed;
  private readonly ws: WebSocket;
  private lastMessageAt: number;
  private cancelWatchdog: (() => void) | null = null;
  private cancelRotation: (() => void) | null = null;
  private ended = false;

  constructor(feed: VenueFeed, url: string) {
    this.feed = feed;
    this.lastMessageAt = nowMillis(feed.scheduler);
    this.ws = new WebSocket(url);
    this.ws.addEventListener("open", () => {
      if (this.ended) return;
      feed.emit({ type: "open", detail: url });
      const age = feed.options.maxConnectionMs ?? 23.5 * 3600_000;
      this.cancelRotation = feed.scheduler.setTimeout(() => feed.rotate(this), age);
    });
    this.ws.addEventListener("message", (event: MessageEvent) => {
      if (this.ended) return;
      this.lastMessageAt = nowMillis(feed.scheduler);
      if (typeof event.data === "string") feed.message(this, event.data);
    });
    this.ws.addEventListener("close", (event: CloseEvent) => {
      this.end(`closed (${event.code}${event.reason ? ` ${event.reason}` : ""})`);
    });
    this.ws.addEventListener("error", () => this.end("connection failed"));
    // The watchdog also covers a connection that never opens.
    this.watch(feed.options.silenceMs ?? 10_000);
  }

  private watch(ms: number): void {
    this.cancelWatchdog = this.feed.scheduler.setTimeout(() => {
      if (this.ended) return;
      const silence = this.feed.options.silenceMs ?? 10_000;
      const idle = nowMillis(this.feed.scheduler) - this.lastMessageAt;
      if (idle >= silence) {
        this.end(`silent for ${Math.round(idle / 1000)} s`);
        this.ws.close(1000);
      } else {
        this.watch(silence - idle);
      }
    }, ms);
  }

  /** Ends the connection on its own account: the feed decides whether to reconnect. */
  private end(reason: string): void {
    if (this.ended) return;
    this.stopTimers();
    this.feed.lost(this, reason);
  }

  private stopTimers(): void {
    this.ended = true;
    this.cancelWatchdog?.();
    this.cancelRotation?.();
  }

  /** Closes the connection on the feed's account (replaced or stopped): nothing follows. */
  retire(reason: string): void {
    if (this.ended) return;
    this.stopTimers();
    this.feed.emit({ type: "close", detail: reason });
    try {
      this.ws.close(1000);
    } catch {
      // Closing a socket that never opened throws nothing useful; it is gone either way.
    }
  }
}
