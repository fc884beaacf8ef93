import assert from "node:assert/strict";
import { test } from "node:test";
import { isoMicros } from "../../src/domain/time.ts";
import { writeIsoMicros } from "../../src/wire/iso-bytes.ts";
import { JsonBytes } from "../../src/wire/json-bytes.ts";

function written(us: number): string {
  const w = new JsonBytes(8);
  w.ascii("x");
  writeIsoMicros(w, us);
  return w.text(1);
}

test("writeIsoMicros writes isoMicros' text, whichever days come in whatever order", () => {
  const times = [0, 1784851199_999999, 1774975800_943587, 1784851200_000000, 951782400_000001];
  // More days than are kept, back and forth, so that days leave the cache and come back.
  for (let day = 0; day < 150; day++) {
    times.push((19_000 + ((day * 37) % 100)) * 86_400_000_000 + day * 1_234_567_891);
  }
  times.push(times[3], times[1], 1784851199_000000 + 0.5);
  for (const us of times) assert.equal(written(us), isoMicros(us), String(us));
});
