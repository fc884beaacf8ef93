import { importArchive, openInput } from "../../archive/archive.ts";
import {
  type FeedFile,
  formatImportReport,
  importUpstream,
  parseFeedArgument,
} from "../../archive/upstream-import.ts";
import { defineCommand, requireFile, UsageError, withStore } from "../command.ts";
import { Progress } from "../progress.ts";

const HELP = `updown import upstream --markets FILE --feed [twapN=]FILE [--feed ...] [--max-staleness SECONDS]
updown import archive FILE

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
Both are idempotent: importing twice changes nothing.`;

export const importCommand = defineCommand({
  name: "import",
  summary: "Import upstream recordings or one of our archives",
  help: HELP,
  options: ["databaseUrl", "markets", "feed", "maxStaleness"],
  run: async (values, [kind, file]) => {
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
