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
];
