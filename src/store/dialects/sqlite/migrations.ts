/** Schema versions, applied in order once each; never edit a released one, add the next. */
export const SQLITE_MIGRATIONS: { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
CREATE TABLE markets (
  id INTEGER PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  polymarket_slug TEXT,
  coin TEXT NOT NULL,
  market_type TEXT NOT NULL,
  market_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER NOT NULL,
  coin_price_start REAL,
  coin_price_end REAL,
  condition_id TEXT NOT NULL,
  clob_token_up TEXT NOT NULL,
  clob_token_down TEXT NOT NULL,
  winner TEXT CHECK (winner IN ('Up', 'Down')),
  final_volume REAL,
  final_liquidity REAL,
  resolved_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  snapshot_count INTEGER NOT NULL DEFAULT 0
);
-- Not unique: in the autumn, US Eastern time names two hourly markets "1am-et".
CREATE INDEX markets_by_alias ON markets (polymarket_slug);
CREATE INDEX markets_by_start ON markets (start_time DESC, slug);
CREATE INDEX markets_by_series ON markets (coin, market_type, start_time DESC);

-- Prices of each recorded second, clustered by (market, time) so a page is one range scan.
CREATE TABLE snapshots (
  market INTEGER NOT NULL,
  time_us INTEGER NOT NULL,
  coin_price REAL NOT NULL,
  price_up REAL NOT NULL,
  price_down REAL NOT NULL,
  PRIMARY KEY (market, time_us)
) WITHOUT ROWID;

-- Both order books of a second in the compact encoding; apart from the prices so that pages
-- without books never read them.
CREATE TABLE snapshot_books (
  market INTEGER NOT NULL,
  time_us INTEGER NOT NULL,
  books BLOB NOT NULL,
  PRIMARY KEY (market, time_us)
) WITHOUT ROWID;

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  hash TEXT NOT NULL,
  plan TEXT NOT NULL,
  name TEXT,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
  per_minute_limit INTEGER
);
`,
  },
  {
    version: 2,
    sql: `
-- Keys belong to an account; a plan limits how many active keys one account holds.
ALTER TABLE api_keys ADD COLUMN account TEXT NOT NULL DEFAULT 'default';
ALTER TABLE api_keys ADD COLUMN per_day_limit INTEGER;
CREATE INDEX api_keys_by_account ON api_keys (account, plan) WHERE revoked_at IS NULL;

-- The monthly quota ledger: units used per key and UTC month, and each charge, so that a charge can
-- be refunded once and a retry with the same idempotency key replayed.
CREATE TABLE quota_usage (
  key_id TEXT NOT NULL,
  month TEXT NOT NULL,
  used INTEGER NOT NULL CHECK (used >= 0),
  PRIMARY KEY (key_id, month)
) WITHOUT ROWID;

