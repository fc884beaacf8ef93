import { bps, coinPrice, percent, price, seconds, shares, usdcText } from "../../client/src/format.ts";
import type * as Api from "../../client/src/index.ts";
import { runBacktestTool } from "./backtest-tool.ts";
import { marketEventsTool } from "./events-tool.ts";
import {
  bookAtInput,
  bookAtOutput,
  type BookAtOutput,
  listMarketsInput,
  listMarketsOutput,
  MAX_GAPS,
  MAX_TAKEN_LEVELS,
  marketChartInput,
  marketChartOutput,
  type MarketRow,
  marketSummaryOutput,
  type PricePoint,
  priceOrderInput,
  priceOrderOutput,
  seriesOutput,
  slugField,
} from "./schemas.ts";
import { defineTool, type Tool } from "./tool.ts";

/**
 * The tools, each a compact view of one or a few API reads. Every description ends with what a call
 * costs: over `/mcp` one request for the call itself plus the reads listed (each counted exactly as
 * the same read over HTTP); over stdio (`updown mcp`) the reads only.
 */

const cost = (reads: string) => ` Cost: ${reads}, plus 1 request for the /mcp call over HTTP.`;

export function marketRowOf(m: Api.Market): MarketRow {
  return {
    slug: m.slug,
    coin: m.coin,
    market_type: m.market_type,
    start_time: m.start_time,
    end_time: m.end_time,
    resolved: m.winner !== null,
    winner: m.winner,
    coin_price_start: m.coin_price_start,
    coin_price_end: m.coin_price_end,
    final_volume: m.final_volume,
  };
}

function pointOf(s: Api.Snapshot): PricePoint {
  return { time: s.time, coin_price: s.coin_price, price_up: s.price_up, price_down: s.price_down };
}

const listSeries = defineTool({
  name: "list_series",
  title: "Recorded series",
  description:
    "Every recorded series (a coin and a market type: 5m, 15m, 1h, 4h, 24h) with its number of markets " +
    "and snapshots, its first and latest market, and how completely it was recorded." +
    cost("1 read (GET /v1/series)"),
  readOnly: true,
  input: {},
  output: seriesOutput,
  async run(client, _args, signal) {
    const catalog = await client.seriesCatalog({ signal });
    const series = catalog.series.map((s) => ({
      coin: s.coin,
      market_type: s.market_type,
      markets: s.markets,
      snapshots: s.snapshots,
      first_market_start: s.first_market.start_time,
      last_market: s.last_market.slug,
      coverage_24h: s.coverage_24h.coverage,
      coverage_overall: s.coverage_overall.coverage,
    }));
    const names = series.map((s) => `${s.coin} ${s.market_type} (${s.markets})`).join(", ");
    return {
      structured: { as_of: catalog.as_of, series },
      text: `${series.length} series as of ${catalog.as_of}: ${names || "none"}.`,
    };
  },
});

const listMarkets = defineTool({
  name: "list_markets",
  title: "List markets",
  description:
    "Markets newest first, filtered by coin, market type, resolved, and start time range; at most 50 " +
    "rows a call (default 20), with offset for the next page. Each row: slug, times, winner, start and " +
    "end coin price, volume. A key's plan may leave older BTC markets out (warning says so)." +
    cost("1 read (GET /v1/markets)"),
  readOnly: true,
  input: listMarketsInput,
  output: listMarketsOutput,
  async run(client, args, signal) {
    const page = await client.marketsPage({ ...args, limit: args.limit ?? 20 }, { signal });
    const markets = page.markets.map(marketRowOf);
    const lines = markets.map((m) => `${m.slug} ${m.winner ?? "live"}`);
    const head = `${markets.length} of ${page.total} markets from offset ${page.offset}`;
    return {
      structured: { total: page.total, offset: page.offset, markets, warning: page.warning },
      text: `${head}${lines.length > 0 ? `: ${lines.join(", ")}` : ""}.${page.warning ? ` ${page.warning}` : ""}`,
    };
  },
});

