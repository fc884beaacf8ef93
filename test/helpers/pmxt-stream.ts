import type { Market } from "../../src/domain/market.ts";
import type { PmxtRow } from "./pmxt-parquet.ts";

/**
 * A market's market-channel stream as the upstream sends it and the PMXT archive keeps it, generated
 * from a seed: the messages (each in the shape the importer rebuilds from a row: one entry per
 * `price_change`, decimals in their shortest form, no hashes, which PMXT does not keep) with their
 * receive times (ms), and the archive rows of the same messages. Every event type is there: `book`
 * (the first of each token, and again later), `price_change` with its token's true best bid and ask
 * after it (now and then a wrong one: a mismatch to count), `last_trade_price` (with and without a
 * transaction hash) and `tick_size_change`.
 */

export interface StreamMessage {
  receivedMs: number;
  message: Record<string, unknown>;
}

/** A small deterministic generator (mulberry32). */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
}

/** A condition id as the upstream writes it: `0x` and 64 hex digits. */
export function conditionIdOf(n: number): string {
  return `0x${n.toString(16).padStart(64, "0")}`;
}

const cents = (c: number): string => String(c / 100);

/** One token's book in cents -> size text. */
interface Book {
  bids: Map<number, string>;
  asks: Map<number, string>;
}

function bookMessage(market: string, token: string, ts: number, b: Book): Record<string, unknown> {
  // Upstream order: bids ascending, asks descending.
  const bids = [...b.bids].sort((x, y) => x[0] - y[0]).map(([c, size]) => ({ price: cents(c), size }));
  const asks = [...b.asks].sort((x, y) => y[0] - x[0]).map(([c, size]) => ({ price: cents(c), size }));
  return { market, asset_id: token, timestamp: String(ts), bids, asks, event_type: "book" };
}

function best(b: Book): { bid: string; ask: string } {
  const bid = Math.max(0, ...b.bids.keys());
  const ask = b.asks.size === 0 ? 100 : Math.min(...b.asks.keys());
  return { bid: cents(bid), ask: cents(ask) };
}

/** The share of each message type in a stream, as cumulative bounds: price_change below `priceChange`, etc. */
export interface StreamMix {
  priceChange: number;
  trade: number;
  book: number;
}

/** The tests' mix: every type often enough that a short stream holds each (80 % price_change). */
const TEST_MIX: StreamMix = { priceChange: 0.8, trade: 0.9, book: 0.97 };

/**
 * The archive's mix (DESIGN 3.11: about 99.7 % of rows are price_change): 0.15 % trades, 0.14 %
 * books, 0.01 % tick size changes.
 */
export const ARCHIVE_MIX: StreamMix = { priceChange: 0.997, trade: 0.9985, book: 0.9999 };

/**
 * The stream of a market's two tokens from `fromMs` to `toMs`, a message every `stepMs` on average.
 * `firstBooks` false leaves out the opening books (a later hour of a market that began earlier).
 */
