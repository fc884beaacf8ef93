import { parseArgs } from "node:util";
import { KeyPolicyError, KeyService } from "../access/keys.ts";
import { loadPlans } from "../access/plans.ts";
import { type Config, ConfigError, loadConfig, parseDemoCounts } from "../config.ts";
import { PLAN_NAMES, parsePlanName } from "../domain/api-key.ts";
import { PlanConfigError } from "../domain/plan.ts";
import {
  COINS,
  type Coin,
  MARKET_TYPES,
  type MarketType,
  parseCoin,
  parseMarketType,
} from "../domain/market.ts";
import { parseIsoMicros, systemClock } from "../domain/time.ts";
import { WireFormatError } from "../domain/wire.ts";
import {
  ArchiveError,
  type ExportFormat,
  exportArchive,
  importArchive,
  openInput,
  openOutput,
} from "../archive/archive.ts";
import { seedDemo } from "../demo/demo.ts";
import { formatImportReport, ImportError, importUpstream } from "../archive/upstream-import.ts";
import { collect } from "../record/collect.ts";
import { parseVenue, VENUES, type Venue } from "../domain/exchange.ts";
import { serve } from "../server.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/store.ts";
import { CopyError } from "../store/copy.ts";
import { DEFAULT_COPY_BATCH, MAX_COPY_BATCH, runCopy } from "./copy.ts";
import { BACKFILL_HELP, BackfillUsageError, backfillCommand } from "./backfill-binance.ts";
import { Progress } from "./progress.ts";

