import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { KEY_RECORD_TTL, KeyService } from "../../src/access/keys.ts";
import { loadPlans } from "../../src/access/plans.ts";
import { ManualClock } from "../../src/domain/time.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { openTestStore } from "../helpers/app.ts";

/** The key with one character of its secret changed: same id, same length, another key. */
function tampered(key: string, at: number): string {
  const c = key[at] === "A" ? "B" : "A";
  return key.slice(0, at) + c + key.slice(at + 1);
}

// A key verified once is compared with the bytes kept beside its cached record instead of hashed again
// (keys.ts): that shortcut must never admit a key that is not the record's.
describe("KeyService.authenticate with a record it keeps", () => {
  let store: Store;
  const clock = new ManualClock(Date.UTC(2026, 10, 26) * 1000);
  before(async () => {
    store = await openTestStore();
  });
  after(() => store.close());

  test("the key verified before is taken again; the same id with any other secret is refused", async () => {
    const keys = new KeyService(store.keys, clock, loadPlans());
    const { key, record } = await keys.create({ plan: "pro", account: "keys-test" });
    assert.equal((await keys.authenticate(key))?.id, record.id);
    assert.equal((await keys.authenticate(key))?.id, record.id, "again, from the kept record");
    for (const at of [key.length - 1, key.length - 32, key.length - 16]) {
      assert.equal(await keys.authenticate(tampered(key, at)), null, `secret changed at ${at}`);
    }
    // A refused key leaves the verified one as it was.
    assert.equal((await keys.authenticate(key))?.id, record.id);
    assert.equal(await keys.authenticate(`${key}x`), null, "longer than a key");
    assert.equal(await keys.authenticate(key.slice(0, -1)), null, "shorter than a key");
  });

  test("a wrong secret shown first does not make the right one fail, nor the reverse", async () => {
    const keys = new KeyService(store.keys, clock, loadPlans());
    const { key, record } = await keys.create({ plan: "pro", account: "keys-test-2" });
    assert.equal(await keys.authenticate(tampered(key, key.length - 5)), null);
    assert.equal((await keys.authenticate(key))?.id, record.id);
    assert.equal(await keys.authenticate(tampered(key, key.length - 5)), null);
  });

  test("revoked here: refused at once; revoked elsewhere: refused once the record is read again", async () => {
    const keys = new KeyService(store.keys, clock, loadPlans());
    const other = new KeyService(store.keys, clock, loadPlans());
    const first = await keys.create({ plan: "pro", account: "keys-test-3" });
    assert.ok(await keys.authenticate(first.key));
    await keys.revoke(first.record.id);
    assert.equal(await keys.authenticate(first.key), null);

    const second = await keys.create({ plan: "pro", account: "keys-test-3" });
    assert.ok(await keys.authenticate(second.key));
    // Another process (here another service over the same store) revokes it: within the TTL the
    // kept record still answers, after it the store's does.
    await other.revoke(second.record.id);
    assert.ok(await keys.authenticate(second.key), "within the TTL");
    clock.advance(KEY_RECORD_TTL);
    assert.equal(await keys.authenticate(second.key), null, "after the TTL");
  });
});
