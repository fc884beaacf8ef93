import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigError, DEFAULT_CONFIG, loadConfig } from "../src/config.ts";

describe("configuration from the environment (docs/configuration.md)", () => {
  test("an empty environment gives the documented defaults", () => {
    assert.deepEqual(loadConfig({}), DEFAULT_CONFIG);
    assert.deepEqual(
      [DEFAULT_CONFIG.port, DEFAULT_CONFIG.host, DEFAULT_CONFIG.databaseUrl, DEFAULT_CONFIG.redisUrl],
      [8080, "127.0.0.1", "sqlite:./data/updown.db", null],
    );
    assert.deepEqual(
      [DEFAULT_CONFIG.authFailuresPerMinute, DEFAULT_CONFIG.trustProxy, DEFAULT_CONFIG.metricsToken],
      [30, false, null],
    );
  });

  test("every variable is read, and flags win over it", () => {
    const config = loadConfig(
      {
        PORT: "9000",
        REDIS_URL: "redis://127.0.0.1:6380",
        PLANS_FILE: "/etc/updown/plans.json",
        AUTH_FAILURES_PER_MINUTE: "5",
        TRUST_PROXY: "10.0.0.0/8,127.0.0.1",
        METRICS_TOKEN: "t0ken",
        PAGE_CACHE_MB: "0",
        SEED_DEMO: "false",
        SNAPSHOT_INTERVAL_MS: "500",
        POLYMARKET_GAMMA_URL: "http://127.0.0.1:1/gamma",
        POLYMARKET_CLOB_WS_URL: "ws://127.0.0.1:1/ws/market",
        POLYMARKET_RTDS_URL: "ws://127.0.0.1:1/rtds",
      },
      { port: 9001 },
    );
    assert.equal(config.port, 9001);
    assert.equal(config.redisUrl, "redis://127.0.0.1:6380");
    assert.equal(config.plansFile, "/etc/updown/plans.json");
    assert.equal(config.authFailuresPerMinute, 5);
    assert.equal(config.trustProxy, "10.0.0.0/8,127.0.0.1");
    assert.equal(config.metricsToken, "t0ken");
    assert.equal(config.pageCacheBytes, 0);
    assert.equal(config.seedDemo, false);
    assert.equal(config.snapshotIntervalMs, 500);
    assert.deepEqual(config.polymarket, {
      gammaUrl: "http://127.0.0.1:1/gamma",
      clobWsUrl: "ws://127.0.0.1:1/ws/market",
      rtdsUrl: "ws://127.0.0.1:1/rtds",
    });
    assert.equal(loadConfig({ TRUST_PROXY: "true" }).trustProxy, true);
    assert.equal(loadConfig({ TRUST_PROXY: "false" }).trustProxy, false);
  });

  test("an out-of-range number is a ConfigError naming the variable", () => {
    for (const [name, value] of [
      ["PORT", "70000"],
      ["AUTH_FAILURES_PER_MINUTE", "0"],
      ["PAGE_CACHE_MB", "lots"],
      ["SNAPSHOT_INTERVAL_MS", "50"],
    ]) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (err: Error) => err instanceof ConfigError && err.message.startsWith(`${name} must be an integer`),
      );
    }
  });
});