CREATE TABLE quota_charges (
  id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  month TEXT NOT NULL,
  idempotency_key TEXT,
  charged_at INTEGER NOT NULL,
  refunded_at INTEGER,
  result TEXT
);
CREATE UNIQUE INDEX quota_charges_by_idempotency ON quota_charges (key_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
`,
  },
  {
    version: 3,
    sql: `
-- Why a live market lacks snapshots for a while, as the collector saw it: [from_us, to_us] is the span
-- without snapshots, cause a short code (docs/collector.md). Coverage finds the holes from the
-- snapshots themselves and takes their causes from here.
CREATE TABLE recording_gaps (
  market INTEGER NOT NULL,
  from_us INTEGER NOT NULL,
  to_us INTEGER NOT NULL,
  cause TEXT NOT NULL,
  detail TEXT,
  PRIMARY KEY (market, from_us)
) WITHOUT ROWID;
`,
  },
  {
    version: 4,
    sql: `
-- Binance spot and futures data (DESIGN 3.6; src/store/exchange-store.ts). Times in µs like
-- everywhere (Binance's milliseconds × 1000). Every table's primary key is what makes its writes
-- idempotent.

-- Top 20 levels a side of a venue's book, one a second, encoded by encodeBooks (the book as "up",
-- an empty "down").
CREATE TABLE exchange_depth (
  coin TEXT NOT NULL,
  venue TEXT NOT NULL,
  time_us INTEGER NOT NULL,
  books BLOB NOT NULL,
  PRIMARY KEY (coin, venue, time_us)
) WITHOUT ROWID;

-- Spot trades by trade id; futures aggregate trades by aggregate trade id (ids grow with time).
CREATE TABLE exchange_trades (
  coin TEXT NOT NULL,
  venue TEXT NOT NULL,
  trade_id INTEGER NOT NULL,
  time_us INTEGER NOT NULL,
  price REAL NOT NULL,
  qty REAL NOT NULL,
  buyer_maker INTEGER NOT NULL,
  PRIMARY KEY (coin, venue, trade_id)
) WITHOUT ROWID;
CREATE INDEX exchange_trades_by_time ON exchange_trades (coin, venue, time_us);

-- Closed candles; 1m is what is recorded and backfilled, wider intervals are aggregated on read.
CREATE TABLE exchange_candles (
  coin TEXT NOT NULL,
  venue TEXT NOT NULL,
  period TEXT NOT NULL,
  open_time INTEGER NOT NULL,
  open REAL NOT NULL,
  high REAL NOT NULL,
  low REAL NOT NULL,
  close REAL NOT NULL,
  volume REAL NOT NULL,
  quote_volume REAL NOT NULL,
  trades INTEGER NOT NULL,
  taker_buy_volume REAL NOT NULL,
  taker_buy_quote_volume REAL NOT NULL,
  PRIMARY KEY (coin, venue, period, open_time)
) WITHOUT ROWID;

-- Futures only: settled funding rates, open interest, and the mark price stream (one a second).
CREATE TABLE exchange_funding (
  coin TEXT NOT NULL,
  time_us INTEGER NOT NULL,
  rate REAL NOT NULL,
  mark_price REAL,
  PRIMARY KEY (coin, time_us)
) WITHOUT ROWID;

CREATE TABLE exchange_open_interest (
  coin TEXT NOT NULL,
  time_us INTEGER NOT NULL,
  open_interest REAL NOT NULL,
  open_interest_value REAL,
  PRIMARY KEY (coin, time_us)
) WITHOUT ROWID;

CREATE TABLE exchange_mark_price (
  coin TEXT NOT NULL,
  time_us INTEGER NOT NULL,
  mark_price REAL NOT NULL,
  index_price REAL,
  estimated_settle_price REAL,
  funding_rate REAL,
  next_funding_time INTEGER,
  PRIMARY KEY (coin, time_us)
) WITHOUT ROWID;
`,
  },
  {
    version: 5,
    sql: `
-- Markets record how they settle (DESIGN 3.4) and their fees, and may resolve 50-50. SQLite cannot
-- change a CHECK constraint, so the table is made again with the same rows and ids; the settlement of
-- markets stored before is their type's feed (TWAP markets came after), their fees unknown.
CREATE TABLE markets_v5 (
  id INTEGER PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  polymarket_slug TEXT,
  coin TEXT NOT NULL,
  market_type TEXT NOT NULL,
  market_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER NOT NULL,
  coin_price_start REAL,
  coin_price_end REAL,
  condition_id TEXT NOT NULL,
  clob_token_up TEXT NOT NULL,
  clob_token_down TEXT NOT NULL,
  winner TEXT CHECK (winner IN ('Up', 'Down', '50-50')),
  final_volume REAL,
  final_liquidity REAL,
  resolved_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  snapshot_count INTEGER NOT NULL DEFAULT 0,
  settlement_source TEXT NOT NULL,
  settlement_lookback_s INTEGER,
  -- JSON: {"rate", "exponent", "takerOnly", "rebateRate"}; NULL when the market charges no fees.
  fee_schedule TEXT
);
INSERT INTO markets_v5 SELECT id, slug, polymarket_slug, coin, market_type, market_id, event_id, start_time,
  end_time, coin_price_start, coin_price_end, condition_id, clob_token_up, clob_token_down, winner,
  final_volume, final_liquidity, resolved_at, created_at, updated_at, snapshot_count,
  CASE WHEN market_type IN ('1h', '24h') THEN 'binance' ELSE 'chainlink' END, NULL, NULL
  FROM markets;
DROP TABLE markets;
ALTER TABLE markets_v5 RENAME TO markets;
CREATE INDEX markets_by_alias ON markets (polymarket_slug);
CREATE INDEX markets_by_start ON markets (start_time DESC, slug);
CREATE INDEX markets_by_series ON markets (coin, market_type, start_time DESC);

-- Polymarket trades of a market's tokens (src/store/trade-store.ts). The upstream gives a trade no id:
-- all its values are its identity, so a trade received twice is stored once.
CREATE TABLE market_trades (
  market INTEGER NOT NULL,
  time_us INTEGER NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('Up', 'Down')),
  side TEXT NOT NULL CHECK (side IN ('BUY', 'SELL')),
  price REAL NOT NULL,
  size REAL NOT NULL,
  fee_rate_bps REAL NOT NULL,
  PRIMARY KEY (market, time_us, outcome, side, price, size)
) WITHOUT ROWID;
`,
  },
  {
    version: 6,
    sql: `
