import type { BookIntegrity } from "../../domain/event.ts";
import type { BlockHeader, StoredBlock, Tail } from "../rules/event-blocks.ts";

/** The two kinds of event streams: a market's (keyed by market) and a coin's of one topic. */
export const EVENT_STREAMS = {
  market: { blocks: "market_event_blocks", tails: "market_event_tails", keys: ["market"] },
  coin: { blocks: "coin_event_blocks", tails: "coin_event_tails", keys: ["coin", "topic"] },
} as const;

export type EventStreamKind = keyof typeof EVENT_STREAMS;

const HEADER = "first_us, last_us, n, min_ts, max_ts, types";

/** The SQL of one kind of event stream (rules/event-blocks.ts), the same in both dialects but for how a parameter is written; the key's values come first. */
export function eventBlockSql(p: (i: number) => string, kind: EventStreamKind) {
  const { blocks, tails, keys } = EVENT_STREAMS[kind];
  const k = keys.length;
  const where = keys.map((c, i) => `${c} = ${p(i + 1)}`).join(" AND ");
  const after = (i: number) => p(k + i);
  const keyList = keys.join(", ");
  return {
    tail: `SELECT first_us, last_us, n FROM ${tails} WHERE ${where}`,
    setTail: `INSERT INTO ${tails} (${keyList}, first_us, last_us, n)
      VALUES (${[...keys.map((_, i) => p(i + 1)), after(1), after(2), after(3)].join(", ")})
      ON CONFLICT (${keyList}) DO UPDATE SET first_us = excluded.first_us, last_us = excluded.last_us, n = excluded.n`,
    dropTail: `DELETE FROM ${tails} WHERE ${where}`,
    idleTails: `SELECT ${keyList} FROM ${tails} WHERE last_us < ${p(1)} ORDER BY last_us LIMIT ${p(2)}`,
    lastUs: `SELECT max(last_us) AS v FROM ${blocks} WHERE ${where}`,
    within: `SELECT ${HEADER}, data FROM ${blocks} WHERE ${where} AND last_us >= ${after(1)} AND first_us <= ${after(2)}
      ORDER BY last_us`,
    remove: `DELETE FROM ${blocks} WHERE ${where} AND first_us = ${after(1)}`,
    insert: `INSERT INTO ${blocks} (${keyList}, ${HEADER}, data)
      VALUES (${[...keys.map((_, i) => p(i + 1)), ...[1, 2, 3, 4, 5, 6, 7].map(after)].join(", ")})`,
    headers: {
      asc: `SELECT ${HEADER} FROM ${blocks} WHERE ${where} ORDER BY last_us`,
      desc: `SELECT ${HEADER} FROM ${blocks} WHERE ${where} ORDER BY last_us DESC`,
    },
    data: `SELECT data FROM ${blocks} WHERE ${where} AND first_us = ${after(1)}`,
    next: `SELECT ${HEADER}, data FROM ${blocks} WHERE ${where} AND last_us > ${after(1)} ORDER BY last_us LIMIT 1`,
  };
}

export const MARKET_EVENT_SQL_PARTS = {
  span: (p: (i: number) => string) =>
    `SELECT sum(n) AS count, min(first_us) AS first_us, max(last_us) AS last_us, min(min_ts) AS min_ts,
       max(max_ts) AS max_ts FROM market_event_blocks WHERE market = ${p(1)}`,
  markets: "SELECT DISTINCT market FROM market_event_blocks ORDER BY market",
  addIntegrity: (p: (i: number) => string) =>
    `INSERT INTO market_book_integrity (market, book_matches, book_mismatches, best_matches, best_mismatches)
     VALUES (${[1, 2, 3, 4, 5].map(p).join(", ")})
     ON CONFLICT (market) DO UPDATE SET
       book_matches = market_book_integrity.book_matches + excluded.book_matches,
       book_mismatches = market_book_integrity.book_mismatches + excluded.book_mismatches,
       best_matches = market_book_integrity.best_matches + excluded.best_matches,
       best_mismatches = market_book_integrity.best_mismatches + excluded.best_mismatches`,
  integrity: (p: (i: number) => string) =>
    `SELECT book_matches, book_mismatches, best_matches, best_mismatches FROM market_book_integrity
     WHERE market = ${p(1)}`,
};

export function integrityValues(marketKey: number, c: BookIntegrity): number[] {
  return [marketKey, c.bookMatches, c.bookMismatches, c.bestMatches, c.bestMismatches];
}

export function integrityOf(r: Record<string, unknown>): BookIntegrity {
  return {
    bookMatches: Number(r.book_matches),
    bookMismatches: Number(r.book_mismatches),
    bestMatches: Number(r.best_matches),
    bestMismatches: Number(r.best_mismatches),
  };
}

export function headerOfRow(r: Record<string, unknown>): BlockHeader {
  return {
    firstUs: Number(r.first_us),
    lastUs: Number(r.last_us),
    n: Number(r.n),
    minTs: Number(r.min_ts),
    maxTs: Number(r.max_ts),
    types: Number(r.types),
  };
}

export function blockOfRow(r: Record<string, unknown>): StoredBlock {
  return { ...headerOfRow(r), data: r.data as Uint8Array };
}

export function tailOfRow(r: Record<string, unknown> | undefined): Tail | null {
  return r === undefined ? null : { firstUs: Number(r.first_us), lastUs: Number(r.last_us), n: Number(r.n) };
}

export function blockValues(b: StoredBlock): (number | Uint8Array)[] {
  return [b.firstUs, b.lastUs, b.n, b.minTs, b.maxTs, b.types, b.data];
}
