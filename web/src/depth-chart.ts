import {
  AreaSeries,
  createOptionsChart,
  type IChartApiBase,
  type ISeriesApi,
  LineType,
} from "lightweight-charts";
import type { OrderBook } from "./api.ts";
import { BASE_OPTIONS, COLORS } from "./chart-theme.ts";

/**
 * A depth chart of one book: cumulative shares from the best price outwards, bids and asks, against
 * price (lightweight-charts' price-scaled horizontal axis).
 */

type DepthPoint = { time: number; value: number };

/** Cumulative size from the best level outwards, in ascending price order (the axis' order). */
export function cumulative(levels: { price: number; size: number }[], side: "bids" | "asks"): DepthPoint[] {
  const bestFirst = [...levels].sort((a, b) => (side === "bids" ? b.price - a.price : a.price - b.price));
  let total = 0;
  const points = bestFirst.map((l) => ({ time: l.price, value: (total += l.size) }));
  return side === "bids" ? points.reverse() : points;
}

export class DepthChart {
  private readonly chart: IChartApiBase<number>;
  private readonly bids: ISeriesApi<"Area", number>;
  private readonly asks: ISeriesApi<"Area", number>;

  constructor(container: HTMLElement) {
    this.chart = createOptionsChart(container, {
      autoSize: true,
      layout: BASE_OPTIONS.layout,
      grid: BASE_OPTIONS.grid,
      localization: { precision: 2 },
    });
    const area = {
      lastValueVisible: false,
      priceLineVisible: false,
      lineType: LineType.WithSteps,
      lineWidth: 2,
    } as const;
    this.bids = this.chart.addSeries(AreaSeries, {
      ...area,
      lineColor: COLORS.bids,
      topColor: "rgba(27, 138, 58, 0.35)",
      bottomColor: "rgba(27, 138, 58, 0.05)",
    });
    this.asks = this.chart.addSeries(AreaSeries, {
      ...area,
      lineColor: COLORS.asks,
      topColor: "rgba(198, 40, 40, 0.35)",
      bottomColor: "rgba(198, 40, 40, 0.05)",
    });
  }

  show(book: OrderBook | undefined): void {
    this.bids.setData(cumulative(book?.bids ?? [], "bids"));
    this.asks.setData(cumulative(book?.asks ?? [], "asks"));
    this.chart.timeScale().fitContent();
  }

  remove(): void {
    this.chart.remove();
  }
}
