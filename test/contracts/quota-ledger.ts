import assert from "node:assert/strict";
import type { QuotaChargeRecord, QuotaLedger } from "../../src/store/ports/quota-ledger.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { type StoreTests, describeStoreTests } from "./store-tests.ts";

const QUOTA_LEDGER_TESTS: StoreTests<QuotaLedger> = {
  "quota ledger: listed by id in pages; put stores charges as given and sets used to the live ones": async (
    quota,
  ) => {
    const charge = (id: string, over: Partial<QuotaChargeRecord> = {}): QuotaChargeRecord => ({
      id,
      keyId: "qc",
      month: "2026-07",
      idempotencyKey: null,
      chargedAt: 100,
      refundedAt: null,
      result: null,
      ...over,
    });
    const ledger = [
      charge("qc-1", { idempotencyKey: "i-1", result: '{"a":1}' }),
      charge("qc-2", { refundedAt: 150 }),
      charge("qc-3", { month: "2026-08", chargedAt: 200 }),
      charge("qc-4", { idempotencyKey: "i-2" }),
    ];
    // A charge of the destination holding an idempotency key the ledger gives to another charge.
    assert.equal(
      (
        await quota.chargeQuota({
          keyId: "qc",
          month: "2026-07",
          limit: null,
          chargeId: "qc-0",
          idempotencyKey: "i-2",
          at: 90,
        })
      ).status,
      "charged",
    );
    await quota.putQuotaCharges(ledger);
    await quota.putQuotaCharges(ledger);
    assert.equal(await quota.quotaUsed("qc", "2026-07"), 2);
    assert.equal(await quota.quotaUsed("qc", "2026-08"), 1);
    const mine = async (after: string | null, limit: number) =>
      (await quota.listQuotaCharges(after, limit)).filter((c) => c.keyId === "qc");
    assert.deepEqual(await mine("qc-", 100), ledger, "the one holding i-2 gave way");
    assert.deepEqual(await mine("qc-1", 2), ledger.slice(1, 3));
    const all: QuotaChargeRecord[] = [];
    for (let page = await quota.listQuotaCharges(null, 3); page.length;) {
      all.push(...page);
      page = await quota.listQuotaCharges(page[page.length - 1].id, 3);
    }
    assert.deepEqual(
      all.filter((c) => c.keyId === "qc"),
      ledger,
    );
    assert.deepEqual(
      all.map((c) => c.id),
      all.map((c) => c.id).toSorted(),
    );
    // What happened at the destination since is kept: a refund and a recorded result.
    assert.equal(await quota.refundQuota("qc", "qc-4", 300), true);
    await quota.recordChargeResult("qc", "qc-3", '{"b":2}');
    await quota.putQuotaCharges(ledger);
    assert.equal((await mine("qc-3", 1))[0].refundedAt, 300);
    assert.equal((await mine("qc-2", 1))[0].result, '{"b":2}');
    assert.equal(await quota.quotaUsed("qc", "2026-07"), 1);
    const replay = await quota.chargeQuota({
      keyId: "qc",
      month: "2026-07",
      limit: null,
      chargeId: "qc-9",
      idempotencyKey: "i-1",
      at: 400,
    });
    assert.deepEqual(replay, { status: "replayed", chargeId: "qc-1", used: 1, result: '{"a":1}' });
    await quota.putQuotaCharges([]);
  },
  "quota: charges up to the limit, then refuses; each month counts apart": async (quota) => {
    const charge = (chargeId: string, month: string, limit: number | null) =>
      quota.chargeQuota({ keyId: "q1", month, limit, chargeId, idempotencyKey: null, at: 100 });
    assert.equal(await quota.quotaUsed("q1", "2026-07"), 0);
    assert.deepEqual(await charge("c1", "2026-07", 2), { status: "charged", chargeId: "c1", used: 1 });
    assert.deepEqual(await charge("c2", "2026-07", 2), { status: "charged", chargeId: "c2", used: 2 });
    assert.deepEqual(await charge("c3", "2026-07", 2), { status: "exhausted", used: 2 });
    assert.deepEqual(await charge("c4", "2026-08", 2), { status: "charged", chargeId: "c4", used: 1 });
    assert.deepEqual(await charge("c5", "2026-08", null), { status: "charged", chargeId: "c5", used: 2 });
    assert.equal(await quota.quotaUsed("q1", "2026-07"), 2);
    assert.equal(await quota.quotaUsed("q1", "2026-08"), 2);
    assert.equal(await quota.quotaUsed("q2", "2026-07"), 0, "another key's quota is untouched");
  },
  "quota: a live charge's idempotency key replays it, with its result once recorded": async (quota) => {
    const charge = (chargeId: string, limit: number | null) =>
      quota.chargeQuota({
        keyId: "q3",
        month: "2026-07",
        limit,
        chargeId,
        idempotencyKey: "idem-1",
        at: 100,
      });
    assert.deepEqual(await charge("d1", 5), { status: "charged", chargeId: "d1", used: 1 });
    assert.deepEqual(await charge("d2", 5), { status: "replayed", chargeId: "d1", used: 1, result: null });
    await quota.recordChargeResult("q3", "d1", '{"ok":true}');
    assert.deepEqual(await charge("d3", 1), {
      status: "replayed",
      chargeId: "d1",
      used: 1,
      result: '{"ok":true}',
    });
    assert.deepEqual(
      await quota.chargeQuota({
        keyId: "q3",
        month: "2026-08",
        limit: 5,
        chargeId: "d4",
        idempotencyKey: "idem-1",
        at: 200,
      }),
      { status: "replayed", chargeId: "d1", used: 1, result: '{"ok":true}' },
      "a replay in a later month answers with the charge's own month",
    );
    assert.deepEqual(
      await quota.chargeQuota({
        keyId: "q4",
        month: "2026-07",
        limit: 5,
        chargeId: "d5",
        idempotencyKey: "idem-1",
        at: 200,
      }),
      { status: "charged", chargeId: "d5", used: 1 },
      "idempotency keys are per API key",
    );
    assert.equal(await quota.quotaUsed("q3", "2026-07"), 1);
    assert.equal(await quota.quotaUsed("q3", "2026-08"), 0);
  },
  "quota: a charge is refunded once; its idempotency key may then be charged again": async (quota) => {
    const charge = (chargeId: string, idempotencyKey: string | null) =>
      quota.chargeQuota({ keyId: "q5", month: "2026-07", limit: 2, chargeId, idempotencyKey, at: 100 });
    assert.deepEqual(await charge("e1", "idem-2"), { status: "charged", chargeId: "e1", used: 1 });
    assert.deepEqual(await charge("e2", null), { status: "charged", chargeId: "e2", used: 2 });
    assert.equal(await quota.refundQuota("q5", "e1", 150), true);
    assert.equal(await quota.refundQuota("q5", "e1", 160), false, "only once");
    assert.equal(await quota.refundQuota("q6", "e2", 160), false, "not another key's charge");
    assert.equal(await quota.refundQuota("q5", "nope", 160), false);
    assert.equal(await quota.quotaUsed("q5", "2026-07"), 1);
    assert.deepEqual(await charge("e3", "idem-2"), { status: "charged", chargeId: "e3", used: 2 });
    assert.deepEqual(await charge("e4", "idem-2"), {
      status: "replayed",
      chargeId: "e3",
      used: 2,
      result: null,
    });
    assert.deepEqual(await charge("e5", "idem-3"), { status: "exhausted", used: 2 });
    assert.equal(await quota.refundQuota("q5", "e2", 170), true);
    assert.equal(await quota.refundQuota("q5", "e3", 170), true);
    assert.equal(await quota.quotaUsed("q5", "2026-07"), 0);
    assert.deepEqual(await charge("e6", "idem-3"), { status: "charged", chargeId: "e6", used: 1 });
  },
};

/** The behaviour every QuotaLedger must share, over an empty, migrated store from `open`. */
export function quotaLedgerContract(name: string, open: () => Promise<Store>): void {
  describeStoreTests(`QuotaLedger contract: ${name}`, open, (store) => store.quota, QUOTA_LEDGER_TESTS);
}