-- Backtests (DESIGN 3.7, src/store/backtest-store.ts): strategies, each stored with the quota charge
-- that paid for it; runs, executed as jobs under a runner's lease; one result row per market replayed.
CREATE TABLE backtest_strategies (
  id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  name TEXT NOT NULL,
  definition TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('prompt', 'preset', 'definition')),
  prompt TEXT,
  preset TEXT,
  generator TEXT,
  model TEXT,
  notes TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  charge_id TEXT UNIQUE,
  idempotency_key TEXT,
  request_hash TEXT
);
CREATE INDEX backtest_strategies_by_key ON backtest_strategies (key_id, created_at DESC, id);

CREATE TABLE backtest_runs (
  id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  strategy_id TEXT,
  definition TEXT NOT NULL,
  selection TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'complete', 'failed')),
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER,
  error TEXT,
  markets_done INTEGER NOT NULL DEFAULT 0,
  markets_total INTEGER,
  aggregate TEXT,
  unresolved TEXT,
  runner TEXT,
  lease_until INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  idempotency_key TEXT,
  request_hash TEXT
);
CREATE UNIQUE INDEX backtest_runs_by_idempotency_key ON backtest_runs (key_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX backtest_runs_in_flight ON backtest_runs (key_id) WHERE status IN ('queued', 'running');
CREATE INDEX backtest_runs_by_lease ON backtest_runs (lease_until) WHERE status IN ('queued', 'running');

CREATE TABLE backtest_results (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  slug TEXT NOT NULL,
  result TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
`,
  },
  {
    version: 7,
    sql: `
-- Snapshot blocks (src/store/rules/snapshot-blocks.ts): a resolved market's snapshots as runs of up to
-- 256 consecutive seconds, one row a run (times, prices and the book blobs end to end), so that a page
-- reads a handful of rows. A market's snapshots are all here or all in snapshots/snapshot_books. Rows
-- of markets resolved before this version are moved here by migrate() after this script, one market a
-- transaction (sealPendingMarkets), so an interrupted upgrade resumes where it stopped. A rowid table:
-- its rows are tens of kilobytes, too large for WITHOUT ROWID.
CREATE TABLE snapshot_blocks (
  market INTEGER NOT NULL,
  first_us INTEGER NOT NULL,
  last_us INTEGER NOT NULL,
  n INTEGER NOT NULL,
  prices BLOB NOT NULL,
  books BLOB,
  PRIMARY KEY (market, first_us)
);
`,
  },
  {
    version: 8,
    sql: `
-- Rendered blocks (src/store/rules/rendered-blocks.ts): each block's seconds as the JSON a page sends,
-- without books, so that a cold page copies bytes instead of formatting them. Blocks written before
-- this version are rendered by migrate() after this script (renderPendingBlocks), a batch a
-- transaction, and rendered on read until then.
-- The table is rebuilt rather than altered so that rendered comes BEFORE books: SQLite reads a column
-- by walking the row's overflow pages from the start, and a page without books (the common read) then
-- walks the prices and its rendered seconds, not the books too (measured: the fetch of a cold page's
-- blocks took about three times as long with rendered last).
CREATE TABLE snapshot_blocks_v8 (
  market INTEGER NOT NULL,
  first_us INTEGER NOT NULL,
  last_us INTEGER NOT NULL,
  n INTEGER NOT NULL,
  prices BLOB NOT NULL,
  rendered BLOB,
  books BLOB,
  PRIMARY KEY (market, first_us)
);
INSERT INTO snapshot_blocks_v8 (market, first_us, last_us, n, prices, rendered, books)
  SELECT market, first_us, last_us, n, prices, NULL, books FROM snapshot_blocks;
DROP TABLE snapshot_blocks;
ALTER TABLE snapshot_blocks_v8 RENAME TO snapshot_blocks;
-- The headers a read plans from, apart from the rows: a block row is tens of kilobytes, about one to a
-- page of the table, so reading a market's headers from the table touched a page per block.
CREATE INDEX snapshot_blocks_headers ON snapshot_blocks (market, first_us, last_us, n);
`,
  },
  {
    version: 9,
    sql: `
-- The rendered seconds become a cache stamped with the render version that wrote them (RENDER_VERSION
-- in src/wire/wire.ts): a block whose stamp is not the reader's is rendered from its prices on read and
-- by migrate() (renderStaleBlocks), so that a change of the snapshot JSON is a version bump, not a
-- migration. Blocks rendered before this version were rendered by version 1; unrendered ones have no
-- stamp. Rebuilt, as version 8, so that the stamp comes before the blobs: SQLite reads a column by
-- walking the row's overflow pages from the start, and every rendered read looks at the stamp.
CREATE TABLE snapshot_blocks_v9 (
  market INTEGER NOT NULL,
  first_us INTEGER NOT NULL,
  last_us INTEGER NOT NULL,
  n INTEGER NOT NULL,
  render_version INTEGER,
  prices BLOB NOT NULL,
  rendered BLOB,
  books BLOB,
  PRIMARY KEY (market, first_us)
);
INSERT INTO snapshot_blocks_v9 (market, first_us, last_us, n, render_version, prices, rendered, books)
  SELECT market, first_us, last_us, n, CASE WHEN rendered IS NOT NULL THEN 1 END, prices, rendered, books
  FROM snapshot_blocks;
DROP TABLE snapshot_blocks;
ALTER TABLE snapshot_blocks_v9 RENAME TO snapshot_blocks;
CREATE INDEX snapshot_blocks_headers ON snapshot_blocks (market, first_us, last_us, n);
`,
  },
  {
    version: 10,
    sql: `
-- The demo a first start seeds (src/cli/first-start.ts): its anchor, written before its first market,
-- and when it was complete, written after its last. A start that finds it begun and not complete
-- seeds it again over the same anchor (the seed is idempotent), so a killed first start never leaves a
-- partial demo served.
CREATE TABLE demo_seed (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  anchor INTEGER NOT NULL,
  completed_at INTEGER
);
`,
  },
  {
    version: 11,
    sql: `
-- Events (src/store/rules/event-blocks.ts): each market's market-channel messages and each coin's
-- price updates per topic, as compressed blocks of consecutive events (src/wire/event-block.ts), a
-- row a block, never a row an event. The headers index holds what a read plans from (ordered by
-- last_us, which orders a stream's disjoint blocks as first_us does), so planning never reads a blob.
-- A tail row says where a stream's small, recently appended blocks start (sealed into big ones later).
CREATE TABLE market_event_blocks (
  market INTEGER NOT NULL,
  first_us INTEGER NOT NULL,
  last_us INTEGER NOT NULL,
  n INTEGER NOT NULL,
  min_ts INTEGER NOT NULL,
  max_ts INTEGER NOT NULL,
  types INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (market, first_us)
);
CREATE INDEX market_event_blocks_headers ON market_event_blocks (market, last_us, first_us, n, min_ts, max_ts, types);
CREATE TABLE market_event_tails (
  market INTEGER PRIMARY KEY,
  first_us INTEGER NOT NULL,
  last_us INTEGER NOT NULL,
  n INTEGER NOT NULL
);
CREATE INDEX market_event_tails_by_last ON market_event_tails (last_us);
CREATE TABLE coin_event_blocks (
  coin TEXT NOT NULL,
  topic TEXT NOT NULL,
  first_us INTEGER NOT NULL,
  last_us INTEGER NOT NULL,
  n INTEGER NOT NULL,
  min_ts INTEGER NOT NULL,
  max_ts INTEGER NOT NULL,
  types INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (coin, topic, first_us)
);
CREATE INDEX coin_event_blocks_headers ON coin_event_blocks (coin, topic, last_us, first_us, n, min_ts, max_ts, types);
CREATE TABLE coin_event_tails (
  coin TEXT NOT NULL,
  topic TEXT NOT NULL,
  first_us INTEGER NOT NULL,
  last_us INTEGER NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (coin, topic)
) WITHOUT ROWID;
CREATE INDEX coin_event_tails_by_last ON coin_event_tails (last_us);
-- Book integrity of each market's events (DESIGN 3.10): counts only ever added to.
CREATE TABLE market_book_integrity (
  market INTEGER PRIMARY KEY,
  book_matches INTEGER NOT NULL,
  book_mismatches INTEGER NOT NULL,
  best_matches INTEGER NOT NULL,
  best_mismatches INTEGER NOT NULL
);
`,
  },
  {
    version: 12,
    sql: `
-- Backtests without stalls (issue 24; version 11 is the events'): the account a run's key belongs to,
-- so that runs in flight are limited per account as well as per key, and each market's trades as the
-- worker rendered them, one JSON line a trade, so that a page of them is cut without parsing.
ALTER TABLE backtest_runs ADD COLUMN account TEXT;
CREATE INDEX backtest_runs_in_flight_by_account ON backtest_runs (account)
  WHERE status IN ('queued', 'running');
ALTER TABLE backtest_results ADD COLUMN trades TEXT;
`,
  },
  {
    version: 13,
    sql: `
-- Where each market's data came from (issue 23; MarketSource in src/domain/market.ts): a bit each,
-- recorded 1, pmxt 2, gamma 4 (src/store/sql/market-sources.ts). Markets stored before it are judged by what
-- they hold: snapshots were written only by the collector, the demo and our archive's import, so they
-- count as recorded; a record alone came from Gamma (the upstream import, or a market discovered and
-- not yet recorded, which the collector marks recorded when it follows it again).
ALTER TABLE markets ADD COLUMN sources INTEGER NOT NULL DEFAULT 0;
UPDATE markets SET sources = CASE WHEN snapshot_count > 0 THEN 1 ELSE 4 END;
`,
  },
  {
    version: 14,
    sql: `
-- Archive imports (issue 23; version 13 is the sources catalog's): each row group of each file an
-- import has written, so that a killed import resumes; and the markets whose events it wrote and whose
-- snapshots, trades and integrity counts are still to be derived (src/store/ports/import-marks.ts).
CREATE TABLE archive_row_groups (
  archive TEXT NOT NULL,
  file TEXT NOT NULL,
  row_group INTEGER NOT NULL,
  rows INTEGER NOT NULL,
  kept INTEGER NOT NULL,
  PRIMARY KEY (archive, file, row_group)
) WITHOUT ROWID;
CREATE TABLE archive_pending_markets (
  archive TEXT NOT NULL,
  market TEXT NOT NULL,
  PRIMARY KEY (archive, market)
) WITHOUT ROWID;
-- Where an import took a market's snapshot coin prices from (a feed's name, binance_1s).
CREATE TABLE market_coin_price_sources (
  market INTEGER PRIMARY KEY,
  source TEXT NOT NULL
);
`,
  },
  {
    version: 15,
    sql: `
-- Research beside every run (issue 25; versions 13 and 14 are the archive imports'): its benchmarks,
-- bootstrap intervals, sweep table and walk-forward, as JSON text written with its aggregate.
ALTER TABLE backtest_runs ADD COLUMN research TEXT;
`,
  },
  {
    version: 16,
    sql: `
-- A trade's transaction hash (issue 23: PMXT rows carry it; live messages may not). Not part of the
-- trade's identity: a trade recorded live without it and imported with it is one row, the hash filled in.
ALTER TABLE market_trades ADD COLUMN tx_hash TEXT;
`,
  },
];
