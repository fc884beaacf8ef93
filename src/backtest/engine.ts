import type { Level } from "../domain/book.ts";
import type { SnapshotRow } from "../domain/snapshot.ts";
import { isoMicros, isoSeconds, MICROS_PER_SECOND, type Micros } from "../domain/time.ts";
import {
  type Condition,
  type ConditionNode,
  DEFAULT_LIMIT_PRICE,
  isCondition,
  type LimitPriceRule,
  type StrategyDefinition,
} from "./definition.ts";
import {
  type FeatureFn,
  featureFn,
  MarketHistory,
  type ReplayMarket,
  SnapshotView,
  type Token,
} from "./features.ts";
import { type Fill, restingFill, slippageBps, walkBook } from "./fills.ts";

/**
 * The backtest engine (DESIGN 3.7): one pure, deterministic module with no I/O. It replays one market's
 * snapshots oldest first; a decision at a snapshot reads only that snapshot (and, for a cross, the one
 * before it) and the market's opening facts; its order fills against the first snapshot with books at
 * or after the decision plus the latency (default: the next snapshot). Positions still open at the end
 * settle at 1, 0 or 0.5 a share. The same inputs give the same result, value for value, so the same bytes.
 */

/** What carries from one market to the next in a run: the realized PnL that max_loss_percent watches. */
export interface RunState {
  realizedPnl: number;
}

export type ExitReason = "take_profit" | "stop_loss" | "time_limit" | "condition" | "resolution";

export interface EntryResult {
  decision_time: string;
  fill_time: string;
  order_type: "MARKET" | "LIMIT";
  limit_price: number | null;
  price: number;
  size: number;
  shares_received: number;
  cost: number;
  fee_usdc: number;
  fee_shares: number;
  maker_size: number;
  mid_at_decision: number;
  slippage_bps: number;
  levels: Level[];
}

export interface ExitResult {
  reason: ExitReason;
  decision_time: string | null;
  fill_time: string;
  price: number;
  size: number;
  proceeds: number;
  fee_usdc: number;
  mid_at_decision: number | null;
  slippage_bps: number | null;
  levels: Level[];
}

export interface TradeResult {
  entry: EntryResult;
  /** The sale that closed the position, or null when it was held to the end. */
  exit: ExitResult | null;
  /** Shares still held at the end, paid out at settlement. */
  settlement: { shares: number; payout_per_share: number; proceeds: number } | null;
  exit_reason: ExitReason;
  closed_at: string;
  held_s: number;
  pnl: number;
  roi: number;
}

export interface MarketResult {
  slug: string;
  start_time: string;
  end_time: string;
  winner: string;
  snapshots: number;
  trades: TradeResult[];
  /** Orders that filled nothing: a market order into an empty book, or a limit order never traded through. */
  orders_unfilled: number;
  pnl: number;
  cost: number;
  roi: number | null;
  fees_usdc: number;
  time_in_market_s: number;
}

/** Money and shares to the micro-unit (USDC has 6 decimals), basis points to hundredths. */
export const round = (x: number, decimals = 6): number => {
  const f = 10 ** decimals;
  const r = Math.round(x * f) / f;
  return r === 0 ? 0 : r;
};

interface CompiledCondition {
  a: FeatureFn;
  op: Condition["op"];
  b: FeatureFn;
}

function compile(c: Condition): CompiledCondition {
  const value = c.value;
  return {
    a: featureFn(c.feature),
    op: c.op,
    b: typeof value === "number" ? () => value : featureFn(value),
  };
}

/** Whether a condition holds at `view`; a cross compares with the snapshot before. Unknown values never hold. */
function holds(c: CompiledCondition, view: SnapshotView, prev: SnapshotView | null): boolean {
  const a = c.a(view);
  const b = c.b(view);
  if (a === null || b === null) return false;
  switch (c.op) {
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case ">":
      return a > b;
    case ">=":
      return a >= b;
    default: {
      if (prev === null) return false;
      const pa = c.a(prev);
      const pb = c.b(prev);
      if (pa === null || pb === null) return false;
      return c.op === "crosses_above" ? pa <= pb && a > b : pa >= pb && a < b;
    }
  }
}

/** Whether a node holds at `view`: a condition as above, `all`, `any` and `not` as in logic. */
type Predicate = (view: SnapshotView, prev: SnapshotView | null) => boolean;

