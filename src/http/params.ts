import {
  COINS,
  type Coin,
  MARKET_TYPES,
  type MarketType,
  parseCoin,
  parseMarketType,
} from "../domain/market.ts";
import { canonicalSlug } from "../domain/slug.ts";
import { type Micros, parseUserTime } from "../domain/time.ts";
import type { Store, StoredMarket } from "../store/store.ts";
import { notFound, validationError } from "./errors.ts";

export function coinParam(text: string | undefined): Coin | undefined {
  if (text === undefined) return undefined;
  const coin = parseCoin(text);
  if (!coin)
    throw validationError(`coin must be one of ${COINS.join(", ")}`, { parameter: "coin", rule: "enum" });
  return coin;
}

export function marketTypeParam(text: string | undefined): MarketType | undefined {
  if (text === undefined) return undefined;
  const type = parseMarketType(text);
  if (!type) {
    throw validationError(
      `market_type must be one of ${MARKET_TYPES.join(", ")} (1hr, 4hr, 24hr also accepted)`,
      {
        parameter: "market_type",
        rule: "enum",
      },
    );
  }
  return type;
}

export function timeParam(name: string, text: string | undefined): Micros | undefined {
  if (text === undefined) return undefined;
  const us = parseUserTime(text);
  if (us === null) {
    throw validationError(`${name} must be an ISO 8601 timestamp or epoch milliseconds`, {
      parameter: name,
      rule: "format",
    });
  }
  return us;
}

export function timeRange(
  start: string | undefined,
  end: string | undefined,
): { from?: Micros; to?: Micros } {
  const from = timeParam("start_time", start);
  const to = timeParam("end_time", end);
  if (from !== undefined && to !== undefined && from > to) {
    throw validationError("start_time must not be after end_time", {
      parameter: "start_time",
      rule: "range",
    });
  }
  return { from, to };
}

/** The market a path names, by our slug in any accepted spelling or by Polymarket's alias. */
export async function marketBySlug(store: Store, slug: string): Promise<StoredMarket> {
  const market = (await store.getMarket(canonicalSlug(slug) ?? slug.toLowerCase())) ?? null;
  if (!market) throw notFound(`No market with slug ${slug}.`);
  return market;
}