const HELP: Record<string, string> = {
  backfill: BACKFILL_HELP,
  main: `updown: historical Polymarket Up or Down market data

Usage: updown <command> [options]

Commands:
  serve     Run the HTTP API (what npm start runs)
  collect   Record live markets from Polymarket (and Binance) into the database
  migrate   Create or upgrade the database schema
  seed      Generate deterministic demo data
  import    Import upstream recordings or one of our archives
  export    Export markets and snapshots (NDJSON archive or CSV)
  keys      Create, list and revoke API keys
  copy      Copy a database to another (SQLite to PostgreSQL and back), resumable
  backfill  Fill a time range of Binance spot and futures data from Binance's REST API

Run 'updown <command> --help' for a command's options.
Configuration comes from the environment (PORT, HOST, DATABASE_URL, REDIS_URL, PLANS_FILE, LOG_LEVEL,
PAGE_CACHE_MB, SEED_DEMO, DEMO_COUNTS); flags override it. See docs/configuration.md.`,
  serve: `updown serve [--port N] [--host H] [--database-url URL] [--no-seed]

Serves the API, /docs and /openapi.json on one port. On first start with an empty database it seeds
demo data and creates one demo key per plan (printed, and written to demo-keys.json beside the SQLite
file). --no-seed (or SEED_DEMO=0) skips both.`,
  migrate: `updown migrate [--database-url URL]

Creates or upgrades the schema. serve and every other command also do this on start.`,
  seed: `updown seed [--seed N] [--anchor ISO|now] [--counts 5m=60,15m=60,1h=12,4h=3,24h=2] [--coins btc,eth,sol]

Generates deterministic demo markets and snapshots: the same options give the same data. --anchor is the
"now" of the data (default: now); the latest market of each series contains it and is live. --counts
sets markets per series per coin (defaults shown). Idempotent: existing rows are kept.`,
  import: `updown import upstream --markets FILE --feed FILE [--max-staleness SECONDS]
updown import archive FILE

upstream: market rows with their raw Gamma objects (JSONL, .gz accepted) and the settlement feed (CSV,
.gz accepted), as in the recorded fixtures. The winner comes from the upstream outcome; the feed gives
coin prices and a cross-check whose report (agreements, disagreements, markets the feed cannot decide,
with reasons) is printed. --max-staleness (default 10) is the oldest a feed tick may be and still
decide a market in the cross-check.
archive: our own NDJSON export format (see 'updown export'), .gz accepted.
Both are idempotent: importing twice changes nothing.`,
  export: `updown export --out FILE|- [--format ndjson|csv] [--books] [--coin C] [--type T] [--slug S]...

Writes markets and their snapshots oldest first. ndjson (default) is our archive format, importable
with 'updown import archive'; csv is one snapshot a row for analysis tools. --books includes both
order books. A FILE ending in .gz is gzipped. Filters: --coin, --type, or one or more --slug.`,
  keys: `updown keys create --plan starter|pro|enterprise [--account NAME] [--name TEXT]
                   [--per-minute N] [--per-day N]
updown keys list
updown keys revoke KEY_ID

create prints only the new key on stdout (shown once; only its SHA-256 is stored). --account (default
"default") is who holds the key: a plan allows a number of active keys per account (keys_per_account
in the plans file), and create refuses past it with exit status 1. --per-minute and --per-day set an
enterprise key's own limits (default: the plan's). list shows ids, plans, accounts, states and names,
never keys. revoke takes the id shown by list (the 8 characters after ud_) and takes effect at once.`,
  collect: `updown collect [--database-url URL] [--coins btc,eth,sol] [--types 5m,15m,1h,4h,24h|none]
               [--lookahead N] [--venues spot,futures|none]

Records every live market of the chosen series: one snapshot per market every SNAPSHOT_INTERVAL_MS
(default 1000) with the settlement coin price, both displayed prices and both order books, written in
one transaction per tick. Discovers the live and the next --lookahead (default 1) markets of each series
on Gamma, follows their books on the CLOB market WebSocket and coin prices on the real-time data socket,
captures the start and end prices, the liquidity before the close and the resolution. Every second a
market cannot be recorded is kept as a gap with its cause (GET /v1/markets/{slug}/coverage).
--venues (default spot,futures) also records Binance for the same coins: depth (top 20, one a second),
trades, 1m candles, mark price, funding rates and open interest. --types none or --venues none leaves
one side out.
Upstream addresses: POLYMARKET_GAMMA_URL, POLYMARKET_CLOB_WS_URL, POLYMARKET_RTDS_URL,
BINANCE_SPOT_WS_URL, BINANCE_FUTURES_WS_URL, BINANCE_FUTURES_REST_URL.
SIGTERM or Ctrl-C stops cleanly; after a kill, the next start continues and records the time it was down
as a gap. See docs/collector.md.`,
  copy: `updown copy --from URL --to URL [--batch N]

Copies everything a database keeps into another, of either kind (sqlite:<path>, postgres://...):
markets with their Polymarket aliases, every snapshot with both order books byte for byte, API key
records (hashes, accounts, plans, limits, revocations; keys themselves are never stored anywhere),
the quota ledger (charges, idempotency keys, refunds, recorded results) and the Binance exchange data
(depth snapshots byte for byte, trades, candles of every stored interval, funding rates, open
interest, mark prices). Both schemas are created or upgraded first. Progress goes to stderr, a
one-line summary to stdout. Stop writers to the source (the service, imports, the collector) for an
exact copy; a later run catches up with what they added.

--batch (default ${DEFAULT_COPY_BATCH}, at most ${MAX_COPY_BATCH}) is how many snapshots or exchange rows are read and
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
};

class UsageError extends Error {}

type OptionSpec = Record<
  string,
  { type: "string" | "boolean"; default?: string | boolean; multiple?: boolean }
>;
type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

function commandOptions(
  args: string[],
  options: OptionSpec,
): { values: OptionValues; positionals: string[] } {
  const parsed = parseArgs({
    args,
    options: { ...options, help: { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  return { values: parsed.values as OptionValues, positionals: parsed.positionals };
}

function configFrom(values: OptionValues): Config {
  return loadConfig(process.env, {
    port: values.port === undefined ? undefined : Number(values.port),
    host: values.host as string | undefined,
    databaseUrl: values["database-url"] as string | undefined,
    seedDemo: values["no-seed"] ? false : undefined,
  });
}

async function withStore<T>(values: OptionValues, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(configFrom(values).databaseUrl);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

function parseCoins(text: string | undefined): Coin[] {
  if (!text) return [...COINS];
  return text.split(",").map((c) => {
    const coin = parseCoin(c);
    if (!coin) throw new UsageError(`--coins: ${c} is not one of ${COINS.join(", ")}`);
    return coin;
  });
}

function parseTypes(text: string | undefined): MarketType[] {
  if (!text) return [...MARKET_TYPES];
  return text.split(",").map((t) => {
    const type = parseMarketType(t);
    if (!type) throw new UsageError(`--types: ${t} is not one of ${MARKET_TYPES.join(", ")}`);
    return type;
  });
}

function parseVenues(text: string): Venue[] {
  if (text === "none") return [];
  return text.split(",").map((v) => {
    const venue = parseVenue(v);
    if (!venue) throw new UsageError(`--venues: ${v} is not one of ${VENUES.join(", ")}, or none`);
    return venue;
  });
}

const storeFlag = { "database-url": { type: "string" } } as const;

async function run(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "help") {
    process.stdout.write(`${HELP.main}\n`);
    return;
  }
  if (!(command in HELP) || command === "main")
    throw new UsageError(`unknown command ${command}\n\n${HELP.main}`);
  if (rest.includes("--help")) {
    process.stdout.write(`${HELP[command]}\n`);
    return;
  }

  if (command === "serve") {
    const { values } = commandOptions(rest, {
      ...storeFlag,
      port: { type: "string" },
      host: { type: "string" },
      "no-seed": { type: "boolean" },
    });
    await serve(configFrom(values));
    return;
  }

  if (command === "migrate") {
    const { values } = commandOptions(rest, storeFlag);
    await withStore(values, async () => process.stdout.write("Schema is up to date.\n"));
    return;
  }

  if (command === "seed") {
    const { values } = commandOptions(rest, {
      ...storeFlag,
      seed: { type: "string", default: "1" },
      anchor: { type: "string", default: "now" },
      counts: { type: "string" },
      coins: { type: "string" },
    });
    const anchorUs =
      values.anchor === "now" ? systemClock.nowMicros() : parseIsoMicros(String(values.anchor));
    if (anchorUs === null) throw new UsageError("--anchor must be an ISO 8601 time or now");
    const seed = Number(values.seed);
    if (!Number.isInteger(seed)) throw new UsageError("--seed must be an integer");
    await withStore(values, async (store) => {
      const progress = new Progress("Seeding demo data");
      const result = await seedDemo(store, {
        seed,
        anchor: Math.floor(anchorUs / 1e6),
        counts: parseDemoCounts(values.counts as string | undefined),
        coins: parseCoins(values.coins as string | undefined),
        exchange: true,
        onProgress: (d, t) => progress.update(d, t),
      });
      progress.done(`${result.markets} markets, ${result.snapshots.toLocaleString("en-US")} snapshots`);
    });
    return;
  }

  if (command === "import") {
    const { values, positionals } = commandOptions(rest, {
      ...storeFlag,
      markets: { type: "string" },
      feed: { type: "string" },
      "max-staleness": { type: "string", default: "10" },
    });
    const [kind, file] = positionals;
    if (kind === "upstream") {
      if (!values.markets || !values.feed)
        throw new UsageError("import upstream needs --markets FILE and --feed FILE");
      const maxStalenessSeconds = Number(values["max-staleness"]);
      if (!Number.isInteger(maxStalenessSeconds) || maxStalenessSeconds < 0) {
        throw new UsageError("--max-staleness must be a whole number of seconds");
      }
      await withStore(values, async (store) => {
        const progress = new Progress("Importing markets");
        const report = await importUpstream({
          store: store.markets,
          marketsPath: String(values.markets),
          feedPath: String(values.feed),
          maxStalenessSeconds,
          onProgress: (d, t) => progress.update(d, t),
        });
        progress.done(`${report.markets} markets`);
        process.stdout.write(`${formatImportReport(report)}\n`);
      });
      return;
    }
    if (kind === "archive" && file) {
      await withStore(values, async (store) => {
        const progress = new Progress("Importing archive");
        const r = await importArchive(store.markets, openInput(file), (_markets, snapshots) =>
          progress.count(snapshots, "snapshots"),
        );
        progress.done(`${r.markets} markets, ${r.snapshots} snapshots (${r.added} new)`);
      });
      return;
    }
    throw new UsageError(HELP.import);
  }

  if (command === "export") {
    const { values } = commandOptions(rest, {
      ...storeFlag,
      out: { type: "string" },
      format: { type: "string", default: "ndjson" },
      books: { type: "boolean", default: false },
      coin: { type: "string" },
      type: { type: "string" },
      slug: { type: "string", multiple: true },
    });
    if (!values.out) throw new UsageError("export needs --out FILE (or - for stdout)");
    if (values.format !== "ndjson" && values.format !== "csv")
      throw new UsageError("--format must be ndjson or csv");
    const coin = values.coin ? parseCoins(String(values.coin))[0] : undefined;
    const marketType = values.type ? (parseMarketType(String(values.type)) ?? undefined) : undefined;
    if (values.type && !marketType) throw new UsageError(`--type must be one of ${MARKET_TYPES.join(", ")}`);
    await withStore(values, async (store) => {
      const progress = new Progress("Exporting");
      const { out, done } = openOutput(String(values.out));
      const r = await exportArchive({
        store: store.markets,
        out,
        format: values.format as ExportFormat,
        books: Boolean(values.books),
        coin,
        marketType,
        slugs: values.slug as string[] | undefined,
        onProgress: (_markets, snapshots) => progress.count(snapshots, "snapshots"),
      });
      await done();
      progress.done(`${r.markets} markets, ${r.snapshots} snapshots`);
    });
    return;
  }

  if (command === "collect") {
    const { values } = commandOptions(rest, {
      ...storeFlag,
      coins: { type: "string" },
      types: { type: "string" },
      lookahead: { type: "string", default: "1" },
      venues: { type: "string", default: "spot,futures" },
    });
    const lookahead = Number(values.lookahead);
    if (!Number.isInteger(lookahead) || lookahead < 0 || lookahead > 10) {
      throw new UsageError(`--lookahead must be an integer from 0 to 10, got ${String(values.lookahead)}`);
    }
    await collect(configFrom(values), {
      coins: parseCoins(values.coins as string | undefined),
      marketTypes: values.types === "none" ? [] : parseTypes(values.types as string | undefined),
      lookahead,
      venues: parseVenues(String(values.venues)),
    });
    return;
  }

  if (command === "copy") {
    const { values } = commandOptions(rest, {
      from: { type: "string" },
      to: { type: "string" },
      batch: { type: "string", default: String(DEFAULT_COPY_BATCH) },
    });
    if (!values.from || !values.to) throw new UsageError("copy needs --from URL and --to URL");
    const batch = Number(values.batch);
    if (!Number.isInteger(batch) || batch < 1 || batch > MAX_COPY_BATCH) {
      throw new UsageError(`--batch must be a whole number from 1 to ${MAX_COPY_BATCH}`);
    }
    await runCopy(String(values.from), String(values.to), batch);
    return;
  }

  if (command === "backfill") {
    await backfillCommand(rest);
    return;
  }

  if (command === "keys") {
    const { values, positionals } = commandOptions(rest, {
      ...storeFlag,
      plan: { type: "string" },
      account: { type: "string" },
      name: { type: "string" },
      "per-minute": { type: "string" },
      "per-day": { type: "string" },
    });
    const [action, id] = positionals;
    const plans = loadPlans(configFrom(values).plansFile);
    await withStore(values, async (store) => {
      const keys = new KeyService(store.keys, systemClock, plans);
      if (action === "create") {
        const plan = parsePlanName(String(values.plan ?? ""));
        if (!plan) throw new UsageError(`keys create needs --plan ${PLAN_NAMES.join("|")}`);
        const account = values.account as string | undefined;
        if (account !== undefined && !/^\S.{0,199}$/.test(account)) {
          throw new UsageError("--account must be 1 to 200 characters, not starting with a space");
        }
        const created = await keys.create({
          plan,
          account,
          name: (values.name as string | undefined) ?? null,
          perMinuteLimit: limitFlag(values, "per-minute"),
          perDayLimit: limitFlag(values, "per-day"),
        });
        process.stdout.write(`${created.key}\n`);
      } else if (action === "list") {
        for (const k of await keys.list()) {
          const state = k.revokedAt === null ? "active" : "revoked";
          process.stdout.write(`${k.id}\t${k.plan}\t${k.account}\t${state}\t${k.name ?? ""}\n`);
        }
      } else if (action === "revoke" && id) {
        const bareId = id.startsWith("ud_") ? id.slice(3, 11) : id;
        if (!(await keys.revoke(bareId))) throw new UsageError(`no active key with id ${bareId}`);
        process.stderr.write(`Revoked ${bareId}.\n`);
      } else {
        throw new UsageError(HELP.keys);
      }
    });
  }
}

function limitFlag(values: OptionValues, flag: string): number | null {
  const text = values[flag];
  if (text === undefined) return null;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${flag} must be a positive integer`);
  return n;
}

const KNOWN_ERRORS = [
  UsageError,
  BackfillUsageError,
  ConfigError,
  PlanConfigError,
  ImportError,
  ArchiveError,
  WireFormatError,
  CopyError,
];

export async function main(argv: string[]): Promise<void> {
  try {
    await run(argv);
  } catch (err) {
    const known =
      KNOWN_ERRORS.some((E) => err instanceof E) ||
      (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
    if (err instanceof KeyPolicyError) {
      process.stderr.write(`refused: ${err.message}\n`);
      process.exit(1);
    }
    if (known) {
      process.stderr.write(`error: ${(err as Error).message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
