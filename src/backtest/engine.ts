import type { Level } from "../domain/book.ts";
import type { Outcome } from "../domain/market.ts";
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
import {
  type Fill,
  fillFromPrint,
  makerFeeOf,
  makerRebateOf,
  netSalePrice,
  type Print,
  type RestingOrder,
  slippageBps,
  walkBook,
} from "./fills.ts";
import { type BookSide, TakenLiquidity } from "./impact.ts";

/**
 * The backtest engine (DESIGN 3.7): one pure, deterministic module with no I/O. It replays one market's
 * snapshots oldest first; a decision at a snapshot reads only that snapshot (and, for a cross, the one
 * before it) and the market's opening facts; its order fills against the first snapshot with books at
 * or after the decision plus the latency (default: the next snapshot). A resting limit order fills
 * from what the market traded at or through its price after the queue ahead of it (fills.ts); our own
 * fills leave the book thinner until it shows the liquidity refilled (impact.ts); an exit keeps selling
 * at each later snapshot until done or the market ends. Positions still open at the end settle at 1, 0
 * or 0.5 a share. The same inputs give the same result, value for value, so the same bytes.
 */

export type ExitReason = "take_profit" | "stop_loss" | "max_loss" | "time_limit" | "condition" | "resolution";

export interface EntryResult {
  decision_time: string;
  fill_time: string;
  last_fill_time: string;
  order_type: "MARKET" | "LIMIT";
  limit_price: number | null;
  queue_ahead: number | null;
  price: number;
  size: number;
  unfilled: number;
  shares_received: number;
  cost: number;
  fee_usdc: number;
  fee_shares: number;
  maker_size: number;
  rebate_usdc: number;
  mid_at_decision: number;
  slippage_bps: number;
  levels: Level[];
}

export interface ExitAttempt {
  time: string;
  size: number;
  price: number;
  proceeds: number;
  fee_usdc: number;
}

export interface ExitResult {
  reason: ExitReason;
  decision_time: string | null;
  fill_time: string | null;
  price: number | null;
  size: number;
  unsold: number;
  proceeds: number;
  fee_usdc: number;
  mid_at_decision: number | null;
  slippage_bps: number | null;
  attempts: ExitAttempt[];
  empty_attempts: number;
  levels: Level[];
}

export interface TradeResult {
  entry: EntryResult;
  /** The exit from its decision on (every sale it made), or null when none was decided. */
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
  rebates_usdc: number;
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
  decidedAt: Micros;
  mid: number;
  /** The fill may not come before this snapshot index, nor before this time. */
  minIndex: number;
  notBefore: Micros;
  limit: number | null;
}

/** An exit from its decision on: each attempt that sold something, and those that found no bid. */
interface ExitWork {
  reason: ExitReason;
  decidedAt: Micros;
  mid: number;
  attempts: { at: Micros; fill: Fill }[];
  empty: number;
}

/** The rest of a limit entry, resting in the book (fills.ts: RestingOrder), until filled, expired or cancelled. */
interface Resting {
  order: RestingOrder;
  /** When it is cancelled: `limit_expiry_s` after it joined the book; null: at the market's end. */
  expiresAt: Micros | null;
}

interface Position {
  entry: {
    decidedAt: Micros;
    firstFill: Micros;
    lastFill: Micros;
    limit: number | null;
    mid: number;
    queueAhead: number | null;
  };
  /** The entry's taker fills (at most one: the part of the order the book filled on arrival). */
  bought: Fill[];
  /** Shares bought resting (as a maker), at the limit price, and their fee and rebate. */
  makerSize: number;
  makerFeeUsdc: number;
  makerFeeShares: number;
  rebateUsdc: number;
  /** Shares held now. */
  shares: number;
  exit: ExitWork | null;
  resting: Resting | null;
}

const EPSILON = 1e-9;

