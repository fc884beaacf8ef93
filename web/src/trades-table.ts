import type { BacktestMarketResult, BacktestTrade } from "./api.ts";
import { el, scroller, table } from "./dom.ts";
import { bps, price, shares, usdc, utc } from "./format.ts";

/**
 * Every trade of a run, a row each, in the API's order (markets as answered, each market's trades
 * oldest first): what `GET /v1/backtest-ai/runs/{id}/markets/{slug}/trades` answers, as read.
 */

export const TRADE_COLUMNS = [
  "Market",
  "Entry time",
  "Entry price",
  "Size (shares)",
  "Entry fee (USDC)",
  "Entry slippage",
  "Exit time",
  "Exit price",
  "Exit fee (USDC)",
  "Exit slippage",
  "Reason",
  "PnL (USDC)",
];

/** One trade's cells, in TRADE_COLUMNS' order. An exit that sold nothing has no exit price. */
export function tradeCells(slug: string, t: BacktestTrade): string[] {
  return [
    slug,
    utc(t.entry.fill_time),
    price(t.entry.price),
    shares(t.entry.size),
    usdc(t.entry.fee_usdc),
    bps(t.entry.slippage_bps),
    utc(t.exit?.fill_time ?? t.closed_at),
    price(t.exit?.price),
    usdc(t.exit?.fee_usdc),
    bps(t.exit?.slippage_bps),
    t.exit_reason.replaceAll("_", " "),
    usdc(t.pnl),
  ];
}

export function tradesTable(results: BacktestMarketResult[]): HTMLElement {
  const rows = results.flatMap((r) => r.trades.map((t) => tradeCells(r.slug, t)));
  if (rows.length === 0) return el("p", { class: "note", id: "backtest-trades" }, "No trade was made.");
  return scroller(
    table("Every trade of the run, oldest first per market", TRADE_COLUMNS, rows, {
      id: "backtest-trades",
    }),
    "Trades",
  );
}
