import type { Clock } from "../domain/time.ts";

/**
 * A WebSocket to an upstream that stays connected: it sends an application heartbeat, notices a
 * connection that has gone silent, and reconnects with exponential backoff, subscribing again on every
 * open. Time is the injected clock's, read when `maintain` is called (once a second by the collector),
 * so that tests decide when a second passes; only the backoff waits on a real timer.
 */

/** Why the socket is not delivering: recorded as the cause of the gaps it leaves. */
export type SocketDownCause = "upstream_disconnected" | "upstream_silent" | "not_connected";

export interface SocketLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface UpstreamSocketOptions {
  /** For log lines: "clob", "rtds". */
  name: string;
  url: string;
  clock: Clock;
  log: SocketLog;
  /** Text sent as a heartbeat (Polymarket's sockets answer "PING" with "PONG"); null: none. */
  heartbeatText: string | null;
  heartbeatIntervalMs: number;
  /** No message at all for this long means the connection is dead, whatever TCP says. */
  silenceLimitMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** Called on every open with a function that sends on this connection: the subscriptions. */
  onOpen(send: (text: string) => void): void;
  onMessage(text: string): void;
  /** Called once each time a working connection is lost, before the reconnect is scheduled. */
  onDown(cause: SocketDownCause, detail: string): void;
}

export class UpstreamSocket {
  private readonly opts: UpstreamSocketOptions;
  private ws: WebSocket | null = null;
  private open = false;
  private lastMessageMs = 0;
  private lastHeartbeatMs = 0;
  private failures = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Set when we close the connection ourselves, so that the close is reported with our reason. */
  private closing: { cause: SocketDownCause; detail: string } | null = null;
  /** Connections opened so far; tests and logs use it to tell a reconnect happened. */
  connects = 0;
  /** Frames received so far, so that a test can wait until everything sent was read. */
  frames = 0;

  constructor(opts: UpstreamSocketOptions) {
    this.opts = opts;
  }

  get connected(): boolean {
    return this.open;
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  send(text: string): void {
    if (this.open && this.ws) this.ws.send(text);
  }

  /** The heartbeat and the silence check; call about once a second. */
  maintain(): void {
    if (!this.open || !this.ws) return;
    const now = this.nowMs();
    if (now - this.lastMessageMs > this.opts.silenceLimitMs) {
      this.drop("upstream_silent", `no message for ${Math.round((now - this.lastMessageMs) / 1000)} s`);
      return;
    }
    if (this.opts.heartbeatText !== null && now - this.lastHeartbeatMs >= this.opts.heartbeatIntervalMs) {
      this.lastHeartbeatMs = now;
      this.ws.send(this.opts.heartbeatText);
    }
  }

  /** Closes the connection and reconnects: after a silence, or when the subscriptions must be redone. */
  drop(cause: SocketDownCause, detail: string): void {
    if (!this.ws) return;
    this.closing = { cause, detail };
    this.ws.close();
    // A dead peer never completes the closing handshake; report the loss now, not when TCP gives up.
    this.lost(cause, detail);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const ws = this.ws;
    this.ws = null;
    this.open = false;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        ws.addEventListener("close", () => resolve());
        ws.close();
        // Do not wait on a peer that never answers the close.
        setTimeout(resolve, 1000).unref();
      });
    }
  }

  private nowMs(): number {
    return Math.floor(this.opts.clock.nowMicros() / 1000);
  }

  private connect(): void {
    if (this.stopped) return;
    const ws = new WebSocket(this.opts.url);
    this.ws = ws;
    this.closing = null;
    ws.addEventListener("open", () => {
      if (this.ws !== ws) return;
      this.open = true;
      this.connects++;
      this.lastMessageMs = this.nowMs();
      this.lastHeartbeatMs = this.lastMessageMs;
      this.opts.log.info(`${this.opts.name}: connected to ${this.opts.url}`);
      this.opts.onOpen((text) => ws.send(text));
    });
    ws.addEventListener("message", (event: MessageEvent) => {
      if (this.ws !== ws) return;
      this.lastMessageMs = this.nowMs();
      this.failures = 0;
      this.frames++;
      const data: unknown = event.data;
      this.opts.onMessage(typeof data === "string" ? data : Buffer.from(data as ArrayBuffer).toString());
    });
    ws.addEventListener("close", (event: CloseEvent) => {
      if (this.ws !== ws) return;
      const reason = this.closing ?? {
        cause: "upstream_disconnected" as const,
        detail: `closed with code ${event.code}${event.reason ? ` (${event.reason})` : ""}`,
      };
      this.lost(reason.cause, reason.detail);
    });
    // An error is always followed by a close event, which does the work.
    ws.addEventListener("error", () => {});
  }

  /** Reports the loss of the current connection once and schedules the next attempt. */
  private lost(cause: SocketDownCause, detail: string): void {
    const wasOpen = this.open;
    this.open = false;
    this.ws = null;
    if (this.stopped) return;
    if (wasOpen) {
      this.opts.log.warn(`${this.opts.name}: connection lost (${cause}: ${detail}); reconnecting`);
      this.opts.onDown(cause, detail);
    }
    const delay = Math.min(this.opts.backoffMaxMs, this.opts.backoffInitialMs * 2 ** this.failures);
    this.failures++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect();
    }, delay);
  }
}