/** One market's replay: the state of its position and orders, snapshot by snapshot. */
class MarketReplay {
  private readonly d: StrategyDefinition;
  private readonly market: ReplayMarket;
  private readonly token: Token;
  private readonly outcome: Outcome;
  private readonly entry: Predicate[];
  private readonly exits: Predicate[];
  private readonly prints: readonly Print[];
  /** The next print no resting order has looked at yet. */
  private printAt = 0;
  private readonly taken = new TakenLiquidity();
  private position: Position | null = null;
  private pending: Pending | null = null;
  private entries = 0;
  private unfilled = 0;
  readonly trades: TradeResult[] = [];

  constructor(d: StrategyDefinition, market: ReplayMarket, prints: readonly Print[]) {
    this.d = d;
    this.market = market;
    this.token = d.side === "UP" ? "up" : "down";
    this.outcome = d.side === "UP" ? "Up" : "Down";
    this.entry = d.entry.map(compileNode);
    this.exits = d.exit.conditions.map(compileNode);
    this.prints = prints;
  }

  get ordersUnfilled(): number {
    return this.unfilled;
  }

  step(index: number, view: SnapshotView, prev: SnapshotView | null): void {
    if (view.snapshot.books !== null) this.taken.observe((token) => view.book(token as Token));
    this.fillDue(index, view);
    this.fillResting(view.time);
    if (this.pending === null) this.decide(index, view, prev);
    this.fillDue(index, view);
  }

  /**
   * The market's end: a resting order takes what traded up to the end (or its expiry) and is cancelled;
   * an order still waiting never filled; shares still held settle.
   */
  finish(): void {
    if (this.pending?.kind === "entry") this.unfilled++;
    this.pending = null;
    const p = this.position;
    if (p === null) return;
    if (p.resting !== null) {
      this.fillResting(this.market.endTime * MICROS_PER_SECOND);
      // An order that expired before the end with nothing bought is gone, counted unfilled already.
      if (this.position === null) return;
      p.resting = null;
    }
    if (this.boughtSize(p) === 0) {
      this.unfilled++;
      this.position = null;
      return;
    }
    this.close(p, null);
  }

  private boughtSize(p: Position): number {
    return sum(p.bought, (f) => f.size) + p.makerSize;
  }

  private due(index: number, view: SnapshotView): boolean {
    const p = this.pending;
    return p !== null && index >= p.minIndex && view.time >= p.notBefore && view.snapshot.books !== null;
  }

  private fillDue(index: number, view: SnapshotView): void {
    if (!this.due(index, view)) return;
    const pending = this.pending as Pending;
    this.pending = null;
    if (pending.kind === "entry") this.fillEntry(view, pending);
    else this.fillExit(index, view, pending);
  }

  /** Takes from one side of the book what our self-impact leaves of it, and records what was taken. */
  private walk(view: SnapshotView, side: BookSide, size: number, cap: number | null): Fill {
    const shown = view.book(this.token)?.[side] ?? [];
    const levels = this.taken.available(this.token, side, shown);
    const fill = walkBook(levels, side === "asks" ? "buy" : "sell", size, cap, this.market.feeSchedule);
    this.taken.take(this.token, side, shown, fill.levels);
    return fill;
  }

  private fillEntry(view: SnapshotView, pending: Pending): void {
    const fill = this.walk(view, "asks", this.d.position_size, pending.limit ?? this.d.max_fill_price);
    const rests = pending.limit !== null && fill.unfilled > EPSILON;
    if (fill.size === 0 && !rests) {
      this.unfilled++;
      return;
    }
    const expiry = this.d.limit_expiry_s;
    const limit = pending.limit as number;
    const queueAhead = rests
      ? (view.book(this.token)?.bids.find((l) => Math.abs(l.price - limit) < EPSILON)?.size ?? 0)
      : null;
    this.position = {
      entry: {
        decidedAt: pending.decidedAt,
        firstFill: view.time,
        lastFill: view.time,
        limit: pending.limit,
        mid: pending.mid,
        queueAhead,
      },
      bought: fill.size > 0 ? [fill] : [],
      makerSize: 0,
      makerFeeUsdc: 0,
      makerFeeShares: 0,
      rebateUsdc: 0,
      shares: fill.size - fill.feeShares,
      exit: null,
      resting: rests
        ? {
            order: {
              outcome: this.outcome,
              limit,
              placedAt: view.time,
              queueAhead: queueAhead as number,
              size: fill.unfilled,
            },
            expiresAt: expiry === null ? null : view.time + expiry * MICROS_PER_SECOND,
          }
        : null,
    };
  }

