import type { MarketResult, TradeResult } from "./engine.ts";

/**
 * A run's trades and per-market results as files (DESIGN 3.12, docs/backtests.md "Exports"): one
 * list of columns per table, from which the CSV header and rows, the NDJSON lines and the Parquet
 * columns are all made, so that the three formats say the same thing. A trade's row is its market's
 * slug and the trade's fields flattened (`entry_price`, `exit_reason`, ...); its levels and exit
 * attempts are in the NDJSON form only (the API's trade with the slug first).
 */

export const EXPORT_FORMATS = ["csv", "ndjson", "parquet"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_MEDIA_TYPES: Record<ExportFormat, string> = {
  csv: "text/csv; charset=utf-8",
  ndjson: "application/x-ndjson; charset=utf-8",
  parquet: "application/vnd.apache.parquet",
};

export type Kind = "text" | "time" | "number";
export type Value = string | number | null;

export interface Column<T> {
  name: string;
  kind: Kind;
  of: (row: T) => Value;
}

/** A trade with its market's slug: a row of the trades table. */
export interface TradeRow {
  slug: string;
  trade: TradeResult;
}

export const TRADE_COLUMNS: Column<TradeRow>[] = [
  { name: "slug", kind: "text", of: (r) => r.slug },
  { name: "entry_decision_time", kind: "time", of: (r) => r.trade.entry.decision_time },
  { name: "entry_fill_time", kind: "time", of: (r) => r.trade.entry.fill_time },
  { name: "entry_last_fill_time", kind: "time", of: (r) => r.trade.entry.last_fill_time },
  { name: "order_type", kind: "text", of: (r) => r.trade.entry.order_type },
  { name: "limit_price", kind: "number", of: (r) => r.trade.entry.limit_price },
  { name: "entry_price", kind: "number", of: (r) => r.trade.entry.price },
  { name: "entry_size", kind: "number", of: (r) => r.trade.entry.size },
  { name: "entry_unfilled", kind: "number", of: (r) => r.trade.entry.unfilled },
  { name: "shares_received", kind: "number", of: (r) => r.trade.entry.shares_received },
  { name: "cost", kind: "number", of: (r) => r.trade.entry.cost },
  { name: "entry_fee_usdc", kind: "number", of: (r) => r.trade.entry.fee_usdc },
  { name: "maker_size", kind: "number", of: (r) => r.trade.entry.maker_size },
  { name: "rebate_usdc", kind: "number", of: (r) => r.trade.entry.rebate_usdc },
  { name: "entry_mid_at_decision", kind: "number", of: (r) => r.trade.entry.mid_at_decision },
  { name: "entry_slippage_bps", kind: "number", of: (r) => r.trade.entry.slippage_bps },
  { name: "exit_reason", kind: "text", of: (r) => r.trade.exit_reason },
  { name: "exit_decision_time", kind: "time", of: (r) => r.trade.exit?.decision_time ?? null },
  { name: "exit_fill_time", kind: "time", of: (r) => r.trade.exit?.fill_time ?? null },
  { name: "exit_price", kind: "number", of: (r) => r.trade.exit?.price ?? null },
  { name: "exit_size", kind: "number", of: (r) => r.trade.exit?.size ?? null },
  { name: "exit_unsold", kind: "number", of: (r) => r.trade.exit?.unsold ?? null },
  { name: "exit_proceeds", kind: "number", of: (r) => r.trade.exit?.proceeds ?? null },
  { name: "exit_fee_usdc", kind: "number", of: (r) => r.trade.exit?.fee_usdc ?? null },
  { name: "exit_slippage_bps", kind: "number", of: (r) => r.trade.exit?.slippage_bps ?? null },
  { name: "settlement_shares", kind: "number", of: (r) => r.trade.settlement?.shares ?? null },
  {
    name: "settlement_payout_per_share",
    kind: "number",
    of: (r) => r.trade.settlement?.payout_per_share ?? null,
  },
  { name: "settlement_proceeds", kind: "number", of: (r) => r.trade.settlement?.proceeds ?? null },
  { name: "closed_at", kind: "time", of: (r) => r.trade.closed_at },
  { name: "held_s", kind: "number", of: (r) => r.trade.held_s },
  { name: "pnl", kind: "number", of: (r) => r.trade.pnl },
  { name: "roi", kind: "number", of: (r) => r.trade.roi },
];

export const RESULT_COLUMNS: Column<MarketResult>[] = [
  { name: "slug", kind: "text", of: (r) => r.slug },
  { name: "start_time", kind: "time", of: (r) => r.start_time },
  { name: "end_time", kind: "time", of: (r) => r.end_time },
  { name: "winner", kind: "text", of: (r) => r.winner },
  { name: "snapshots", kind: "number", of: (r) => r.snapshots },
  { name: "trades", kind: "number", of: (r) => r.trades.length },
  { name: "orders_unfilled", kind: "number", of: (r) => r.orders_unfilled },
  { name: "pnl", kind: "number", of: (r) => r.pnl },
  { name: "cost", kind: "number", of: (r) => r.cost },
  { name: "roi", kind: "number", of: (r) => r.roi },
  { name: "fees_usdc", kind: "number", of: (r) => r.fees_usdc },
  { name: "rebates_usdc", kind: "number", of: (r) => r.rebates_usdc },
  { name: "time_in_market_s", kind: "number", of: (r) => r.time_in_market_s },
];

function csvCell(v: Value): string {
  if (v === null) return "";
  if (typeof v === "number") return String(v);
  return /[",\n\r]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

export function csvHeaderOf<T>(columns: readonly Column<T>[]): string {
  return `${columns.map((c) => c.name).join(",")}\n`;
}

/** A CSV row: numbers as JSON writes them, times as the API's ISO text, an absent value empty. */
export function csvRowOf<T>(columns: readonly Column<T>[], row: T): string {
  return `${columns.map((c) => csvCell(c.of(row))).join(",")}\n`;
}

/** A trade as an NDJSON line: the API's trade (BacktestTrade) with its market's slug first. */
export function tradeLine(row: TradeRow): string {
  return `${JSON.stringify({ slug: row.slug, ...row.trade })}\n`;
}

/** A market's result as an NDJSON line: the API's result (BacktestMarketResult), trades included. */
export function resultLine(result: MarketResult): string {
  return `${JSON.stringify(result)}\n`;
}
