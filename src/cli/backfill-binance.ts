import { parseArgs } from "node:util";
import { loadConfig } from "../config.ts";
import { parseVenue, VENUES, type Venue } from "../domain/exchange.ts";
import { COINS, type Coin, parseCoin } from "../domain/market.ts";
import { isoMicros, parseUserTime, systemClock } from "../domain/time.ts";
import type { Logger } from "../log.ts";
import {
  BACKFILL_KINDS,
  type BackfillKind,
  type BackfillProgress,
  backfillBinance,
} from "../record/binance/backfill.ts";
import { BinanceBannedError, BinanceHttpError } from "../record/binance/rest.ts";
import { binanceUrlsFromEnv, weightLimitsFromEnv } from "../record/binance/urls.ts";
import { openStore } from "../store/open.ts";
import { Progress } from "./progress.ts";

/** Lines for a person watching the progress bar: the message alone, warnings marked as such. */
const personLog: Logger = {
  debug: () => {},
  info: (_fields, message) => process.stderr.write(`${message}\n`),
  warn: (_fields, message) => process.stderr.write(`warning: ${message}\n`),
  error: (_fields, message) => process.stderr.write(`error: ${message}\n`),
};

export const BACKFILL_HELP = `updown backfill binance --from TIME [--to TIME] [--coin btc,eth,sol] [--venue spot,futures]
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

/** A command line that cannot be run; main turns it into exit status 2. */
export class BackfillUsageError extends Error {}

function list<T extends string>(
  text: string | undefined,
  all: readonly T[],
  parse: (s: string) => T | null,
  flag: string,
): T[] {
  if (!text) return [...all];
  return text.split(",").map((s) => {
    const value = parse(s.trim());
    if (!value) throw new BackfillUsageError(`${flag}: ${s} is not one of ${all.join(", ")}`);
    return value;
  });
}

function time(text: string | undefined, flag: string): number {
  const us = text === undefined ? null : parseUserTime(text);
  if (us === null) throw new BackfillUsageError(`${flag} must be an ISO 8601 time or epoch milliseconds`);
  return us;
}

const KIND_NAMES: Record<string, BackfillKind> = {
  candles: "candles",
  trades: "trades",
  funding: "funding",
  "funding-rates": "funding",
  "open-interest": "open_interest",
  open_interest: "open_interest",
};

/** `updown backfill binance ...` (the arguments after `backfill`). */
export async function backfillCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      from: { type: "string" },
      to: { type: "string" },
      coin: { type: "string" },
      coins: { type: "string" },
      venue: { type: "string" },
      kinds: { type: "string" },
      "database-url": { type: "string" },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals[0] !== "binance" || positionals.length !== 1) throw new BackfillUsageError(BACKFILL_HELP);
  const from = time(values.from, "--from");
  const to = values.to === undefined ? systemClock.nowMicros() : time(values.to, "--to");
  if (from > to) throw new BackfillUsageError("--from must not be after --to");
  const coins: Coin[] = list(values.coin ?? values.coins, COINS, parseCoin, "--coin");
  const venues: Venue[] = list(values.venue, VENUES, parseVenue, "--venue");
  const kinds: BackfillKind[] = list(
    values.kinds,
    BACKFILL_KINDS,
    (s) => KIND_NAMES[s.toLowerCase()] ?? null,
    "--kinds",
  );
  const env = process.env;
  let weightLimits: { spot: number; futures: number };
  try {
    weightLimits = weightLimitsFromEnv(env);
  } catch (err) {
    throw new BackfillUsageError((err as Error).message);
  }
  const config = loadConfig(env, { databaseUrl: values["database-url"] });
  const store = await openStore(config.databaseUrl);
  const progress = new Progress(`Backfilling Binance ${isoMicros(from)} to ${isoMicros(to)}`);
  const bar = (p: BackfillProgress) =>
    progress.count(
      Math.round(p.fraction * 1000) / 10,
      `% of ${p.venue} ${p.coin} ${p.kind} (${p.added.toLocaleString("en-US")} new rows)`,
    );
  try {
    const report = await backfillBinance({
      store: store.exchange,
      coins,
      venues,
      kinds,
      from,
      to,
      urls: binanceUrlsFromEnv(env),
      weightLimits,
      log: personLog,
      onProgress: bar,
    });
    const added = report.parts.reduce((n, p) => n + p.added, 0);
    const fetched = report.parts.reduce((n, p) => n + p.fetched, 0);
    progress.done(`${fetched.toLocaleString("en-US")} rows fetched`);
    for (const p of report.parts) {
      process.stdout.write(`${p.venue}\t${p.coin}\t${p.kind}\t${p.fetched} fetched\t${p.added} new\n`);
    }
    process.stdout.write(
      `${added} new rows; waited ${Math.round(report.waitedMs / 1000)} s for Binance's limits\n`,
    );
  } catch (err) {
    if (err instanceof BinanceBannedError || err instanceof BinanceHttpError) {
      process.stderr.write(
        `\nstopped: ${err.message}\nWhat was fetched before is stored; run the command again later.\n`,
      );
      process.exitCode = 1;
      return;
    }
    throw err;
  } finally {
    await store.close();
  }
}
