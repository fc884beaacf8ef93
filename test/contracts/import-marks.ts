import assert from "node:assert/strict";
import type { ImportMarks } from "../../src/store/ports/import-marks.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { type StoreTests, describeStoreTests } from "./store-tests.ts";

const IMPORT_MARKS_TESTS: StoreTests<ImportMarks> = {
  "import marks: row groups by archive and file, the first mark kept; pending markets listed until cleared":
    async (marks) => {
      assert.deepEqual(await marks.importedRowGroups("pmxt", "a.parquet:10"), new Map());
      assert.deepEqual(await marks.pendingMarkets("pmxt"), []);
      await marks.markRowGroup("pmxt", "a.parquet:10", { rowGroup: 0, rows: 100, kept: 7 }, ["m-2", "m-1"]);
      await marks.markRowGroup("pmxt", "a.parquet:10", { rowGroup: 2, rows: 50, kept: 0 }, []);
      // Marked again (a resumed run that raced a kill): the first mark stays, markets are not repeated.
      await marks.markRowGroup("pmxt", "a.parquet:10", { rowGroup: 0, rows: 999, kept: 999 }, ["m-1"]);
      await marks.markRowGroup("pmxt", "b.parquet:20", { rowGroup: 0, rows: 1, kept: 1 }, ["m-3"]);
      await marks.markRowGroup("other", "a.parquet:10", { rowGroup: 1, rows: 1, kept: 1 }, ["m-9"]);
      assert.deepEqual(
        await marks.importedRowGroups("pmxt", "a.parquet:10"),
        new Map([
          [0, { rows: 100, kept: 7 }],
          [2, { rows: 50, kept: 0 }],
        ]),
      );
      assert.deepEqual(await marks.pendingMarkets("pmxt"), ["m-1", "m-2", "m-3"]);
      await marks.clearPendingMarket("pmxt", "m-2");
      await marks.clearPendingMarket("pmxt", "m-404");
      assert.deepEqual(await marks.pendingMarkets("pmxt"), ["m-1", "m-3"]);
      assert.deepEqual(await marks.pendingMarkets("other"), ["m-9"]);
    },
  "import marks: a market's coin price source, the latest one kept": async (marks) => {
    assert.equal(await marks.coinPriceSource(7), null);
    await marks.setCoinPriceSource(7, "binance_1s");
    await marks.setCoinPriceSource(7, "chainlink");
    await marks.setCoinPriceSource(8, "chainlink_twap 60 s");
    assert.equal(await marks.coinPriceSource(7), "chainlink");
    assert.equal(await marks.coinPriceSource(8), "chainlink_twap 60 s");
  },
};

/** The behaviour every ImportMarks must share, over an empty, migrated store from `open`. */
export function importMarksContract(name: string, open: () => Promise<Store>): void {
  describeStoreTests(`ImportMarks contract: ${name}`, open, (store) => store.imports, IMPORT_MARKS_TESTS);
}