function compileNode(node: ConditionNode): Predicate {
  if (isCondition(node)) {
    const c = compile(node);
    return (view, prev) => holds(c, view, prev);
  }
  if ("all" in node) {
    const members = node.all.map(compileNode);
    return (view, prev) => members.every((m) => m(view, prev));
  }
  if ("any" in node) {
    const members = node.any.map(compileNode);
    return (view, prev) => members.some((m) => m(view, prev));
  }
  const member = compileNode(node.not);
  return (view, prev) => !member(view, prev);
}

/** The limit price a rule gives at the decision, in whole ticks (down for a buy); null without a reference. */
export function limitPriceOf(rule: LimitPriceRule, view: SnapshotView, token: Token): number | null {
  const reference =
    rule.reference === "fixed"
      ? 0
      : rule.reference === "best_bid"
        ? view.bestBid(token)
        : rule.reference === "best_ask"
          ? view.bestAsk(token)
          : view.book(token) === null
            ? null
            : view.mid(token);
  if (reference === null) return null;
  const cents = Math.floor(round((reference + rule.offset) * 100, 6));
  return Math.min(99, Math.max(1, cents)) / 100;
}

interface Pending {
  kind: "entry" | "exit";
  reason: ExitReason;
  decidedAt: Micros;
  mid: number;
  /** The fill may not come before this snapshot index, nor before this time. */
  minIndex: number;
  notBefore: Micros;
  limit: number | null;
}

interface Position {
  entry: { decidedAt: Micros; firstFill: Micros; lastFill: Micros; limit: number | null; mid: number };
  bought: Fill[];
  /** Shares held now. */
  shares: number;
  /** Of the shares bought, those bought resting (as a maker). */
  makerSize: number;
  exit: { pending: Pending; fill: Fill; at: Micros } | null;
  /** A limit entry's rest, waiting for the asks to trade through it. */
  resting: { limit: number; size: number; placedIndex: number; expiresAt: Micros | null } | null;
}

/** One market's replay: the state of its position and orders, snapshot by snapshot. */
class MarketReplay {
  private readonly d: StrategyDefinition;
  private readonly market: ReplayMarket;
  private readonly state: RunState;
  private readonly token: Token;
  private readonly entry: Predicate[];
  private readonly exits: Predicate[];
  private position: Position | null = null;
  private pending: Pending | null = null;
  private entries = 0;
  private unfilled = 0;
  readonly trades: TradeResult[] = [];

  constructor(d: StrategyDefinition, market: ReplayMarket, state: RunState) {
    this.d = d;
    this.market = market;
    this.state = state;
    this.token = d.side === "UP" ? "up" : "down";
    this.entry = d.entry.map(compileNode);
    this.exits = d.exit.conditions.map(compileNode);
  }

  get ordersUnfilled(): number {
    return this.unfilled;
  }

  step(index: number, view: SnapshotView, prev: SnapshotView | null): void {
    this.fillDue(index, view);
    this.fillResting(index, view);
    if (this.pending === null) this.decide(index, view, prev);
    this.fillDue(index, view);
  }

  /** Orders still waiting at the end never filled; shares still held settle. */
  finish(): void {
    if (this.pending?.kind === "entry") this.unfilled++;
    this.pending = null;
    const p = this.position;
    if (p === null) return;
    if (p.bought.length === 0) {
      this.unfilled++;
      this.position = null;
      return;
    }
    this.close(p, true);
  }

  private due(index: number, view: SnapshotView): boolean {
    const p = this.pending;
    return p !== null && index >= p.minIndex && view.time >= p.notBefore && view.snapshot.books !== null;
  }

  private fillDue(index: number, view: SnapshotView): void {
    if (!this.due(index, view)) return;
    const pending = this.pending as Pending;
    this.pending = null;
    if (pending.kind === "entry") this.fillEntry(index, view, pending);
    else this.fillExit(view, pending);
  }

  private fillEntry(index: number, view: SnapshotView, pending: Pending): void {
    const book = view.book(this.token);
    const cap = pending.limit ?? this.d.max_fill_price;
    const fill = walkBook(book?.asks ?? [], "buy", this.d.position_size, cap, this.market.feeSchedule);
    const rests = pending.limit !== null && fill.unfilled > 0;
    if (fill.size === 0 && !rests) {
      this.unfilled++;
      return;
    }
    const expiry = this.d.limit_expiry_s;
    this.position = {
      entry: {
        decidedAt: pending.decidedAt,
        firstFill: view.time,
        lastFill: view.time,
        limit: pending.limit,
        mid: pending.mid,
      },
      bought: fill.size > 0 ? [fill] : [],
      shares: fill.size - fill.feeShares,
      makerSize: 0,
      exit: null,
      resting: rests
        ? {
            limit: pending.limit as number,
            size: fill.unfilled,
            placedIndex: index,
            expiresAt: expiry === null ? null : view.time + expiry * MICROS_PER_SECOND,
          }
        : null,
    };
  }