/** What a feed over one upstream socket is told: where, and optionally how patient to be. */
export interface SocketFeedOptions {
  url: string;
  clock: Clock;
  log: SocketLog;
  heartbeatIntervalMs?: number;
  silenceLimitMs?: number;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
}

/**
 * A feed over one UpstreamSocket whose frames carry JSON: one message or an array of them (Polymarket
 * sends both), or the heartbeat's "PONG". Each message goes to `apply`; one that cannot be read is
 * counted in `malformed` and skipped, never fatal.
 */
export abstract class SocketFeed {
  protected abstract readonly socket: UpstreamSocket;
  malformed = 0;

  start(): void {
    this.socket.start();
  }

  /** The heartbeat and the silence check; call about once a second. */
  maintain(): void {
    this.socket.maintain();
  }

  stop(): Promise<void> {
    return this.socket.stop();
  }

  get connected(): boolean {
    return this.socket.connected;
  }

  /** Connections opened so far. */
  get connects(): number {
    return this.socket.connects;
  }

  /** Frames received on every connection so far. */
  get frames(): number {
    return this.socket.frames;
  }

  onMessage(text: string): void {
    if (text === "PONG" || text === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.malformed++;
      return;
    }
    for (const message of Array.isArray(value) ? value : [value]) {
      if (typeof message !== "object" || message === null) {
        this.malformed++;
        continue;
      }
      try {
        this.apply(message as Record<string, unknown>);
      } catch {
        this.malformed++;
      }
    }
  }

  protected abstract apply(message: Record<string, unknown>): void;

  /**
   * The feed's socket: Polymarket's "PING" heartbeat, the feed's own defaults for its patience, the
   * caller's options over both, and every frame to onMessage.
   */
  protected makeSocket(
    name: string,
    opts: SocketFeedOptions,
    defaults: { heartbeatIntervalMs: number; silenceLimitMs: number },
    handlers: Pick<UpstreamSocketOptions, "onOpen" | "onDown">,
  ): UpstreamSocket {
    return new UpstreamSocket({
      name,
      url: opts.url,
      clock: opts.clock,
      log: opts.log,
      heartbeatText: "PING",
      heartbeatIntervalMs: opts.heartbeatIntervalMs ?? defaults.heartbeatIntervalMs,
      silenceLimitMs: opts.silenceLimitMs ?? defaults.silenceLimitMs,
      backoffInitialMs: opts.backoffInitialMs ?? 500,
      backoffMaxMs: opts.backoffMaxMs ?? 30_000,
      onMessage: (text) => this.onMessage(text),
      ...handlers,
    });
  }
}
