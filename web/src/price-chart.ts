import {
  type AutoscaleInfo,
  createChart,
  createSeriesMarkers,
  HistogramSeries,
  type IChartApi,
  type ISeriesApi,
  type IPriceLine,
  type ISeriesMarkersPluginApi,
  LineSeries,
  LineStyle,
  type LineData,
  type SeriesMarker,
  type Time,
  type UTCTimestamp,
  type WhitespaceData,
} from "lightweight-charts";
import type { BacktestTrade, Coverage, MarketSeries } from "./api.ts";
import { BASE_OPTIONS, COLORS, LINE } from "./chart-theme.ts";
import { epochSeconds, price, shares } from "./format.ts";

/**
 * A market's chart (DESIGN 3.9): Up and Down (right scale, 0..1) and the coin price (left scale) over
 * the market's life, from `series`, with the price to beat as a line on the coin's scale. Recording gaps (from `coverage`) break the lines and are shaded:
 * the time axis spaces points by index, not by time, so the gap is filled with empty points at the
 * series' own spacing to show its length. Backtest trades and the book's moment are markers.
 */

type Point = LineData<Time> | WhitespaceData<Time>;
const MAX_FILL_PER_GAP = 400;

const at = (seconds: number) => seconds as UTCTimestamp;

/** The usual spacing of the series' points (their median), for filling gaps at the same density. */
function typicalStep(times: number[]): number {
  const steps = times
    .slice(1)
    .map((t, i) => t - times[i])
    .sort((a, b) => a - b);
  return steps.length > 0 ? Math.max(steps[Math.floor(steps.length / 2)], 0.001) : 1;
}

/** Times inside each gap, strictly between its ends, at the series' spacing (capped per gap). */
function gapFill(coverage: Coverage | null, step: number): number[] {
  const fill: number[] = [];
  for (const gap of coverage?.gaps ?? []) {
    const from = epochSeconds(gap.from);
    const to = epochSeconds(gap.to);
    const n = Math.min(MAX_FILL_PER_GAP, Math.floor((to - from) / step));
    const spacing = (to - from) / (n + 1);
    for (let i = 1; i <= n; i++) fill.push(from + i * spacing);
  }
  return fill;
}

/** Up and Down are prices of an outcome: their scale is always 0 to 1, whatever the markers add. */
const PRICE = {
  priceScaleId: "right",
  autoscaleInfoProvider: () => ({ priceRange: { minValue: 0, maxValue: 1 } }),
};

export class PriceChart {
  private readonly chart: IChartApi;
  private readonly up: ISeriesApi<"Line">;
  private readonly down: ISeriesApi<"Line">;
  private readonly coin: ISeriesApi<"Line">;
  private readonly gaps: ISeriesApi<"Histogram">;
  private readonly upMarkers: ISeriesMarkersPluginApi<Time>;
  private readonly downMarkers: ISeriesMarkersPluginApi<Time>;
  private trades: { side: "UP" | "DOWN"; trades: BacktestTrade[] } | null = null;
  private priceToBeat: IPriceLine | null = null;
  private priceToBeatValue: number | null = null;
  private cursor: number | null = null;

  constructor(container: HTMLElement) {
    this.chart = createChart(container, {
      ...BASE_OPTIONS,
      leftPriceScale: { visible: true },
      rightPriceScale: { visible: true },
    });
    this.gaps = this.chart.addSeries(HistogramSeries, {
      color: COLORS.gap,
      priceScaleId: "gaps",
      lastValueVisible: false,
      priceLineVisible: false,
    });
    this.chart.priceScale("gaps").applyOptions({ visible: false, scaleMargins: { top: 0, bottom: 0 } });
    this.coin = this.chart.addSeries(LineSeries, {
      ...LINE,
      color: COLORS.coin,
      priceScaleId: "left",
      // The price to beat is kept in view even when the coin never reached it.
      autoscaleInfoProvider: (original: () => AutoscaleInfo | null) => {
        const range = original();
        const line = this.priceToBeatValue;
        if (!range?.priceRange || line === null) return range;
        const { minValue, maxValue } = range.priceRange;
        return {
          ...range,
          priceRange: { minValue: Math.min(minValue, line), maxValue: Math.max(maxValue, line) },
        };
      },
    });
    this.up = this.chart.addSeries(LineSeries, { ...LINE, ...PRICE, color: COLORS.up });
    this.down = this.chart.addSeries(LineSeries, { ...LINE, ...PRICE, color: COLORS.down });
    this.upMarkers = createSeriesMarkers(this.up, []);
    this.downMarkers = createSeriesMarkers(this.down, []);
  }

