import { DEFAULT_CONFIG } from "../../config.ts";

/** Binance's public market-data addresses; each can be pointed elsewhere (tests use local servers). */
export interface BinanceUrls {
  spotRest: string;
  spotWs: string;
  futuresRest: string;
  futuresWs: string;
}

/** The addresses the configuration defaults to (src/config/options.ts keeps every default). */
export const DEFAULT_BINANCE_URLS: BinanceUrls = DEFAULT_CONFIG.binance.urls;

/** Request weight per minute and IP that Binance documents (spot REQUEST_WEIGHT 6000, USDⓈ-M 2400). */
export const DEFAULT_WEIGHT_LIMITS: { readonly spot: number; readonly futures: number } =
  DEFAULT_CONFIG.binance.weightLimits;
