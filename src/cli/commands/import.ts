import { importArchive, openInput } from "../../archive/archive.ts";
import {
  BINANCE_1S,
  CoinPrices,
  coinOfFileName,
  parseCoinFeedArgument,
  readBinanceKlines,
} from "../../archive/coin-prices.ts";
import { formatPmxtReport, importPmxt } from "../../archive/pmxt-import.ts";
import { hourInputs, inputsOf, type PmxtInput } from "../../archive/pmxt-sources.ts";
import { settlementName } from "../../domain/settlement.ts";
import { MICROS_PER_SECOND } from "../../domain/time.ts";
import {
  type FeedFile,
  formatImportReport,
  importUpstream,
  parseFeedArgument,
  readFeed,
} from "../../archive/upstream-import.ts";
import { defineCommand, requireFile, UsageError, withStore } from "../command.ts";
import { Progress } from "../progress.ts";

const HELP = `updown import upstream --markets FILE --feed [twapN=]FILE [--feed ...] [--max-staleness SECONDS]
updown import archive FILE
updown import pmxt PATH|FOLDER|URL... [--base URL|FOLDER --from TIME --to TIME] [--feed [COIN:][twapN=]FILE ...]
       [--binance-klines FILE ...] [--max-staleness SECONDS] [--json]

upstream: market rows with their raw Gamma objects, or Gamma market objects themselves (JSONL, .gz
accepted), and the settlement feeds (CSV, .gz accepted), as in the recorded fixtures: --feed FILE is
Chainlink's instantaneous stream, --feed twap60=FILE (or twap30=) a TWAP stream in the same columns.
Each market settles on the feed its own Gamma record names (cryptoMarketConfig) and keeps its fees
(feeSchedule). The winner comes from the upstream outcome; the feed gives coin prices (Gamma's price to
beat and final price win where given) and a cross-check whose report (agreements, disagreements,
markets the feed cannot decide, with reasons, and which feed each market settles on) is printed.
--max-staleness (default 10) is the oldest a feed tick may be and still decide a market in the
cross-check.
archive: our own NDJSON export format (see 'updown export'), .gz accepted.
pmxt: PMXT's hourly order-book archive (v2 Parquet, polymarket_orderbook_YYYY-MM-DDTHH.parquet):
files, folders of them, https:// URLs, or with --base the hour files from --from's hour to --to's (an
hour without its file is reported missing). Keeps the markets of the configured coins (--coins) whose
records are in the store (import upstream or gamma first), writes their market-channel messages as
events, then derives per-second snapshots with full books, trades and book-integrity counts from
them. Snapshot coin prices: the market's own settlement feed (--feed btc:FILE, btc:twap60=FILE; the
coin may come from the file name), else Chainlink's instantaneous one, else Binance's 1 s klines
(--binance-klines); --max-staleness is the oldest a price may be. Progress on stderr; the report on
stdout (--json: as JSON). Resumable: a killed import run again goes on where it stopped.
All are idempotent: importing twice changes nothing.`;

