import type { Pool, PoolClient } from "pg";
import type { BookIntegrity, CoinEvent, CoinEventTopic, MarketEvent } from "../../../domain/event.ts";
import type { Coin } from "../../../domain/market.ts";
import type {
  EventQuery,
  EventRange,
  EventSpan,
  EventStore,
  MarketEventBatch,
} from "../../ports/event-store.ts";
import {
  COIN_UPDATE_CODEC,
  type EventBlockIo,
  MARKET_EVENT_CODEC,
  type StoredBlock,
  appendStreams,
  countEvents,
  eventFilter,
  eventPage,
  runAsync,
  streamEvents,
  typeMask,
} from "../../rules/event-blocks.ts";
import {
  EVENT_STREAMS,
  type EventStreamKind,
  MARKET_EVENT_SQL_PARTS,
  blockOfRow,
  blockValues,
  eventBlockSql,
  headerOfRow,
  integrityOf,
  integrityValues,
  tailOfRow,
} from "../../sql/event-sql.ts";
import { EVENT_STREAM_LOCK_NAMESPACE, inTransaction, type Queryable } from "./pg-util.ts";

type Row = Record<string, unknown>;
type Value = number | string;

const p = (i: number) => `$${i}`;
const PARTS = {
  span: MARKET_EVENT_SQL_PARTS.span(p),
  addIntegrity: MARKET_EVENT_SQL_PARTS.addIntegrity(p),
  integrity: MARKET_EVENT_SQL_PARTS.integrity(p),
};

interface CoinStream {
  coin: Coin;
  topic: CoinEventTopic;
}

interface StreamKind<K> {
  kind: EventStreamKind;
  values: (key: K) => Value[];
}

const MARKET: StreamKind<number> = { kind: "market", values: (k) => [k] };
const COIN: StreamKind<CoinStream> = { kind: "coin", values: (k) => [k.coin, k.topic] };

/** A stream's blocks through one client (in a transaction: the rules' writes and reads are one each). */
function blockIo<K>(db: Queryable, stream: StreamKind<K>): EventBlockIo<K> {
  const sql = eventBlockSql(p, stream.kind);
  const { keys } = EVENT_STREAMS[stream.kind];
  const v = stream.values;
  const lockName = (key: K) => `${stream.kind}/${v(key).join("/")}`;
  const rows = async (text: string, values: unknown[]) => (await db.query<Row>(text, values)).rows;
  return {
    lock: async (key) => {
      await db.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [
        EVENT_STREAM_LOCK_NAMESPACE,
        lockName(key),
      ]);
    },
    tryLock: async (key) =>
      (
        await rows("SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS ok", [
          EVENT_STREAM_LOCK_NAMESPACE,
          lockName(key),
        ])
      )[0].ok === true,
    tail: async (key) => tailOfRow((await rows(sql.tail, v(key)))[0]),
    setTail: async (key, tail) => {
      if (tail === null) await db.query(sql.dropTail, v(key));
      else await db.query(sql.setTail, [...v(key), tail.firstUs, tail.lastUs, tail.n]);
    },
    idleTails: async (beforeUs, limit) =>
      (await rows(sql.idleTails, [beforeUs, limit])).map(
        (r) => (keys.length === 1 ? Number(r.market) : { coin: r.coin, topic: r.topic }) as K,
      ),
    lastUs: async (key) => {
      const value = (await rows(sql.lastUs, v(key)))[0].v;
      return value === null ? null : Number(value);
    },
    blocksWithin: async (key, fromUs, toUs) =>
      (await rows(sql.within, [...v(key), fromUs, toUs])).map(blockOfRow),
    remove: async (key, firsts) => {
      for (const firstUs of firsts) await db.query(sql.remove, [...v(key), firstUs]);
    },
    insert: async (key, blocks) => {
      for (const b of blocks) await db.query(sql.insert, [...v(key), ...blockValues(b)]);
    },
    headers: async (key, order) => (await rows(sql.headers[order], v(key))).map(headerOfRow),
    data: async (key, firstUs) =>
      ((await rows(sql.data, [...v(key), firstUs]))[0]?.data as Uint8Array) ?? null,
  };
}

/**
 * Events in PostgreSQL (see EventStore and rules/event-blocks.ts). A stream's writers are serialized
 * by an advisory lock taken in the transaction (streams in one order, so two batches never deadlock);
 * pages and counts read in one repeatable-read transaction, so that a page never sees half a rewrite.
 */
