import type { Store } from "../../src/store/ports/store.ts";
import { backtestStoreContract } from "./backtest-store.ts";
import { eventStoreContract } from "./event-store.ts";
import { exchangeStoreContract } from "./exchange-store.ts";
import { importMarksContract } from "./import-marks.ts";
import { keyStoreContract } from "./key-store.ts";
import { marketStoreContract } from "./market-store.ts";
import { quotaLedgerContract } from "./quota-ledger.ts";
import { tradeStoreContract } from "./trade-store.ts";

/**
 * Every capability's contract suite over one backend: a backend is wired to them by one call, with
 * `open` giving an empty, migrated store of it for each suite (src/store/ports/backend.ts).
 */
export function storeContracts(backend: string, open: () => Promise<Store>): void {
  marketStoreContract(backend, open);
  tradeStoreContract(backend, open);
  keyStoreContract(backend, open);
  quotaLedgerContract(backend, open);
  exchangeStoreContract(backend, open);
  backtestStoreContract(backend, open);
  eventStoreContract(backend, open);
  importMarksContract(backend, open);
}