  setData(series: MarketSeries, coverage: Coverage | null): void {
    const recorded = series.snapshots.map((s) => ({ t: epochSeconds(s.time), s }));
    const fill = gapFill(coverage, typicalStep(recorded.map((r) => r.t)));
    const up: Point[] = [];
    const down: Point[] = [];
    const coin: Point[] = [];
    const all = [...recorded.map((r) => ({ t: r.t, s: r.s })), ...fill.map((t) => ({ t, s: null }))];
    all.sort((a, b) => a.t - b.t);
    for (const { t, s } of all) {
      if (s === null) {
        // The line from the last point before a gap (drawn in that point's colour) is not drawn.
        for (const line of [up, down, coin]) {
          const last = line[line.length - 1];
          if (last && "value" in last) line[line.length - 1] = { ...last, color: "transparent" };
          line.push({ time: at(t) });
        }
        continue;
      }
      up.push({ time: at(t), value: s.price_up });
      down.push({ time: at(t), value: s.price_down });
      coin.push({ time: at(t), value: s.coin_price });
    }
    this.up.setData(up);
    this.down.setData(down);
    this.coin.setData(coin);
    this.gaps.setData(fill.map((t) => ({ time: at(t), value: 1 })));
    this.chart.timeScale().fitContent();
    this.drawMarkers();
  }

  /**
   * The price to beat (the coin's price at the market's start, which the end price is compared with):
   * a horizontal line on the coin's scale, labelled on the axis. Null removes it.
   */
  setPriceToBeat(value: number | null): void {
    if (this.priceToBeat) this.coin.removePriceLine(this.priceToBeat);
    this.priceToBeat = null;
    this.priceToBeatValue = value;
    if (value === null) return;
    this.priceToBeat = this.coin.createPriceLine({
      price: value,
      color: COLORS.priceToBeat,
      lineWidth: 2,
      lineStyle: LineStyle.Solid,
      axisLabelVisible: true,
      title: "to beat",
    });
  }

  /** A backtest's trades in this market, on the line of the side it bought. */
  setTrades(side: "UP" | "DOWN", trades: BacktestTrade[]): void {
    this.trades = { side, trades };
    this.drawMarkers();
  }

  /** The moment the book below is shown for. */
  setCursor(seconds: number | null): void {
    this.cursor = seconds;
    this.drawMarkers();
  }

  private drawMarkers(): void {
    const onUp: SeriesMarker<Time>[] = [];
    const onDown: SeriesMarker<Time>[] = [];
    for (const trade of this.trades?.trades ?? []) {
      const target = this.trades?.side === "DOWN" ? onDown : onUp;
      target.push({
        time: at(epochSeconds(trade.entry.fill_time)),
        position: "belowBar",
        shape: "arrowUp",
        color: COLORS.entry,
        text: `buy ${shares(trade.entry.size)} @ ${price(trade.entry.price)}`,
      });
      // An exit that sold nothing (no bid until the end) has no sale to mark; its shares settled.
      if (trade.exit && trade.exit.fill_time !== null) {
        target.push({
          time: at(epochSeconds(trade.exit.fill_time)),
          position: "aboveBar",
          shape: "arrowDown",
          color: COLORS.exit,
          text: `${trade.exit.reason} @ ${price(trade.exit.price)}`,
        });
      }
    }
    if (this.cursor !== null) {
      onUp.push({
        time: at(this.cursor),
        position: "inBar",
        shape: "circle",
        color: COLORS.cursor,
        text: "book",
      });
    }
    const byTime = (a: SeriesMarker<Time>, b: SeriesMarker<Time>) => Number(a.time) - Number(b.time);
    this.upMarkers.setMarkers(onUp.sort(byTime));
    this.downMarkers.setMarkers(onDown.sort(byTime));
  }

  remove(): void {
    this.chart.remove();
  }
}