  /**
   * A resting order takes what traded at or through its price up to `now` (or its expiry, if earlier),
   * each print at the print's time; at its expiry it is cancelled.
   */
  private fillResting(now: Micros): void {
    const p = this.position;
    const r = p?.resting;
    if (!p || !r) return;
    const horizon = r.expiresAt === null ? now : Math.min(now, r.expiresAt);
    const schedule = this.market.feeSchedule;
    const limit = r.order.limit;
    while (this.printAt < this.prints.length && this.prints[this.printAt].time <= horizon) {
      const print = this.prints[this.printAt++];
      const shares = fillFromPrint(r.order, print);
      if (shares <= 0) continue;
      if (this.boughtSize(p) === 0) p.entry.firstFill = print.time;
      p.entry.lastFill = print.time;
      const fee = makerFeeOf(schedule, shares, limit);
      p.makerSize += shares;
      p.makerFeeUsdc += fee;
      p.makerFeeShares += fee / limit;
      p.shares += shares - fee / limit;
      if (this.d.count_rebates === true) p.rebateUsdc += makerRebateOf(schedule, shares, limit);
      if (r.order.size <= EPSILON) break;
    }
    const expired = r.expiresAt !== null && now >= r.expiresAt;
    if (r.order.size > EPSILON && !expired) return;
    p.resting = null;
    if (this.boughtSize(p) === 0) {
      this.unfilled++;
      this.position = null;
    }
  }

  /** One attempt of a working exit: sells what the bids give; what is left tries again at the next snapshot. */
  private fillExit(index: number, view: SnapshotView, pending: Pending): void {
    const p = this.position as Position;
    const x = p.exit as ExitWork;
    const fill = this.walk(view, "bids", p.shares, null);
    if (fill.size === 0) x.empty++;
    else x.attempts.push({ at: view.time, fill });
    p.shares -= fill.size;
    if (p.shares <= EPSILON) this.close(p, view.time);
    else this.pending = { ...pending, minIndex: index + 1, notBefore: view.time };
  }

  private decide(index: number, view: SnapshotView, prev: SnapshotView | null): void {
    const p = this.position;
    if (p !== null) {
      if (p.exit !== null || this.boughtSize(p) === 0) return;
      const reason = this.exitReason(p, view, prev);
      if (reason !== null) {
        p.resting = null;
        this.pending = this.order("exit", index, view, null);
        p.exit = { reason, decidedAt: view.time, mid: this.pending.mid, attempts: [], empty: 0 };
      }
      return;
    }
    if (this.entries >= this.d.max_entries_per_market) return;
    if (!this.entry.every((c) => c(view, prev))) return;
    let limit: number | null = null;
    if (this.d.order_type === "LIMIT") {
      limit = limitPriceOf(this.d.limit_price ?? DEFAULT_LIMIT_PRICE, view, this.token);
      if (limit === null) return;
      if (this.d.max_fill_price !== null) limit = Math.min(limit, this.d.max_fill_price);
    }
    this.entries++;
    this.pending = this.order("entry", index, view, limit);
  }

  private order(kind: Pending["kind"], index: number, view: SnapshotView, limit: number | null): Pending {
    const latency = this.d.latency_ms;
    return {
      kind,
      decidedAt: view.time,
      mid: view.mid(this.token),
      minIndex: latency === null ? index + 1 : index,
      notBefore: latency === null ? view.time : view.time + latency * 1000,
      limit,
    };
  }