  private fillResting(index: number, view: SnapshotView): void {
    const p = this.position;
    const r = p?.resting;
    if (!p || !r || index <= r.placedIndex) return;
    if (r.expiresAt !== null && view.time > r.expiresAt) {
      p.resting = null;
      if (p.bought.length === 0) {
        this.unfilled++;
        this.position = null;
      }
      return;
    }
    const fill = restingFill(view.bestAsk(this.token), "buy", r.limit, r.size, this.market.feeSchedule);
    if (fill === null) return;
    if (p.bought.length === 0) p.entry.firstFill = view.time;
    p.entry.lastFill = view.time;
    p.bought.push(fill);
    p.shares += fill.size - fill.feeShares;
    p.makerSize += fill.size;
    p.resting = null;
  }

  private fillExit(view: SnapshotView, pending: Pending): void {
    const p = this.position as Position;
    const fill = walkBook(view.book(this.token)?.bids ?? [], "sell", p.shares, null, this.market.feeSchedule);
    p.exit = { pending, fill, at: view.time };
    p.shares -= fill.size;
    if (p.shares <= 1e-9) this.close(p, false);
  }

  private decide(index: number, view: SnapshotView, prev: SnapshotView | null): void {
    const p = this.position;
    if (p !== null) {
      if (p.exit !== null || p.bought.length === 0) return;
      const reason = this.exitReason(p, view, prev);
      if (reason !== null) {
        p.resting = null;
        this.pending = this.order("exit", reason, index, view, null);
      }
      return;
    }
    if (this.entries >= this.d.max_entries_per_market || this.stopped()) return;
    if (!this.entry.every((c) => c(view, prev))) return;
    let limit: number | null = null;
    if (this.d.order_type === "LIMIT") {
      limit = limitPriceOf(this.d.limit_price ?? DEFAULT_LIMIT_PRICE, view, this.token);
      if (limit === null) return;
      if (this.d.max_fill_price !== null) limit = Math.min(limit, this.d.max_fill_price);
    }
    this.entries++;
    this.pending = this.order("entry", "resolution", index, view, limit);
  }

  private order(
    kind: Pending["kind"],
    reason: ExitReason,
    index: number,
    view: SnapshotView,
    limit: number | null,
  ): Pending {
    const latency = this.d.latency_ms;
    return {
      kind,
      reason,
      decidedAt: view.time,
      mid: view.mid(this.token),
      minIndex: latency === null ? index + 1 : index,
      notBefore: latency === null ? view.time : view.time + latency * 1000,
      limit,
    };
  }

  private stopped(): boolean {
    const max = this.d.max_loss_percent;
    return max !== null && this.state.realizedPnl <= -(max / 100) * this.d.position_size;
  }

  private exitReason(p: Position, view: SnapshotView, prev: SnapshotView | null): ExitReason | null {
    const x = this.d.exit;
    if (x.hold_to_resolution) return null;
    const bid = view.bestBid(this.token);
    const entryPrice = sum(p.bought, (f) => f.notional) / sum(p.bought, (f) => f.size);
    if (bid !== null && x.take_profit_pct !== null && bid >= entryPrice * (1 + x.take_profit_pct / 100)) {
      return "take_profit";
    }
    if (bid !== null && x.stop_loss_pct !== null && bid <= entryPrice * (1 - x.stop_loss_pct / 100)) {
      return "stop_loss";
    }
    if (x.time_limit_s !== null && view.time - p.entry.firstFill >= x.time_limit_s * MICROS_PER_SECOND) {
      return "time_limit";
    }
    return this.exits.some((c) => c(view, prev)) ? "condition" : null;
  }

  /** Closes a position: at its exit fill, or at the market's end with the shares still held. */
  private close(p: Position, atEnd: boolean): void {
    this.position = null;
    const trade = tradeResult(p, this.market, this.d, this.token, atEnd);
    this.trades.push(trade);
    this.state.realizedPnl += trade.pnl;
  }
}

function sum<T>(items: readonly T[], of: (item: T) => number): number {
  let total = 0;
  for (const item of items) total += of(item);
  return total;
}

function roundLevels(levels: Level[]): Level[] {
  return levels.map((l) => ({ price: l.price, size: round(l.size) }));
}

/** What one share of the side pays at settlement. */
function payoutPerShare(market: ReplayMarket, token: Token): number {
  if (market.winner === "50-50") return 0.5;
  return (market.winner === "Up") === (token === "up") ? 1 : 0;
}

