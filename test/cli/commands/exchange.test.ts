import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { systemClock } from "../../../src/domain/time.ts";
import { openStore } from "../../../src/store/open.ts";
import { BinanceUpstream } from "../../helpers/binance-upstream.ts";
import { BIN } from "../../helpers/paths.ts";

const HOUR = 3600_000;
/** A past day the local upstream has data for. */
const DAY = Date.UTC(2026, 6, 24);

let dir: string;
let upstream: BinanceUpstream;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "updown-backfill-"));
  upstream = await BinanceUpstream.start(systemClock, DAY - HOUR, DAY + 2 * HOUR);
});
after(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the command in a child process; the upstream answers from this one, so not spawnSync. */
function updown(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: {
        ...process.env,
        DATABASE_URL: `sqlite:${join(dir, "backfill.db")}`,
        BINANCE_SPOT_REST_URL: upstream.urls.spotRest,
        BINANCE_FUTURES_REST_URL: upstream.urls.futuresRest,
        ...env,
      },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("updown backfill binance", () => {
  test("fills the range, shows progress on stderr and a summary on stdout; a rerun adds nothing", async () => {
    const args = [
      "backfill",
      "binance",
      "--from",
      "2026-07-24T00:00:00Z",
      "--to",
      String(DAY + HOUR),
      "--coin",
      "btc",
      "--venue",
      "futures",
      "--kinds",
      "candles,funding-rates",
    ];
    const first = await updown(args);
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stderr,
      /Backfilling Binance 2026-07-24T00:00:00.000000Z to 2026-07-24T01:00:00.000000Z/,
    );
    assert.equal(
      first.stdout,
      "futures\tbtc\tcandles\t61 fetched\t61 new\nfutures\tbtc\tfunding\t1 fetched\t1 new\n62 new rows; waited 0 s for Binance's limits\n",
    );
    const again = await updown(args);
    assert.match(again.stdout, /^0 new rows/m);
    const store = await openStore(`sqlite:${join(dir, "backfill.db")}`);
    try {
      assert.equal(await store.exchange.countCandles("btc", "futures", "1m"), 61);
      assert.equal(await store.exchange.countCandles("btc", "spot", "1m"), 0);
    } finally {
      await store.close();
    }
  });

  test("a Binance address given by its flag wins over its variable", async () => {
    const args = ["backfill", "binance", "--from", String(DAY), "--to", String(DAY + 10 * 60_000)];
    const only = ["--coin", "sol", "--venue", "futures", "--kinds", "candles"];
    // The variable names a path the upstream has nothing under (404); only the flag's address answers.
    const wrong = `${upstream.urls.futuresRest}/elsewhere`;
    const env = { BINANCE_FUTURES_REST_URL: wrong, DATABASE_URL: `sqlite:${join(dir, "flag.db")}` };
    const byFlag = await updown(
      [...args, ...only, "--binance-futures-rest-url", upstream.urls.futuresRest],
      env,
    );
    assert.equal(byFlag.code, 0, byFlag.stderr);
    assert.match(byFlag.stdout, /^futures\tsol\tcandles\t11 fetched\t11 new$/m);
    const byVariable = await updown([...args, ...only], env);
    assert.equal(byVariable.code, 1, byVariable.stderr);
    assert.match(
      byVariable.stderr,
      /stopped: Binance answered 404 to http:\/\/127\.0\.0\.1:\d+\/elsewhere\/fapi/,
    );
  });

  test("a ban (418) stops with exit status 1 and says so", async () => {
    upstream.failNext("/api/v3/klines", 418, { "retry-after": "300" });
    const res = await updown([
      "backfill",
      "binance",
      "--from",
      String(DAY),
      "--to",
      String(DAY + HOUR),
      "--coin",
      "eth",
      "--venue",
      "spot",
    ]);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /stopped: Binance banned this address \(HTTP 418\).*retry after 300 s/);
  });

  test("usage errors exit 2; --help describes the command", async () => {
    for (const args of [
      ["backfill", "binance"],
      ["backfill", "binance", "--from", "yesterday"],
      ["backfill", "binance", "--from", "2026-07-24T00:00:00Z", "--coin", "b@d"],
      ["backfill", "binance", "--from", "2026-07-24T00:00:00Z", "--venue", "margin"],
      ["backfill", "bybit", "--from", "2026-07-24T00:00:00Z"],
    ]) {
      const res = await updown(args);
      assert.equal(res.code, 2, args.join(" "));
      assert.match(res.stderr, /^error: /);
    }
    const help = await updown(["backfill", "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^updown backfill binance --from TIME/);
    assert.match((await updown(["--help"])).stdout, /backfill {2}Fill a time range of Binance/);
  });
});
