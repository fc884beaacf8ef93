import { basename } from "node:path";
import { importVisionFile, visionFileOf, visionPaths } from "../../archive/binance-vision.ts";
import { fetchGammaRecords, formatFetchLines } from "../../archive/gamma-import.ts";
import {
  CoinPrices,
  coinOfFileName,
  parseCoinFeedArgument,
  readBinanceKlines,
} from "../../archive/coin-prices.ts";
import { hourInputs, inputsOf, type PmxtInput } from "../../archive/pmxt-sources.ts";
import { settlementName } from "../../domain/settlement.ts";
import { MICROS_PER_SECOND } from "../../domain/time.ts";
import {
  type FeedFile,
  formatImportReport,
  importRecordFiles,
  parseFeedArgument,
  readFeed,
  readFeeds,
} from "../../archive/upstream-import.ts";
import { type Coin, coinFacts, type MarketType } from "../../domain/market.ts";
import type { MarketStore } from "../../store/ports/market-store.ts";
import type { PriceFeed } from "../../upstream/price-feed.ts";
import type { Micros } from "../../domain/time.ts";
import { defineCommand, requireFile, UsageError, withStore } from "../command.ts";
import { Progress } from "../progress.ts";

const HELP = `updown import upstream --markets FILE --feed [twapN=]FILE [--feed ...] [--max-staleness SECONDS]
updown import gamma FILE... [--feed [twapN=]FILE ...]
updown import gamma --from TIME --to TIME [--coin C] [--type T] [--requests-per-second N] [--feed ...]
updown import binance-vision FILE|FOLDER... [--coins C,...]
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
gamma: Gamma's market records, by the same path as upstream (settlement, fees, tokens, outcome, price
to beat, final price), from JSON-lines files (.gz accepted) of Gamma market objects, Gamma event
objects (their markets nested) or the recorded rows; or fetched by slug from Gamma
(--polymarket-gamma-url) for the markets of each coin (--coin, default the configured coins) and type
(--type, default every type the coin runs) starting from --from to --to, paced to
--requests-per-second, 429 and 5xx answers retried with backoff. A fetch run again after a kill asks
only for the markets not stored resolved yet. --feed is optional: without it the winner is Gamma's and
the cross-check says it had no feed. Markets imported so are marked "gamma" (a record, no book data)
unless they hold recorded or PMXT data (docs/archives.md).
binance-vision: Binance's public data files (data.binance.vision zips: klines of 1s and 1m,
aggTrades, trades, fundingRate, metrics) into the exchange tables; folders are searched for .zip
files. A .CHECKSUM file beside a zip is verified first (a mismatch writes nothing). The venue is the
path's (/spot/ or /futures/), else futures for a CSV with a header line; the coin is the file name's
USDT pair, one of --coins. Times in ms or µs (spot files since 2025) are both read.
archive: our own NDJSON export format (see 'updown export'), .gz accepted.
pmxt: PMXT's hourly order-book archive (v2 Parquet, polymarket_orderbook_YYYY-MM-DDTHH.parquet):
files, folders of them, https:// URLs, or with --base the hour files from --from's hour to --to's (an
hour without its file is reported missing). Keeps the markets of the configured coins (--coins) whose
records are in the store (import upstream or gamma first), writes their market-channel messages as
events, then derives per-second snapshots with full books, trades and book-integrity counts from
them. Snapshot coin prices: the market's own settlement feed (--feed btc:FILE, btc:twap60=FILE; the
coin may come from the file name), else Chainlink's instantaneous one, else Binance's 1 s klines
(--binance-klines); --max-staleness is the oldest a price may be. A market's start and end prices
its record lacks come from its settlement feed: its Chainlink stream, or for 1h and 24h markets the
1m candles of the 1 s klines. Hours may come in any order, across runs too. Progress on stderr; the
report on stdout (--json: as JSON). Resumable: a killed import run again goes on where it stopped.
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
    "exportType",
    "archiveFrom",
    "archiveTo",
    "polymarketGammaUrl",
    "gammaRequestsPerSecond",
    "binanceKlines",
    "archiveBase",
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
    if (kind === "binance-vision") {
      await importBinanceVision(
        values,
        [file, ...rest].filter((a) => a !== undefined),
      );
      return;
    }
    if (kind === "gamma") {
      await importGamma(
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
      requireFile(markets, "--markets");
      const feeds = await readFeeds(feedFiles(feed));
      await withStore(values.databaseUrl, (store) =>
        importRecords(store.markets, [markets], feeds, values.maxStaleness, "Importing markets"),
      );
      return;
    }
    if (kind === "archive" && file) {
      requireFile(file, "archive");
      // Imported here, as the PMXT importer below: `updown --help` loads neither.
      const { importArchive, openInput } = await import("../../archive/archive.ts");
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
    prices.addKlines(coin, await readBinanceKlines(path));
  }
  return { inputs, missing, prices };
}

async function importPmxtFiles(values: PmxtValues, args: string[]): Promise<void> {
  const { inputs, missing, prices } = await pmxtSources(values, args);
  await withStore(values.databaseUrl, async (store) => {
    const progress = new Progress("Importing PMXT");
    const { formatPmxtReport, importPmxt } = await import("../../archive/pmxt-import.ts");
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

/** The `--feed` arguments as feed files, each checked to be a readable file. */
function feedFiles(feed: readonly string[] | null): FeedFile[] {
  return (feed ?? []).map((text) => {
    const parsed = parseFeedArgument(text);
    if (parsed === null)
      throw new UsageError(`--feed ${text}: the TWAP lookback must be a positive number of seconds`);
    requireFile(parsed.path, "--feed");
    return parsed;
  });
}

interface GammaValues {
  databaseUrl: string;
  feed: string[] | null;
  maxStaleness: number;
  coins: Coin[];
  exportType: MarketType | null;
  archiveFrom: Micros | null;
  archiveTo: Micros | null;
  polymarketGammaUrl: string;
  gammaRequestsPerSecond: number;
}

/** Market record files into the store, by the one path (`import upstream`, `import gamma FILE...`). */
async function importRecords(
  store: MarketStore,
  paths: readonly string[],
  feeds: ReadonlyMap<string, PriceFeed>,
  maxStalenessSeconds: number,
  label: string,
): Promise<void> {
  const progress = new Progress(label);
  const report = await importRecordFiles({
    store,
    paths,
    feeds,
    maxStalenessSeconds,
    onProgress: (d, t) => progress.update(d, t),
  });
  progress.done(`${report.markets} markets`);
  process.stdout.write(`${formatImportReport(report)}\n`);
}

async function importGamma(values: GammaValues, files: string[]): Promise<void> {
  const { archiveFrom: from, archiveTo: to } = values;
  const fetching = from !== null || to !== null;
  if (fetching === files.length > 0)
    throw new UsageError("import gamma takes files, or --from and --to to fetch from Gamma: one of the two");
  if (fetching && (from === null || to === null)) throw new UsageError("--from and --to go together");
  if (from !== null && to !== null && to < from) throw new UsageError("--to is before --from");
  for (const f of files) requireFile(f, "gamma");
  const feeds = await readFeeds(feedFiles(values.feed));
  await withStore(values.databaseUrl, async (store) => {
    if (!fetching) {
      await importRecords(store.markets, files, feeds, values.maxStaleness, "Importing Gamma records");
      return;
    }
    const progress = new Progress("Importing Gamma records");
    if (from === null || to === null) return; // checked above; narrows the types
    const series = values.coins.flatMap((coin) =>
      coinFacts(coin)
        .types.filter((t) => values.exportType === null || t === values.exportType)
        .map((marketType) => ({ coin, marketType })),
    );
    const report = await fetchGammaRecords({
      store: store.markets,
      baseUrl: values.polymarketGammaUrl,
      series,
      from: Math.ceil(from / 1e6),
      to: Math.floor(to / 1e6),
      feeds,
      maxStalenessSeconds: values.maxStaleness,
      requestsPerSecond: values.gammaRequestsPerSecond,
      onProgress: (d, t) => progress.update(d, t),
    });
    progress.done(`${report.markets} markets`);
    process.stdout.write(`${[...formatFetchLines(report), formatImportReport(report)].join("\n")}\n`);
  });
}

async function importBinanceVision(
  values: { databaseUrl: string; coins: Coin[] },
  args: string[],
): Promise<void> {
  if (args.length === 0) throw new UsageError("import binance-vision needs zip files or folders");
  const paths = visionPaths(args);
  for (const path of paths) requireFile(path, "binance-vision");
  // Every name is checked before the first file is read.
  for (const path of paths) visionFileOf(path, values.coins);
  await withStore(values.databaseUrl, async (store) => {
    const progress = new Progress("Importing Binance files");
    let rows = 0;
    let added = 0;
    for (const path of paths) {
      const r = await importVisionFile(store.exchange, path, values.coins, (n) =>
        progress.count(rows + n, `rows (${basename(path)})`),
      );
      rows += r.rows;
      added += r.added;
      const what = r.interval === null ? r.kind : `${r.interval} klines`;
      process.stdout.write(
        `${basename(path)}: ${r.coin} ${r.venue} ${what}, ${r.rows} rows (${r.added} new), checksum ${r.checksum}\n`,
      );
    }
    progress.done(`${paths.length} files, ${rows} rows (${added} new)`);
  });
}
