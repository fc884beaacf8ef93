import { errorFromAnswer } from "../../client/src/errors.ts";
import { UpdownClient, UpdownError } from "../../client/src/index.ts";

/**
 * The page's one door to the API: the TypeScript client of this repository (client/), over the
 * page's own origin, and the wire types it derives from the committed openapi.json. Every answer's
 * limit headers are shown to the account panel as they come.
 */

export { UpdownError };
export type {
  Account,
  BacktestAggregate,
  BacktestComparedRuns,
  BacktestMarketResult,
  BacktestQuota,
  BacktestRunAnswer,
  BacktestTrade,
  Coverage,
  Level,
  Market,
  MarketTrade,
  MarketPage,
  MarketSeries,
  MarketsQuery,
  OrderBook,
  RunBacktestBody,
  RunStrategyBody,
  SnapshotAt,
  StrategyDefinition,
} from "../../client/src/index.ts";

/** The client of one key, with what the page needs beside the typed calls: raw bytes to download. */
export class Api extends UpdownClient {
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;

  constructor(apiKey: string, observing: typeof fetch) {
    super({ baseUrl: location.origin, apiKey, fetch: observing, maxRetries: 2, retryMaxMs: 3000 });
    this.#apiKey = apiKey;
    this.#fetch = observing;
  }

  /**
   * A file a route answers (an export), as the bytes it sent and the name its Content-Disposition
   * gives; an error answer is thrown as the client's UpdownError.
   */
  async file(path: string, fallbackName: string): Promise<{ blob: Blob; name: string }> {
    const response = await this.#fetch(path, { headers: { "X-API-Key": this.#apiKey } });
    if (!response.ok) {
      const body: unknown = await response.json().catch(() => undefined);
      const retryAfter = Number(response.headers.get("retry-after"));
      throw errorFromAnswer(
        response.status,
        body,
        response.headers.get("x-request-id"),
        Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
      );
    }
    const disposition = response.headers.get("content-disposition") ?? "";
    const name = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? fallbackName;
    return { blob: await response.blob(), name };
  }
}

/** The request-limit headers of one answer (docs/plans-and-limits.md). */
export interface LimitHeaders {
  tier: string | null;
  /** X-RateLimit-Remaining and -Limit: the day window ("unlimited" for enterprise). */
  dayRemaining: string | null;
  dayLimit: string | null;
  /** From the IETF `RateLimit` header: remaining and seconds to reset, per window. */
  windows: Map<string, { remaining: number; resetSeconds: number }>;
}

/** `"minute";r=59;t=26, "day";r=999;t=85166` as windows. */
export function parseRateLimit(header: string | null): LimitHeaders["windows"] {
  const windows = new Map<string, { remaining: number; resetSeconds: number }>();
  for (const item of (header ?? "").split(",")) {
    const name = /"([^"]+)"/.exec(item)?.[1];
    const r = /;\s*r=(\d+)/.exec(item)?.[1];
    const t = /;\s*t=(\d+)/.exec(item)?.[1];
    if (name && r !== undefined && t !== undefined)
      windows.set(name, { remaining: Number(r), resetSeconds: Number(t) });
  }
  return windows;
}

function limitHeadersOf(headers: Headers): LimitHeaders | null {
  const dayRemaining = headers.get("x-ratelimit-remaining");
  if (dayRemaining === null) return null;
  return {
    tier: headers.get("x-tier"),
    dayRemaining,
    dayLimit: headers.get("x-ratelimit-limit"),
    windows: parseRateLimit(headers.get("ratelimit")),
  };
}

/**
 * A client for one key. Retries follow the client's rules, except that a Retry-After longer than a
 * few seconds is not waited out: the page says when to retry instead of hanging.
 */
export function connect(apiKey: string, onLimits: (limits: LimitHeaders) => void): Api {
  const observing: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const limits = limitHeadersOf(response.headers);
    if (limits) onLimits(limits);
    return response;
  };
  return new Api(apiKey, observing);
}

interface ApiDocument {
  components: { schemas: Record<string, { enum?: string[] }> };
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: {
          content: Record<string, { schema: { properties?: Record<string, { enum?: string[] }> } }>;
        };
      }
    >
  >;
}

export interface Choices {
  coins: string[];
  marketTypes: string[];
  presets: string[];
}

/**
 * The choices the forms offer, from the API document (coins and market types are configuration),
 * read once and without a key: it is public and counts nothing.
 */
export async function documentChoices(): Promise<Choices> {
  const response = await fetch("/openapi.json");
  const doc = (await response.json()) as ApiDocument;
  const body = doc.paths["/v1/backtest-ai/strategy"]?.post?.requestBody?.content["application/json"]?.schema;
  return {
    coins: doc.components.schemas.Coin?.enum ?? [],
    marketTypes: doc.components.schemas.MarketType?.enum ?? [],
    presets: body?.properties?.preset?.enum ?? [],
  };
}