function summaryText(
  m: Api.Market,
  c: Api.Coverage,
  first: PricePoint | null,
  last: PricePoint | null,
): string {
  const outcome = m.winner === null ? "not resolved yet" : `resolved ${m.winner}`;
  const prices =
    first && last
      ? ` Up ${price(first.price_up)} -> ${price(last.price_up)}, coin ${coinPrice(first.coin_price)} -> ${coinPrice(last.coin_price)}.`
      : " No snapshots.";
  const covered = percent(c.coverage);
  return (
    `${m.slug} (${m.coin} ${m.market_type}, ${m.start_time} to ${m.end_time}): ${outcome}.` +
    `${prices} Coverage ${covered}, ${c.gaps.length} gaps, largest ${seconds(c.largest_gap_seconds)}.`
  );
}

const marketSummary = defineTool({
  name: "market_summary",
  title: "Market summary",
  description:
    "One market: its record (times, winner, start and end coin price, settlement feed, fees), how " +
    "completely it was recorded (coverage and the first gaps with their causes), and its first and last " +
    "recorded prices." +
    cost("3 reads (GET /v1/markets/{slug}/snapshots twice with limit=1, and /coverage)"),
  readOnly: true,
  input: { slug: slugField },
  output: marketSummaryOutput,
  async run(client, { slug }, signal) {
    const firstPage = await client.snapshotsPage(slug, { limit: 1, order: "asc" }, { signal });
    const lastPage = await client.snapshotsPage(slug, { limit: 1, order: "desc" }, { signal });
    const coverage = await client.coverage(slug, { signal });
    const m = firstPage.market;
    const first = firstPage.snapshots[0] ? pointOf(firstPage.snapshots[0]) : null;
    const last = lastPage.snapshots[0] ? pointOf(lastPage.snapshots[0]) : null;
    const structured = {
      market: {
        ...marketRowOf(m),
        resolved_at: m.resolved_at,
        final_liquidity: m.final_liquidity,
        settlement: m.settlement,
        fee_schedule: m.fee_schedule,
      },
      coverage: {
        expected_snapshots: coverage.expected_snapshots,
        recorded_snapshots: coverage.recorded_snapshots,
        coverage: coverage.coverage,
        largest_gap_seconds: coverage.largest_gap_seconds,
        gap_count: coverage.gaps.length,
        gaps: coverage.gaps
          .slice(0, MAX_GAPS)
          .map((g) => ({ from: g.from, to: g.to, seconds: g.seconds, cause: g.cause })),
      },
      first_snapshot: first,
      last_snapshot: last,
    };
    return { structured, text: summaryText(m, coverage, first, last) };
  },
});

function range(points: PricePoint[], pick: (p: PricePoint) => number, write: (n: number) => string): string {
  if (points.length === 0) return "none";
  const values = points.map(pick);
  return `${write(values[0])} -> ${write(values[values.length - 1])} (low ${write(Math.min(...values))}, high ${write(Math.max(...values))})`;
}

const marketChart = defineTool({
  name: "market_chart",
  title: "Market chart",
  description:
    "A market's Up, Down and coin prices over its life (or a time range), downsampled to at most " +
    "`points` snapshots (default 100, at most 500), oldest first; each bucket keeps its first, last, " +
    "lowest and highest values, so spikes survive." +
    cost("1 read (GET /v1/markets/{slug}/series)"),
  readOnly: true,
  input: marketChartInput,
  output: marketChartOutput,
  async run(client, { slug, points, start_time, end_time }, signal) {
    const query = { points: points ?? 100, start_time, end_time };
    const series = await client.marketSeries(slug, query, { signal });
    const chart = series.snapshots.map(pointOf);
    return {
      structured: { slug: series.slug, total: series.total, bucket_us: series.bucket_us, points: chart },
      text:
        `${series.slug}: ${chart.length} points of ${series.total} snapshots. ` +
        `Up ${range(chart, (p) => p.price_up, price)}; coin ${range(chart, (p) => p.coin_price, coinPrice)}.`,
    };
  },
});

