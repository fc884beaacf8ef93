import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

/**
 * Names of Object.prototype's members as parameter values (issue 21, finding 6): a value looked up in
 * a plain object (`ALIASES[text]`) would find the prototype's member instead of nothing, and answer
 * 500. Every query and path parameter of the served document gets each of them: an enum parameter (or
 * one read against a table: market_type) answers 400 (404 in a path, which then names nothing), and no
 * parameter ever answers 5xx.
 */

const HOSTILE = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"];
/** Read against a table of spellings rather than declared as an enum (aliases: 1hr, 1H, ...). */
const TABLE_READ = new Set(["market_type", "interval", "venue"]);

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: { enum?: unknown[]; $ref?: string; type?: string };
}
type Operation = { parameters?: Parameter[] };

let t: TestApp;
let key: string;
let document: { paths: Record<string, Record<string, Operation>> };
let slug: string;

before(async () => {
  t = await makeTestApp();
  key = await t.keyFor("enterprise");
  document = (await t.app.inject({ url: "/openapi.json" })).json();
  slug = (await t.get("/v1/markets?coin=btc&market_type=5m&resolved=true&limit=1")).json().markets[0].slug;
});
after(() => t.close());

/** A valid value for each parameter a request needs besides the one under test. */
function validValue(p: Parameter, at: string): string | null {
  if (p.schema.enum) return String(p.schema.enum[0]);
  switch (p.name) {
    case "slug":
      return slug;
    case "coin":
      return "btc";
    case "market_type":
      return "5m";
    case "time":
      return at;
    case "size":
      return "10";
    default:
      return p.required ? "1" : null;
  }
}

function requestFor(
  path: string,
  parameters: Parameter[],
  tested: Parameter,
  value: string,
  at: string,
): string {
  let url = path;
  const query = new URLSearchParams();
  for (const p of parameters) {
    const v = p === tested ? value : validValue(p, at);
    if (v === null) continue;
    if (p.in === "path") url = url.replace(`{${p.name}}`, encodeURIComponent(v));
    else if (p.in === "query") query.append(p.name, v);
  }
  const qs = query.toString();
  return qs ? `${url}?${qs}` : url;
}

describe("Object.prototype's member names as parameter values", () => {
  test("market_type=__proto__ or constructor on /v1/markets and /v1/snapshots/export: 400", async () => {
    for (const value of HOSTILE) {
      for (const url of [
        `/v1/markets?market_type=${value}`,
        `/v1/snapshots/export?coin=btc&market_type=${value}`,
      ]) {
        const res = await t.app.inject({ url, headers: { "x-api-key": key } });
        assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
        assert.equal(res.json().error.code, "VALIDATION_ERROR", url);
      }
    }
  });

  test("every query and path parameter of the served document: never 5xx; enums 400 (404 in a path)", async () => {
    const at = (await t.get(`/v1/markets/${slug}`)).json().start_time as string;
    let requests = 0;
    for (const [path, methods] of Object.entries(document.paths)) {
      const operation = methods.get;
      if (!operation) continue;
      const parameters = operation.parameters ?? [];
      for (const p of parameters) {
        if (p.in !== "query" && p.in !== "path") continue;
        const enumLike = p.schema.enum !== undefined || p.schema.$ref !== undefined || TABLE_READ.has(p.name);
        for (const value of HOSTILE) {
          const url = requestFor(path, parameters, p, value, at);
          const res = await t.app.inject({ url, headers: { "x-api-key": key } });
          requests++;
          assert.ok(res.statusCode < 500, `${url}: ${res.statusCode} ${res.body}`);
          if (res.statusCode >= 400) assert.equal(res.json().success, false, url);
          if (enumLike) assert.equal(res.statusCode, p.in === "path" ? 404 : 400, `${url}: ${res.body}`);
        }
      }
    }
    assert.ok(requests > 200, `${requests} requests`);
  });

  test("a backtest body with __proto__ and constructor as keys and values: 400, never 5xx", async () => {
    const bodies = [
      { definition: JSON.parse('{"__proto__": {"x": 1}}'), slug },
      { definition: { constructor: 1 }, slug },
      { definition: { entry: { conditions: [{ feature: "up_price", op: "constructor", value: 1 }] } }, slug },
      { definition: { entry: { conditions: [{ feature: "toString", op: "gt", value: 1 }] } }, slug },
      { definition: { entry: { conditions: [JSON.parse('{"__proto__": "feature"}')] } }, slug },
      { preset: "__proto__", slug },
      { preset: "constructor", slug },
    ];
    for (const body of bodies) {
      const res = await t.app.inject({
        method: "POST",
        url: "/v1/backtest-ai/run",
        headers: { "x-api-key": key, "content-type": "application/json" },
        payload: JSON.stringify(body),
      });
      assert.ok(
        res.statusCode === 400 || res.statusCode === 422,
        `${JSON.stringify(body)}: ${res.statusCode} ${res.body}`,
      );
    }
  });
});
