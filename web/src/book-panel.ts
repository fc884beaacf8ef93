import type { Api, Level, MarketTrade, OrderBook, SnapshotAt } from "./api.ts";
import { snippetBox } from "./code-snippet.ts";
import { DepthChart } from "./depth-chart.ts";
import { el, field, replace, scroller, select, table } from "./dom.ts";
import { errorBox } from "./errors.ts";
import { coinPrice, isoOf, MISSING, price, shares, utc } from "./format.ts";

/**
 * The order books at a moment chosen with a slider (DESIGN 3.9): `snapshots/at` with the books, shown
 * as a depth chart of one outcome's book and a table per outcome, beside the market's trade tape up to
 * that moment (`/v1/markets/{slug}/trades`).
 */

const LEVELS_SHOWN = 10;
const TAPE_SHOWN = 20;

/** One outcome's book as one table: bids and asks side by side, best first, a row per depth. */
function bookTable(outcome: string, book: OrderBook | undefined): HTMLElement {
  const bids = (book?.bids ?? []).slice(0, LEVELS_SHOWN);
  const asks = (book?.asks ?? []).slice(0, LEVELS_SHOWN);
  if (bids.length === 0 && asks.length === 0)
    return el(
      "div",
      { class: "book", "data-outcome": outcome },
      el("p", { class: "note" }, `No ${outcome} book was recorded at this second.`),
    );
  const rows = [];
  for (let i = 0; i < Math.max(bids.length, asks.length); i++) {
    const bid: Level | undefined = bids[i];
    const ask: Level | undefined = asks[i];
    rows.push(
      [shares(bid?.size), price(bid?.price), price(ask?.price), shares(ask?.size)].map((v) =>
        v === MISSING ? "" : v,
      ),
    );
  }
  return el(
    "div",
    { class: "book", "data-outcome": outcome },
    scroller(
      table(`${outcome} book, best first`, ["Bid size", "Bid", "Ask", "Ask size"], rows, {
        id: `book-${outcome.toLowerCase()}`,
      }),
      `${outcome} book`,
    ),
  );
}

/**
 * Why the two books mirror each other, said once: an order to buy Up at p is, seen from Down, an
 * order to sell Down at 1 - p (Polymarket matches both tokens as one book). The two tables show
 * each outcome's own quotes; this says how to read one in the other's terms.
 */
function mirrorNote(up: OrderBook | undefined): HTMLElement {
  const bid = up?.bids[0];
  const ask = up?.asks[0];
  const example =
    bid && ask
      ? ` Here: Up's best bid ${price(bid.price)} is a Down ask at ${price(1 - bid.price)}, and Up's best ask ${price(ask.price)} a Down bid at ${price(1 - ask.price)}.`
      : "";
  return el(
    "p",
    { class: "note", id: "book-mirror" },
    "The books mirror each other: a bid for Up at p is an ask for Down at 1 - p of the same size, and an ask for Up a bid for Down. Each table shows its outcome's own quotes; the mirrored quotes are not listed again." +
      example,
  );
}

/** The market's latest trades at or before the moment, newest first (the Polymarket trade tape). */
function tape(trades: MarketTrade[]): HTMLElement {
  if (trades.length === 0) return el("p", { class: "note", id: "trade-tape" }, "No trade up to this moment.");
  return scroller(
    table(
      "Trades up to this moment, newest first",
      ["Time (UTC)", "Outcome", "Taker", "Price", "Size (shares)"],
      trades.map((t) => [
        utc(t.time, true).replace(/^\S+ /, "").replace(" UTC", ""),
        t.outcome,
        t.side.toLowerCase(),
        price(t.price),
        shares(t.size),
      ]),
      { id: "trade-tape" },
    ),
    "Trade tape",
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
      const time = isoOf(seconds);
      const [at, trades] = await Promise.all([
        this.api.snapshotAt(this.slug, { time, include_orderbook: true }),
        this.api.tradesPage(this.slug, { end_time: time, order: "desc", limit: TAPE_SHOWN }),
      ]);
      if (request !== this.requested) return;
      this.last = at;
      this.depth.show(this.book());
      const s = at.snapshot;
      replace(
        this.levels,
        el(
          "p",
          { id: "book-snapshot" },
          `Snapshot of ${utc(s.time, true)}: Up ${price(s.price_up)}, Down ${price(s.price_down)}, coin ${coinPrice(s.coin_price)}.`,
        ),
        el(
          "div",
          { class: "books" },
          el(
            "div",
            { class: "book-pair" },
            bookTable("Up", s.orderbook_up),
            bookTable("Down", s.orderbook_down),
          ),
          el("div", { class: "tape" }, el("h4", {}, "Trade tape"), tape(trades.trades)),
        ),
        mirrorNote(s.orderbook_up),
        snippetBox("book-snippet", "these books", {
          path: `/v1/markets/${encodeURIComponent(this.slug)}/snapshots/at?time=${time}&include_orderbook=true`,
          python: `snapshot_at(${JSON.stringify(this.slug)}, ${JSON.stringify(time)}, include_orderbook=True)`,
        }),
      );
    } catch (err) {
      if (request === this.requested) replace(this.levels, errorBox(err));
    }
  }

  remove(): void {
    this.depth.remove();
  }
}
