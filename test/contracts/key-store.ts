import assert from "node:assert/strict";
import type { KeyStore } from "../../src/store/ports/key-store.ts";
import type { Store } from "../../src/store/ports/store.ts";
import { type StoreTests, describeStoreTests } from "./store-tests.ts";

const KEY_STORE_TESTS: StoreTests<KeyStore> = {
  "API keys: stored, found, listed and revoked once": async (keys) => {
    const record = {
      id: "AbCdEf12",
      hash: "a".repeat(64),
      plan: "pro" as const,
      account: "acme",
      name: "n",
      createdAt: 1,
      revokedAt: null,
      perMinuteLimit: null,
      perDayLimit: null,
    };
    await keys.insertApiKey(record);
    assert.deepEqual(await keys.findApiKey("AbCdEf12"), record);
    assert.equal(await keys.findApiKey("zzzzzzzz"), null);
    assert.equal((await keys.listApiKeys()).length, 1);
    assert.equal(await keys.revokeApiKey("AbCdEf12", 5), true);
    assert.equal(await keys.revokeApiKey("AbCdEf12", 6), false);
    assert.equal((await keys.findApiKey("AbCdEf12"))?.revokedAt, 5);
  },
  "API keys: an account holds at most maxActive active keys of a plan; revoked keys do not count": async (
    keys,
  ) => {
    const key = (id: string, account: string, plan: "starter" | "pro") => ({
      id,
      hash: "b".repeat(64),
      plan,
      account,
      name: null,
      createdAt: 10,
      revokedAt: null,
      perMinuteLimit: 60,
      perDayLimit: 86_400_000_000,
    });
    assert.equal(await keys.insertApiKey(key("lim00001", "limited", "starter"), 2), true);
    assert.equal(await keys.insertApiKey(key("lim00002", "limited", "starter"), 2), true);
    assert.equal(
      await keys.insertApiKey(key("lim00003", "limited", "starter"), 2),
      false,
      "a third is refused",
    );
    assert.equal(await keys.findApiKey("lim00003"), null, "a refused key is not stored");
    assert.equal(await keys.countActiveKeys("limited", "starter"), 2);
    assert.equal(await keys.insertApiKey(key("lim00004", "limited", "pro"), 2), true, "another plan");
    assert.equal(await keys.insertApiKey(key("lim00005", "other", "starter"), 2), true, "another account");
    assert.equal(await keys.insertApiKey(key("lim00006", "limited", "starter"), null), true, "no limit");
    assert.equal(await keys.countActiveKeys("limited", "starter"), 3);
    assert.equal(await keys.revokeApiKey("lim00001", 11), true);
    assert.equal(await keys.revokeApiKey("lim00006", 11), true);
    assert.equal(await keys.countActiveKeys("limited", "starter"), 1);
    assert.equal(await keys.insertApiKey(key("lim00007", "limited", "starter"), 2), true, "room again");
    assert.equal(await keys.countActiveKeys("limited", "starter"), 2);
    assert.equal(await keys.countActiveKeys("nobody", "starter"), 0);
    assert.deepEqual(await keys.findApiKey("lim00007"), key("lim00007", "limited", "starter"));
  },
  "API keys: put stores a record as given, a repeat changes nothing, a revocation on either side stays":
    async (keys) => {
      const record = {
        id: "put00001",
        hash: "c".repeat(64),
        plan: "enterprise" as const,
        account: "copied",
        name: null,
        createdAt: 20,
        revokedAt: null,
        perMinuteLimit: 5000,
        perDayLimit: 1_000_000,
      };
      await keys.putApiKey(record);
      await keys.putApiKey(record);
      assert.deepEqual(await keys.findApiKey("put00001"), record);
      await keys.putApiKey({ ...record, plan: "pro", name: "renamed", perMinuteLimit: null });
      assert.deepEqual(await keys.findApiKey("put00001"), {
        ...record,
        plan: "pro",
        name: "renamed",
        perMinuteLimit: null,
      });
      await keys.putApiKey({ ...record, revokedAt: 30 });
      assert.equal((await keys.findApiKey("put00001"))?.revokedAt, 30);
      await keys.putApiKey(record);
      assert.equal((await keys.findApiKey("put00001"))?.revokedAt, 30, "not revived");
      await keys.putApiKey({ ...record, revokedAt: 25 });
      assert.equal((await keys.findApiKey("put00001"))?.revokedAt, 25, "the earlier revocation");
      await keys.putApiKey({ ...record, revokedAt: 40 });
      assert.equal((await keys.findApiKey("put00001"))?.revokedAt, 25);
      const limited = { ...record, id: "put00002", plan: "starter" as const, account: "full" };
      await keys.insertApiKey({ ...limited, id: "put00003" }, 1);
      await keys.putApiKey(limited);
      assert.equal(await keys.countActiveKeys("full", "starter"), 2, "put is not limited per account");
    },
};

/** The behaviour every KeyStore must share, over an empty, migrated store from `open`. */
export function keyStoreContract(name: string, open: () => Promise<Store>): void {
  describeStoreTests(`KeyStore contract: ${name}`, open, (store) => store.keys, KEY_STORE_TESTS);
}
