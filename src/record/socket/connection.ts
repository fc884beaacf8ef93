import { nowMillis, type Scheduler } from "../scheduler.ts";

/**
 * One WebSocket of a ReconnectingSocket, from the attempt to connect to its end: it keeps the time of
 * its last sign of life, sends the upstream's heartbeat, ends itself when silent for too long (an
 * attempt that never opens included), and says when it is old enough to be replaced. It reports what
 * happens to its owner and never reconnects by itself; it ends exactly once.
 */

/** Why a connection is not delivering: recorded as the cause of the gaps it leaves. */
export type SocketDownCause = "upstream_disconnected" | "upstream_silent" | "not_connected";

/** How a connection ended on its own account, for each upstream's wording of it. */
export type SocketLoss =
  | { cause: "upstream_silent"; idleMs: number }
  /** `failed`: the connection failed (refused, reset) rather than being closed by the peer. */
  | { cause: "upstream_disconnected"; code: number; reason: string; failed: boolean };

/** An application-level keep-alive: a text frame the upstream expects every so often. */
export interface Heartbeat {
  text: string;
  everyMs: number;
}

export interface ConnectionSettings {
  scheduler: Scheduler;
  heartbeat: Heartbeat | null;
  /** No message (and no open) for this long ends the connection as silent. */
  silenceMs: number;
  /** Whether the heartbeat and the silence check run on the connection's own timers, or only in check(). */
  timedChecks: boolean;
  /** An open connection reports `aged` after this long; null: never. */
  handoverAfterMs: number | null;
}

export interface ConnectionEvents {
  opened(conn: Connection): void;
  delivered(conn: Connection, text: string): void;
  /** The connection ended on its own account (closed, failed, or silent). */
  lost(conn: Connection, loss: SocketLoss): void;
  /** The connection has been open for `handoverAfterMs`. */
  aged(conn: Connection): void;
}

export class Connection {
  private readonly ws: WebSocket;
  private readonly settings: ConnectionSettings;
  private readonly events: ConnectionEvents;
  /** Opened at some point (and so worth reporting when lost). */
  opened = false;
  private ended = false;
  private failed = false;
  private lastMessageMs: number;
  private lastHeartbeatMs: number;
  private cancelCheck: (() => void) | null = null;
  private cancelHandover: (() => void) | null = null;
  private readonly closed: Promise<void>;

  constructor(url: string, settings: ConnectionSettings, events: ConnectionEvents) {
    this.settings = settings;
    this.events = events;
    this.lastMessageMs = this.now();
    this.lastHeartbeatMs = this.lastMessageMs;
    this.ws = new WebSocket(url);
    this.ws.binaryType = "arraybuffer";
    this.closed = new Promise((resolve) => this.ws.addEventListener("close", () => resolve()));
    this.ws.addEventListener("open", () => this.onOpen());
    this.ws.addEventListener("message", (event: MessageEvent) => this.onMessage(event.data));
    // An error is always followed by a close event, which reports the loss.
    this.ws.addEventListener("error", () => (this.failed = true));
    this.ws.addEventListener("close", (event: CloseEvent) =>
      this.end({
        cause: "upstream_disconnected",
        code: event.code,
        reason: event.reason,
        failed: this.failed,
      }),
    );
    // From the attempt on: an attempt that never opens is silent too.
    this.armCheck();
  }

  /** Open and not ended: messages sent now reach the upstream. */
  get live(): boolean {
    return this.opened && !this.ended;
  }

  send(text: string): void {
    if (this.live) this.ws.send(text);
  }

  /** The heartbeat and the silence check, at the scheduler's time. */
  check(): void {
    if (this.ended) return;
    const now = this.now();
    const idleMs = now - this.lastMessageMs;
    if (idleMs >= this.settings.silenceMs) {
      this.end({ cause: "upstream_silent", idleMs });
      // A dead peer never completes the closing handshake: the loss is reported now, not when TCP gives up.
      this.close();
      return;
    }
    const heartbeat = this.settings.heartbeat;
    if (this.opened && heartbeat && now - this.lastHeartbeatMs >= heartbeat.everyMs) {
      this.lastHeartbeatMs = now;
      this.ws.send(heartbeat.text);
    }
  }

  /** Closes the connection on the owner's account (stopped, replaced): nothing is reported. */
  retire(): void {
    if (this.ended) return;
    this.ended = true;
    this.cancelTimers();
    this.close();
  }

  /** Resolves once the peer has seen the close, or after `ms` on the scheduler for one that never answers. */
  closedWithin(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.settings.scheduler.setTimeout(resolve, ms);
      void this.closed.then(() => {
        cancel();
        resolve();
      });
    });
  }

  private now(): number {
    return nowMillis(this.settings.scheduler);
  }

  private onOpen(): void {
    if (this.ended) return;
    this.opened = true;
    this.lastMessageMs = this.now();
    this.lastHeartbeatMs = this.lastMessageMs;
    // The heartbeat is due sooner than the silence the attempt was timed for.
    this.armCheck();
    const age = this.settings.handoverAfterMs;
    if (age !== null)
      this.cancelHandover = this.settings.scheduler.setTimeout(() => this.events.aged(this), age);
    this.events.opened(this);
  }

  private onMessage(data: unknown): void {
    if (this.ended) return;
    this.lastMessageMs = this.now();
    this.events.delivered(
      this,
      typeof data === "string" ? data : Buffer.from(data as ArrayBuffer).toString(),
    );
  }

  /** With timed checks: one timer, for whichever of the silence limit and the heartbeat comes first. */
  private armCheck(): void {
    if (!this.settings.timedChecks || this.ended) return;
    this.cancelCheck?.();
    const { silenceMs, heartbeat } = this.settings;
    let due = this.lastMessageMs + silenceMs;
    if (this.opened && heartbeat) due = Math.min(due, this.lastHeartbeatMs + heartbeat.everyMs);
    this.cancelCheck = this.settings.scheduler.setTimeout(() => {
      this.cancelCheck = null;
      this.check();
      this.armCheck();
    }, due - this.now());
  }

  private end(loss: SocketLoss): void {
    if (this.ended) return;
    this.ended = true;
    this.cancelTimers();
    this.events.lost(this, loss);
  }

  private cancelTimers(): void {
    this.cancelCheck?.();
    this.cancelHandover?.();
    this.cancelCheck = null;
    this.cancelHandover = null;
  }

  private close(): void {
    try {
      this.ws.close(1000);
    } catch {
      // Nothing to close (it never opened, or is already closing): it is gone either way.
    }
  }
}
