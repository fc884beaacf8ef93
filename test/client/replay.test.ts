import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { UpdownClient, UpdownError } from "../../client/src/index.ts";
import { HAND_MARKET } from "../helpers/app.ts";
import { serveTestApp, type ServedApp } from "../helpers/client.ts";
import { inReceiveOrder, marketEvents, NEXT_MARKET, recordMarket } from "../helpers/recorded-events.ts";

// The client's replay() against a running server: the NDJSON answer read with real fetch, and the
// WebSocket with the platform's own (Node's global WebSocket, as a browser's), the key as a subprotocol.

const A = marketEvents(HAND_MARKET);
const B = marketEvents(NEXT_MARKET, { startMs: HAND_MARKET.startTime * 1000 - 4_900, stepMs: 330 });
const RANGE = { from: "2026-07-23T23:00:00Z", to: "2026-07-24T02:00:00Z", speed: "max" as const };

let served: ServedApp;
before(async () => {
  served = await serveTestApp({ seed: false });
  await recordMarket(served.t.store, HAND_MARKET, A);
  await recordMarket(served.t.store, NEXT_MARKET, B);
});
after(() => served.close());

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("client: replay()", () => {
  for (const transport of ["ndjson", "websocket"] as const) {
    test(`over ${transport}: exactly the recorded messages, in receive order across markets`, async () => {
      const client = new UpdownClient({ baseUrl: served.baseUrl, apiKey: served.t.key });
      const assets = [HAND_MARKET.clobTokenUp, HAND_MARKET.clobTokenDown, NEXT_MARKET.slug];
      const got = await all(client.replay({ assets, ...RANGE, transport }));
      assert.deepEqual(
        got,
        inReceiveOrder(A, B).map((e) => e.message),
      );
    });

    test(`over ${transport}: a refusal is an UpdownError with the service's code`, async () => {
      const client = new UpdownClient({ baseUrl: served.baseUrl, apiKey: served.t.key });
      const unknown = client.replay({ assets: ["12345"], ...RANGE, transport });
      await assert.rejects(all(unknown), (err: unknown) => {
        assert.ok(err instanceof UpdownError);
        assert.equal(err.code, "RESOURCE_NOT_FOUND");
        assert.equal(err.status, 404);
        return true;
      });
      const keyless = new UpdownClient({ baseUrl: served.baseUrl });
      await assert.rejects(all(keyless.replay({ assets: [HAND_MARKET.slug], ...RANGE, transport })), {
        code: "UNAUTHORIZED",
      });
    });
  }

  test("breaking out of the loop ends the replay", async () => {
    const client = new UpdownClient({ baseUrl: served.baseUrl, apiKey: served.t.key });
    let n = 0;
    for await (const message of client.replay({
      assets: [HAND_MARKET.slug],
      ...RANGE,
      transport: "websocket",
    })) {
      assert.deepEqual(message, A[n].message);
      if (++n === 3) break;
    }
    assert.equal(n, 3);
  });
});
