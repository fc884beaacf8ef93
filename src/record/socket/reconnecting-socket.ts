import type { Logger } from "../../log.ts";
import type { Scheduler } from "../scheduler.ts";
import { Connection, type Heartbeat, type SocketDownCause, type SocketLoss } from "./connection.ts";

export type { Heartbeat, SocketDownCause, SocketLoss } from "./connection.ts";

/**
 * A WebSocket to an upstream that stays connected, the one base of every live feed (Polymarket's CLOB
 * and RTDS sockets, Binance's combined streams). It sends the upstream's heartbeat, drops a connection
 * that has gone silent, reconnects with a capped exponential backoff (reset once a connection
 * delivers), and subscribes again on every open. Optionally it replaces a connection before the
 * upstream's age limit: a successor opens, takes over on its first message, and only then is the old
 * one closed, so the handover leaves no gap. Every timer runs on the injected scheduler.
 *
 * Invariants: at most one connection delivers at a time (in a handover the old one delivers until
 * the successor's first message, which it hands over with; a message the upstream sent on both may
 * so arrive twice, and owners write idempotently); each lost connection is reported once, with its
 * cause, before the next attempt is scheduled; after stop() nothing is delivered and no timer is left.
 */

/** What the socket did, for an owner that reports it (the Binance recorder's events). */
export interface SocketEvent {
  type: "open" | "close" | "reconnect" | "rotate";
  /** open: the URL; close and reconnect: why; rotate: what made it due. */
  detail: string;
  /** reconnect: the wait before the next attempt. */
  delayMs?: number;
}

/** Waits between attempts: `initialMs` doubled per failed attempt, at most `maxMs`. */
export interface Backoff {
  initialMs: number;
  maxMs: number;
  /** 0..1: each wait is spread by ± this fraction, so that replicas do not reconnect in step. Default 0. */
  jitter?: number;
  /** 0..1, for the jitter; injectable so that tests know the waits. Default Math.random. */
  random?: () => number;
}

export interface ReconnectingSocketOptions {
  /** Names the socket in log lines: "clob", "Binance spot stream". */
  name: string;
  url: string;
  scheduler: Scheduler;
  log: Logger;
  /** The upstream's own keep-alive; null when the upstream pings and the WebSocket answers by itself. */
  heartbeat: Heartbeat | null;
  /** No message for this long (or no open for this long after an attempt starts): the connection is dead. */
  silenceMs: number;
  backoff: Backoff;
  /** Replace a connection this long after it opened (Binance closes them at 24 h); default never. */
  handoverAfterMs?: number;
  /**
   * Who runs the heartbeat and the silence check: the socket's own timers (default), or the owner by
   * calling maintain() on its own cadence (the collector once a tick, so that a loss falls on a tick).
   */
  checks?: "timers" | "maintain";
  /** The upstream's wording of a loss (it may be stored, as a gap's detail); default describeLoss. */
  describe?: (loss: SocketLoss) => string;
  /** Called on every open, with a function that sends on that connection: the subscriptions. */
  onOpen?: (send: (text: string) => void) => void;
  onMessage: (text: string) => void;
  /** Called once each time the connection that was delivering is lost, before anything else is tried. */
  onDown?: (cause: SocketDownCause, detail: string) => void;
  onEvent?: (event: SocketEvent) => void;
  /** stop() waits at most this long for each peer to answer the close. Default 1 s. */
  closeWaitMs?: number;
}

/** Polymarket's wording, which the coverage endpoint shows as a gap's detail. */
export function describeLoss(loss: SocketLoss): string {
  return loss.cause === "upstream_silent"
    ? `no message for ${Math.round(loss.idleMs / 1000)} s`
    : `closed with code ${loss.code}${loss.reason ? ` (${loss.reason})` : ""}`;
}

/** The wait before attempt `attempt + 1` after `attempt` failed ones. */
export function backoffDelay(backoff: Backoff, attempt: number): number {
  const jitter = backoff.jitter ?? 0;
  const spread = jitter === 0 ? 1 : 1 - jitter + 2 * jitter * (backoff.random ?? Math.random)();
  return Math.round(Math.min(backoff.maxMs, backoff.initialMs * 2 ** attempt) * spread);
}

export class ReconnectingSocket {
  private readonly opts: ReconnectingSocketOptions;
  /** The connection that delivers (or is being made). */
  private current: Connection | null = null;
  /** During a handover, the connection that will take over once it delivers. */
  private successor: Connection | null = null;
  private failedAttempts = 0;
  private cancelReconnect: (() => void) | null = null;
  private stopped = true;
  /** Connections opened so far; tests and logs use it to tell a reconnect happened. */
  connects = 0;
  /** Frames delivered so far, so that a test can wait until everything sent was read. */
  frames = 0;

