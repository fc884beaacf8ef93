import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  bps,
  coinPrice,
  count,
  fixed,
  limit,
  MISSING,
  percent,
  percentOf,
  price,
  ratio,
  remainingOf,
  seconds,
  shares,
  UNLIMITED,
  usdc,
  usdcText,
} from "../../client/src/format.ts";

/** The one number format of the page, the CLI's text and the MCP tools' text (client/src/format.ts). */

describe("numbers", () => {
  test("fixed decimals per kind of value, thousands separators", () => {
    assert.equal(usdc(1234.5), "1,234.50");
    assert.equal(usdc(1234567.891), "1,234,567.89");
    assert.equal(usdcText(12), "12.00 USDC");
    assert.equal(price(0.55), "0.5500");
    assert.equal(price(0.123456), "0.1235");
    assert.equal(shares(1250), "1,250.00");
    assert.equal(bps(12.345), "12.3 bps");
    assert.equal(ratio(1.005), "1.01"); // half away from zero, on the number as written (toFixed says 1.00)
    assert.equal(ratio(2.5), "2.50");
    assert.equal(seconds(60), "60.0 s");
    assert.equal(count(12345), "12,345");
    assert.equal(count(0), "0");
  });

  test("a coin's price: 2 decimals, 4 for a coin priced under 10", () => {
    assert.equal(coinPrice(97123.456), "97,123.46");
    assert.equal(coinPrice(150.1), "150.10");
    assert.equal(coinPrice(2.51234), "2.5123");
    assert.equal(coinPrice(0.31209), "0.3121");
  });

  test("ROI, win rate and every other share as a percentage", () => {
    assert.equal(percent(0.1234), "12.34%");
    assert.equal(percent(-0.05), "-5.00%");
    assert.equal(percent(1), "100.00%");
    assert.equal(percent(12.5), "1,250.00%");
    assert.equal(percentOf(37.5), "37.50%");
  });

  test("one minus sign, the ASCII hyphen-minus; nothing rounds to a signed zero", () => {
    for (const text of [usdc(-1234.5), price(-0.25), percent(-0.1), bps(-3), ratio(-0.5), coinPrice(-5)]) {
      assert.match(text, /^-\d/, text);
      assert.doesNotMatch(text, /\u2212/);
    }
    assert.equal(usdc(-1234.5), "-1,234.50");
    assert.equal(usdc(-0.001), "0.00");
    assert.equal(usdc(-0), "0.00");
    assert.equal(percent(-0.00001), "0.00%");
    assert.equal(bps(-0.04), "0.0 bps");
    // What the text says parses back, once the separators are taken out.
    assert.equal(Number(usdc(-1234.5).replaceAll(",", "")), -1234.5);
  });

  test("what is missing reads n/a; a limit that does not exist reads unlimited, once", () => {
    for (const write of [
      usdc,
      usdcText,
      price,
      shares,
      coinPrice,
      percent,
      percentOf,
      bps,
      ratio,
      seconds,
      count,
    ])
      for (const missing of [null, undefined, Number.NaN, Number.POSITIVE_INFINITY])
        assert.equal(write(missing), MISSING, `${write.name}(${missing})`);
    assert.equal(MISSING, "n/a");
    assert.equal(limit(null), UNLIMITED);
    assert.equal(limit(1000), "1,000");
    assert.equal(remainingOf(940, 1000), "940 of 1,000");
    assert.equal(remainingOf(null, null), "unlimited");
    assert.equal(remainingOf(5, null), "unlimited");
    assert.equal(UNLIMITED, "unlimited");
  });

  test("fixed: any number of decimals, the same rules", () => {
    assert.equal(fixed(1234.5678, 3), "1,234.568");
    assert.equal(fixed(-1234.5678, 0), "-1,235");
    assert.equal(fixed(0.4, 0), "0");
    assert.equal(fixed(-0.4, 0), "0");
  });
});
