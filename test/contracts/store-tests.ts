import { after, before, describe, test } from "node:test";
import type { Store } from "../../src/store/ports/store.ts";

/**
 * Tests of one capability (a contract every store honours, or what one store alone must show) by
 * title, in the order they run; later ones may build on what earlier ones stored. Each is given the
 * capability under test and the store holding it.
 */
export type StoreTests<C, S extends Store = Store> = Record<
  string,
  (capability: C, store: S) => Promise<void>
>;

/**
 * Registers tests over one store from `open` (empty and migrated; closed after them). A store that
 * cannot be opened fails every test, never skips them.
 */
export function describeStoreTests<C, S extends Store = Store>(
  title: string,
  open: () => Promise<S>,
  capabilityOf: (store: S) => C,
  tests: StoreTests<C, S>,
): void {
  describe(title, () => {
    let store: S;
    before(async () => {
      store = await open();
    });
    after(() => store?.close());
    for (const [name, run] of Object.entries(tests)) test(name, () => run(capabilityOf(store), store));
  });
}