function sideOf(book: Api.OrderBook | undefined, levels: number): BookAtOutput["up"] {
  if (!book) return null;
  return {
    bids: book.bids.slice(0, levels),
    asks: book.asks.slice(0, levels),
    bid_levels: book.bids.length,
    ask_levels: book.asks.length,
  };
}

function bestText(name: string, side: BookAtOutput["up"]): string {
  if (!side) return `${name}: no book recorded`;
  const bid = side.bids[0] ? `${shares(side.bids[0].size)} @ ${price(side.bids[0].price)}` : "none";
  const ask = side.asks[0] ? `${shares(side.asks[0].size)} @ ${price(side.asks[0].price)}` : "none";
  return `${name} best bid ${bid}, best ask ${ask}`;
}

const bookAt = defineTool({
  name: "book_at",
  title: "Order books at a time",
  description:
    "Both outcome tokens' order books (Up and Down) as recorded at a moment: the latest snapshot at or " +
    "before `time`, the top `levels` levels of each side (default 10, at most 50), best first, with the " +
    "prices and the coin price of that second." +
    cost("1 read (GET /v1/markets/{slug}/snapshots/at with include_orderbook)"),
  readOnly: true,
  input: bookAtInput,
  output: bookAtOutput,
  async run(client, { slug, time, levels }, signal) {
    const at = await client.snapshotAt(slug, { time, include_orderbook: true }, { signal });
    const s = at.snapshot;
    const n = levels ?? 10;
    const up = sideOf(s.orderbook_up, n);
    const down = sideOf(s.orderbook_down, n);
    return {
      structured: {
        slug: at.slug,
        requested_time: at.requested_time,
        snapshot_time: s.time,
        distance_us: at.distance_us,
        coin_price: s.coin_price,
        price_up: s.price_up,
        price_down: s.price_down,
        up,
        down,
      },
      text: `${at.slug} at ${s.time}: Up ${price(s.price_up)}, Down ${price(s.price_down)}; ${bestText("Up", up)}; ${bestText("Down", down)}.`,
    };
  },
});

const priceOrder = defineTool({
  name: "price_order",
  title: "Price a market order",
  description:
    "What a market order would have paid (buy) or got (sell) at a moment: `size` shares of the Up or " +
    "Down token against the book recorded then, level by level, with Polymarket's fee: average and " +
    "best price, slippage against the mid in bps, filled and unfilled shares, the levels taken." +
    cost("1 read (GET /v1/markets/{slug}/execution-price)"),
  readOnly: true,
  input: priceOrderInput,
  output: priceOrderOutput,
  async run(client, { slug, ...query }, signal) {
    const q = await client.executionPrice(slug, query, { signal });
    const structured = {
      slug: q.slug,
      outcome: q.outcome,
      side: q.side,
      size: q.size,
      time: q.time,
      snapshot_time: q.snapshot_time,
      mid: q.mid,
      best_price: q.best_price,
      average_price: q.average_price,
      slippage_bps: q.slippage_bps,
      filled: q.filled,
      unfilled: q.unfilled,
      notional: q.notional,
      fee_usdc: q.fee_usdc,
      fee_shares: q.fee_shares,
      levels: q.levels.slice(0, MAX_TAKEN_LEVELS),
      levels_taken: q.levels.length,
    };
    const average = q.average_price === null ? "nothing filled" : `average ${price(q.average_price)}`;
    return {
      structured,
      text:
        `${q.side} ${shares(q.size)} ${q.outcome} on ${q.slug} at ${q.snapshot_time}: ${average}, ` +
        `filled ${shares(q.filled)}, unfilled ${shares(q.unfilled)}, slippage ${bps(q.slippage_bps)}, fee ${usdcText(q.fee_usdc)}.`,
    };
  },
});

/** Every tool, in the order tools/list gives them. */
export const TOOLS: readonly Tool[] = [
  listSeries,
  listMarkets,
  marketSummary,
  marketChart,
  bookAt,
  priceOrder,
  marketEventsTool,
  runBacktestTool,
];
