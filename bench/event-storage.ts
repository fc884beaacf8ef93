import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import type { MarketEvent } from "../src/domain/event.ts";
import { SqliteStore } from "../src/store/dialects/sqlite/sqlite-store.ts";
import { BLOCK_EVENTS, SEAL_IDLE_US } from "../src/store/rules/event-blocks.ts";
import { encodeMarketEvents } from "../src/wire/event-block.ts";

/**
 * Storage bytes per event (issue 22): a realistic market-channel stream of several markets written
 * as the live collector writes it (one append a second with every market's events of that second),
 * its tails then sealed as they are once idle, against the same events written as PMXT-shaped
 * Parquet (DESIGN 3.11: 16 columns, a row per price_change entry, rows sorted by market, asset and
 * receive time, ZSTD level 9, row groups of 1,048,576) by DuckDB.
 *
 * Our bytes: the event tables and their indexes as SQLite lays them out on disk (dbstat's pages:
 * blobs, headers, row and page overhead and the pages' free space), after VACUUM. Also printed: the
 * blobs alone. PMXT has no column for a price_change entry's `hash` (nor the book's, and keeps receive
 * times in ms, decimals as decimal(9,4)/(18,6) values rather than the strings sent): the ratio is given
 * against PMXT as it is and against PMXT with a `hash` column. The second is the fair one: we keep the
 * hash (it is in the message, and lossless means every field), so PMXT+hash is the cheapest Parquet
 * holding the same information. For the other direction, the same events with every hash taken out
 * are encoded as sealed blocks too (blobs alone) and compared with PMXT as it is.
 */

export interface EventStorageResult {
  markets: number;
  events: number;
  /** Rows of the PMXT-shaped files (a row per price_change entry). */
  parquetRows: number;
  storedBytes: number;
  storedBytesPerEvent: number;
  blobBytesPerEvent: number;
  blocks: number;
  pmxtBytes: number;
  pmxtBytesPerEvent: number;
  pmxtWithHashBytes: number;
  pmxtWithHashBytesPerEvent: number;
  ratioToPmxt: number;
  ratioToPmxtWithHash: number;
  /** Sealed blocks of the events without their hashes (blobs alone), per event and against PMXT. */
  withoutHashBlobBytesPerEvent: number;
  ratioWithoutHashToPmxt: number;
  target: number;
  pass: boolean;
  method: string;
}

/** mulberry32: a small deterministic generator. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hex(rand: () => number, chars: number): string {
  let s = "";
  for (let i = 0; i < chars; i++) s += Math.floor(rand() * 16).toString(16);
  return s;
}

function digits(rand: () => number, n: number): string {
  let s = String(1 + Math.floor(rand() * 9));
  for (let i = 1; i < n; i++) s += Math.floor(rand() * 10);
  return s;
}

/** A price of `ticks` hundredths as Polymarket writes it ("0.5", "0.51"). */
function price(ticks: number): string {
  return String(ticks / 100);
}

/** A size with up to two decimals, mostly small, sometimes large ("150", "20.5", "1823.51"). */
function size(rand: () => number): string {
  const cents = Math.floor(rand() ** 3 * 2_000_000) + 1;
  return rand() < 0.3 ? String(Math.max(1, Math.round(cents / 100))) : String(cents / 100);
}

interface GeneratedMarket {
  conditionId: string;
  assets: [string, string];
  events: MarketEvent[];
}

/**
 * One market's hour: about `perSecond` events a second (Poisson arrivals), 97 % price_change (an
 * order at a level near the mid: an entry for each token, the other token's the mirror), 2.5 %
 * last_trade_price, 0.5 % book (a token's whole book, 20 to 50 levels a side).
 */
