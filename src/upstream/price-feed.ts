/**
 * A coin price feed held in memory as one tick per feed second, for "which price was in effect at
 * second t" questions: settling a market, filling a start price, cross-checking an upstream winner.
 * Used by the upstream importer and meant for the live collector too, so it makes no assumption about
 * where ticks come from or in which order they arrive.
 */

export interface TickInEffect {
  value: number;
  /** The feed second of the tick; `second - tickSecond` is how stale the price is. */
  tickSecond: number;
}

/**
 * Ticks kept in three parallel arrays sorted by feed second: lookups are a binary search, and the
 * usual in-order arrival is an append. Parallel number arrays rather than objects keep ~40k ticks a
 * day compact.
 */
export class PriceFeed {
  private readonly seconds: number[] = [];
  private readonly values: number[] = [];
  private readonly receivedAt: number[] = [];

  get size(): number {
    return this.seconds.length;
  }

  /**
   * Records the tick of a feed second. A second can be published twice when the feed corrects
   * itself; the correction is the one received later, so it replaces the stored tick, and a tick
   * received earlier than the stored one (a late-delivered original) is ignored. On equal receive
   * times the first one stays, so replaying the same input is stable.
   */
  addTick(feedSecond: number, value: number, receivedAtMs: number): void {
    if (!Number.isInteger(feedSecond))
      throw new RangeError(`feed second must be an integer, got ${feedSecond}`);
    if (!Number.isFinite(value)) throw new RangeError(`tick value must be a finite number, got ${value}`);
    if (!Number.isFinite(receivedAtMs))
      throw new RangeError(`receive time must be finite, got ${receivedAtMs}`);
    const n = this.seconds.length;
    if (n === 0 || this.seconds[n - 1] < feedSecond) {
      this.seconds.push(feedSecond);
      this.values.push(value);
      this.receivedAt.push(receivedAtMs);
      return;
    }
    const i = this.lastIndexAtOrBefore(feedSecond);
    if (i >= 0 && this.seconds[i] === feedSecond) {
      if (receivedAtMs > this.receivedAt[i]) {
        this.values[i] = value;
        this.receivedAt[i] = receivedAtMs;
      }
      return;
    }
    // Out of order: an insert in the middle. Rare (reconnect backfill), so the O(n) splice is fine.
    this.seconds.splice(i + 1, 0, feedSecond);
    this.values.splice(i + 1, 0, value);
    this.receivedAt.splice(i + 1, 0, receivedAtMs);
  }

  /** The latest tick at or before `second` (the price in effect then), or null when none is that early. */
  inEffectAt(second: number): TickInEffect | null {
    const i = this.lastIndexAtOrBefore(second);
    return i < 0 ? null : { value: this.values[i], tickSecond: this.seconds[i] };
  }

  /** Every tick, oldest first (to merge one feed into another). */
  *ticks(): Generator<{ second: number; value: number; receivedAtMs: number }> {
    for (let i = 0; i < this.seconds.length; i++)
      yield { second: this.seconds[i], value: this.values[i], receivedAtMs: this.receivedAt[i] };
  }

  /** Forgets the ticks before `second`, keeping the one in effect at it, so a live feed stays small. */
  dropBefore(second: number): void {
    const keepFrom = Math.max(0, this.lastIndexAtOrBefore(second));
    if (keepFrom === 0) return;
    this.seconds.splice(0, keepFrom);
    this.values.splice(0, keepFrom);
    this.receivedAt.splice(0, keepFrom);
  }

  /** Index of the last tick whose second is <= `second`, or -1. */
  private lastIndexAtOrBefore(second: number): number {
    let lo = 0;
    let hi = this.seconds.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.seconds[mid] <= second) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }
}

const SCALED_INTEGER_RE = /^(-?)(\d+)$/;

/**
 * Converts an integer string scaled by 10^scale (Chainlink's full-accuracy values, scale 18) into a
 * number. Dividing by 1e18 in floating point would round twice and can land one ulp off; placing the
 * decimal point in the string and parsing once gives the double nearest to the exact decimal value,
 * the same one `Number("65048.078902260626")` gives.
 */
export function scaledDecimalToNumber(text: string, scale = 18): number {
  if (!Number.isInteger(scale) || scale < 0)
    throw new RangeError(`scale must be a non-negative integer, got ${scale}`);
  const m = SCALED_INTEGER_RE.exec(text);
  if (!m) throw new RangeError(`not an integer string: ${JSON.stringify(text)}`);
  const [, sign, digits] = m;
  const padded = digits.padStart(scale + 1, "0");
  const whole = padded.slice(0, padded.length - scale).replace(/^0+(?=\d)/, "");
  const fraction = padded.slice(padded.length - scale).replace(/0+$/, "");
  const result = Number(fraction ? `${whole}.${fraction}` : whole);
  // "-0" scaled is zero; a negative zero would print as 0 but compare oddly in tests and JSON.
  return sign && result !== 0 ? -result : result;
}
