import type { Api, Level, OrderBook, SnapshotAt } from "./api.ts";
import { DepthChart } from "./depth-chart.ts";
import { el, field, replace, scroller, select, table } from "./dom.ts";
import { errorBox } from "./errors.ts";
import { isoOf, num, utc } from "./format.ts";

/**
 * The order books at a moment chosen with a slider (DESIGN 3.9): `snapshots/at` with the books, shown
 * as a depth chart of one outcome's book and the level tables of both.
 */

const LEVELS_SHOWN = 10;

function levelRows(levels: Level[]) {
  let total = 0;
  return levels
    .slice(0, LEVELS_SHOWN)
    .map((l) => [num(l.price, 2), num(l.size, 2), num((total += l.size), 2)]);
}

function bookTables(outcome: string, book: OrderBook | undefined): HTMLElement {
  const empty = !book || (book.bids.length === 0 && book.asks.length === 0);
  return el(
    "div",
    { class: "book", "data-outcome": outcome },
    el("h4", {}, `${outcome} book`),
    empty
      ? el("p", { class: "note" }, "No book was recorded at this second.")
      : el(
          "div",
          { class: "book-sides" },
          scroller(
            table(`${outcome} bids (best first)`, ["Bid", "Size", "Total"], levelRows(book.bids)),
            `${outcome} bids`,
          ),
          scroller(
            table(`${outcome} asks (best first)`, ["Ask", "Size", "Total"], levelRows(book.asks)),
            `${outcome} asks`,
          ),
        ),
  );
}

export class BookPanel {
  readonly root: HTMLElement;
  private readonly slider: HTMLInputElement;
  private readonly moment = el("output", { id: "book-moment", for: "book-time" });
  private readonly outcome = select("depth-outcome", [
    ["up", "Up"],
    ["down", "Down"],
  ]);
  private readonly depthBox = el("div", {
    class: "chart depth",
    id: "depth-chart",
    role: "img",
    "aria-label": "Depth chart",
  });
  private readonly levels = el("div", { id: "book-levels", "aria-live": "polite" });
  private readonly depth: DepthChart;
  private last: SnapshotAt | null = null;
  private requested = 0;

  private readonly api: Api;
  private readonly slug: string;
  private readonly onMoment: (seconds: number) => void;

  constructor(
    api: Api,
    slug: string,
    startSeconds: number,
    endSeconds: number,
    onMoment: (seconds: number) => void,
  ) {
    this.api = api;
    this.slug = slug;
    this.onMoment = onMoment;
    this.slider = el("input", {
      id: "book-time",
      type: "range",
      min: startSeconds,
      max: endSeconds,
      step: 1,
      value: startSeconds,
    });
    this.slider.addEventListener("input", () => this.showMoment());
    this.slider.addEventListener("change", () => void this.load());
    this.outcome.addEventListener("change", () => this.depth.show(this.book()));
    this.root = el(
      "div",
      { class: "book-panel" },
      el("h3", {}, "Order books"),
      el(
        "div",
        { class: "row" },
        field("Moment", this.slider),
        this.moment,
        field("Depth chart of", this.outcome),
      ),
      this.depthBox,
      this.levels,
    );
    this.depth = new DepthChart(this.depthBox);
    this.showMoment();
  }

  private seconds(): number {
    return Number(this.slider.value);
  }

  private showMoment(): void {
    this.moment.textContent = utc(isoOf(this.seconds()));
  }

  private book(): OrderBook | undefined {
    const s = this.last?.snapshot;
    return this.outcome.value === "down" ? s?.orderbook_down : s?.orderbook_up;
  }

  /** Loads the books at the slider's moment; an answer to an older move is dropped. */
  async load(): Promise<void> {
    const seconds = this.seconds();
    const request = ++this.requested;
    this.onMoment(seconds);
    try {
      const at = await this.api.snapshotAt(this.slug, { time: isoOf(seconds), include_orderbook: true });
      if (request !== this.requested) return;
      this.last = at;
      this.depth.show(this.book());
      const s = at.snapshot;
      replace(
        this.levels,
        el(
          "p",
          { id: "book-snapshot" },
          `Snapshot of ${utc(s.time, true)}: Up ${num(s.price_up)}, Down ${num(s.price_down)}, coin ${num(s.coin_price)}.`,
        ),
        el("div", { class: "books" }, bookTables("Up", s.orderbook_up), bookTables("Down", s.orderbook_down)),
      );
    } catch (err) {
      if (request === this.requested) replace(this.levels, errorBox(err));
    }
  }

  remove(): void {
    this.depth.remove();
  }
}
