import { toConfig } from "../../config.ts";
import { defineCommand, openDatabase } from "../command.ts";

export const collectCommand = defineCommand({
  name: "collect",
  summary: "Record live markets from Polymarket (and Binance) into the database",
  help: `updown collect [--database-url URL] [--coins btc,eth,sol] [--types 5m,15m,1h,4h,24h|none]
               [--lookahead N] [--venues spot,futures|none] [--no-events]

Records every live market of the chosen series: one snapshot per market every SNAPSHOT_INTERVAL_MS
(default 1000) with the settlement coin price, both displayed prices and both order books, written in
one transaction per tick. Discovers the live and the next --lookahead (default 1) markets of each series
on Gamma, follows their books on the CLOB market WebSocket and coin prices on the real-time data socket,
captures the start and end prices, the liquidity before the close and the resolution. Every second a
market cannot be recorded is kept as a gap with its cause (GET /v1/markets/{slug}/coverage).
Every market-channel message and coin-price update is kept as an event too, written each tick before
the snapshots (RECORD_EVENTS=false or --no-events: snapshots only).
--venues (default spot,futures) also records Binance for the same coins: depth (top 20, one a second),
trades, 1m candles, mark price, funding rates and open interest. --types none or --venues none leaves
one side out.
Upstream addresses: POLYMARKET_GAMMA_URL, POLYMARKET_CLOB_WS_URL, POLYMARKET_RTDS_URL,
BINANCE_SPOT_WS_URL, BINANCE_FUTURES_WS_URL, BINANCE_FUTURES_REST_URL (or their flags, below).
SIGTERM or Ctrl-C stops cleanly: upstream calls in flight get up to DRAIN_SECONDS (default 5) before
they are abandoned, then open gaps are closed, buffered rows written and the database closed. After a
kill, the next start continues and records the time it was down as a gap. See docs/collector.md.`,
  options: [
    "databaseUrl",
    "coins",
    "types",
    "lookahead",
    "venues",
    "snapshotIntervalMs",
    "recordEvents",
    "drainSeconds",
    "polymarketGammaUrl",
    "polymarketClobWsUrl",
    "polymarketRtdsUrl",
    "binanceSpotWsUrl",
    "binanceFuturesWsUrl",
    "binanceFuturesRestUrl",
  ],
  run: async (values) => {
    const { store } = await openDatabase(values.databaseUrl);
    // Imported here: `updown --help` loads this module, not the collector and its logger.
    const { collect } = await import("../../record/collect.ts");
    await collect(store, toConfig(values), {
      coins: values.coins,
      marketTypes: values.types,
      lookahead: values.lookahead,
      venues: values.venues,
      events: values.recordEvents,
    });
  },
});