function generateMarket(seed: number, startUs: number, seconds: number, perSecond: number): GeneratedMarket {
  const rand = random(seed);
  const conditionId = `0x${hex(rand, 64)}`;
  const assets: [string, string] = [digits(rand, 77), digits(rand, 77)];
  const events: MarketEvent[] = [];
  let mid = 30 + Math.floor(rand() * 40);
  let us = startUs;
  const endUs = startUs + seconds * 1e6;
  for (;;) {
    us += Math.max(1, Math.round((-Math.log(1 - rand()) / perSecond) * 1e6));
    if (us >= endUs) break;
    const timestampMs = Math.floor(us / 1000) - 20 - Math.floor(rand() * 60);
    const timestamp = String(timestampMs);
    if (rand() < 0.02) mid = Math.min(95, Math.max(5, mid + (rand() < 0.5 ? -1 : 1)));
    const r = rand();
    let message: Record<string, unknown>;
    if (r < 0.005) {
      const token = rand() < 0.5 ? 0 : 1;
      const m = token === 0 ? mid : 100 - mid;
      const levels = (from: number, step: number) =>
        Array.from({ length: 20 + Math.floor(rand() * 30) }, (_, i) => from + step * i)
          .filter((t) => t >= 1 && t <= 99)
          .map((t) => ({ price: price(t), size: size(rand) }));
      message = {
        market: conditionId,
        asset_id: assets[token],
        timestamp,
        hash: hex(rand, 40),
        bids: levels(m - 1, -1).toReversed(),
        asks: levels(m + 1, 1).toReversed(),
        tick_size: "0.01",
        event_type: "book",
        last_trade_price: price(m),
      };
    } else if (r < 0.03) {
      const token = rand() < 0.5 ? 0 : 1;
      message = {
        event_type: "last_trade_price",
        market: conditionId,
        asset_id: assets[token],
        fee_rate_bps: rand() < 0.8 ? "0" : "1000",
        price: price(token === 0 ? mid : 100 - mid),
        side: rand() < 0.5 ? "BUY" : "SELL",
        size: size(rand),
        timestamp,
      };
    } else {
      const level = Math.min(99, Math.max(1, mid + Math.round((rand() - 0.5) * 12)));
      const buy = level <= mid;
      const s = rand() < 0.15 ? "0" : size(rand);
      message = {
        market: conditionId,
        price_changes: [
          {
            asset_id: assets[0],
            price: price(level),
            size: s,
            side: buy ? "BUY" : "SELL",
            hash: hex(rand, 40),
            best_bid: price(mid - 1),
            best_ask: price(mid + 1),
          },
          {
            asset_id: assets[1],
            price: price(100 - level),
            size: s,
            side: buy ? "SELL" : "BUY",
            hash: hex(rand, 40),
            best_bid: price(99 - mid),
            best_ask: price(101 - mid),
          },
        ],
        timestamp,
        event_type: "price_change",
      };
    }
    events.push({
      receivedUs: us,
      timestampMs,
      type: message.event_type as MarketEvent["type"],
      message,
    });
  }
  return { conditionId, assets, events };
}

/** The events with every hash taken out (PMXT keeps none), as sealed blocks: their bytes. */
function blobBytesWithoutHashes(m: GeneratedMarket): number {
  const stripped = m.events.map((e): MarketEvent => {
    const { hash: _hash, ...message } = e.message as Record<string, unknown>;
    if (Array.isArray(message.price_changes)) {
      message.price_changes = (message.price_changes as Record<string, unknown>[]).map(
        ({ hash: _entryHash, ...entry }) => entry,
      );
    }
    return { ...e, message };
  });
  let bytes = 0;
  for (let i = 0; i < stripped.length; i += BLOCK_EVENTS)
    bytes += encodeMarketEvents(stripped.slice(i, i + BLOCK_EVENTS), "sealed").length;
  return bytes;
}

/** PMXT's 16 columns (DESIGN 3.11), and optionally a price_change entry's hash. */
function pmxtRows(m: GeneratedMarket): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const e of m.events) {
    const msg = e.message as Record<string, unknown>;
    const base = {
      timestamp_received: Math.floor(e.receivedUs / 1000),
      timestamp: e.timestampMs,
      market: m.conditionId,
      event_type: e.type,
    };
    if (e.type === "price_change") {
      for (const c of msg.price_changes as Record<string, string>[]) {
        rows.push({
          ...base,
          asset_id: c.asset_id,
          price: c.price,
          size: c.size,
          side: c.side,
          best_bid: c.best_bid,
          best_ask: c.best_ask,
          hash: c.hash,
        });
      }
    } else if (e.type === "book") {
      const levels = (side: unknown) =>
        JSON.stringify((side as { price: string; size: string }[]).map((l) => [l.price, l.size]));
      rows.push({ ...base, asset_id: msg.asset_id, bids: levels(msg.bids), asks: levels(msg.asks) });
    } else {
      rows.push({
        ...base,
        asset_id: msg.asset_id,
        price: msg.price,
        size: msg.size,
        side: msg.side,
        fee_rate_bps: Number(msg.fee_rate_bps),
      });
    }
  }
  return rows;
}

