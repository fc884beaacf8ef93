import { defineCommand, requireFolderFor, UsageError, withStore } from "../command.ts";
import { Progress } from "../progress.ts";

export const exportCommand = defineCommand({
  name: "export",
  summary: "Export markets, snapshots and trades (NDJSON archive, CSV or Parquet)",
  help: `updown export --out FILE|- [--format ndjson|csv|parquet] [--books] [--coin C] [--type T]
              [--from TIME] [--to TIME] [--slug S]...

Writes markets and their snapshots oldest first, with progress on stderr. ndjson (default) is our
archive format, importable with 'updown import archive', and holds each market's Polymarket trades
after its snapshots; csv is one snapshot a row for analysis tools (no trades); parquet has typed
columns (time as a UTC microsecond timestamp, prices as doubles, books as lists of {price, size}) for
pandas, polars and DuckDB (no trades). --books includes both order books. A FILE ending in .gz is
gzipped. Filters: --coin, --type, --from and --to (a series over a time range: the markets that
overlap it, their snapshots and trades within it), or one or more --slug.`,
  options: [
    "databaseUrl",
    "out",
    "format",
    "books",
    "exportCoin",
    "exportType",
    "exportFrom",
    "exportTo",
    "slugs",
  ],
  run: async (values) => {
    const path = values.out;
    if (path === null) throw new UsageError("export needs --out FILE (or - for stdout)");
    if (path !== "-") requireFolderFor(path, "--out");
    const from = values.exportFrom ?? undefined;
    const to = values.exportTo ?? undefined;
    if (from !== undefined && to !== undefined && from > to)
      throw new UsageError("--from must not be after --to");
    // Imported here, not above: `updown --help` loads this module, not the archive's writers.
    const { exportArchive, openOutput } = await import("../../archive/archive.ts");
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
        from,
        to,
        onProgress: (markets, snapshots) => progress.count(snapshots, `snapshots (${markets} markets)`),
      });
      await done();
      // Only the archive carries trades.
      const trades = values.format === "ndjson" ? `, ${r.trades ?? 0} trades` : "";
      progress.done(`${r.markets} markets, ${r.snapshots} snapshots${trades}`);
    });
  },
});
