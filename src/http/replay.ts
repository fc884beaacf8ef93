import { EventEmitter } from "node:events";
import type { MarketEvent } from "../domain/event.ts";
import type { Clock } from "../domain/time.ts";
import type { EventRange } from "../store/ports/event-store.ts";

/**
 * Replays (DESIGN 3.10, docs/events.md): the recorded market-channel messages of a few markets, merged
 * into one stream in receive order and paced by their receive times divided by the speed. What both
 * routes share (routes/replay.ts): the WebSocket and the NDJSON answer differ only in how they send.
 */

/** Waits `ms` milliseconds of the app's clock (the context's `sleep`; tests move their clock instead). */
export type Sleep = (ms: number) => Promise<void>;

/** `max`, or how many times faster than recorded. */
export type ReplaySpeed = number | "max";

export const MAX_SPEED = 1000;

/** Reads a market's events in receive order, a block at a time (EventStore.streamMarketEvents). */
export type EventSource = (marketKey: number, range: EventRange) => AsyncIterable<MarketEvent[]>;

/** Events the merge gathers into one batch before handing it on (a batch is sent without a wait). */
const BATCH = 512;

/**
 * The events of several markets in one receive order (`receivedUs`, a tie going to the market listed
 * first), in batches. Holds one block per market; closing the iteration closes every market's stream.
 */
export async function* mergeByReceipt(
  streams: readonly AsyncIterable<MarketEvent[]>[],
): AsyncGenerator<MarketEvent[]> {
  if (streams.length === 1) {
    for await (const block of streams[0]) if (block.length > 0) yield block;
    return;
  }
  const iterators = streams.map((s) => s[Symbol.asyncIterator]());
  const heads: (MarketEvent[] | null)[] = [];
  const at: number[] = [];
  const nextBlock = async (i: number): Promise<MarketEvent[] | null> => {
    for (;;) {
      const r = await iterators[i].next();
      if (r.done) return null;
      if (r.value.length > 0) return r.value;
    }
  };
  try {
    for (let i = 0; i < iterators.length; i++) {
      heads.push(await nextBlock(i));
      at.push(0);
    }
    for (;;) {
      const batch: MarketEvent[] = [];
      while (batch.length < BATCH) {
        let best = -1;
        for (let i = 0; i < heads.length; i++) {
          const head = heads[i];
          if (head === null) continue;
          if (best < 0 || head[at[i]].receivedUs < (heads[best] as MarketEvent[])[at[best]].receivedUs)
            best = i;
        }
        if (best < 0) break;
        const head = heads[best] as MarketEvent[];
        batch.push(head[at[best]++]);
        if (at[best] === head.length) {
          heads[best] = await nextBlock(best);
          at[best] = 0;
        }
      }
      if (batch.length === 0) return;
      yield batch;
    }
  } finally {
    // The streams not read to their end are closed (a replay cut short frees what they hold).
    await Promise.all(iterators.map((it, i) => (heads[i] === null ? undefined : it.return?.())));
  }
}

/**
 * When each message is due: the first at once, each next one after the receive-time gap since the
 * first divided by the speed, on the app's clock. A late sender catches up without waiting.
 */
export class Pacer {
  private readonly clock: Clock;
  private readonly speed: ReplaySpeed;
  private startedUs = 0;
  private firstReceivedUs: number | null = null;

  constructor(clock: Clock, speed: ReplaySpeed) {
    this.clock = clock;
    this.speed = speed;
  }

  /** Milliseconds to wait before sending the event received at `receivedUs` (0: now). */
  waitMs(receivedUs: number): number {
    if (this.speed === "max") return 0;
    if (this.firstReceivedUs === null) {
      this.firstReceivedUs = receivedUs;
      this.startedUs = this.clock.nowMicros();
      return 0;
    }
    const dueUs = this.startedUs + (receivedUs - this.firstReceivedUs) / this.speed;
    return Math.max(0, (dueUs - this.clock.nowMicros()) / 1000);
  }
}

/** Resolves after `ms` on the injected sleeper, or as soon as `signal` aborts. */
export function sleepUnlessAborted(sleep: Sleep, ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    void sleep(ms).then(done, done);
  });
}

export interface ReplayPlan {
  marketKeys: readonly number[];
  range: EventRange;
  speed: ReplaySpeed;
}

/**
 * The replay's messages as the upstream sent them (the JSON text of each object), in batches of those
 * due at once, paced. Stops when `signal` aborts (the reader went away), closing the store's streams.
 */
export async function* replayMessages(
  source: EventSource,
  plan: ReplayPlan,
  pacing: { clock: Clock; sleep: Sleep },
  signal: AbortSignal,
): AsyncGenerator<string[]> {
  const pacer = new Pacer(pacing.clock, plan.speed);
  const merged = mergeByReceipt(plan.marketKeys.map((key) => source(key, plan.range)));
  for await (const batch of merged) {
    let due: string[] = [];
    for (const event of batch) {
      const wait = pacer.waitMs(event.receivedUs);
      if (wait >= 1) {
        if (due.length > 0) yield due;
        due = [];
        await sleepUnlessAborted(pacing.sleep, wait, signal);
      }
      if (signal.aborted) return;
      due.push(JSON.stringify(event.message));
    }
    if (due.length > 0) yield due;
    if (signal.aborted) return;
  }
}

/** How a replay ended. */
export type ReplayOutcome = "complete" | "disconnected" | "refused" | "failed";

/** One replay in flight: what it has sent and the most it has had waiting in its socket's buffer. */
export class ReplaySession {
  readonly id: number;
  sent = 0;
  /** The most bytes its socket held unsent at once (what a slow reader costs the server). */
  bufferedHigh = 0;
  /** Times it stopped to wait for the reader. */
  drainWaits = 0;

  constructor(id: number) {
    this.id = id;
  }
}

/**
 * The replays in flight in this process and what their store streams hold open, for the metrics and
 * for tests: it emits "wait" (session) when a replay stops for its reader and "end" (session, outcome).
 */
export class ReplaySessions extends EventEmitter<{
  wait: [ReplaySession];
  end: [ReplaySession, ReplayOutcome];
}> {
  private seq = 0;
  active = 0;
  /** Store streams a replay has opened and not yet closed. */
  openStreams = 0;
  messagesSent = 0;

  start(): ReplaySession {
    this.active++;
    return new ReplaySession(++this.seq);
  }

  end(session: ReplaySession, outcome: ReplayOutcome): void {
    this.active--;
    this.messagesSent += session.sent;
    this.emit("end", session, outcome);
  }

  /** `source` with each stream it opens counted until it is closed. */
  counted(source: EventSource): EventSource {
    const opened = (n: number) => {
      this.openStreams += n;
    };
    return async function* (marketKey, range) {
      opened(1);
      try {
        yield* source(marketKey, range);
      } finally {
        opened(-1);
      }
    };
  }
}