const PMXT_COLUMNS = `
  make_timestamp_ms(timestamp_received) AS timestamp_received,
  make_timestamp_ms("timestamp") AS "timestamp",
  encode(market)::BLOB AS market,
  event_type,
  asset_id,
  bids,
  asks,
  price::DECIMAL(9,4) AS price,
  size::DECIMAL(18,6) AS size,
  side,
  best_bid::DECIMAL(9,4) AS best_bid,
  best_ask::DECIMAL(9,4) AS best_ask,
  fee_rate_bps::USMALLINT AS fee_rate_bps,
  NULL::VARCHAR AS transaction_hash,
  NULL::DECIMAL(9,4) AS old_tick_size,
  NULL::DECIMAL(9,4) AS new_tick_size`;

async function writeParquet(
  tmp: string,
  rowsFile: string,
): Promise<{ plain: number; withHash: number; rows: number }> {
  const db = await DuckDBInstance.create(":memory:");
  const c = await db.connect();
  await c.run(`CREATE TABLE r AS SELECT * FROM read_json('${rowsFile}', format = 'newline_delimited', columns = {
    timestamp_received: 'BIGINT', "timestamp": 'BIGINT', market: 'VARCHAR', event_type: 'VARCHAR',
    asset_id: 'VARCHAR', bids: 'VARCHAR', asks: 'VARCHAR', price: 'VARCHAR', size: 'VARCHAR', side: 'VARCHAR',
    best_bid: 'VARCHAR', best_ask: 'VARCHAR', fee_rate_bps: 'INTEGER', hash: 'VARCHAR'})`);
  const rows = Number((await c.runAndReadAll("SELECT count(*) FROM r")).getRows()[0][0]);
  const options = "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 9, ROW_GROUP_SIZE 1048576)";
  const order = "ORDER BY market, asset_id, timestamp_received";
  const plain = join(tmp, "pmxt.parquet");
  const withHash = join(tmp, "pmxt-hash.parquet");
  await c.run(`COPY (SELECT ${PMXT_COLUMNS} FROM r ${order}) TO '${plain}' ${options}`);
  await c.run(`COPY (SELECT ${PMXT_COLUMNS}, hash FROM r ${order}) TO '${withHash}' ${options}`);
  c.closeSync();
  db.closeSync();
  return { plain: statSync(plain).size, withHash: statSync(withHash).size, rows };
}

