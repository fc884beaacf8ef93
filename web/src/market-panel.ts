import type { Api, BacktestRunAnswer, Coverage, Market, MarketSeries } from "./api.ts";
import { BookPanel } from "./book-panel.ts";
import { COLORS } from "./chart-theme.ts";
import { el, replace } from "./dom.ts";
import { errorBox } from "./errors.ts";
import { coinPrice, count, epochSeconds, MISSING, percent, seconds, usdc, utc } from "./format.ts";
import { PriceChart } from "./price-chart.ts";

/** One market: its chart, its books at a chosen moment, its record. */

const CHART_POINTS = 1000;

function record(m: Market): HTMLElement {
  const rows: [string, string][] = [
    ["Slug", m.slug],
    ["Polymarket slug", m.polymarket_slug ?? MISSING],
    ["Coin, type", `${m.coin.toUpperCase()} ${m.market_type}`],
    ["Starts", utc(m.start_time)],
    ["Ends", utc(m.end_time)],
    ["Winner", m.winner ?? "not resolved"],
    ["Resolved at", utc(m.resolved_at)],
    [
      "Price to beat (coin at start), coin at end",
      `${coinPrice(m.coin_price_start)}, ${coinPrice(m.coin_price_end)}`,
    ],
    [
      "Settles on",
      `${m.settlement.source}${m.settlement.lookback_s ? ` (${m.settlement.lookback_s} s TWAP)` : ""}`,
    ],
    ["Fees", m.fee_schedule ? `rate ${m.fee_schedule.rate}, exponent ${m.fee_schedule.exponent}` : "none"],
    ["Final volume, liquidity (USDC)", `${usdc(m.final_volume)}, ${usdc(m.final_liquidity)}`],
    ["Market id, event id", `${m.market_id}, ${m.event_id}`],
    ["Condition id", m.condition_id],
    ["Updated", utc(m.updated_at, true)],
  ];
  return el(
    "dl",
    { class: "facts record", id: "market-record" },
    rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]),
  );
}

function gapList(coverage: Coverage): HTMLElement {
  const summary = `Recorded ${count(coverage.recorded_snapshots)} of ${count(coverage.expected_snapshots)} expected snapshots (${percent(coverage.coverage)}); ${count(coverage.gaps.length)} gap(s), the largest ${seconds(coverage.largest_gap_seconds)}.`;
  return el(
    "div",
    { id: "market-gaps" },
    el("p", {}, summary),
    coverage.gaps.length > 0
      ? el(
          "ul",
          { class: "gaps" },
          coverage.gaps
            .slice(0, 20)
            .map((g) =>
              el("li", {}, `${utc(g.from, true)} → ${utc(g.to, true)}: ${seconds(g.seconds)}, ${g.cause}`),
            ),
        )
      : null,
  );
}

function legend(): HTMLElement {
  const item = (color: string, text: string) => {
    const swatch = el("span", { class: "swatch", "aria-hidden": "true" });
    swatch.style.background = color; // CSSOM, which the page's CSP allows (a style attribute it would not)
    return el("li", {}, swatch, text);
  };
  return el(
    "ul",
    { class: "legend", "aria-label": "Chart legend" },
    item(COLORS.up, "Up price (right scale)"),
    item(COLORS.down, "Down price (right scale)"),
    item(COLORS.coin, "Coin price (left scale)"),
    item(COLORS.priceToBeat, "Price to beat (the coin's start price, left scale)"),
    item(COLORS.gap, "Recording gap"),
    item(COLORS.cursor, "Moment of the books below"),
    item(COLORS.entry, "Backtest entry"),
    item(COLORS.exit, "Backtest exit"),
  );
}

export class MarketPanel {
  private chart: PriceChart | null = null;
  private book: BookPanel | null = null;
  private slug: string | null = null;
  private readonly body = el("div", { id: "market-body" });

  private readonly root: HTMLElement;
  private readonly title: HTMLElement;

  constructor(root: HTMLElement, title: HTMLElement) {
    this.root = root;
    this.title = title;
    root.append(this.body);
  }

  private dispose(): void {
    this.chart?.remove();
    this.book?.remove();
    this.chart = null;
    this.book = null;
  }

  async open(api: Api, slug: string): Promise<void> {
    this.dispose();
    this.slug = slug;
    this.root.hidden = false;
    this.title.textContent = `Market ${slug}`;
    replace(this.body, el("p", { class: "busy" }, "Loading the market…"));
    this.root.scrollIntoView({ block: "start" });
    try {
      const [market, series, coverage] = await Promise.all([
        api.market(slug),
        api.marketSeries(slug, { points: CHART_POINTS }),
        api.coverage(slug),
      ]);
      if (this.slug === slug) this.render(api, market, series, coverage);
    } catch (err) {
      if (this.slug === slug) replace(this.body, errorBox(err));
    }
  }

  private render(api: Api, market: Market, series: MarketSeries, coverage: Coverage): void {
    const chartBox = el("div", {
      class: "chart prices",
      id: "price-chart",
      role: "img",
      "aria-label": `Up, Down and coin price of ${market.slug}, with the price to beat ${coinPrice(market.coin_price_start)}`,
      "data-price-to-beat": market.coin_price_start,
    });
    replace(this.body, el("div", { class: "chart-frame" }, chartBox, legend()), gapList(coverage));
    this.chart = new PriceChart(chartBox);
    this.chart.setPriceToBeat(market.coin_price_start);
    this.chart.setData(series, coverage);
    const times = series.snapshots.map((s) => epochSeconds(s.time));
    if (times.length > 0) {
      const chart = this.chart;
      this.book = new BookPanel(
        api,
        market.slug,
        Math.ceil(times[0]),
        Math.floor(times[times.length - 1]),
        (t) => chart.setCursor(t),
      );
      this.body.append(this.book.root);
      void this.book.load();
    } else {
      this.body.append(el("p", { class: "note" }, "No snapshot is recorded for this market yet."));
    }
    this.body.append(el("h3", {}, "Record"), record(market));
  }

  /** Marks a backtest's trades in this market, if it traded here. */
  showTrades(answer: BacktestRunAnswer | null): void {
    if (!answer || !this.chart || !this.slug) return;
    const result = answer.results.find((r) => r.slug === this.slug);
    this.chart.setTrades(answer.run.definition.side, result?.trades ?? []);
  }

  get openSlug(): string | null {
    return this.slug;
  }
}
