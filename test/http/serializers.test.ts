import assert from "node:assert/strict";
import { test } from "node:test";
import { compileOncePerSchema } from "../../src/http/serializers.ts";

const SHARED = { Error: { $id: "Error", type: "object", properties: { code: { type: "string" } } } };
const ERROR_ANSWER = {
  $ref: "Error#",
  description: "An error",
  headers: { "x-request-id": { type: "string" } },
};
const route = (url: string, schema: object) => ({ method: "GET", url, httpStatus: "400", schema });

test("one serializer per distinct response schema, shared by routes and by apps over the same schemas", () => {
  const first = compileOncePerSchema(structuredClone(SHARED), {});
  const second = compileOncePerSchema(structuredClone(SHARED), {});
  const a = first(route("/v1/a", structuredClone(ERROR_ANSWER)));
  assert.equal(first(route("/v1/b", structuredClone(ERROR_ANSWER))), a, "another route, same schema");
  assert.equal(second(route("/v1/a", structuredClone(ERROR_ANSWER))), a, "another app, same schemas");
  const other = first(route("/v1/c", { ...ERROR_ANSWER, description: "Another error" }));
  assert.notEqual(other, a);
  const otherShared = compileOncePerSchema({ Error: { ...SHARED.Error, required: ["code"] } }, {});
  assert.notEqual(otherShared(route("/v1/a", structuredClone(ERROR_ANSWER))), a, "other shared schemas");
});

test("a serializer writes what fast-json-stringify writes for its schema: known fields only, by their types", () => {
  const serialize = compileOncePerSchema(SHARED, {})(route("/v1/a", ERROR_ANSWER));
  assert.equal(serialize({ code: 42, secret: "left out" }), '{"code":"42"}');
  assert.equal(serialize({ code: "BAD_REQUEST" }), '{"code":"BAD_REQUEST"}');
});
