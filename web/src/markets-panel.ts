import type { Api, Market, MarketPage, MarketsQuery } from "./api.ts";
import { el, field, replace, scroller, select, table } from "./dom.ts";
import { errorBox } from "./errors.ts";
import { coinPrice, count, isoFromLocalInput, utc } from "./format.ts";

/** Markets with filters (coin, type, resolved, start time range), a page at a time. */

const PAGE_SIZE = 20;

export interface MarketsPanelOptions {
  api: () => Api | null;
  onOpen: (slug: string) => void;
}

export class MarketsPanel {
  private readonly coin = select("filter-coin", [["", "any coin"]]);
  private readonly type = select("filter-type", [["", "any type"]]);
  private readonly resolved = select("filter-resolved", [
    ["", "resolved or live"],
    ["true", "resolved"],
    ["false", "live"],
  ]);
  private readonly from = el("input", { id: "filter-from", type: "datetime-local", step: 1 });
  private readonly to = el("input", { id: "filter-to", type: "datetime-local", step: 1 });
  private readonly list = el("div", { id: "markets-list", "aria-live": "polite" });
  private offset = 0;

  private readonly options: MarketsPanelOptions;

  constructor(root: HTMLElement, options: MarketsPanelOptions) {
    this.options = options;
    const form = el(
      "form",
      { class: "row", "aria-label": "Market filters" },
      field("Coin", this.coin),
      field("Type", this.type),
      field("Resolved", this.resolved),
      field("Starts from (UTC)", this.from),
      field("Starts until (UTC)", this.to),
      el("button", { type: "submit" }, "Search"),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.load(0);
    });
    root.append(form, this.list);
  }

  /** Fills the coin and type choices from the API document. */
  setChoices(coins: string[], marketTypes: string[]): void {
    for (const c of coins) this.coin.append(el("option", { value: c }, c.toUpperCase()));
    for (const t of marketTypes) this.type.append(el("option", { value: t }, t));
  }

  private query(offset: number): MarketsQuery {
    const query: Record<string, string | number | boolean> = { limit: PAGE_SIZE, offset };
    if (this.coin.value) query.coin = this.coin.value;
    if (this.type.value) query.market_type = this.type.value;
    if (this.resolved.value) query.resolved = this.resolved.value === "true";
    const from = isoFromLocalInput(this.from.value);
    const to = isoFromLocalInput(this.to.value);
    if (from) query.start_time = from;
    if (to) query.end_time = to;
    return query as MarketsQuery;
  }

  async load(offset: number): Promise<void> {
    const api = this.options.api();
    if (!api) {
      replace(this.list, el("p", {}, "Enter a key first."));
      return;
    }
    replace(this.list, el("p", { class: "busy" }, "Loading markets…"));
    try {
      const page = await api.marketsPage(this.query(offset));
      this.offset = offset;
      this.render(page);
    } catch (err) {
      replace(this.list, errorBox(err));
    }
  }

  private render(page: MarketPage): void {
    if (page.markets.length === 0) {
      replace(this.list, el("p", {}, "No market matches these filters."), this.warning(page));
      return;
    }
    const rows = page.markets.map((m) => this.row(m));
    const last = Math.min(page.offset + page.markets.length, page.total);
    const previous = el("button", { type: "button", disabled: this.offset === 0 }, "Previous");
    const next = el("button", { type: "button", disabled: last >= page.total }, "Next");
    previous.addEventListener("click", () => void this.load(Math.max(0, this.offset - PAGE_SIZE)));
    next.addEventListener("click", () => void this.load(this.offset + PAGE_SIZE));
    replace(
      this.list,
      this.warning(page),
      scroller(
        table(
          "Markets, newest first",
          ["Market", "Starts", "Ends", "Winner", "Price to beat", "End price"],
          rows,
          {
            id: "markets-table",
          },
        ),
        "Markets",
      ),
      el(
        "div",
        { class: "pager" },
        previous,
        el(
          "span",
          { id: "markets-range" },
          `${count(page.offset + 1)}–${count(last)} of ${count(page.total)}`,
        ),
        next,
      ),
    );
  }

  private row(m: Market) {
    const open = el("button", { type: "button", class: "link", "data-slug": m.slug }, m.slug);
    open.addEventListener("click", () => this.options.onOpen(m.slug));
    return [
      open,
      utc(m.start_time),
      utc(m.end_time),
      m.winner ?? "live",
      coinPrice(m.coin_price_start),
      coinPrice(m.coin_price_end),
    ];
  }

  private warning(page: MarketPage) {
    return page.warning ? el("p", { class: "note" }, page.warning) : null;
  }
}
