import { backendOf, knownSchemes } from "../store/backends.ts";
import { CopyError, type CopyProgress, type CopyResult, copyStore } from "../store/copy.ts";
import { isStoreUnavailable } from "../store/errors.ts";
import { openStore } from "../store/open.ts";
import type { StoreLocation } from "../store/ports/backend.ts";
import type { Store } from "../store/ports/store.ts";
import { displayUrl, oneLine } from "./messages.ts";

/** Where a --from or --to URL points, as its backend says (src/store/backends.ts). */
function locate(flag: string, text: string): StoreLocation & { backend: string } {
  const backend = backendOf(text);
  if (backend === null) {
    throw new CopyError(`${flag} must start with ${knownSchemes()} (got "${text.split(":")[0]}:")`);
  }
  try {
    return { backend: backend.name, ...backend.locate(text) };
  } catch (err) {
    throw new CopyError(`${flag} ${oneLine(err)}`);
  }
}

async function open(role: "source" | "destination", text: string): Promise<Store> {
  try {
    return await openStore(text);
  } catch (err) {
    throw new CopyError(`cannot open the ${role} ${displayUrl(text)}: ${oneLine(err)}`);
  }
}

/**
 * Copy progress on stderr, as Progress (progress.ts) writes it: one line rewritten in place on a
 * terminal, else a line every few seconds; the first as soon as the first batch is written, so that
 * whoever watches (or a test) sees the copy under way.
 */
class CopyProgressLine {
  readonly tty = process.stderr.isTTY === true;
  private readonly started = performance.now();
  private lastPrint: number | null = null;

  update(p: CopyProgress): void {
    const now = performance.now();
    const finished = p.marketsDone === p.marketsTotal && p.seriesDone === p.seriesTotal;
    if (!finished && this.lastPrint !== null && now - this.lastPrint < (this.tty ? 200 : 2000)) return;
    const started = p.snapshotsCopied + p.exchangeRowsCopied + p.marketsDone + p.seriesDone > 0;
    if (this.lastPrint === null && !started && !finished) return;
    this.lastPrint = now;
    const done = p.snapshotsDone + p.exchangeRowsDone;
    const total = p.snapshotsTotal + p.exchangeRowsTotal;
    const pct = total > 0 ? ((100 * done) / total).toFixed(1) : "100.0";
    const rate = Math.round(
      (p.snapshotsCopied + p.exchangeRowsCopied) / Math.max((now - this.started) / 1000, 0.001),
    );
    const line =
      `Copying: ${n(p.marketsDone)} / ${n(p.marketsTotal)} markets, ` +
      `${n(p.snapshotsDone)} / ${n(p.snapshotsTotal)} snapshots, ` +
      `${n(p.exchangeRowsDone)} / ${n(p.exchangeRowsTotal)} exchange rows (${pct}% of all rows), ${n(rate)} rows/s`;
    process.stderr.write(this.tty ? `\r${line}\x1b[K` : `${line}\n`);
  }

  end(): void {
    if (this.tty && this.lastPrint !== null) process.stderr.write("\n");
  }

  seconds(): number {
    return (performance.now() - this.started) / 1000;
  }
}

function n(value: number): string {
  return value.toLocaleString("en-US");
}

function summary(r: CopyResult, from: string, to: string, seconds: number): string {
  const complete = (done: number) => (done > 0 ? ` (${n(done)} already complete)` : "");
  const rate = Math.round((r.snapshotsCopied + r.exchangeRowsCopied) / Math.max(seconds, 0.001));
  return (
    `Copied ${n(r.markets)} markets${complete(r.marketsComplete)}, ${n(r.snapshots)} snapshots ` +
    `(${n(r.snapshotsCopied)} written by this run, ${n(r.snapshotsAdded)} new), ` +
    `${n(r.trades)} trades (${n(r.tradesAdded)} new), ` +
    `${n(r.events)} events (${n(r.eventsAdded)} new), ${n(r.coinEvents)} coin-price updates (${n(r.coinEventsAdded)} new), ` +
    `${n(r.exchangeSeries)} exchange series${complete(r.exchangeSeriesComplete)}, ` +
    `${n(r.exchangeRows)} exchange rows (${n(r.exchangeRowsCopied)} written by this run, ` +
    `${n(r.exchangeRowsAdded)} new), ${n(r.apiKeys)} API keys ` +
    `and ${n(r.quotaCharges)} quota charges from ${displayUrl(from)} to ${displayUrl(to)} ` +
    `in ${seconds.toFixed(1)} s (${n(rate)} rows/s)`
  );
}

/** `updown copy`: checks the URLs, opens both stores, copies with progress on stderr, sums up on stdout. */
export async function runCopy(from: string, to: string, batch: number): Promise<void> {
  const source = locate("--from", from);
  const target = locate("--to", to);
  if (source.backend === target.backend && source.identity === target.identity) {
    throw new CopyError(`--from and --to name the same database (${displayUrl(from)})`);
  }
  // Opening a SQLite path that does not exist would make an empty database and copy nothing.
  if (!source.exists) {
    throw new CopyError(`--from ${from}: no such database file`);
  }
  const sourceStore = await open("source", from);
  let targetStore: Store;
  try {
    targetStore = await open("destination", to);
  } catch (err) {
    await sourceStore.close();
    throw err;
  }
  const progress = new CopyProgressLine();
  try {
    const result = await copyStore({
      from: sourceStore,
      to: targetStore,
      batch,
      onProgress: (p) => progress.update(p),
      onWarning: (message) => process.stderr.write(`${progress.tty ? "\r\x1b[K" : ""}warning: ${message}\n`),
    });
    progress.end();
    process.stdout.write(`${summary(result, from, to, progress.seconds())}\n`);
  } catch (err) {
    progress.end();
    if (isStoreUnavailable(err)) {
      throw new CopyError(
        `a database stopped answering mid-copy (${oneLine(err)}); run the same command again to finish`,
      );
    }
    throw err;
  } finally {
    await Promise.all([sourceStore.close(), targetStore.close()]);
  }
}
