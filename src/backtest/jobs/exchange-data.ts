import type { Venue } from "../../domain/exchange.ts";
import type { Coin } from "../../domain/market.ts";
import type { SnapshotRow } from "../../domain/snapshot.ts";
import { MICROS_PER_SECOND, type Micros } from "../../domain/time.ts";
import type { ExchangeStore } from "../../store/ports/exchange-store.ts";
import { decodeBooks } from "../../wire/book-codec.ts";
import type { ExchangeNeeds } from "../lookback.ts";
import {
  EMPTY_EXCHANGE,
  EMPTY_SERIES,
  type ExchangeHistory,
  FRESHNESS_S,
  secondEnding,
  StepSeriesBuilder,
  type StepSeries,
  type VenueHistory,
} from "../lookback.ts";

/**
 * Binance's series of a market's coin, read once per market for the features a definition names
 * (lookback.ts): only the series they read, over the market's decisions less the longest lookback and
 * the oldest a value may be, a page at a time, each row decoded once. The engine then reads them by
 * time and never queries.
 */

/** Rows read from the store at a time. */
const PAGE_ROWS = 5000;

const S = MICROS_PER_SECOND;
const CANDLE_US = 60 * S;

/** The mid of each depth snapshot (the last of each second) over [from, to]; a snapshot with an empty side has none. */
async function mids(store: ExchangeStore, coin: Coin, venue: Venue, from: Micros, to: Micros) {
  const out = new StepSeriesBuilder();
  for (let at = from; ;) {
    const page = await store.depthPage(coin, venue, {
      order: "asc",
      limit: PAGE_ROWS,
      offset: 0,
      from: at,
      to,
    });
    for (let i = 0; i < page.length; i++) {
      const row = page[i];
      // Only a second's last snapshot is kept (StepSeriesBuilder): the others are not decoded.
      const next = page[i + 1];
      if (next !== undefined && secondEnding(next.time) === secondEnding(row.time)) continue;
      const { bids, asks } = decodeBooks(row.books).up;
      if (bids.length > 0 && asks.length > 0) out.push(row.time, (bids[0].price + asks[0].price) / 2);
    }
    if (page.length < PAGE_ROWS) return out.build();
    at = page[page.length - 1].time + 1;
  }
}

/** The last trade price of each second over [from, to], in one query (the store picks them). */
async function tradePrices(store: ExchangeStore, coin: Coin, venue: Venue, from: Micros, to: Micros) {
  const out = new StepSeriesBuilder();
  for (const t of await store.lastTradeEachSecond(coin, venue, from, to)) out.push(t.time, t.price);
  return out.build();
}

/** Each stored 1m candle's close at the candle's end, for ends in [from, to]. */
async function closes(store: ExchangeStore, coin: Coin, venue: Venue, from: Micros, to: Micros) {
  const out = new StepSeriesBuilder();
  for (let at = from - CANDLE_US; ;) {
    const q = { order: "asc" as const, limit: PAGE_ROWS, offset: 0, from: at, to: to - CANDLE_US };
    const page = await store.candlePage(coin, venue, "1m", q);
    for (const c of page) out.push(c.openTime + CANDLE_US, c.close);
    if (page.length < PAGE_ROWS) return out.build();
    at = page[page.length - 1].openTime + 1;
  }
}

/** Rows of a futures-only kind over [from, to], as a series of one of their values. */
async function futuresSeries<R extends { time: Micros }>(
  page: (q: { order: "asc"; limit: number; offset: number; from: Micros; to: Micros }) => Promise<R[]>,
  value: (row: R) => number,
  from: Micros,
  to: Micros,
): Promise<StepSeries> {
  const out = new StepSeriesBuilder();
  for (let at = from; ;) {
    const rows = await page({ order: "asc", limit: PAGE_ROWS, offset: 0, from: at, to });
    for (const r of rows) out.push(r.time, value(r));
    if (rows.length < PAGE_ROWS) return out.build();
    at = rows[rows.length - 1].time + 1;
  }
}

async function venueHistory(
  store: ExchangeStore,
  coin: Coin,
  venue: Venue,
  needs: { mid: boolean; price: boolean },
  from: Micros,
  to: Micros,
  lookback: Micros,
): Promise<VenueHistory> {
  const priceFrom = from - lookback - FRESHNESS_S.price * S;
  return {
    mid: needs.mid ? await mids(store, coin, venue, from - FRESHNESS_S.mid * S, to) : EMPTY_SERIES,
    trades: needs.price ? await tradePrices(store, coin, venue, priceFrom, to) : EMPTY_SERIES,
    closes: needs.price ? await closes(store, coin, venue, priceFrom, to) : EMPTY_SERIES,
  };
}

/**
 * What a market's decisions (its snapshots) may read of Binance's series of its coin, for the features
 * `needs` says a definition names; the empty history when it names none.
 */
export async function readExchangeHistory(
  store: ExchangeStore,
  coin: Coin,
  snapshots: readonly SnapshotRow[],
  needs: ExchangeNeeds | null,
): Promise<ExchangeHistory> {
  if (needs === null || snapshots.length === 0) return EMPTY_EXCHANGE;
  const from = snapshots[0].time;
  const to = snapshots[snapshots.length - 1].time;
  const lookback = needs.lookbackS * S;
  const fundingFrom = from - FRESHNESS_S.funding * S;
  const interestFrom = from - FRESHNESS_S.openInterest * S;
  return {
    spot: await venueHistory(store, coin, "spot", needs.spot, from, to, lookback),
    futures: await venueHistory(store, coin, "futures", needs.futures, from, to, lookback),
    funding: needs.funding
      ? await futuresSeries(
          (q) => store.fundingPage(coin, q),
          (r) => r.rate,
          fundingFrom,
          to,
        )
      : EMPTY_SERIES,
    openInterest: needs.openInterest
      ? await futuresSeries(
          (q) => store.openInterestPage(coin, q),
          (r) => r.openInterest,
          interestFrom,
          to,
        )
      : EMPTY_SERIES,
  };
}