export class PostgresEventStore implements EventStore {
  private readonly pool: Pool;

  constructor(pool: Pool) {
    this.pool = pool;
  }

  async appendMarketEvents(batch: MarketEventBatch[]): Promise<number> {
    if (batch.every((b) => b.events.length === 0)) return 0;
    const streams = batch
      .toSorted((a, b) => a.marketKey - b.marketKey)
      .map((b) => ({ key: b.marketKey, events: b.events }));
    return inTransaction(this.pool, (client) =>
      runAsync(appendStreams(blockIo(client, MARKET), MARKET_EVENT_CODEC, streams)),
    );
  }

  async countMarketEvents(marketKey: number, range: EventRange = {}): Promise<number> {
    const filter = eventFilter(range, typeMask(range.types));
    return this.snapshotRead((client) =>
      runAsync(countEvents(blockIo(client, MARKET), MARKET_EVENT_CODEC, marketKey, filter)),
    );
  }

  async marketEventPage(marketKey: number, query: EventQuery): Promise<MarketEvent[]> {
    const filter = eventFilter(query, typeMask(query.types));
    return this.snapshotRead((client) =>
      runAsync(eventPage(blockIo(client, MARKET), MARKET_EVENT_CODEC, marketKey, filter, query)),
    );
  }

  streamMarketEvents(marketKey: number, range: EventRange = {}): AsyncIterable<MarketEvent[]> {
    const sql = eventBlockSql(p, "market").next;
    const next = async (afterUs: number) => this.nextBlock(sql, [marketKey], afterUs);
    return streamEvents(next, MARKET_EVENT_CODEC, eventFilter(range, typeMask(range.types)));
  }

  async marketEventSpan(marketKey: number): Promise<EventSpan | null> {
    const r = (await this.pool.query<Row>(PARTS.span, [marketKey])).rows[0];
    if (r.count === null) return null;
    return {
      count: Number(r.count),
      firstReceivedUs: Number(r.first_us),
      lastReceivedUs: Number(r.last_us),
      firstTimestampMs: Number(r.min_ts),
      lastTimestampMs: Number(r.max_ts),
    };
  }

  async marketsWithEvents(): Promise<number[]> {
    return (await this.pool.query<Row>(MARKET_EVENT_SQL_PARTS.markets)).rows.map((r) => Number(r.market));
  }

  async appendCoinEvents(events: CoinEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const streams = new Map<string, { key: CoinStream; events: CoinEvent[] }>();
    for (const e of events) {
      const id = `${e.coin} ${e.topic}`;
      let s = streams.get(id);
      if (!s) streams.set(id, (s = { key: { coin: e.coin, topic: e.topic }, events: [] }));
      s.events.push(e);
    }
    const ordered = [...streams.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, s]) => s);
    return inTransaction(this.pool, (client) =>
      runAsync(appendStreams(blockIo(client, COIN), COIN_UPDATE_CODEC, ordered)),
    );
  }

  async *streamCoinEvents(
    coin: Coin,
    topic: CoinEventTopic,
    range: { fromMs?: number; toMs?: number } = {},
  ): AsyncIterable<CoinEvent[]> {
    const sql = eventBlockSql(p, "coin").next;
    const next = async (afterUs: number) => this.nextBlock(sql, [coin, topic], afterUs);
    for await (const updates of streamEvents(next, COIN_UPDATE_CODEC, eventFilter(range, 1))) {
      yield updates.map((u) => ({ coin, topic, ...u }));
    }
  }

  async addBookIntegrity(marketKey: number, counts: BookIntegrity): Promise<void> {
    await this.pool.query(PARTS.addIntegrity, integrityValues(marketKey, counts));
  }

  async bookIntegrity(marketKey: number): Promise<BookIntegrity | null> {
    const r = (await this.pool.query<Row>(PARTS.integrity, [marketKey])).rows[0];
    return r === undefined ? null : integrityOf(r);
  }

  private async snapshotRead<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, async (client) => {
      await client.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
      return work(client);
    });
  }

  private async nextBlock(sql: string, key: Value[], afterUs: number): Promise<StoredBlock | null> {
    const r = (await this.pool.query<Row>(sql, [...key, Math.max(afterUs, Number.MIN_SAFE_INTEGER)])).rows[0];
    return r === undefined ? null : blockOfRow(r);
  }
}