  constructor(opts: ReconnectingSocketOptions) {
    this.opts = opts;
  }

  get connected(): boolean {
    return this.current?.live ?? false;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.current = this.connect();
  }

  /** Sends on the delivering connection; dropped when there is none (onOpen subscribes again). */
  send(text: string): void {
    this.current?.send(text);
  }

  /** The heartbeat and the silence check now; with `checks: "maintain"`, call it about once a second. */
  maintain(): void {
    this.current?.check();
    this.successor?.check();
  }

  /** Closes every connection and cancels every timer; resolves once the peers saw the close. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelReconnect?.();
    this.cancelReconnect = null;
    const connections = [this.current, this.successor].filter((c): c is Connection => c !== null);
    this.current = null;
    this.successor = null;
    for (const c of connections) this.retire(c, "stopped");
    await Promise.all(connections.map((c) => c.closedWithin(this.opts.closeWaitMs ?? 1000)));
  }

  private connect(): Connection {
    const { scheduler, heartbeat, silenceMs, handoverAfterMs, checks } = this.opts;
    const settings = {
      scheduler,
      heartbeat,
      silenceMs,
      timedChecks: checks !== "maintain",
      handoverAfterMs: handoverAfterMs ?? null,
    };
    return new Connection(this.opts.url, settings, {
      opened: (conn) => this.opened(conn),
      delivered: (conn, text) => this.delivered(conn, text),
      lost: (conn, loss) => this.lost(conn, loss),
      aged: (conn) => this.aged(conn),
    });
  }

  private opened(conn: Connection): void {
    const { name, url } = this.opts;
    this.connects++;
    this.opts.log.info({ socket: name, url }, `${name}: connected to ${url}`);
    this.opts.onEvent?.({ type: "open", detail: url });
    this.opts.onOpen?.((text) => conn.send(text));
  }

  private delivered(conn: Connection, text: string): void {
    if (conn === this.successor) {
      // The new connection delivers: it takes over and the old one goes.
      const old = this.current;
      this.current = conn;
      this.successor = null;
      if (old) this.retire(old, "replaced by a newer connection");
    }
    if (conn !== this.current) return;
    this.failedAttempts = 0;
    this.frames++;
    this.opts.onMessage(text);
  }

  /** Time to replace a connection: open its successor; the old one closes when the new one delivers. */
  private aged(conn: Connection): void {
    if (conn !== this.current || this.successor || this.stopped) return;
    const name = this.opts.name;
    this.opts.log.info({ socket: name }, `${name}: opening a new connection before the age limit`);
    this.opts.onEvent?.({ type: "rotate", detail: "connection age limit" });
    this.successor = this.connect();
  }

  private lost(conn: Connection, loss: SocketLoss): void {
    const detail = (this.opts.describe ?? describeLoss)(loss);
    this.opts.onEvent?.({ type: "close", detail });
    if (conn === this.successor) {
      this.successor = null;
      return;
    }
    if (conn !== this.current || this.stopped) return;
    this.current = null;
    if (conn.opened) this.opts.onDown?.(loss.cause, detail);
    if (this.successor) {
      // The old connection died during a handover: its successor takes over at once.
      this.current = this.successor;
      this.successor = null;
      return;
    }
    this.scheduleReconnect(loss, detail, conn.opened);
  }

  private scheduleReconnect(loss: SocketLoss, detail: string, wasOpen: boolean): void {
    const delayMs = backoffDelay(this.opts.backoff, this.failedAttempts);
    this.failedAttempts++;
    const name = this.opts.name;
    this.opts.log.warn(
      { socket: name, cause: loss.cause, detail, delayMs },
      wasOpen
        ? `${name}: connection lost (${loss.cause}: ${detail}); reconnecting in ${delayMs} ms`
        : `${name}: cannot connect (${detail}); trying again in ${delayMs} ms`,
    );
    this.opts.onEvent?.({ type: "reconnect", detail, delayMs });
    this.cancelReconnect = this.opts.scheduler.setTimeout(() => {
      this.cancelReconnect = null;
      if (!this.stopped) this.current = this.connect();
    }, delayMs);
  }

  private retire(conn: Connection, reason: string): void {
    conn.retire();
    this.opts.onEvent?.({ type: "close", detail: reason });
  }
}
