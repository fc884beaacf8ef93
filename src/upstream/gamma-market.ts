import type { FeeSchedule, Winner } from "../domain/market.ts";
import type { TwapConfig } from "../domain/settlement.ts";
import { type Micros, parseIsoMicros } from "../domain/time.ts";

/**
 * Reading Polymarket's Gamma market objects, the same for the importer (recorded rows) and the live
 * collector (answers of the Gamma API). Gamma sends some lists as JSON text inside JSON
 * (`clobTokenIds`, `outcomes`, `outcomePrices`) and amounts both as numbers and as text.
 */

/** A problem with one field; callers add where the object came from. */
export class FieldError extends Error {}

export function requireObject(v: unknown, field: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new FieldError(`${field} must be an object`);
  return v as Record<string, unknown>;
}

export function requireString(v: unknown, field: string): string {
  if (typeof v !== "string" || v === "") throw new FieldError(`${field} must be a non-empty string`);
  return v;
}

/** Gamma ids are numeric strings, but a number is accepted and kept as its decimal text. */
export function requireId(v: unknown, field: string): string {
  if (typeof v === "number" && Number.isInteger(v)) return String(v);
  return requireString(v, field);
}

export function requireIso(v: unknown, field: string): Micros {
  const us = typeof v === "string" ? parseIsoMicros(v) : null;
  if (us === null) throw new FieldError(`${field} is not an ISO 8601 timestamp: ${JSON.stringify(v)}`);
  return us;
}

/**
 * `["1","0"]` is Up, `["0","1"]` Down, and `["0.5","0.5"]` a 50-50 split once the resolution is final
 * (`settled`: until then even prices are only prices); anything else (a market voided or mid-dispute)
 * has no winner.
 */
export function winnerFromPrices(prices: unknown, settled = true): Winner | null {
  if (!Array.isArray(prices) || prices.length !== 2) return null;
  const [up, down] = prices.map((p) => (typeof p === "number" ? String(p) : p)) as unknown[];
  if (up === "1" && down === "0") return "Up";
  if (up === "0" && down === "1") return "Down";
  if (settled && up === "0.5" && down === "0.5") return "50-50";
  return null;
}

/** `cryptoMarketConfig` of a market settled on a TWAP stream; null for one settled on an instantaneous feed. */
export function twapConfigOf(raw: Record<string, unknown>): TwapConfig | null {
  const config = raw.cryptoMarketConfig;
  if (typeof config !== "object" || config === null) return null;
  const { twapEnabled, twapLookbackSeconds } = config as Record<string, unknown>;
  if (twapEnabled !== true) return null;
  if (
    typeof twapLookbackSeconds !== "number" ||
    !Number.isInteger(twapLookbackSeconds) ||
    twapLookbackSeconds <= 0
  ) {
    throw new FieldError(`cryptoMarketConfig.twapLookbackSeconds must be a positive integer`);
  }
  return { lookbackS: twapLookbackSeconds };
}

/** Gamma's `feeSchedule`, or null when the market charges none (`feesEnabled: false`, or no schedule). */
export function feeScheduleOf(raw: Record<string, unknown>): FeeSchedule | null {
  const f = raw.feeSchedule;
  if (raw.feesEnabled === false || typeof f !== "object" || f === null) return null;
  const { rate, exponent, takerOnly, rebateRate } = f as Record<string, unknown>;
  const number = (v: unknown, field: string): number => {
    if (typeof v !== "number" || !Number.isFinite(v))
      throw new FieldError(`feeSchedule.${field} must be a number`);
    return v;
  };
  return {
    rate: number(rate, "rate"),
    exponent: number(exponent, "exponent"),
    takerOnly: takerOnly === true,
    rebateRate: rebateRate === undefined ? 0 : number(rebateRate, "rebateRate"),
  };
}

/**
 * `eventMetadata` (on the event, or copied onto the market): `priceToBeat` and `finalPrice` once the
 * upstream knows them, as numbers or decimal text.
 */
export function eventPricesOf(raw: Record<string, unknown>): {
  priceToBeat: number | null;
  finalPrice: number | null;
} {
  const events = Array.isArray(raw.events) ? (raw.events as unknown[]) : [];
  const first = events[0] as Record<string, unknown> | undefined;
  const meta = (first?.eventMetadata ?? raw.eventMetadata) as Record<string, unknown> | undefined;
  if (typeof meta !== "object" || meta === null) return { priceToBeat: null, finalPrice: null };
  return {
    priceToBeat: amountOf(meta.priceToBeat, meta.priceToBeat),
    finalPrice: amountOf(meta.finalPrice, meta.finalPrice),
  };
}

/**
 * Gamma nests a market in an event and reports it as `events[0].id`; some market rows (all of the
 * recorded fixture's) come without `events`, and some carry a flat `eventId`. With neither, the market
 * id stands in: these series have exactly one market per event, so it still identifies the event
 * uniquely, and the record's event_id must not be empty.
 */