  /**
   * Take profit, stop loss and max_loss_percent compare what selling at the best bid would bring per
   * share after the exit's fee, `bid - rate * (bid * (1 - bid)) ^ exponent`, with what each share held
   * cost (the entry's USDC over the shares held, so the entry's fee counts too).
   */
  private exitReason(p: Position, view: SnapshotView, prev: SnapshotView | null): ExitReason | null {
    const x = this.d.exit;
    const bid = view.bestBid(this.token);
    if (bid !== null) {
      const net = netSalePrice(this.market.feeSchedule, bid);
      const basis = (sum(p.bought, (f) => f.notional) + p.makerSize * (p.entry.limit ?? 0)) / p.shares;
      const below = (pct: number | null) => pct !== null && net <= basis * (1 - pct / 100) + EPSILON;
      if (!x.hold_to_resolution) {
        if (x.take_profit_pct !== null && net >= basis * (1 + x.take_profit_pct / 100) - EPSILON) {
          return "take_profit";
        }
        if (below(x.stop_loss_pct)) return "stop_loss";
      }
      if (below(this.d.max_loss_percent)) return "max_loss";
    }
    if (x.hold_to_resolution) return null;
    if (x.time_limit_s !== null && view.time - p.entry.firstFill >= x.time_limit_s * MICROS_PER_SECOND) {
      return "time_limit";
    }
    return this.exits.some((c) => c(view, prev)) ? "condition" : null;
  }

