import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFINITION_SCHEMA, parseStoredDefinition } from "../../src/backtest/definition.ts";
import { normalizeDefinition } from "../../src/backtest/input.ts";

test("a definition stored before count_rebates existed reads with it false, in the schema's field order", () => {
  const now = normalizeDefinition({ side: "UP", exit: { take_profit_pct: 10 } }, "");
  const { count_rebates: _added, ...before } = now;
  const read = parseStoredDefinition(JSON.stringify(before));
  assert.equal(read.count_rebates, false);
  assert.equal(JSON.stringify(read), JSON.stringify(now));
  assert.deepEqual(Object.keys(read), Object.keys(DEFINITION_SCHEMA.properties));
  // A definition stored with the field keeps it.
  assert.equal(parseStoredDefinition(JSON.stringify({ ...now, count_rebates: true })).count_rebates, true);
});
