import { parseIsoMicros } from "../domain/time.ts";
import { type MarketResult, round } from "./engine.ts";

/**
 * A run's aggregate over its markets' results (DESIGN 3.7). Pure: the same results give the same
 * aggregate. Sharpe and Sortino are over the returns of every market replayed (PnL / cost of each; a
 * market without a trade returned 0, so that trading rarely does not flatter them), per market and not
 * annualized: the markets of one series are the periods.
 */
export interface Aggregate {
  markets: number;
  markets_traded: number;
  trades: number;
  pnl: number;
  cost: number;
  roi: number | null;
  win_rate: number | null;
  profit_factor: number | null;
  max_drawdown: number;
  sharpe: number | null;
  sortino: number | null;
  fees_paid: number;
  rebates_usdc: number;
  avg_slippage_bps: number | null;
  time_in_market_s: number;
  time_in_market_pct: number;
  orders_unfilled: number;
  equity_curve: { time: string; equity: number }[];
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Mean over sample standard deviation; null below two returns or without variation. */
export function sharpeOf(returns: number[]): number | null {
  if (returns.length < 2) return null;
  const m = mean(returns);
  const variance = returns.reduce((a, r) => a + (r - m) ** 2, 0) / (returns.length - 1);
  return variance > 0 ? m / Math.sqrt(variance) : null;
}

/** Mean over downside deviation (losses only, against 0); null below two returns or without a loss. */
export function sortinoOf(returns: number[]): number | null {
  if (returns.length < 2) return null;
  const downside = returns.reduce((a, r) => a + Math.min(0, r) ** 2, 0) / returns.length;
  return downside > 0 ? mean(returns) / Math.sqrt(downside) : null;
}

/** The largest fall of equity from a running peak (starting at 0), in USDC. */
export function maxDrawdownOf(equity: number[]): number {
  let peak = 0;
  let worst = 0;
  for (const e of equity) {
    peak = Math.max(peak, e);
    worst = Math.max(worst, peak - e);
  }
  return worst;
}

export function aggregate(results: readonly MarketResult[]): Aggregate {
  const trades = results.flatMap((r) => r.trades);
  const pnl = trades.reduce((a, t) => a + t.pnl, 0);
  const cost = trades.reduce((a, t) => a + t.entry.cost, 0);
  const gains = trades.filter((t) => t.pnl > 0).reduce((a, t) => a + t.pnl, 0);
  const losses = -trades.filter((t) => t.pnl < 0).reduce((a, t) => a + t.pnl, 0);
  const closes = trades
    .map((t) => ({ at: parseIsoMicros(t.closed_at) ?? 0, time: t.closed_at, pnl: t.pnl }))
    .sort((a, b) => a.at - b.at);
  let equity = 0;
  const curve = closes.map((c) => ({ time: c.time, equity: round((equity += c.pnl)) }));
  const returns = results.map((r) => r.roi ?? 0);
  const slippages = trades.flatMap((t) => [
    t.entry.slippage_bps,
    ...(t.exit && t.exit.slippage_bps !== null ? [t.exit.slippage_bps] : []),
  ]);
  const seconds = (r: MarketResult) =>
    ((parseIsoMicros(r.end_time) ?? 0) - (parseIsoMicros(r.start_time) ?? 0)) / 1e6;
  const span = results.reduce((a, r) => a + seconds(r), 0);
  const held = results.reduce((a, r) => a + r.time_in_market_s, 0);
  return {
    markets: results.length,
    markets_traded: results.filter((r) => r.trades.length > 0).length,
    trades: trades.length,
    pnl: round(pnl),
    cost: round(cost),
    roi: cost > 0 ? round(pnl / cost) : null,
    win_rate: trades.length > 0 ? round(trades.filter((t) => t.pnl > 0).length / trades.length) : null,
    profit_factor: losses > 0 ? round(gains / losses) : null,
    max_drawdown: round(maxDrawdownOf(curve.map((c) => c.equity))),
    sharpe: nullableRound(sharpeOf(returns)),
    sortino: nullableRound(sortinoOf(returns)),
    fees_paid: round(results.reduce((a, r) => a + r.fees_usdc, 0)),
    rebates_usdc: round(results.reduce((a, r) => a + r.rebates_usdc, 0)),
    avg_slippage_bps: slippages.length > 0 ? round(mean(slippages), 2) : null,
    time_in_market_s: round(held, 3),
    time_in_market_pct: span > 0 ? round((held / span) * 100, 4) : 0,
    orders_unfilled: results.reduce((a, r) => a + r.orders_unfilled, 0),
    equity_curve: curve,
  };
}

function nullableRound(x: number | null): number | null {
  return x === null ? null : round(x);
}
