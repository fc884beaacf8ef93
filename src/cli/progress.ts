/**
 * Progress of long work on stderr: one line rewritten in place on a terminal, a line every few seconds
 * otherwise (so logs stay readable). stdout stays free for results scripts capture.
 */
export class Progress {
  private readonly label: string;
  private readonly tty = process.stderr.isTTY === true;
  /** The first update is printed at once (work has begun), then one every few seconds. */
  private lastPrint = Number.NEGATIVE_INFINITY;
  private readonly started = performance.now();

  constructor(label: string) {
    this.label = label;
  }

  /** Work of known size: `done` of `total` units. */
  update(done: number, total: number): void {
    const pct = total > 0 ? ((100 * done) / total).toFixed(1) : "100.0";
    this.print(`${done.toLocaleString("en-US")} / ${total.toLocaleString("en-US")} (${pct}%)`, done >= total);
  }

  /** Work of unknown size (a stream): how many units so far. */
  count(done: number, unit: string): void {
    this.print(`${done.toLocaleString("en-US")} ${unit}`, false);
  }

  private print(text: string, force: boolean): void {
    const now = performance.now();
    if (!force && now - this.lastPrint < (this.tty ? 200 : 5000)) return;
    this.lastPrint = now;
    const line = `${this.label}: ${text}`;
    process.stderr.write(this.tty ? `\r${line}\x1b[K` : `${line}\n`);
  }

  done(summary: string): void {
    const secs = ((performance.now() - this.started) / 1000).toFixed(1);
    process.stderr.write(`${this.tty ? "\r\x1b[K" : ""}${this.label}: ${summary} in ${secs} s\n`);
  }
}
