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
  runSync,
  streamEvents,
  typeMask,
} from "../../rules/event-blocks.ts";
import {
  type EventStreamKind,
  MARKET_EVENT_SQL_PARTS,
  blockOfRow,
  blockValues,
  eventBlockSql,
  headerOfRow,
  integrityOf,
  integrityValues,
  tailOfRow,
  EVENT_STREAMS,
} from "../../sql/event-sql.ts";
import type { SqliteConnection } from "./connection.ts";

type Row = Record<string, unknown>;
type Value = number | string | Uint8Array;

const q = () => "?";
const PARTS = {
  span: MARKET_EVENT_SQL_PARTS.span(q),
  addIntegrity: MARKET_EVENT_SQL_PARTS.addIntegrity(q),
  integrity: MARKET_EVENT_SQL_PARTS.integrity(q),
};

/** A stream's blocks on one connection: synchronous, so the rules run inside one write transaction. */
function blockIo<K>(
  conn: SqliteConnection,
  kind: EventStreamKind,
  keyValues: (key: K) => Value[],
): EventBlockIo<K> {
  const sql = eventBlockSql(q, kind);
  const { keys } = EVENT_STREAMS[kind];
  return {
    lock: () => {},
    tryLock: () => true,
    tail: (key) => tailOfRow(conn.stmt(sql.tail).get(...keyValues(key)) as Row | undefined),
    setTail: (key, tail) => {
      if (tail === null) conn.stmt(sql.dropTail).run(...keyValues(key));
      else conn.stmt(sql.setTail).run(...keyValues(key), tail.firstUs, tail.lastUs, tail.n);
    },
    idleTails: (beforeUs, limit) =>
      (conn.stmt(sql.idleTails).all(beforeUs, limit) as Row[]).map((r) => keyOfRow<K>(r, keys)),
    lastUs: (key) => ((conn.stmt(sql.lastUs).get(...keyValues(key)) as Row).v as number | null) ?? null,
    blocksWithin: (key, fromUs, toUs) =>
      (conn.stmt(sql.within).all(...keyValues(key), fromUs, toUs) as Row[]).map(blockOfRow),
    remove: (key, firsts) => {
      for (const firstUs of firsts) conn.stmt(sql.remove).run(...keyValues(key), firstUs);
    },
    insert: (key, blocks) => {
      for (const b of blocks) conn.stmt(sql.insert).run(...keyValues(key), ...blockValues(b));
    },
    headers: (key, order) => (conn.stmt(sql.headers[order]).all(...keyValues(key)) as Row[]).map(headerOfRow),
    data: (key, firstUs) =>
      ((conn.stmt(sql.data).get(...keyValues(key), firstUs) as Row | undefined)?.data as
        Uint8Array | undefined) ?? null,
  };
}

/** A key from a row of its columns: the market's number, or a coin stream's {coin, topic}. */
function keyOfRow<K>(r: Row, keys: readonly string[]): K {
  return (keys.length === 1 ? r[keys[0]] : { coin: r.coin, topic: r.topic }) as K;
}

interface CoinStream {
  coin: Coin;
  topic: CoinEventTopic;
}

/** Events in the embedded store (see EventStore and rules/event-blocks.ts). */
export class SqliteEventStore implements EventStore {
  private readonly conn: SqliteConnection;
  private readonly markets: EventBlockIo<number>;
  private readonly coins: EventBlockIo<CoinStream>;
  private readonly marketNext: string;
  private readonly coinNext: string;

  constructor(conn: SqliteConnection) {
    this.conn = conn;
    this.markets = blockIo<number>(conn, "market", (k) => [k]);
    this.coins = blockIo<CoinStream>(conn, "coin", (k) => [k.coin, k.topic]);
    this.marketNext = eventBlockSql(q, "market").next;
    this.coinNext = eventBlockSql(q, "coin").next;
  }

  async appendMarketEvents(batch: MarketEventBatch[]): Promise<number> {
    if (batch.every((b) => b.events.length === 0)) return 0;
    const streams = batch.map((b) => ({ key: b.marketKey, events: b.events }));
    return this.conn.transaction(() => runSync(appendStreams(this.markets, MARKET_EVENT_CODEC, streams)));
  }

  async countMarketEvents(marketKey: number, range: EventRange = {}): Promise<number> {
    const filter = eventFilter(range, typeMask(range.types));
    return runSync(countEvents(this.markets, MARKET_EVENT_CODEC, marketKey, filter));
  }

  async marketEventPage(marketKey: number, query: EventQuery): Promise<MarketEvent[]> {
    const filter = eventFilter(query, typeMask(query.types));
    return runSync(eventPage(this.markets, MARKET_EVENT_CODEC, marketKey, filter, query));
  }

  streamMarketEvents(marketKey: number, range: EventRange = {}): AsyncIterable<MarketEvent[]> {
    const next = async (afterUs: number) => this.nextBlock(this.marketNext, [marketKey], afterUs);
    return streamEvents(next, MARKET_EVENT_CODEC, eventFilter(range, typeMask(range.types)));
  }

  async marketEventSpan(marketKey: number): Promise<EventSpan | null> {
    const r = this.conn.stmt(PARTS.span).get(marketKey) as Row;
    if (r.count === null) return null;
    return {
      count: r.count as number,
      firstReceivedUs: r.first_us as number,
      lastReceivedUs: r.last_us as number,
      firstTimestampMs: r.min_ts as number,
      lastTimestampMs: r.max_ts as number,
    };
  }

  async marketsWithEvents(): Promise<number[]> {
    return (this.conn.stmt(MARKET_EVENT_SQL_PARTS.markets).all() as Row[]).map((r) => r.market as number);
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
    return this.conn.transaction(() => runSync(appendStreams(this.coins, COIN_UPDATE_CODEC, ordered)));
  }

  async *streamCoinEvents(
    coin: Coin,
    topic: CoinEventTopic,
    range: { fromMs?: number; toMs?: number } = {},
  ): AsyncIterable<CoinEvent[]> {
    const next = async (afterUs: number) => this.nextBlock(this.coinNext, [coin, topic], afterUs);
    for await (const updates of streamEvents(next, COIN_UPDATE_CODEC, eventFilter(range, 1))) {
      yield updates.map((u) => ({ coin, topic, ...u }));
    }
  }

  async addBookIntegrity(marketKey: number, counts: BookIntegrity): Promise<void> {
    this.conn.stmt(PARTS.addIntegrity).run(...integrityValues(marketKey, counts));
  }

  async bookIntegrity(marketKey: number): Promise<BookIntegrity | null> {
    const r = this.conn.stmt(PARTS.integrity).get(marketKey) as Row | undefined;
    return r === undefined ? null : integrityOf(r);
  }

  private nextBlock(sql: string, key: Value[], afterUs: number): StoredBlock | null {
    const r = this.conn.stmt(sql).get(...key, Math.max(afterUs, Number.MIN_SAFE_INTEGER)) as Row | undefined;
    return r === undefined ? null : blockOfRow(r);
  }
}
