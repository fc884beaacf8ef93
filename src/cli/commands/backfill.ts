import { toConfig } from "../../config.ts";
import type { Values } from "../../config/options.ts";
import { isoMicros, systemClock } from "../../domain/time.ts";
import {
  type BackfillProgress,
  type BackfillReport,
  backfillBinance,
} from "../../record/binance/backfill.ts";
import { BinanceBannedError, BinanceHttpError } from "../../record/binance/rest.ts";
import type { Store } from "../../store/ports/store.ts";
import { defineCommand, UsageError, withStore } from "../command.ts";
import type { Logger } from "../../log.ts";
import { Progress } from "../progress.ts";

const HELP = `updown backfill binance --from TIME [--to TIME] [--coin btc,eth,sol] [--venue spot,futures]
                        [--kinds candles,trades,funding,open-interest] [--database-url URL]

Fills a time range from Binance's REST API: 1m candles, trades (spot trades by id, futures aggregate
trades), and for futures funding rates and open interest (5-minute history; Binance keeps 30 days).
TIME is ISO 8601 or epoch milliseconds; --to defaults to now. Everything is written as it comes and
idempotently: stop it and run it again, or overlap the live recorder, and nothing is duplicated.
Progress goes to stderr, a summary to stdout.

Requests are paced by Binance's request weight (X-MBX-USED-WEIGHT-1M): past 80 % of the limit
(BINANCE_SPOT_WEIGHT_LIMIT, default 6000; BINANCE_FUTURES_WEIGHT_LIMIT, default 2400) it waits for the
next minute; a 429 waits Retry-After. A 418 (this address banned) stops at once with exit status 1.
Addresses: BINANCE_SPOT_REST_URL, BINANCE_FUTURES_REST_URL. See docs/collector.md.`;

const OPTIONS = [
  "databaseUrl",
  "rangeStart",
  "rangeEnd",
  "coins",
  "venues",
  "kinds",
  "binanceSpotRestUrl",
  "binanceFuturesRestUrl",
  "binanceSpotWeightLimit",
  "binanceFuturesWeightLimit",
] as const;
type BackfillValues = Values<(typeof OPTIONS)[number]>;

/** Lines for a person watching the progress bar: the message alone, warnings marked as such. */
const personLog: Logger = {
  debug: () => {},
  info: (_fields, message) => process.stderr.write(`${message}\n`),
  warn: (_fields, message) => process.stderr.write(`warning: ${message}\n`),
  error: (_fields, message) => process.stderr.write(`error: ${message}\n`),
};

/** The range asked for, µs; `--from` is required and may not be after `--to`. */
function rangeOf(values: BackfillValues): { from: number; to: number } {
  if (values.rangeStart === null)
    throw new UsageError("--from must be an ISO 8601 time or epoch milliseconds");
  const to = values.rangeEnd ?? systemClock.nowMicros();
  if (values.rangeStart > to) throw new UsageError("--from must not be after --to");
  return { from: values.rangeStart, to };
}

function printReport(report: BackfillReport, progress: Progress): void {
  const added = report.parts.reduce((n, p) => n + p.added, 0);
  const fetched = report.parts.reduce((n, p) => n + p.fetched, 0);
  progress.done(`${fetched.toLocaleString("en-US")} rows fetched`);
  for (const p of report.parts) {
    process.stdout.write(`${p.venue}\t${p.coin}\t${p.kind}\t${p.fetched} fetched\t${p.added} new\n`);
  }
  process.stdout.write(
    `${added} new rows; waited ${Math.round(report.waitedMs / 1000)} s for Binance's limits\n`,
  );
}

async function backfill(store: Store, values: BackfillValues, from: number, to: number): Promise<void> {
  const { binance } = toConfig(values);
  const progress = new Progress(`Backfilling Binance ${isoMicros(from)} to ${isoMicros(to)}`);
  const bar = (p: BackfillProgress) =>
    progress.count(
      Math.round(p.fraction * 1000) / 10,
      `% of ${p.venue} ${p.coin} ${p.kind} (${p.added.toLocaleString("en-US")} new rows)`,
    );
  const report = await backfillBinance({
    store: store.exchange,
    coins: values.coins,
    venues: values.venues,
    kinds: values.kinds,
    from,
    to,
    urls: binance.urls,
    weightLimits: binance.weightLimits,
    log: personLog,
    onProgress: bar,
  });
  printReport(report, progress);
}

export const backfillCommand = defineCommand({
  name: "backfill",
  summary: "Fill a time range of Binance spot and futures data from Binance's REST API",
  help: HELP,
  options: OPTIONS,
  run: async (values, positionals) => {
    if (positionals[0] !== "binance" || positionals.length !== 1) throw new UsageError(HELP);
    const { from, to } = rangeOf(values);
    try {
      await withStore(values.databaseUrl, (store) => backfill(store, values, from, to));
    } catch (err) {
      if (!(err instanceof BinanceBannedError || err instanceof BinanceHttpError)) throw err;
      process.stderr.write(
        `\nstopped: ${err.message}\nWhat was fetched before is stored; run the command again later.\n`,
      );
      process.exitCode = 1;
    }
  },
});
