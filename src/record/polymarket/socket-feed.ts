import type { Logger } from "../../log.ts";
import type { Scheduler } from "../scheduler.ts";
import { ReconnectingSocket, type SocketDownCause } from "../socket/reconnecting-socket.ts";

/** What a Polymarket feed is told: where, and optionally how patient to be. */
export interface SocketFeedOptions {
  url: string;
  scheduler: Scheduler;
  log: Logger;
  heartbeatIntervalMs?: number;
  /** A connection that delivers nothing for longer than this is dead, whatever TCP says. */
  silenceLimitMs?: number;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
}

/**
 * A Polymarket feed over one ReconnectingSocket: the "PING" heartbeat, checks run by the collector's
 * tick (`maintain`), and frames that carry JSON: one message or an array of them (Polymarket sends
 * both), or the heartbeat's "PONG". Each message goes to `apply`; one that cannot be read is counted
 * in `malformed` and skipped, never fatal.
 */
export abstract class SocketFeed {
  protected readonly socket: ReconnectingSocket;
  malformed = 0;

  protected constructor(
    name: string,
    opts: SocketFeedOptions,
    defaults: { heartbeatIntervalMs: number; silenceLimitMs: number },
  ) {
    this.socket = new ReconnectingSocket({
      name,
      url: opts.url,
      scheduler: opts.scheduler,
      log: opts.log,
      heartbeat: { text: "PING", everyMs: opts.heartbeatIntervalMs ?? defaults.heartbeatIntervalMs },
      // The socket's limit is reached at the limit itself; this one only when it is exceeded.
      silenceMs: (opts.silenceLimitMs ?? defaults.silenceLimitMs) + 1,
      backoff: { initialMs: opts.backoffInitialMs ?? 500, maxMs: opts.backoffMaxMs ?? 30_000 },
      checks: "maintain",
      onOpen: (send) => this.subscribe(send),
      onMessage: (text) => this.onMessage(text),
      onDown: (cause, detail) => this.down(cause, detail),
    });
  }

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

  /** On every open: the feed's subscriptions, sent on that connection. */
  protected abstract subscribe(send: (text: string) => void): void;

  /** The connection that delivered was lost: whatever it kept current no longer is. */
  protected down(_cause: SocketDownCause, _detail: string): void {}

  protected abstract apply(message: Record<string, unknown>): void;
}
