import { exportArchive, openOutput } from "../../archive/archive.ts";
import { defineCommand, UsageError, withStore } from "../command.ts";
import { Progress } from "../progress.ts";

export const exportCommand = defineCommand({
  name: "export",
  summary: "Export markets, snapshots and trades (NDJSON archive or CSV)",
  help: `updown export --out FILE|- [--format ndjson|csv] [--books] [--coin C] [--type T] [--slug S]...

Writes markets and their snapshots oldest first. ndjson (default) is our archive format, importable
with 'updown import archive', and holds each market's Polymarket trades after its snapshots; csv is one
snapshot a row for analysis tools (no trades). --books includes both
order books. A FILE ending in .gz is gzipped. Filters: --coin, --type, or one or more --slug.`,
  options: ["databaseUrl", "out", "format", "books", "exportCoin", "exportType", "slugs"],
  run: async (values) => {
    const path = values.out;
    if (path === null) throw new UsageError("export needs --out FILE (or - for stdout)");
    await withStore(values.databaseUrl, async (store) => {
      const progress = new Progress("Exporting");
      const { out, done } = openOutput(path);
      const r = await exportArchive({
        store: store.markets,
        trades: store.trades,
        out,
        format: values.format,
        books: values.books,
        coin: values.exportCoin ?? undefined,
        marketType: values.exportType ?? undefined,
        slugs: values.slugs ?? undefined,
        onProgress: (_markets, snapshots) => progress.count(snapshots, "snapshots"),
      });
      await done();
      progress.done(`${r.markets} markets, ${r.snapshots} snapshots, ${r.trades ?? 0} trades`);
    });
  },
});
