import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { ROOT } from "./paths.ts";

/**
 * The page's browser tests' means: Debian's Chromium through playwright-core, and pixels read from
 * the charts' canvases (lightweight-charts draws on canvases; what is drawn is told by colour).
 */

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Skipped only where no browser was asked for; with CHROMIUM_PATH set (CI), a missing one fails. */
export const NO_BROWSER =
  process.env.CHROMIUM_PATH === undefined && !existsSync(CHROMIUM)
    ? "no Chromium: install Debian's chromium or set CHROMIUM_PATH"
    : false;

/** Screenshots the tests take for people to look at (git-ignored). */
export const TEST_SCREENSHOTS = join(ROOT, "test", "screenshots");

/**
 * Where the workbench test writes its screenshots: the README's folder (docs/screenshots/, committed)
 * when UPDATE_DOC_SCREENSHOTS=1, else test/screenshots/ (a run's ids differ, so the bytes do too, and
 * a plain test run leaves the committed ones alone).
 */
export const DOC_SCREENSHOTS =
  process.env.UPDATE_DOC_SCREENSHOTS === "1" ? join(ROOT, "docs", "screenshots") : TEST_SCREENSHOTS;

/** A CHROMIUM_PATH that is set but broken fails here, as it must in CI. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
}

/*
 * The browser's globals that the functions run in the page use. The tests are type-checked with
 * Node's types, not the DOM's; the functions are sent to the page as source and run there.
 */
interface CanvasLike {
  width: number;
  height: number;
  getContext(
    kind: "2d",
  ): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null;
}
declare function requestAnimationFrame(callback: () => void): number;

/** The colours of the charts' lines (web/src/chart-theme.ts), as RGB. */
export const RGB = {
  up: [0x1b, 0x8a, 0x3a],
  down: [0xc6, 0x28, 0x28],
  coin: [0x1e, 0x5b, 0xd8],
  equity: [0x6a, 0x1b, 0x9a],
  /** The gap's shading, rgba(255, 152, 0, 0.28), over the white background. */
  gap: [255, 226, 184],
  entry: [0x00, 0xac, 0xc1],
  priceToBeat: [0x5d, 0x40, 0x37],
} as const;

/** Opaque pixels within a few levels of `rgb` on the canvases under `selector`. */
export function pixelsOf(page: Page, selector: string, rgb: readonly number[]): Promise<number> {
  return page.$$eval(
    `${selector} canvas`,
    (canvases, [r, g, b]) => {
      let n = 0;
      for (const canvas of canvases as unknown as CanvasLike[]) {
        const context = canvas.getContext("2d");
        if (!context || canvas.width === 0 || canvas.height === 0) continue;
        const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
        for (let i = 0; i < data.length; i += 4) {
          const close = Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) < 30;
          if (close && data[i + 3] > 200) n++;
        }
      }
      return n;
    },
    rgb,
  );
}

/**
 * Per row of the chart's plot (its largest canvases, the layers of one pane, taken together), how
 * many pixels are drawn in `rgb`, and the plot's width: a horizontal line shows as a row near it.
 */
export function plotRows(
  page: Page,
  selector: string,
  rgb: readonly number[],
): Promise<{ width: number; rows: number[] }> {
  return page.$$eval(
    `${selector} canvas`,
    (canvases, [r, g, b]) => {
      const list = canvases as unknown as CanvasLike[];
      const area = Math.max(...list.map((c) => c.width * c.height));
      const layers = list.filter((c) => c.width * c.height === area);
      const width = layers[0]?.width ?? 0;
      const rows: number[] = new Array<number>(layers[0]?.height ?? 0).fill(0);
      for (const layer of layers) {
        const data = layer.getContext("2d")?.getImageData(0, 0, layer.width, layer.height).data;
        if (!data) continue;
        for (let i = 0; i < data.length; i += 4) {
          const close = Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) < 30;
          if (close && data[i + 3] > 200) rows[Math.floor(i / 4 / layer.width)]++;
        }
      }
      return { width, rows };
    },
    rgb,
  );
}

/** The next animation frame of the page: charts paint on it. */
export function nextFrame(page: Page): Promise<unknown> {
  return page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve(null))));
}

/** Waits until the chart under `selector` has drawn at least `least` pixels of `rgb`. */
export async function drawn(
  page: Page,
  selector: string,
  rgb: readonly number[],
  least = 40,
): Promise<number> {
  for (;;) {
    const n = await pixelsOf(page, selector, rgb);
    if (n >= least) return n;
    // The chart paints on the next animation frame: wait for frames, not for time.
    await nextFrame(page);
  }
}
