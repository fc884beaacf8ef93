import { systemClock } from "../../domain/time.ts";
import { seedDemo } from "../../demo/seed.ts";
import { defineCommand, withStore } from "../command.ts";
import { Progress } from "../progress.ts";

export const seedCommand = defineCommand({
  name: "seed",
  summary: "Generate deterministic demo data",
  help: `updown seed [--seed N] [--anchor ISO|now] [--counts 5m=60,15m=60,1h=12,4h=3,24h=2] [--coins btc,eth,sol]

Generates deterministic demo markets and snapshots: the same options give the same data. --anchor is the
"now" of the data (default: now); the latest market of each series contains it and is live. --counts
(or DEMO_COUNTS) sets markets per series per coin (defaults shown). Idempotent: existing rows are kept.`,
  options: ["databaseUrl", "seed", "anchor", "demoCounts", "coins"],
  run: async (values) => {
    const anchorUs = values.anchor ?? systemClock.nowMicros();
    await withStore(values.databaseUrl, async (store) => {
      const progress = new Progress("Seeding demo data");
      const result = await seedDemo(store, {
        seed: values.seed,
        anchor: Math.floor(anchorUs / 1e6),
        counts: values.demoCounts,
        coins: values.coins,
        exchange: true,
        onProgress: (d, t) => progress.update(d, t),
      });
      progress.done(`${result.markets} markets, ${result.snapshots.toLocaleString("en-US")} snapshots`);
    });
  },
});
