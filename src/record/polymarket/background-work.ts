import { errorMessage, type Logger } from "../../log.ts";

/**
 * Work a tick starts and does not wait for (discovery, price reads, polls, a gap's write): its failure
 * is logged, never thrown into the tick, and `settled` waits for all of it (tests between ticks, stop).
 */
export class BackgroundWork {
  private readonly running = new Set<Promise<void>>();
  private readonly log: Logger;

  constructor(log: Logger) {
    this.log = log;
  }

  start(work: () => Promise<void>): void {
    const p = work()
      .catch((err: unknown) => this.log.warn({ err: errorMessage(err) }, errorMessage(err)))
      .finally(() => this.running.delete(p));
    this.running.add(p);
  }

  /** Resolves once nothing is running, including work started by work that was running. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