  /** Closes a position: when its exit sold the last share (`at`), or at the market's end (null). */
  private close(p: Position, at: Micros | null): void {
    this.position = null;
    this.trades.push(tradeResult(p, this.market, this.d, this.token, at));
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

/** The entry's fills as one: the taker part, then the maker part at the limit price. */
function entryFills(p: Position): {
  size: number;
  cost: number;
  feeUsdc: number;
  feeShares: number;
  levels: Level[];
} {
  const levels = p.bought.flatMap((f) => f.levels);
  if (p.makerSize > 0) levels.push({ price: p.entry.limit as number, size: p.makerSize });
  return {
    size: sum(p.bought, (f) => f.size) + p.makerSize,
    cost: sum(p.bought, (f) => f.notional) + p.makerSize * (p.entry.limit ?? 0),
    feeUsdc: sum(p.bought, (f) => f.feeUsdc) + p.makerFeeUsdc,
    feeShares: sum(p.bought, (f) => f.feeShares) + p.makerFeeShares,
    levels,
  };
}

function entryResult(p: Position, d: StrategyDefinition): EntryResult {
  const f = entryFills(p);
  const price = f.cost / f.size;
  return {
    decision_time: isoMicros(p.entry.decidedAt),
    fill_time: isoMicros(p.entry.firstFill),
    last_fill_time: isoMicros(p.entry.lastFill),
    order_type: d.order_type,
    limit_price: p.entry.limit,
    queue_ahead: p.entry.queueAhead === null ? null : round(p.entry.queueAhead),
    price: round(price),
    size: round(f.size),
    unfilled: round(Math.max(0, d.position_size - f.size)),
    shares_received: round(f.size - f.feeShares),
    cost: round(f.cost),
    fee_usdc: round(f.feeUsdc),
    fee_shares: round(f.feeShares),
    maker_size: round(p.makerSize),
    rebate_usdc: round(p.rebateUsdc),
    mid_at_decision: round(p.entry.mid),
    slippage_bps: round(slippageBps("buy", price, p.entry.mid), 2),
    levels: roundLevels(f.levels),
  };
}

function exitResult(x: ExitWork, unsold: number): ExitResult {
  const fills = x.attempts.map((a) => a.fill);
  const size = sum(fills, (f) => f.size);
  const notional = sum(fills, (f) => f.notional);
  const fee = sum(fills, (f) => f.feeUsdc);
  const price = size > 0 ? notional / size : null;
  return {
    reason: x.reason,
    decision_time: isoMicros(x.decidedAt),
    fill_time: x.attempts.length > 0 ? isoMicros(x.attempts[0].at) : null,
    price: price === null ? null : round(price),
    size: round(size),
    unsold: round(unsold),
    proceeds: round(notional - fee),
    fee_usdc: round(fee),
    mid_at_decision: round(x.mid),
    slippage_bps: price === null ? null : round(slippageBps("sell", price, x.mid), 2),
    attempts: x.attempts.map((a) => ({
      time: isoMicros(a.at),
      size: round(a.fill.size),
      price: round(a.fill.avgPrice as number),
      proceeds: round(a.fill.notional - a.fill.feeUsdc),
      fee_usdc: round(a.fill.feeUsdc),
    })),
    empty_attempts: x.empty,
    levels: roundLevels(fills.flatMap((f) => f.levels)),
  };
}

/** A closed position: `at` is when its exit sold the last share, null when it was held to the market's end. */
function tradeResult(
  p: Position,
  market: ReplayMarket,
  d: StrategyDefinition,
  token: Token,
  at: Micros | null,
): TradeResult {
  const entry = entryResult(p, d);
  const atEnd = at === null;
  const exit = p.exit === null ? null : exitResult(p.exit, atEnd ? p.shares : 0);
  const payout = payoutPerShare(market, token);
  const settlement = atEnd
    ? { shares: round(p.shares), payout_per_share: payout, proceeds: round(p.shares * payout) }
    : null;
  const cost = entryFills(p).cost;
  const sold = p.exit === null ? 0 : sum(p.exit.attempts, (a) => a.fill.notional - a.fill.feeUsdc);
  const proceeds = sold + (atEnd ? p.shares * payout : 0) + p.rebateUsdc;
  const closedAt = at ?? market.endTime * MICROS_PER_SECOND;
  const pnl = proceeds - cost;
  return {
    entry,
    exit,
    settlement,
    exit_reason: exit?.reason ?? "resolution",
    closed_at: atEnd ? isoSeconds(market.endTime) : isoMicros(closedAt),
    held_s: round((closedAt - p.entry.firstFill) / MICROS_PER_SECOND, 3),
    pnl: round(pnl),
    roi: round(pnl / cost),
  };
}

/**
 * A market's snapshots as views made once (each decodes its books at most once, when first asked), and
 * their history for lookbacks: what every replay of the market shares, so that a sweep's combinations
 * and a run's benchmarks decode the market's data once (src/backtest/sweep.ts).
 */
export interface PreparedMarket {
  market: ReplayMarket;
  views: readonly SnapshotView[];
}

export function prepareMarket(market: ReplayMarket, snapshots: readonly SnapshotRow[]): PreparedMarket {
  const history = new MarketHistory(snapshots);
  return { market, views: snapshots.map((s, i) => new SnapshotView(market, s, history, i)) };
}

/**
 * Replays one resolved market: its snapshots oldest first, and what traded of its outcome tokens
 * (`prints`, oldest first), which resting limit orders fill from.
 */
export function replayMarket(
  d: StrategyDefinition,
  market: ReplayMarket,
  snapshots: readonly SnapshotRow[],
  prints: readonly Print[],
): MarketResult {
  return replayPrepared(d, prepareMarket(market, snapshots), prints);
}

/** replayMarket over a market prepared once (neither the views nor the prints are changed by a replay). */
export function replayPrepared(
  d: StrategyDefinition,
  prepared: PreparedMarket,
  prints: readonly Print[],
): MarketResult {
  const { market, views } = prepared;
  if (market.winner === null) throw new Error(`${market.slug} is not resolved; only resolved markets replay`);
  const replay = new MarketReplay(d, market, prints);
  let prev: SnapshotView | null = null;
  for (let i = 0; i < views.length; i++) {
    replay.step(i, views[i], prev);
    prev = views[i];
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
    snapshots: views.length,
    trades,
    orders_unfilled: replay.ordersUnfilled,
    pnl: round(pnl),
    cost: round(cost),
    roi: cost > 0 ? round(pnl / cost) : null,
    fees_usdc: round(sum(trades, (t) => t.entry.fee_usdc + (t.exit?.fee_usdc ?? 0))),
    rebates_usdc: round(sum(trades, (t) => t.entry.rebate_usdc)),
    time_in_market_s: round(
      sum(trades, (t) => t.held_s),
      3,
    ),
  };
}
