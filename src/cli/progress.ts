/**
 * Progress of long work on stderr: one line rewritten in place on a terminal, a line every few seconds
 * otherwise (so logs stay readable). stdout stays free for results scripts capture.
 */
export class Progress {
  private readonly label: string;
  private readonly tty = process.stderr.isTTY === true;
  private lastPrint = 0;
  private readonly started = performance.now();

  constructor(label: string) {
    this.label = label;
  }

  update(done: number, total: number): void {
    const now = performance.now();
    if (now - this.lastPrint < (this.tty ? 200 : 5000) && done < total) return;
    this.lastPrint = now;
    const pct = total > 0 ? ((100 * done) / total).toFixed(1) : "100.0";
    const line = `${this.label}: ${done.toLocaleString("en-US")} / ${total.toLocaleString("en-US")} (${pct}%)`;
    process.stderr.write(this.tty ? `\r${line}\x1b[K` : `${line}\n`);
  }

  done(summary: string): void {
    const secs = ((performance.now() - this.started) / 1000).toFixed(1);
    process.stderr.write(`${this.tty ? "\r\x1b[K" : ""}${this.label}: ${summary} in ${secs} s\n`);
  }
}