export const importCommand = defineCommand({
  name: "import",
  summary: "Import upstream recordings or one of our archives",
  help: HELP,
  options: [
    "databaseUrl",
    "markets",
    "feed",
    "maxStaleness",
    "coins",
    "binanceKlines",
    "archiveBase",
    "archiveFrom",
    "archiveTo",
    "json",
  ],
  run: async (values, [kind, file, ...rest]) => {
    if (kind === "pmxt") {
      await importPmxtFiles(
        values,
        [file, ...rest].filter((a) => a !== undefined),
      );
      return;
    }
    if (kind === "upstream") {
      const { markets, feed } = values;
      if (markets === null || feed === null) {
        throw new UsageError("import upstream needs --markets FILE and --feed FILE");
      }
      const feeds: FeedFile[] = feed.map((text) => {
        const parsed = parseFeedArgument(text);
        if (parsed === null)
          throw new UsageError(`--feed ${text}: the TWAP lookback must be a positive number of seconds`);
        return parsed;
      });
      requireFile(markets, "--markets");
      for (const f of feeds) requireFile(f.path, "--feed");
      await withStore(values.databaseUrl, async (store) => {
        const progress = new Progress("Importing markets");
        const report = await importUpstream({
          store: store.markets,
          marketsPath: markets,
          feeds,
          maxStalenessSeconds: values.maxStaleness,
          onProgress: (d, t) => progress.update(d, t),
        });
        progress.done(`${report.markets} markets`);
        process.stdout.write(`${formatImportReport(report)}\n`);
      });
      return;
    }
    if (kind === "archive" && file) {
      requireFile(file, "archive");
      await withStore(values.databaseUrl, async (store) => {
        const progress = new Progress("Importing archive");
        const r = await importArchive(
          store.markets,
          openInput(file),
          (_markets, snapshots) => progress.count(snapshots, "snapshots"),
          store.trades,
        );
        progress.done(`${r.markets} markets, ${r.snapshots} snapshots (${r.added} new), ${r.trades} trades`);
      });
      return;
    }
    throw new UsageError(HELP);
  },
});

interface PmxtValues {
  databaseUrl: string;
  feed: string[] | null;
  maxStaleness: number;
  coins: string[];
  binanceKlines: string[] | null;
  archiveBase: string | null;
  archiveFrom: number | null;
  archiveTo: number | null;
  json: boolean;
}

/** The files and coin prices an `import pmxt` command line names. */
async function pmxtSources(
  values: PmxtValues,
  args: string[],
): Promise<{ inputs: PmxtInput[]; missing: string[]; prices: CoinPrices }> {
  const inputs = inputsOf(args);
  let missing: string[] = [];
  const { archiveBase: base, archiveFrom: from, archiveTo: to } = values;
  if (base !== null || from !== null || to !== null) {
    if (base === null || from === null || to === null)
      throw new UsageError("--base, --from and --to go together");
    if (to < from) throw new UsageError("--to is before --from");
    const range = hourInputs(base, Math.floor(from / MICROS_PER_SECOND), Math.floor(to / MICROS_PER_SECOND));
    inputs.push(...range.inputs);
    missing = range.missing;
  }
  if (inputs.length === 0)
    throw new UsageError("import pmxt needs files, folders, URLs or --base with --from/--to");
  for (const input of inputs) if (input.kind === "path") requireFile(input.path, "pmxt");
  const prices = new CoinPrices(values.maxStaleness);
  for (const text of values.feed ?? []) {
    const parsed = parseCoinFeedArgument(text, values.coins, parseFeedArgument);
    if ("problem" in parsed) throw new UsageError(parsed.problem);
    requireFile(parsed.feed.path, "--feed");
    prices.add(parsed.coin, settlementName(parsed.feed.settlement), await readFeed(parsed.feed.path));
  }
  for (const path of values.binanceKlines ?? []) {
    requireFile(path, "--binance-klines");
    const coin = coinOfFileName(path, values.coins);
    if (coin === null) throw new UsageError(`--binance-klines ${path}: no configured coin in the file name`);
    prices.add(coin, BINANCE_1S, readBinanceKlines(path));
  }
  return { inputs, missing, prices };
}

async function importPmxtFiles(values: PmxtValues, args: string[]): Promise<void> {
  const { inputs, missing, prices } = await pmxtSources(values, args);
  await withStore(values.databaseUrl, async (store) => {
    const progress = new Progress("Importing PMXT");
    const report = await importPmxt({
      store,
      coins: values.coins,
      inputs,
      missingHours: missing,
      prices,
      onProgress: (p) =>
        progress.count(
          p.rowsRead,
          `rows read, ${p.rowsKept} kept (${p.file}, row group ${p.rowGroup}/${p.rowGroups})`,
        ),
    });
    progress.done(`${report.files} files, ${report.rowsRead} rows, ${report.events} new events`);
    process.stdout.write(
      values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatPmxtReport(report)}\n`,
    );
  });
}
