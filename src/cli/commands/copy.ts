import { MAX_COPY_BATCH, OPTIONS } from "../../config/options.ts";
import { defineCommand, UsageError } from "../command.ts";
import { runCopy } from "../copy.ts";

export const copyCommand = defineCommand({
  name: "copy",
  summary: "Copy a database to another (SQLite to PostgreSQL and back), resumable",
  help: `updown copy --from URL --to URL [--batch N]

Copies everything a database keeps into another, of either kind (sqlite:<path>, postgres://...):
markets with their Polymarket aliases, every snapshot with both order books byte for byte, API key
records (hashes, accounts, plans, limits, revocations; keys themselves are never stored anywhere),
the quota ledger (charges, idempotency keys, refunds, recorded results) and the Binance exchange data
(depth snapshots byte for byte, trades, candles of every stored interval, funding rates, open
interest, mark prices). Both schemas are created or upgraded first. Progress goes to stderr, a
one-line summary to stdout. Stop writers to the source (the service, imports, the collector) for an
exact copy; a later run catches up with what they added.

--batch (default ${OPTIONS.batch.default}, at most ${MAX_COPY_BATCH}) is how many snapshots or exchange rows are read and
written at a time; each batch is one transaction at the destination.

Resuming: a copy may be stopped at any point (Ctrl-C, a kill, a lost connection); running the same
command again finishes it without duplicates. Each market's snapshots are written oldest first, a
batch at a time, so a market cut short holds its seconds up to some time; a market whose count and
last second match the source's is skipped, any other continues after its last second at the
destination (and is gone through again from its first second if the counts still differ; a second
already there is never written twice). Exchange data goes the same way, one series at a time (a kind
of one coin and venue; candles of one interval): oldest first in batches, skipped when its count and
latest time match the source's, else continued after its latest time at the destination (trades from
that time). Keys and quota charges are written again on every run, which changes nothing.

A destination that already holds data: the source wins for records. A market with the same slug
takes the source's record; a key or quota charge with the same id takes the source's values, except
that a key revoked on either side stays revoked and a charge refunded on either side stays
refunded. Snapshots and exchange rows at the destination are never overwritten or deleted: a second
(or row key) both hold keeps the destination's values, and a market or series whose destination has
seconds or rows the source lacks is named in a warning. --from and --to naming the same database, an
unknown scheme, a missing source file or a database that cannot be opened stop the command with a
one-line error and exit status 2.`,
  options: ["source", "destination", "batch"],
  run: async (values) => {
    const { source, destination } = values;
    if (source === null || destination === null) throw new UsageError("copy needs --from URL and --to URL");
    await runCopy(source, destination, values.batch);
  },
});
