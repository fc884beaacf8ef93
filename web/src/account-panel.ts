import type { Account, Api, BacktestQuota, LimitHeaders } from "./api.ts";
import { el, replace } from "./dom.ts";
import { errorBox } from "./errors.ts";
import { count, limit, MISSING, remainingOf, UNLIMITED, utc, waitText } from "./format.ts";

const UNLIMITED_SENTINEL = 1e14;

/**
 * The account: plan, requests left in the minute and the day, the month's backtest generations.
 * Loaded from /v1/account and /v1/backtest-ai/quota (neither counts), then kept current from the
 * limit headers of every answer the page receives.
 */
export class AccountPanel {
  private readonly body = el(
    "div",
    { id: "account-body" },
    el("p", {}, "Enter a key to see its plan and limits."),
  );
  private readonly minute = el("span", { id: "minute-remaining" }, MISSING);
  private readonly minuteReset = el("span", { id: "minute-reset" });
  private readonly day = el("span", { id: "day-remaining" }, MISSING);
  private readonly plan = el("span", { id: "account-plan" }, MISSING);

  constructor(root: HTMLElement) {
    root.append(this.body);
  }

  clear(): void {
    replace(this.body, el("p", {}, "Enter a key to see its plan and limits."));
  }

  /** Loads the account; `refresh` keeps what is shown until the answer replaces it (no flicker). */
  async load(api: Api, refresh = false): Promise<boolean> {
    if (!refresh) replace(this.body, el("p", { class: "busy" }, "Loading the account…"));
    try {
      const [account, quota] = await Promise.all([api.account(), api.backtestQuota()]);
      this.render(account, quota);
      return true;
    } catch (err) {
      replace(this.body, errorBox(err));
      return false;
    }
  }

  private render(account: Account, quota: BacktestQuota): void {
    const { minute, day } = account.usage;
    this.plan.textContent = account.plan;
    this.minute.textContent = limit(minute.remaining);
    this.day.textContent = limit(day.remaining);
    this.minuteReset.textContent = minute.limit === null ? "" : `, resets ${utc(minute.resets_at)}`;
    const generations = !quota.included
      ? "not included in this plan"
      : quota.limit === null
        ? `${UNLIMITED} (${count(quota.used)} used in ${quota.month})`
        : `${remainingOf(quota.remaining, quota.limit)} left in ${quota.month}, renew ${utc(quota.resets_at)}`;
    replace(
      this.body,
      el(
        "dl",
        { class: "facts" },
        el("dt", {}, "Plan"),
        el("dd", {}, this.plan),
        el("dt", {}, "Requests left this minute"),
        el(
          "dd",
          {},
          this.minute,
          minute.limit === null ? null : ` of ${count(minute.limit)}`,
          this.minuteReset,
        ),
        el("dt", {}, "Requests left today"),
        el(
          "dd",
          {},
          this.day,
          day.limit === null ? null : ` of ${count(day.limit)}, resets ${utc(day.resets_at)}`,
        ),
        el("dt", {}, "Backtest generations"),
        el("dd", { id: "quota" }, generations),
      ),
    );
  }

  /** The limits an answer carried: newer than what /v1/account said. */
  noteLimits(limits: LimitHeaders): void {
    const minute = limits.windows.get("minute");
    // An unlimited window is sent as a huge quota (the draft has no word for none): not a count to show.
    if (minute && minute.remaining < UNLIMITED_SENTINEL) {
      this.minute.textContent = count(minute.remaining);
      this.minuteReset.textContent = `, resets in ${waitText(minute.resetSeconds)}`;
    }
    if (limits.dayRemaining !== null) {
      const n = Number(limits.dayRemaining);
      this.day.textContent = Number.isFinite(n) ? count(n) : UNLIMITED;
    }
    if (limits.tier) this.plan.textContent = limits.tier;
  }
}
