import type { MarketStore, SnapshotQuery } from "../store/ports/market-store.ts";
import type { JsonBytes } from "../wire/json-bytes.ts";
import { writeSnapshotJson } from "../wire/wire.ts";

/**
 * A page of a market's snapshots as the snapshot route answers it (`{market, snapshots, total, limit,
 * offset}`), read from a store: one definition for the request thread and the page reader threads
 * (page-readers.ts), so that a page is the same bytes wherever it is read.
 */

/** A page as asked, checked and in the store's terms; `total` is worked out here. */
export type PageAsk = Omit<SnapshotQuery, "total">;

/** As much of a market as reading its page needs (a reader thread is sent this, not the record). */
export interface PageMarket {
  key: number;
  /** The record's snapshot count: the page's total when it is not ranged. */
  snapshotCount: number;
  resolved: boolean;
  /** The market's JSON, which opens the page. */
  json: Uint8Array;
}

/** A page read: write it (synchronously, whole) into a writer the caller has reset. */
export type PageText = (w: JsonBytes) => void;

/**
 * Reads a page from the store. A resolved market's page is copied from its rendered blocks; a live
 * market's is written from rows, without first asking for blocks it does not have (snapshotPage still
 * serves one that has them).
 */
export async function readSnapshotPage(
  markets: MarketStore,
  market: PageMarket,
  ask: PageAsk,
): Promise<PageText> {
  const ranged = ask.from !== undefined || ask.to !== undefined;
  const total = ranged ? await markets.countSnapshots(market.key, ask.from, ask.to) : market.snapshotCount;
  const query: SnapshotQuery = { ...ask, total };
  const empty = ask.offset >= total;
  const rendered = empty || !market.resolved ? null : await markets.renderedPage(market.key, query);
  const rows = empty || rendered ? [] : await markets.snapshotPage(market.key, query);
  return (w) => {
    w.ascii('{"market":');
    w.bytes(market.json);
    w.ascii(',"snapshots":[');
    if (rendered) rendered(w);
    for (let i = 0; i < rows.length; i++) {
      if (i > 0) w.byte(44);
      writeSnapshotJson(w, rows[i], ask.books);
    }
    w.ascii(`],"total":${total},"limit":${ask.limit},"offset":${ask.offset}}`);
  };
}