function entryResult(p: Position, d: StrategyDefinition): EntryResult {
  const size = sum(p.bought, (f) => f.size);
  const cost = sum(p.bought, (f) => f.notional);
  const price = cost / size;
  const feeShares = sum(p.bought, (f) => f.feeShares);
  const levels = p.bought.flatMap((f) => f.levels);
  return {
    decision_time: isoMicros(p.entry.decidedAt),
    fill_time: isoMicros(p.entry.firstFill),
    order_type: d.order_type,
    limit_price: p.entry.limit,
    price: round(price),
    size: round(size),
    shares_received: round(size - feeShares),
    cost: round(cost),
    fee_usdc: round(sum(p.bought, (f) => f.feeUsdc)),
    fee_shares: round(feeShares),
    maker_size: round(p.makerSize),
    mid_at_decision: round(p.entry.mid),
    slippage_bps: round(slippageBps("buy", price, p.entry.mid), 2),
    levels: roundLevels(levels),
  };
}

function exitResult(p: Position): ExitResult | null {
  const x = p.exit;
  if (x === null || x.fill.size === 0) return null;
  const price = x.fill.avgPrice as number;
  return {
    reason: x.pending.reason,
    decision_time: isoMicros(x.pending.decidedAt),
    fill_time: isoMicros(x.at),
    price: round(price),
    size: round(x.fill.size),
    proceeds: round(x.fill.notional - x.fill.feeUsdc),
    fee_usdc: round(x.fill.feeUsdc),
    mid_at_decision: round(x.pending.mid),
    slippage_bps: round(slippageBps("sell", price, x.pending.mid), 2),
    levels: roundLevels(x.fill.levels),
  };
}

function tradeResult(
  p: Position,
  market: ReplayMarket,
  d: StrategyDefinition,
  token: Token,
  atEnd: boolean,
): TradeResult {
  const entry = entryResult(p, d);
  const exit = exitResult(p);
  const payout = payoutPerShare(market, token);
  const settlement = atEnd
    ? { shares: round(p.shares), payout_per_share: payout, proceeds: round(p.shares * payout) }
    : null;
  const cost = sum(p.bought, (f) => f.notional);
  const sold = p.exit?.fill;
  const proceeds = (sold ? sold.notional - sold.feeUsdc : 0) + (atEnd ? p.shares * payout : 0);
  const closedAt = atEnd || !p.exit ? market.endTime * MICROS_PER_SECOND : p.exit.at;
  const pnl = proceeds - cost;
  return {
    entry,
    exit,
    settlement,
    exit_reason: atEnd ? (exit ? exit.reason : "resolution") : (exit as ExitResult).reason,
    closed_at: atEnd ? isoSeconds(market.endTime) : isoMicros(closedAt),
    held_s: round((closedAt - p.entry.firstFill) / MICROS_PER_SECOND, 3),
    pnl: round(pnl),
    roi: round(pnl / cost),
  };
}

/**
 * Replays one resolved market. `state` carries the run's realized PnL from the markets before (and is
 * updated), so that max_loss_percent stops entries across markets.
 */
export function replayMarket(
  d: StrategyDefinition,
  market: ReplayMarket,
  snapshots: readonly SnapshotRow[],
  state: RunState,
): MarketResult {
  if (market.winner === null) throw new Error(`${market.slug} is not resolved; only resolved markets replay`);
  const replay = new MarketReplay(d, market, state);
  const history = new MarketHistory(snapshots);
  let prev: SnapshotView | null = null;
  for (let i = 0; i < snapshots.length; i++) {
    const view = new SnapshotView(market, snapshots[i], history, i);
    replay.step(i, view, prev);
    prev = view;
  }
  replay.finish();
  const trades = replay.trades;
  const pnl = sum(trades, (t) => t.pnl);
  const cost = sum(trades, (t) => t.entry.cost);
  return {
    slug: market.slug,
    start_time: isoSeconds(market.startTime),
    end_time: isoSeconds(market.endTime),
    winner: market.winner,
    snapshots: snapshots.length,
    trades,
    orders_unfilled: replay.ordersUnfilled,
    pnl: round(pnl),
    cost: round(cost),
    roi: cost > 0 ? round(pnl / cost) : null,
    fees_usdc: round(sum(trades, (t) => t.entry.fee_usdc + (t.exit?.fee_usdc ?? 0))),
    time_in_market_s: round(
      sum(trades, (t) => t.held_s),
      3,
    ),
  };
}
