import type { DeepPartial, TimeChartOptions } from "lightweight-charts";

/**
 * Colours of the charts. Each line has a colour nothing else on its chart uses (no last-value labels,
 * no price lines), so that what is drawn can be told apart, by people and by the end-to-end test.
 */
export const COLORS = {
  up: "#1b8a3a",
  down: "#c62828",
  coin: "#1e5bd8",
  gap: "rgba(255, 152, 0, 0.28)",
  equity: "#6a1b9a",
  bids: "#1b8a3a",
  asks: "#c62828",
  cursor: "#ff6f00",
  entry: "#00acc1",
  exit: "#d81b60",
  priceToBeat: "#5d4037",
};

/** Options shared by every chart: UTC times to the second, no attribution logo (the footer names it). */
export const BASE_OPTIONS: DeepPartial<TimeChartOptions> = {
  autoSize: true,
  layout: { attributionLogo: false, background: { color: "#ffffff" }, textColor: "#333333", fontSize: 11 },
  grid: { vertLines: { color: "#f0f0f0" }, horzLines: { color: "#f0f0f0" } },
  // Marks of one weight (every minute, every 10 s, ...) are all drawn or none: labels at regular steps.
  timeScale: { timeVisible: true, secondsVisible: true, uniformDistribution: true },
};

/** Plain lines: no last-value label and no price line in the line's colour. */
export const LINE = { lastValueVisible: false, priceLineVisible: false, lineWidth: 2 } as const;
