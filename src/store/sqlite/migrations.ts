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
];