export function marketStream(
  market: Pick<Market, "conditionId" | "clobTokenUp" | "clobTokenDown">,
  seed: number,
  fromMs: number,
  toMs: number,
  stepMs = 400,
  firstBooks = true,
  mix: StreamMix = TEST_MIX,
): StreamMessage[] {
  const rng = new Rng(seed);
  const id = market.conditionId;
  const tokens = [market.clobTokenUp, market.clobTokenDown];
  const books: Book[] = tokens.map((_, k) => {
    const b: Book = { bids: new Map(), asks: new Map() };
    const mid = k === 0 ? 52 : 48;
    for (let i = 1; i <= 4; i++) {
      b.bids.set(mid - i, String(rng.int(1, 500)));
      b.asks.set(mid + i, `${rng.int(1, 500)}.${rng.int(1, 9)}`);
    }
    return b;
  });
  const out: StreamMessage[] = [];
  let t = fromMs;
  const sent = () => t - rng.int(1, 30);
  if (firstBooks)
    for (const [k, token] of tokens.entries())
      out.push({ receivedMs: t, message: bookMessage(id, token, sent(), books[k]) });
  while ((t += rng.int(1, stepMs * 2)) < toMs) {
    const k = rng.int(0, 1);
    const token = tokens[k];
    const b = books[k];
    const roll = rng.next();
    if (roll < mix.priceChange) {
      const side = rng.next() < 0.5 ? "BUY" : "SELL";
      const bid = Math.max(0, ...b.bids.keys());
      const ask = b.asks.size === 0 ? 100 : Math.min(...b.asks.keys());
      const c =
        side === "BUY" ? rng.int(Math.max(1, ask - 6), ask - 1) : rng.int(bid + 1, Math.min(99, bid + 6));
      const size =
        rng.next() < 0.25
          ? "0"
          : `${rng.int(1, 900)}.${rng.int(0, 99)}`.replace(/\.0$/, "").replace(/(\.\d)0$/, "$1");
      (side === "BUY" ? b.bids : b.asks)[size === "0" ? "delete" : "set"](c, size);
      const after = best(b);
      const wrong = rng.next() < 0.03;
      const entry = {
        asset_id: token,
        price: cents(c),
        size,
        side,
        best_bid: wrong ? "0.01" : after.bid,
        best_ask: after.ask,
      };
      out.push({
        receivedMs: t,
        message: {
          market: id,
          price_changes: [entry],
          timestamp: String(sent()),
          event_type: "price_change",
        },
      });
    } else if (roll < mix.trade) {
      const { bid } = best(b);
      const m: Record<string, unknown> = {
        asset_id: token,
        event_type: "last_trade_price",
        fee_rate_bps: String(rng.int(0, 1) * 1000),
        market: id,
        price: bid,
        side: rng.next() < 0.5 ? "BUY" : "SELL",
        size: String(rng.int(1, 80)),
        timestamp: String(sent()),
      };
      if (rng.next() < 0.7)
        m.transaction_hash = `0x${rng
          .int(1, 2 ** 30)
          .toString(16)
          .padStart(64, "a")}`;
      out.push({ receivedMs: t, message: m });
    } else if (roll < mix.book) {
      out.push({ receivedMs: t, message: bookMessage(id, token, sent(), b) });
    } else {
      const old = rng.next() < 0.5 ? "0.01" : "0.001";
      out.push({
        receivedMs: t,
        message: {
          event_type: "tick_size_change",
          asset_id: token,
          market: id,
          old_tick_size: old,
          new_tick_size: old === "0.01" ? "0.001" : "0.01",
          timestamp: String(sent()),
        },
      });
    }
  }
  return out;
}

/** A message's archive row. */
export function rowOf(s: StreamMessage): PmxtRow {
  const m = s.message;
  const base = { timestampReceived: s.receivedMs, timestamp: Number(m.timestamp), market: String(m.market) };
  const str = (v: unknown): string | null => (v === undefined ? null : String(v));
  switch (m.event_type) {
    case "book": {
      const side = (levels: unknown) =>
        JSON.stringify((levels as { price: string; size: string }[]).map((l) => [l.price, l.size]));
      return {
        ...base,
        eventType: "book",
        assetId: String(m.asset_id),
        bids: side(m.bids),
        asks: side(m.asks),
      };
    }
    case "price_change": {
      const e = (m.price_changes as Record<string, string>[])[0];
      return {
        ...base,
        eventType: "price_change",
        assetId: e.asset_id,
        price: e.price,
        size: e.size,
        side: e.side as "BUY",
        bestBid: e.best_bid,
        bestAsk: e.best_ask,
      };
    }
    case "last_trade_price":
      return {
        ...base,
        eventType: "last_trade_price",
        assetId: String(m.asset_id),
        price: str(m.price),
        size: str(m.size),
        side: m.side as "BUY",
        feeRateBps: Number(m.fee_rate_bps),
        transactionHash: str(m.transaction_hash),
      };
    default:
      return {
        ...base,
        eventType: "tick_size_change",
        assetId: String(m.asset_id),
        oldTickSize: str(m.old_tick_size),
        newTickSize: str(m.new_tick_size),
      };
  }
}

/** Archive rows in the archive's order: by market, token, then receive time (stable). */
export function archiveOrder(rows: PmxtRow[]): PmxtRow[] {
  // Grouped by market first (a few hundred markets for a million rows), so that the long condition ids
  // are compared once a market, not once a comparison; each group is sorted on its own (stably).
  const groups = new Map<string, PmxtRow[]>();
  for (const r of rows) {
    const group = groups.get(r.market);
    if (group) group.push(r);
    else groups.set(r.market, [r]);
  }
  const out: PmxtRow[] = [];
  for (const market of [...groups.keys()].sort()) {
    const group = groups.get(market) ?? [];
    group.sort((a, b) =>
      a.assetId < b.assetId ? -1 : a.assetId > b.assetId ? 1 : a.timestampReceived - b.timestampReceived,
    );
    for (const r of group) out.push(r);
  }
  return out;
}