export async function measureEventStorage(opts: {
  tmp: string;
  markets: number;
  seconds: number;
  perSecond: number;
  log?: (line: string) => void;
}): Promise<EventStorageResult> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const startUs = 1_786_604_000_000_000;
  const markets = Array.from({ length: opts.markets }, (_, i) =>
    generateMarket(22_000 + i, startUs, opts.seconds, opts.perSecond),
  );
  const events = markets.reduce((n, m) => n + m.events.length, 0);

  const dbPath = join(opts.tmp, "event-storage.db");
  const store = new SqliteStore(dbPath);
  await store.migrate();
  // As the collector writes: each second, one append of every market's events of that second.
  const cursors = markets.map(() => 0);
  const t0 = performance.now();
  for (let second = 1; second <= opts.seconds; second++) {
    const untilUs = startUs + second * 1e6;
    const batch = markets.map((m, i) => {
      const from = cursors[i];
      while (cursors[i] < m.events.length && m.events[cursors[i]].receivedUs < untilUs) cursors[i]++;
      return { marketKey: i + 1, events: m.events.slice(from, cursors[i]) };
    });
    await store.events.appendMarketEvents(batch);
  }
  const appendMs = performance.now() - t0;
  // The markets end; later appends (of another market, key 0, not counted) seal their idle tails.
  const lateUs = startUs + opts.seconds * 1e6 + SEAL_IDLE_US + 1;
  for (let i = 0; i <= opts.markets; i++) {
    const m = markets[0].events[0];
    await store.events.appendMarketEvents([{ marketKey: 0, events: [{ ...m, receivedUs: lateUs + i }] }]);
  }
  const stored = await Promise.all(markets.map((_, i) => store.events.countMarketEvents(i + 1)));
  if (stored.reduce((a, b) => a + b, 0) !== events) throw new Error("event-storage: events lost");
  const db = store.db;
  db.exec(
    "DELETE FROM market_event_blocks WHERE market = 0; DELETE FROM market_event_tails WHERE market = 0",
  );
  db.exec("PRAGMA wal_checkpoint(TRUNCATE); VACUUM");
  const pending = db.prepare("SELECT count(*) AS n FROM market_event_tails").get()?.n as number;
  if (pending !== 0) throw new Error(`event-storage: ${pending} tails left unsealed`);
  const blob = db
    .prepare("SELECT count(*) AS blocks, sum(length(data)) AS bytes FROM market_event_blocks")
    .get() as {
    blocks: number;
    bytes: number;
  };
  const storedBytes = db
    .prepare(
      `SELECT sum(pgsize) AS bytes FROM dbstat WHERE name IN
         (SELECT name FROM sqlite_master WHERE tbl_name IN ('market_event_blocks', 'market_event_tails'))`,
    )
    .get()?.bytes as number;
  await store.close();

  const rowsFile = join(opts.tmp, "pmxt-rows.ndjson");
  writeFileSync(
    rowsFile,
    markets
      .flatMap(pmxtRows)
      .map((r) => JSON.stringify(r))
      .join("\n"),
  );
  const parquet = await writeParquet(opts.tmp, rowsFile);

  const withoutHashes = markets.reduce((n, m) => n + blobBytesWithoutHashes(m), 0);
  const target = 1;
  const result: EventStorageResult = {
    markets: opts.markets,
    events,
    parquetRows: parquet.rows,
    storedBytes,
    storedBytesPerEvent: storedBytes / events,
    blobBytesPerEvent: blob.bytes / events,
    blocks: blob.blocks,
    pmxtBytes: parquet.plain,
    pmxtBytesPerEvent: parquet.plain / events,
    pmxtWithHashBytes: parquet.withHash,
    pmxtWithHashBytesPerEvent: parquet.withHash / events,
    ratioToPmxt: storedBytes / parquet.plain,
    ratioToPmxtWithHash: storedBytes / parquet.withHash,
    withoutHashBlobBytesPerEvent: withoutHashes / events,
    ratioWithoutHashToPmxt: withoutHashes / parquet.plain,
    target,
    pass: storedBytes / parquet.withHash <= target,
    method:
      "ours: dbstat pages of market_event_blocks, its indexes and market_event_tails after VACUUM (SQLite, 4 KiB pages), " +
      "written by one append a second then sealed; PMXT: DuckDB COPY to Parquet, ZSTD 9, row groups of 1,048,576, " +
      "sorted by market, asset_id, timestamp_received",
  };
  const f = (n: number, d = 1) => n.toFixed(d);
  log(
    `event storage: ${events} events of ${opts.markets} markets (${parquet.rows} PMXT rows), appended in ${f(appendMs / 1000)} s, ${blob.blocks} blocks`,
  );
  log(
    `  stored ${f(result.storedBytesPerEvent, 2)} B/event on disk (blobs alone ${f(result.blobBytesPerEvent, 2)}); ` +
      `PMXT Parquet ${f(result.pmxtBytesPerEvent, 2)} B/event, with a hash column ${f(result.pmxtWithHashBytesPerEvent, 2)} B/event`,
  );
  log(
    `  ratio to PMXT+hash (the same information; the fair one) ${f(result.ratioToPmxtWithHash, 3)}, target <= ${target}: ${result.pass ? "PASS" : "FAIL"}; ` +
      `to PMXT as published (no hash) ${f(result.ratioToPmxt, 3)}`,
  );
  log(
    `  the same events without hashes, as sealed blocks: ${f(result.withoutHashBlobBytesPerEvent, 2)} B/event (blobs alone) -> ` +
      `${f(result.ratioWithoutHashToPmxt, 3)} of PMXT as published`,
  );
  return result;
}

/** The run's scenario: 8 markets for an hour at about 8 events a second each (about 230,000 events). */
export function eventStorageSection(tmp: string): Promise<EventStorageResult> {
  console.log(
    "\nevent storage: 8 markets' hour of market-channel events, stored vs PMXT-shaped Parquet (ZSTD 9)",
  );
  return measureEventStorage({ tmp, markets: 8, seconds: 3600, perSecond: 8 });
}
