/**
 * How numbers read wherever people read them: the page, the CLI's text and the MCP tools' text. One
 * rule per kind of value: a fixed number of decimals, thousands separators (en-US), one minus sign
 * (the ASCII '-', so that a number copied from any of them parses as written), ROI and other shares
 * as percentages, and one word for what has no limit. A value that is not there reads `n/a`.
 * It lives in the client package because the page, the CLI and the MCP server all import the client.
 */

/** What a missing value (null, undefined, not a finite number) reads as. */
export const MISSING = "n/a";

/** What a limit that does not exist reads as. */
export const UNLIMITED = "unlimited";

/** Decimals per kind of value. */
export const DECIMALS = {
  /** USDC amounts: PnL, cost, fees, proceeds, drawdown. */
  usdc: 2,
  /** Prices of an outcome share (0 to 1): fill averages carry more than the tick's decimals. */
  price: 4,
  /** Shares. */
  shares: 2,
  /** A coin's price at or above COIN_SMALL (BTC, ETH, SOL). */
  coin: 2,
  /** A coin's price below COIN_SMALL (XRP, DOGE). */
  coinSmall: 4,
  /** Percentages (ROI, win rate, coverage, time in market). */
  percent: 2,
  /** Basis points (slippage, returns). */
  bps: 1,
  /** Ratios without a unit: Sharpe, Sortino, profit factor. */
  ratio: 2,
  /** Durations in seconds. */
  seconds: 1,
} as const;

/** Coins priced under this read with DECIMALS.coinSmall. */
const COIN_SMALL = 10;

const formatters = new Map<number, Intl.NumberFormat>();

function formatter(decimals: number): Intl.NumberFormat {
  let f = formatters.get(decimals);
  if (!f) {
    f = new Intl.NumberFormat("en-US", {
      minimumFractionDigits: decimals,
      maximumFractionDigits: decimals,
      useGrouping: true,
    });
    formatters.set(decimals, f);
  }
  return f;
}

function present(n: number | null | undefined): n is number {
  return typeof n === "number" && Number.isFinite(n);
}

/**
 * `n` with `decimals` fixed decimals and thousands separators; a value that rounds to zero has no
 * sign (never "-0.00"); a negative one starts with '-'.
 */
export function fixed(n: number | null | undefined, decimals: number): string {
  if (!present(n)) return MISSING;
  const text = formatter(decimals).format(Math.abs(n));
  const zero = /^[0.,]*$/.test(text);
  return n < 0 && !zero ? `-${text}` : text;
}

/** A whole count: `12,345`. */
export function count(n: number | null | undefined): string {
  return fixed(n, 0);
}

/** A limit: its count, or `unlimited` for none (null). */
export function limit(n: number | null | undefined): string {
  return n === null ? UNLIMITED : count(n);
}

/** What is left of a limit: `940 of 1,000`, or `unlimited` (said once) when there is no limit. */
export function remainingOf(remaining: number | null | undefined, of: number | null | undefined): string {
  return of === null || remaining === null ? UNLIMITED : `${count(remaining)} of ${count(of)}`;
}

/** A USDC amount, bare (for a column whose header says USDC): `-1,234.56`. */
export function usdc(n: number | null | undefined): string {
  return fixed(n, DECIMALS.usdc);
}

/** A USDC amount with its unit: `-1,234.56 USDC`. */
export function usdcText(n: number | null | undefined): string {
  return present(n) ? `${usdc(n)} USDC` : MISSING;
}

/** An outcome share's price: `0.5500`. */
export function price(n: number | null | undefined): string {
  return fixed(n, DECIMALS.price);
}

/** Shares: `1,250.00`. */
export function shares(n: number | null | undefined): string {
  return fixed(n, DECIMALS.shares);
}

/** A coin's price: `97,123.45`, or `0.3121` for a coin priced under 10. */
export function coinPrice(n: number | null | undefined): string {
  if (!present(n)) return MISSING;
  return fixed(n, Math.abs(n) < COIN_SMALL ? DECIMALS.coinSmall : DECIMALS.coin);
}

/** A share (0.1234 = 12.34 %) as a percentage: ROI, win rate, coverage. `12.34%`. */
export function percent(share: number | null | undefined): string {
  return present(share) ? `${fixed(share * 100, DECIMALS.percent)}%` : MISSING;
}

/** A number that is a percentage already (the API's `_pct` fields): `12.34%`. */
export function percentOf(points: number | null | undefined): string {
  return present(points) ? `${fixed(points, DECIMALS.percent)}%` : MISSING;
}

/** Basis points: `12.3 bps`. */
export function bps(n: number | null | undefined): string {
  return present(n) ? `${fixed(n, DECIMALS.bps)} bps` : MISSING;
}

/** A ratio: Sharpe, Sortino, profit factor: `1.23`. */
export function ratio(n: number | null | undefined): string {
  return fixed(n, DECIMALS.ratio);
}

/** A duration: `60.0 s`. */
export function seconds(n: number | null | undefined): string {
  return present(n) ? `${fixed(n, DECIMALS.seconds)} s` : MISSING;
}