export function eventIdOf(raw: Record<string, unknown>, marketId: string): string {
  const events = raw.events;
  if (Array.isArray(events) && events.length > 0) {
    const first: unknown = events[0];
    if (typeof first === "object" && first !== null && "id" in first) {
      const id = (first as { id: unknown }).id;
      if ((typeof id === "string" && id !== "") || typeof id === "number") return String(id);
    }
  }
  if ((typeof raw.eventId === "string" && raw.eventId !== "") || typeof raw.eventId === "number") {
    return String(raw.eventId);
  }
  return marketId;
}

/** Gamma gives volume and liquidity both as a number (`volumeNum`) and as text (`volume`); either may be absent. */
export function amountOf(numeric: unknown, text: unknown): number | null {
  if (typeof numeric === "number" && Number.isFinite(numeric)) return numeric;
  if (typeof text === "string" && text.trim() !== "") {
    const n = Number(text);
    if (Number.isFinite(n)) return n;
  }
  return null;
}

/** `closedTime` ("2026-07-24 00:00:16+00") is when Gamma closed the market; `umaEndDate` is the oracle's. */
export function resolvedAtOf(raw: Record<string, unknown>): number | null {
  for (const v of [raw.closedTime, raw.umaEndDate]) {
    const us = typeof v === "string" ? parseIsoMicros(v) : null;
    if (us !== null) return Math.floor(us / 1_000_000);
  }
  return null;
}

/**
 * When Gamma created and last changed the record. A reduced record (the TWAP fixture) may lack both:
 * `startDate` (when the market was listed) stands in for the creation, the creation for the change.
 */
export function recordTimesOf(raw: Record<string, unknown>): { createdAt: Micros; updatedAt: Micros } {
  const createdAt = requireIso(raw.createdAt ?? raw.startDate, "createdAt");
  return {
    createdAt,
    updatedAt: raw.updatedAt === undefined ? createdAt : requireIso(raw.updatedAt, "updatedAt"),
  };
}

/** A list Gamma may send as a JSON array or as JSON text holding one. */
function listField(v: unknown, field: string): unknown[] {
  let value = v;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      throw new FieldError(`${field} is not a JSON list: ${JSON.stringify(v)}`);
    }
  }
  if (!Array.isArray(value)) throw new FieldError(`${field} must be a list`);
  return value;
}

/** What the collector needs of a live Gamma market. */
export interface GammaMarket {
  slug: string;
  marketId: string;
  eventId: string;
  conditionId: string;
  tokenUp: string;
  tokenDown: string;
  closed: boolean;
  /** Set once the market is closed and its outcome prices are 1 and 0 (or a final 0.5 and 0.5). */
  winner: Winner | null;
  volume: number | null;
  liquidity: number | null;
  resolvedAt: number | null;
  createdAt: Micros;
  updatedAt: Micros;
  twap: TwapConfig | null;
  feeSchedule: FeeSchedule | null;
  /** The upstream's own start and end prices, once it publishes them. */
  priceToBeat: number | null;
  finalPrice: number | null;
}

/**
 * Reads a Gamma market object. The tokens are matched to outcomes by name, since the order of
 * `clobTokenIds` follows `outcomes`, which is `["Up", "Down"]` for these series but is not promised.
 */
export function parseGammaMarket(raw: Record<string, unknown>): GammaMarket {
  const marketId = requireId(raw.id, "id");
  const outcomes = listField(raw.outcomes ?? '["Up", "Down"]', "outcomes");
  const tokens = listField(raw.clobTokenIds, "clobTokenIds");
  const up = outcomes.indexOf("Up");
  const down = outcomes.indexOf("Down");
  if (up < 0 || down < 0 || tokens.length !== outcomes.length) {
    throw new FieldError(`outcomes ${JSON.stringify(outcomes)} do not name an Up and a Down token`);
  }
  const closed = raw.closed === true;
  const prices = raw.outcomePrices === undefined ? null : listField(raw.outcomePrices, "outcomePrices");
  return {
    slug: requireString(raw.slug, "slug"),
    marketId,
    eventId: eventIdOf(raw, marketId),
    conditionId: requireString(raw.conditionId, "conditionId"),
    tokenUp: requireString(tokens[up], "clobTokenIds[Up]"),
    tokenDown: requireString(tokens[down], "clobTokenIds[Down]"),
    closed,
    winner:
      closed && prices
        ? winnerFromPrices([prices[up], prices[down]], raw.umaResolutionStatus === "resolved")
        : null,
    volume: amountOf(raw.volumeNum, raw.volume),
    liquidity: amountOf(raw.liquidityNum, raw.liquidity),
    resolvedAt: resolvedAtOf(raw),
    ...recordTimesOf(raw),
    twap: twapConfigOf(raw),
    feeSchedule: feeScheduleOf(raw),
    ...eventPricesOf(raw),
  };
}
