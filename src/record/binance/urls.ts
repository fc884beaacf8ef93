/** Binance's public market-data addresses; each can be pointed elsewhere (tests use local servers). */
export interface BinanceUrls {
  spotRest: string;
  spotWs: string;
  futuresRest: string;
  futuresWs: string;
}

export const DEFAULT_BINANCE_URLS: BinanceUrls = {
  spotRest: "https://api.binance.com",
  spotWs: "wss://stream.binance.com:9443",
  futuresRest: "https://fapi.binance.com",
  futuresWs: "wss://fstream.binance.com",
};

/** Request weight per minute and IP that Binance documents (spot REQUEST_WEIGHT 6000, USDⓈ-M 2400). */
export const DEFAULT_WEIGHT_LIMITS = { spot: 6000, futures: 2400 } as const;

/** The addresses from BINANCE_SPOT_REST_URL, BINANCE_SPOT_WS_URL, BINANCE_FUTURES_REST_URL, BINANCE_FUTURES_WS_URL. */
export function binanceUrlsFromEnv(env: NodeJS.ProcessEnv): BinanceUrls {
  const strip = (url: string) => url.replace(/\/+$/, "");
  return {
    spotRest: strip(env.BINANCE_SPOT_REST_URL || DEFAULT_BINANCE_URLS.spotRest),
    spotWs: strip(env.BINANCE_SPOT_WS_URL || DEFAULT_BINANCE_URLS.spotWs),
    futuresRest: strip(env.BINANCE_FUTURES_REST_URL || DEFAULT_BINANCE_URLS.futuresRest),
    futuresWs: strip(env.BINANCE_FUTURES_WS_URL || DEFAULT_BINANCE_URLS.futuresWs),
  };
}

/** Weight limits from BINANCE_SPOT_WEIGHT_LIMIT and BINANCE_FUTURES_WEIGHT_LIMIT (positive integers). */
export function weightLimitsFromEnv(env: NodeJS.ProcessEnv): { spot: number; futures: number } {
  const read = (name: string, fallback: number) => {
    const text = env[name];
    if (!text) return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1)
      throw new RangeError(`${name} must be a positive integer, got "${text}"`);
    return n;
  };
  return {
    spot: read("BINANCE_SPOT_WEIGHT_LIMIT", DEFAULT_WEIGHT_LIMITS.spot),
    futures: read("BINANCE_FUTURES_WEIGHT_LIMIT", DEFAULT_WEIGHT_LIMITS.futures),
  };
}
