import type { ApiKeyRecord, PlanName } from "../../domain/api-key.ts";
import type { Coin, FeeSchedule, Market, MarketType, SettlementSource, Winner } from "../../domain/market.ts";
import { sourcesOf } from "./market-sources.ts";
import type { SnapshotRow } from "../../domain/snapshot.ts";
import type { RecordingGap, StoredMarket } from "../ports/market-store.ts";
import type { QuotaChargeRecord } from "../ports/quota-ledger.ts";

/** Column lists and row readers that both stores share: the schemas name these columns alike. */

type Row = Record<string, unknown>;
type ArrayRow = readonly unknown[];

export const MARKET_COLUMNS = `id, slug, polymarket_slug, coin, market_type, market_id, event_id, start_time, end_time,
  coin_price_start, coin_price_end, condition_id, clob_token_up, clob_token_down, winner, final_volume,
  final_liquidity, resolved_at, created_at, updated_at, snapshot_count, settlement_source, settlement_lookback_s,
  fee_schedule, sources`;

/** The stored fee schedule (JSON text in both stores). */
function feeScheduleOf(text: unknown): FeeSchedule | null {
  return typeof text === "string" ? (JSON.parse(text) as FeeSchedule) : null;
}

function feeScheduleText(f: FeeSchedule | null): string | null {
  return f === null
    ? null
    : JSON.stringify({
        rate: f.rate,
        exponent: f.exponent,
        takerOnly: f.takerOnly,
        rebateRate: f.rebateRate,
      });
}

/** A stored market from a row of MARKET_COLUMNS, read as an array (both dialects read it so). */
export function marketFromArray(r: ArrayRow): StoredMarket {
  return {
    key: r[0] as number,
    slug: r[1] as string,
    polymarketSlug: r[2] as string | null,
    coin: r[3] as Coin,
    marketType: r[4] as MarketType,
    marketId: r[5] as string,
    eventId: r[6] as string,
    startTime: r[7] as number,
    endTime: r[8] as number,
    coinPriceStart: r[9] as number | null,
    coinPriceEnd: r[10] as number | null,
    conditionId: r[11] as string,
    clobTokenUp: r[12] as string,
    clobTokenDown: r[13] as string,
    winner: r[14] as Winner | null,
    finalVolume: r[15] as number | null,
    finalLiquidity: r[16] as number | null,
    resolvedAt: r[17] as number | null,
    createdAt: r[18] as number,
    updatedAt: r[19] as number,
    snapshotCount: r[20] as number,
    settlement: { source: r[21] as SettlementSource, lookbackS: r[22] as number | null },
    feeSchedule: feeScheduleOf(r[23]),
    sources: sourcesOf(Number(r[24])),
  };
}

/** A market's values in the column order of both stores' upsert (UPSERT_MARKET_COLUMNS). */
export function marketValues(m: Market): (string | number | null)[] {
  return [
    m.slug,
    m.polymarketSlug,
    m.coin,
    m.marketType,
    m.marketId,
    m.eventId,
    m.startTime,
    m.endTime,
    m.coinPriceStart,
    m.coinPriceEnd,
    m.conditionId,
    m.clobTokenUp,
    m.clobTokenDown,
    m.winner,
    m.finalVolume,
    m.finalLiquidity,
    m.resolvedAt,
    m.createdAt,
    m.updatedAt,
    m.settlement.source,
    m.settlement.lookbackS,
    feeScheduleText(m.feeSchedule),
  ];
}

/** The columns an upsert writes, in marketValues' order; every one but the slug is replaced on conflict. */
const UPSERT_COLUMNS = [
  "slug",
  "polymarket_slug",
  "coin",
  "market_type",
  "market_id",
  "event_id",
  "start_time",
  "end_time",
  "coin_price_start",
  "coin_price_end",
  "condition_id",
  "clob_token_up",
  "clob_token_down",
  "winner",
  "final_volume",
  "final_liquidity",
  "resolved_at",
  "created_at",
  "updated_at",
  "settlement_source",
  "settlement_lookback_s",
  "fee_schedule",
];

/** The upsert of a market by slug, returning the stored row; `placeholder(i)` spells the i-th (1-based) parameter. */
export function upsertMarketSql(placeholder: (i: number) => string): string {
  const values = UPSERT_COLUMNS.map((_, i) => placeholder(i + 1)).join(", ");
  const updates = UPSERT_COLUMNS.slice(1)
    .map((c) => `${c} = excluded.${c}`)
    .join(", ");
  return `INSERT INTO markets (${UPSERT_COLUMNS.join(", ")}) VALUES (${values})
  ON CONFLICT (slug) DO UPDATE SET ${updates}
  RETURNING ${MARKET_COLUMNS}`;
}

export const KEY_COLUMNS =
  "id, hash, plan, account, name, created_at, revoked_at, per_minute_limit, per_day_limit";

/** A key record from a row of KEY_COLUMNS, read as an array. */
export function keyFromArray(r: ArrayRow): ApiKeyRecord {
  return {
    id: r[0] as string,
    hash: r[1] as string,
    plan: r[2] as PlanName,
    account: r[3] as string,
    name: r[4] as string | null,
    createdAt: r[5] as number,
    revokedAt: r[6] as number | null,
    perMinuteLimit: r[7] as number | null,
    perDayLimit: r[8] as number | null,
  };
}

/** A key's values in KEY_COLUMNS order. */
export function keyValues(k: ApiKeyRecord): (string | number | null)[] {
  return [k.id, k.hash, k.plan, k.account, k.name, k.createdAt, k.revokedAt, k.perMinuteLimit, k.perDayLimit];
}

/** A snapshot from (time_us, coin_price, price_up, price_down, books), read as an array; `bytes` reads the driver's blob. */
export function snapshotFromArray(r: ArrayRow, bytes: (stored: unknown) => Uint8Array | null): SnapshotRow {
  return {
    time: r[0] as number,
    coinPrice: r[1] as number,
    priceUp: r[2] as number,
    priceDown: r[3] as number,
    books: bytes(r[4]),
  };
}

export function gapFromRow(r: Row): RecordingGap {
  return {
    from: r.from_us as number,
    to: r.to_us as number,
    cause: r.cause as string,
    detail: r.detail as string | null,
  };
}

export const QUOTA_CHARGE_COLUMNS = "id, key_id, month, idempotency_key, charged_at, refunded_at, result";

export function quotaChargeFromArray(r: ArrayRow): QuotaChargeRecord {
  return {
    id: r[0] as string,
    keyId: r[1] as string,
    month: r[2] as string,
    idempotencyKey: r[3] as string | null,
    chargedAt: r[4] as number,
    refundedAt: r[5] as number | null,
    result: r[6] as string | null,
  };
}
