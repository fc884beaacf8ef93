import type { SnapshotRow } from "../domain/snapshot.ts";
import type { TradeRow } from "../domain/trade.ts";
import type { Store } from "../store/ports/store.ts";
import { type DemoOptions, demoSnapshotTotal, demoTrades, generateDemo } from "./demo.ts";
import { seedExchangeDemo } from "./exchange-demo.ts";

const BATCH_ROWS = 5_000;

/**
 * Writes the demo into a store. Returns the markets and snapshot rows written; rerunning it over the
 * same store rewrites the markets and leaves the stored snapshots as they are (inserts are idempotent).
 */
export async function seedDemo(
  store: Pick<Store, "markets" | "trades" | "exchange">,
  options: DemoOptions,
): Promise<{ markets: number; snapshots: number }> {
  const total = demoSnapshotTotal(options);
  let markets = 0;
  let done = 0;
  const batch: SnapshotRow[] = [];
  const trades: TradeRow[] = [];
  const flush = async (key: number): Promise<void> => {
    await store.markets.insertSnapshots(key, batch);
    await store.trades.insertTrades([{ marketKey: key, rows: trades }]);
    done += batch.length;
    batch.length = 0;
    trades.length = 0;
    options.onProgress?.(done, total);
  };
  for (const demo of generateDemo(options)) {
    const stored = await store.markets.upsertMarket(demo.market);
    const tradeAt = demoTrades(options.seed, demo.market.slug);
    markets++;
    for (const row of demo.snapshots()) {
      batch.push(row);
      const trade = tradeAt(row);
      if (trade) trades.push(trade);
      if (batch.length === BATCH_ROWS) await flush(stored.key);
    }
    if (batch.length > 0) await flush(stored.key);
  }
  // A little Binance spot and futures data too, so that the exchange endpoints answer.
  if (options.exchange) {
    await seedExchangeDemo(store.exchange, {
      seed: options.seed,
      anchor: options.anchor,
      coins: options.coins,
    });
  }
  return { markets, snapshots: done };
}
