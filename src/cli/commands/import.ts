import { importArchive, openInput } from "../../archive/archive.ts";
import { formatImportReport, importUpstream } from "../../archive/upstream-import.ts";
import { defineCommand, requireFile, UsageError, withStore } from "../command.ts";
import { Progress } from "../progress.ts";

const HELP = `updown import upstream --markets FILE --feed FILE [--max-staleness SECONDS]
updown import archive FILE

upstream: market rows with their raw Gamma objects (JSONL, .gz accepted) and the settlement feed (CSV,
.gz accepted), as in the recorded fixtures. The winner comes from the upstream outcome; the feed gives
coin prices and a cross-check whose report (agreements, disagreements, markets the feed cannot decide,
with reasons) is printed. --max-staleness (default 10) is the oldest a feed tick may be and still
decide a market in the cross-check.
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
      requireFile(markets, "--markets");
      requireFile(feed, "--feed");
      await withStore(values.databaseUrl, async (store) => {
        const progress = new Progress("Importing markets");
        const report = await importUpstream({
          store: store.markets,
          marketsPath: markets,
          feedPath: feed,
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
        const r = await importArchive(store.markets, openInput(file), (_markets, snapshots) =>
          progress.count(snapshots, "snapshots"),
        );
        progress.done(`${r.markets} markets, ${r.snapshots} snapshots (${r.added} new)`);
      });
      return;
    }
    throw new UsageError(HELP);
  },
});
