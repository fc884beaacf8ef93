import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { METHODS } from "node:http";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import type { LightMyRequestResponse } from "fastify";
import type { SqliteStore } from "../../src/store/dialects/sqlite/sqlite-store.ts";
import { loadPlans } from "../../src/access/plans.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { checkAnswer, decoded } from "../helpers/contract.ts";
import { type RawAnswer, rawRequest } from "../helpers/raw-http.ts";

/**
 * The fuzz suite, generated from the committed API document (openapi.json): for every operation,
 * requests with valid, boundary and malformed values of each parameter (types, sizes, encodings,
 * unicode and control characters), duplicate and unknown parameters, odd methods and headers, bodies
 * where none belongs, and good, bad, missing and revoked keys; most through inject, and raw bytes on
 * a real socket for what inject cannot send (its requests skip Node's HTTP parser).
 *
 * Every answer: no 5xx; X-Request-Id and nosniff; every error the envelope, its request_id the
 * header's; every answer of an operation as the document declares it (test/helpers/contract.ts).
 * Afterwards the server answers a fixed set of requests exactly as before, and no store row was
 * added or removed.
 *
 * FUZZ_RUNS (default 3000) requests through inject and a fifteenth of that (at least 200) over the
 * socket, from FUZZ_SEED (default fixed). A failure prints FUZZ_SEED and FUZZ_PATH, which replay
 * exactly the failing case: `FUZZ_SEED=… FUZZ_PATH=… node --test test/e2e/fuzz.test.ts`.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);
const RAW_RUNS = Math.max(200, Math.round(RUNS / 15));
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const REPLAY_PATH = process.env.FUZZ_PATH;

// ---------------------------------------------------------------------------------------------------
// The operations, as the document states them.

interface Schema {
  type?: string;
  enum?: string[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: Schema;
}
interface Operation {
  id: string;
  method: string;
  path: string;
  parameters: Parameter[];
  /** Whether the operation takes an API key (the document's default security, unless `[]`). */
  keyed: boolean;
}

type DocumentOperation = { operationId: string; parameters?: Parameter[]; security?: unknown[] };
const DOCUMENT = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8")) as {
  paths: Record<string, Record<string, DocumentOperation>>;
};

const OPERATIONS: Operation[] = Object.entries(DOCUMENT.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({
    id: op.operationId,
    method: method.toUpperCase(),
    path,
    parameters: op.parameters ?? [],
    keyed: !(Array.isArray(op.security) && op.security.length === 0),
  })),
);

// ---------------------------------------------------------------------------------------------------
// Values.

/**
 * How a request is made: `valid` as a client following the document would make it; `boundary` at
 * the edges of each rule (and just past them); `hostile` anything, parameter by parameter.
 */
type Mode = "valid" | "boundary" | "hostile";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MAX_EPOCH_MS = Math.floor(MAX_SAFE / 1000);

/** Percent-encodes every byte of the text's UTF-8 but the unreserved characters. */
function percentEncode(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** The texts an attacker tries first. */
const NOTORIOUS = [
  "",
  " ",
  "null",
  "undefined",
  "[]",
  "{}",
  "true",
  "NaN",
  "Infinity",
  "-Infinity",
  "1e309",
  "-0",
  "0x10",
  "٣",
  "１",
  "\uFEFF1",
  "𝟙",
  "\u0000",
  "\r\n",
  "../../etc/passwd",
  "' OR 1=1 --",
  "<script>alert(1)</script>",
  "${jndi:ldap://x/a}",
  "__proto__",
  "constructor",
];

const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 60,
});

const controlChars = fc.string({
  unit: fc.constantFrom("\u0000", "\u0007", "\t", "\n", "\r", "\u007f", "\u0085", "\u2028", "\uffff"),
  maxLength: 8,
});

/** Text no parameter accepts: notorious inputs, unicode, control characters and sheer size. */
const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NOTORIOUS) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
  { weight: 1, arbitrary: controlChars },
  { weight: 1, arbitrary: fc.string({ unit: "binary-ascii", minLength: 200, maxLength: 3000 }) },
);

const BAD_NUMBERS = [
  "1e309",
  "Infinity",
  "-Infinity",
  "NaN",
  "-0",
  "1e21",
  "9".repeat(400),
  "0x10",
  "0b1",
  "0o7",
  "1e3",
  " 5",
  "5 ",
  "+5",
  "1.5",
  "1.0",
  `${MAX_SAFE + 1}`,
  `-${MAX_SAFE + 1}`,
  "18446744073709551616",
];

/** One arbitrary a mode: a hostile parameter is now and then valid or at a boundary too. */
function byMode(
  mode: Mode,
  valid: fc.Arbitrary<string>,
  boundary: fc.Arbitrary<string>,
  hostile: fc.Arbitrary<string>,
) {
  if (mode === "valid") return valid;
  if (mode === "boundary") return fc.oneof(valid, boundary);
  return fc.oneof(
    { weight: 2, arbitrary: valid },
    { weight: 1, arbitrary: boundary },
    { weight: 3, arbitrary: fc.oneof(hostile, hostileText) },
  );
}

function integerText(schema: Schema, mode: Mode): fc.Arbitrary<string> {
  const min = schema.minimum ?? -MAX_SAFE;
  const max = schema.maximum ?? MAX_SAFE;
  // Valid values mostly small: that is what pages are asked with, and what finds rows.
  const valid = fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 200) }).map(String);
  const boundary = fc.constantFrom(min, max, min - 1, max + 1, 0, -1).map(String);
  const hostile = fc.oneof(
    fc.constantFrom(...BAD_NUMBERS),
    fc.maxSafeInteger().map(String),
    fc.double().map(String),
  );
  return byMode(mode, valid, boundary, hostile);
}

function booleanText(mode: Mode): fc.Arbitrary<string> {
  return byMode(
    mode,
    fc.constantFrom("true", "false"),
    fc.constantFrom("TRUE", "False", "1", "0", ""),
    fc.constant("yes"),
  );
}

function enumText(values: string[], mode: Mode): fc.Arbitrary<string> {
  const value = fc.constantFrom(...values);
  const boundary = fc.oneof(
    value.map((v) => v.toUpperCase()),
    value.map((v) => ` ${v}`),
    value.map((v) => `${v}${v}`),
  );
  return byMode(mode, value, boundary, fc.constantFrom("", "desc,asc"));
}

/** Instants around the recorded data, so that valid ranges find rows. */
const recordedDay = fc.date({
  min: new Date("2026-07-23T23:00:00Z"),
  max: new Date("2026-07-24T01:00:00Z"),
  noInvalidDate: true,
});
const anyInstant = fc.date({ min: new Date(0), max: new Date(MAX_EPOCH_MS), noInvalidDate: true });

function timeText(mode: Mode): fc.Arbitrary<string> {
  const valid = fc.oneof(
    recordedDay.map((d) => d.toISOString()),
    recordedDay.map((d) => String(d.getTime())),
    recordedDay.map((d) => d.toISOString().replace("T", " ").replace("Z", "+02:00")),
    anyInstant.map((d) => d.toISOString()),
  );
  const boundary = fc.constantFrom(
    "0",
    "1970-01-01T00:00:00Z",
    String(MAX_EPOCH_MS),
    String(MAX_EPOCH_MS + 1),
    "2255-06-05T23:47:34.740991Z",
    "2255-06-05T23:47:34.740992Z",
    "1969-12-31T23:59:59.999999Z",
    "2026-07-24T00:00:00.1234567890Z",
    "2026-02-29",
    "2024-02-29",
    "2026-07-24T23:59:60Z",
  );
  const hostile = fc.oneof(
    fc.constantFrom("99999999999999999", "0001-01-01", "0099-01-01T00:00:00Z", "9999-12-31T23:59:59Z"),
    fc.constantFrom("2026-13-01", "2026-07-24T24:00:00Z", "2026-07-24T00:00:00+25:00", "-1", "1e12"),
    fc.date().map((d) => (Number.isNaN(d.getTime()) ? "Invalid Date" : d.toISOString())),
    fc.string({ minLength: 40, maxLength: 60, unit: "grapheme-ascii" }),
  );
  return byMode(mode, valid, boundary, hostile);
}

/** A slug: the markets the store holds, near misses, the length limit, and junk. */
function slugText(slugs: string[], mode: Mode): fc.Arbitrary<string> {
  const known = fc.constantFrom(...slugs);
  const boundary = fc.oneof(
    known.map((s) => s.toUpperCase()),
    fc.constantFrom(
      "btc-updown-5m-0",
      "btc-updown-5m-99999999999999999999",
      "btc-updown-7m-1784851200",
      "eth-updown-1hr-1784851200",
      "btc-updown-5m-1784851200.json",
      "bitcoin-up-or-down-july-23-2026-8pm-et",
    ),
    fc.string({ minLength: 200, maxLength: 201, unit: "grapheme-ascii" }),
  );
  return byMode(mode, known, boundary, fc.string({ minLength: 1, maxLength: 1000 }));
}

/** Escapes that decode to nothing valid, or to what a naive decoder trips on. */
const RAW_ESCAPES = [
  "%",
  "%%",
  "%E0%A4%A",
  "%ZZ",
  "%C0%AF",
  "%ED%A0%80",
  "%FF%FE",
  "%00",
  "%2F..%2F",
  "%25",
  "+",
  "a+b",
];

/** Percent-encoded; outside the valid mode, sometimes an escape sequence as it is. */
function encoded(text: fc.Arbitrary<string>, mode: Mode): fc.Arbitrary<string> {
  if (mode === "valid") return text.map(percentEncode);
  return fc.oneof(
    { weight: 12, arbitrary: text.map(percentEncode) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_ESCAPES) },
  );
}

function valueText(p: Parameter, slugs: string[], mode: Mode): fc.Arbitrary<string> {
  const s = p.schema;
  if (s.enum) return enumText(s.enum, mode);
  if (s.type === "integer") return integerText(s, mode);
  if (s.type === "boolean") return booleanText(mode);
  if (p.name.endsWith("time")) return timeText(mode);
  if (p.name === "slug") return slugText(slugs, mode);
  const known = fc.constantFrom("btc", "ETH", "sol", "5m", "1hr", "24h");
  return byMode(mode, known, fc.constantFrom("xrp", "7m", "BTC ", ""), fc.constant("doge"));
}

// ---------------------------------------------------------------------------------------------------
// Requests.

interface FuzzRequest {
  operation: string;
  mode: Mode;
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  remoteAddress: string;
}

interface Fixtures {
  slugs: string[];
  /** Starter, pro and enterprise. */
  keys: string[];
  revoked: string;
}

const ODD_METHODS = METHODS.filter((m) => !["CONNECT", "GET"].includes(m));

/** The query: declared parameters; beyond the valid mode also repeated, unknown and bare ones. */
function queryArb(op: Operation, slugs: string[], mode: Mode): fc.Arbitrary<string> {
  const declared = op.parameters.filter((p) => p.in === "query");
  const pairs = declared.map((p) =>
    fc.option(
      encoded(valueText(p, slugs, mode), mode).map((v) => `${p.name}=${v}`),
      { nil: null, freq: p.required ? 8 : 2 },
    ),
  );
  const names = declared.map((p) => p.name);
  const unknownName = fc.oneof(
    fc.constantFrom(
      "LIMIT",
      "limit[]",
      "__proto__",
      "constructor",
      "a.b",
      "x",
      "",
      ...names.map((n) => `${n}[0]`),
    ),
    printable.map(percentEncode),
  );
  const extra = fc.oneof(
    fc.tuple(unknownName, encoded(hostileText, mode)).map(([n, v]) => `${n}=${v}`),
    names.length > 0 ? fc.constantFrom(...names) : fc.constant("x"),
    fc.constantFrom("&", "=", "=x", "&&"),
  );
  const repeated =
    declared.length > 0
      ? fc
          .constantFrom(...declared)
          .chain((p) => encoded(valueText(p, slugs, mode), mode).map((v) => `${p.name}=${v}`))
      : fc.constant("x=1");
  const odd = mode === "valid" ? 0 : 2;
  return fc
    .tuple(
      fc.tuple(...pairs),
      fc.array(extra, { maxLength: odd }),
      fc.array(repeated, { maxLength: odd }),
      fc.boolean(),
    )
    .map(([declaredPairs, extras, repeats, reverse]) => {
      const all = [...declaredPairs.filter((p): p is string => p !== null), ...repeats, ...extras];
      if (reverse) all.reverse();
      return all.length === 0 ? "" : `?${all.join("&")}`;
    });
}

function pathArb(op: Operation, slugs: string[], mode: Mode): fc.Arbitrary<string> {
  const params = op.parameters.filter((p) => p.in === "path");
  return fc.tuple(...params.map((p) => encoded(valueText(p, slugs, mode), mode))).map((values) => {
    let path = op.path;
    params.forEach((p, i) => (path = path.replace(`{${p.name}}`, values[i])));
    return path;
  });
}

function keyArb(f: Fixtures, mode: Mode): fc.Arbitrary<string | null> {
  const good = fc.constantFrom(...f.keys);
  if (mode === "valid") return good;
  return fc.oneof(
    { weight: 6, arbitrary: good },
    { weight: 1, arbitrary: fc.constant(null) },
    {
      weight: 3,
      arbitrary: fc.oneof(
        fc.constantFrom("", " ", f.revoked, `ud_aaaaaaaa_${"a".repeat(32)}`, "ud_", "ud_x_y"),
        good.map((k) => `${k} `),
        good.map((k) => k.toUpperCase()),
        good.map((k) => k.slice(0, -1)),
        good.map((k) => `Bearer ${k}`),
        printable,
      ),
    },
  );
}

const benignHeaders = fc.record(
  {
    "x-request-id": fc.constantFrom("fuzz-1", "a".repeat(128)),
    "accept-encoding": fc.constantFrom("gzip", "br", "gzip, deflate, br"),
    origin: fc.constant("https://example.com"),
  },
  { requiredKeys: [] },
);

const oddHeaders = fc.record(
  {
    "x-request-id": fc.oneof(fc.constantFrom("fuzz-1", "a".repeat(129), "bad id", "ü"), printable),
    "accept-encoding": fc.constantFrom(
      "gzip",
      "br",
      "gzip, deflate, br, zstd",
      "*",
      "identity;q=0",
      "gzip;q=nope",
      "",
    ),
    "if-none-match": fc.oneof(fc.constant("*"), printable),
    origin: fc.constantFrom("https://example.com", "null", ""),
    "content-type": fc.constantFrom(
      "application/json",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/json; charset=utf-16",
      "",
    ),
    "x-forwarded-for": fc.constantFrom("1.2.3.4", "::1", "garbage", "1.2.3.4, 5.6.7.8"),
    accept: fc.constantFrom("application/json", "text/csv", "*/*", "application/xml", ""),
    range: fc.constantFrom("bytes=0-10", "bytes=-1", "items=0-9"),
    authorization: printable,
    "user-agent": printable,
    "access-control-request-method": fc.constantFrom("GET", "POST", "DELETE"),
  },
  { requiredKeys: [] },
);

const bodyArb = fc.option(
  fc.oneof(fc.constantFrom('{"a":1}', "{", "[]", "null", ""), hostileText, fc.string({ maxLength: 5000 })),
  { freq: 6, nil: undefined },
);

const ADDRESSES = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "192.168.1.7", "2001:db8::1", "127.0.0.1"];

const modeArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Mode>("valid") },
  { weight: 2, arbitrary: fc.constant<Mode>("boundary") },
  { weight: 4, arbitrary: fc.constant<Mode>("hostile") },
);

function requestOf(op: Operation, f: Fixtures, mode: Mode): fc.Arbitrary<FuzzRequest> {
  const valid = mode === "valid";
  return fc
    .record({
      method: valid
        ? fc.constant(op.method)
        : fc.oneof(
            { weight: 8, arbitrary: fc.constant(op.method) },
            { weight: 1, arbitrary: fc.constantFrom(...ODD_METHODS) },
          ),
      path: pathArb(op, f.slugs, mode),
      query: queryArb(op, f.slugs, mode),
      key: op.keyed ? keyArb(f, mode) : fc.option(keyArb(f, mode), { freq: 4 }),
      headers: valid ? benignHeaders : oddHeaders,
      payload: valid ? fc.constant(undefined) : bodyArb,
      remoteAddress: fc.constantFrom(...ADDRESSES),
    })
    .map(({ method, path, query, key, headers, payload, remoteAddress }) => ({
      operation: op.id,
      mode,
      method,
      url: path + query,
      headers: key === null || key === undefined ? headers : { ...headers, "x-api-key": key },
      payload,
      remoteAddress,
    }));
}

function requestArb(f: Fixtures): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(fc.constantFrom(...OPERATIONS), modeArb).chain(([op, mode]) => requestOf(op, f, mode));
}

// ---------------------------------------------------------------------------------------------------
// What every answer must be.

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/** What is wrong with an answer; empty when nothing is. */
function answerProblems(method: string, a: Answer): string[] {
  const problems: string[] = [];
  if (a.status >= 500) problems.push(`status ${a.status}: ${a.body.slice(0, 500)}`);
  const id = a.headers["x-request-id"];
  if (typeof id !== "string" || id === "") problems.push("no X-Request-Id");
  if (a.headers["x-content-type-options"] !== "nosniff") problems.push("no X-Content-Type-Options: nosniff");
  if (method === "HEAD") {
    if (a.body !== "") problems.push("a body on a HEAD answer");
    return problems;
  }
  if (a.status < 400) return problems;
  if (!String(a.headers["content-type"]).startsWith("application/json")) {
    problems.push(`error with content type ${String(a.headers["content-type"])}`);
    return problems;
  }
  problems.push(...checkAnswer({ method, route: undefined, status: a.status, headers: {}, body: a.body }));
  try {
    const body = JSON.parse(a.body) as { request_id?: unknown };
    if (body.request_id !== id)
      problems.push(`request_id ${String(body.request_id)} is not the header's ${String(id)}`);
  } catch {
    // Reported by checkAnswer.
  }
  return problems;
}

/** How to send the failing request again by hand. */
function reproduction(r: FuzzRequest): string {
  const headers = Object.entries(r.headers).map(([n, v]) => ` -H ${JSON.stringify(`${n}: ${v}`)}`);
  const body = r.payload === undefined ? "" : ` --data-raw ${JSON.stringify(r.payload.slice(0, 200))}`;
  return `curl -X ${r.method}${headers.join("")}${body} ${JSON.stringify(`http://127.0.0.1:8080${r.url}`)}`;
}

/** Runs a property; a failure names the seed and path that replay it. */
async function runProperty<T>(
  name: string,
  property: fc.IAsyncPropertyWithHooks<[T]>,
  numRuns: number,
): Promise<void> {
  const details = await fc.check(property, { seed: SEED, numRuns, path: REPLAY_PATH, endOnFailure: true });
  if (!details.failed) return;
  const counterexample = details.counterexample ? fc.stringify(details.counterexample[0]) : "(none)";
  assert.fail(
    `${name} failed after ${details.numRuns} runs.\n` +
      `Replay: FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath} node --test test/e2e/fuzz.test.ts\n` +
      `Case: ${counterexample}\n${String(details.errorInstance)}`,
  );
}

// ---------------------------------------------------------------------------------------------------
// The server before and after.

let t: TestApp;
let fixtures: Fixtures;
let baselineKey: string;
let port: number;

/** Requests whose answers must not change: one per operation family, errors included. */
function baselineUrls(slugs: string[]): string[] {
  const [resolved] = slugs;
  return [
    "/healthz",
    "/readyz",
    "/openapi.json",
    "/v1/markets",
    "/v1/markets?coin=eth&limit=3&offset=1",
    `/v1/markets/${resolved}`,
    `/v1/markets/${resolved}/snapshots?limit=5&include_orderbook=true`,
    `/v1/markets/${resolved}/snapshots/at?time=2026-07-24T00:12:00Z`,
    `/v1/markets/${resolved}/coverage`,
    `/v1/markets/${resolved}/snapshots/export?format=csv`,
    "/v1/btc/spot/latest",
    "/v1/eth/futures/snapshots?limit=3",
    "/v1/sol/spot/candles?interval=1h",
    "/v1/btc/futures/funding-rates?limit=5",
    "/v1/nothing",
    "/v1/markets?limit=0",
  ];
}

async function observe(): Promise<string[]> {
  const out: string[] = [];
  for (const url of baselineUrls(fixtures.slugs)) {
    const res = await t.app.inject({
      method: "GET",
      url,
      headers: { "x-api-key": baselineKey, "x-request-id": "baseline" },
      remoteAddress: "10.255.0.1",
    });
    out.push(`${url} ${res.statusCode} ${String(res.headers["content-type"])} ${res.body}`);
  }
  return out;
}

function rowCounts(): Record<string, number> {
  const db = (t.store as SqliteStore).db;
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
    name: string;
  }[];
  return Object.fromEntries(
    tables.map(({ name }) => [
      name,
      (db.prepare(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n,
    ]),
  );
}

let initial: { answers: string[]; rows: Record<string, number> };

before(async () => {
  // A starter plan that refuses something (older BTC markets, spot data) and an address throttle that
  // trips, so that 403 and 429 are among the answers too.
  const plans = loadPlans();
  plans.starter = {
    ...plans.starter,
    history: { ...plans.starter.history, btc: { "5m": 1, "15m": 1, "1h": 1, "4h": 1, "24h": 1 } },
    features: { ...plans.starter.features, spot: false },
  };
  t = await makeTestApp({ exchange: true, plans, config: { authFailuresPerMinute: 15 } });
  assert.equal(t.store.kind, "sqlite", "the fuzz suite counts rows in SQLite");
  baselineKey = await t.keyFor("enterprise");
  const listed = await t.get("/v1/markets?limit=100", { "x-api-key": baselineKey });
  const markets = listed.json().markets as {
    slug: string;
    polymarket_slug: string | null;
    market_type: string;
  }[];
  // Resolved 5m markets first (the baseline uses the first); hourly ones by their Polymarket alias too.
  const slugs = markets
    .filter((m) => m.market_type !== "4h")
    .map((m) => m.slug)
    .reverse();
  for (const m of markets) if (m.polymarket_slug) slugs.push(m.polymarket_slug);
  const revoked = await t.keys.create({ plan: "pro", account: "fuzz-revoked" });
  await t.keys.revoke(revoked.record.id);
  fixtures = {
    slugs,
    keys: [await t.keyFor("starter"), t.key, await t.keyFor("enterprise")],
    revoked: revoked.key,
  };
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  port = (t.app.server.address() as { port: number }).port;
  initial = { answers: await observe(), rows: rowCounts() };
});

after(() => t.close());

describe(`fuzz from openapi.json (seed ${SEED})`, () => {
  test(`${RUNS} requests through inject: no 5xx, every error the envelope, every answer as documented`, async (ctx) => {
    const start = t.clock.nowMicros();
    let sent = 0;
    const statuses = new Map<number, number>();
    const property = fc.asyncProperty(requestArb(fixtures), async (r) => {
      // A minute passes every 300 requests: the smaller plans' minutes fill up (429), then refill.
      if (++sent % 300 === 0) t.clock.advance(61_000_000);
      const mismatchesBefore = t.contractMismatches.length;
      const res: LightMyRequestResponse = await t.app.inject({
        method: r.method as "GET",
        url: r.url,
        headers: r.headers,
        payload: r.payload,
        remoteAddress: r.remoteAddress,
      });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      const problems = [
        ...answerProblems(r.method, {
          status: res.statusCode,
          headers: res.headers,
          // Answers are compressed when the request accepts an encoding (compression.ts).
          body: decoded(res.rawPayload, res.headers["content-encoding"]).toString("utf8"),
        }),
        ...t.contractMismatches.slice(mismatchesBefore),
      ];
      if (problems.length > 0) {
        throw new Error(
          `${r.method} ${r.url} (${r.operation}, ${r.mode}): ${problems.join("; ")}\n${reproduction(r)}`,
        );
      }
    });
    try {
      await runProperty("inject fuzz", property, RUNS);
    } finally {
      t.clock.set(start);
      const tally = [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`);
      ctx.diagnostic(`answers by status: ${tally.join(", ")}`);
    }
  });

  test(`${RAW_RUNS} raw requests on a real socket: every answer whole, no 5xx, errors in the envelope`, async () => {
    const property = fc.asyncProperty(rawRequestArb(fixtures), async (bytes) => {
      const answer = await rawRequest(port, bytes, { timeoutMs: 2000 }).catch((err: unknown) => err as Error);
      if (answer instanceof Error) throw new Error(`no answer: ${answer.message}`);
      const problems = rawAnswerProblems(answer);
      if (problems.length > 0) throw new Error(problems.join("; "));
    });
    await runProperty("raw-socket fuzz", property, RAW_RUNS);
  });

  test("afterwards the server answers as before, and nothing was written", async () => {
    assert.deepEqual(await observe(), initial.answers);
    assert.deepEqual(rowCounts(), initial.rows);
  });
});

// ---------------------------------------------------------------------------------------------------
// Raw bytes.

const RAW_METHODS = [
  "GET",
  "GET",
  "GET",
  "POST",
  "DELETE",
  "OPTIONS",
  "get",
  "G ET",
  "",
  "GET\u0000",
  "PRI",
  "M-SEARCH",
  "QUERY",
  "CONNECT",
];
const RAW_VERSIONS = [
  "HTTP/1.1",
  "HTTP/1.1",
  "HTTP/1.1",
  "HTTP/1.0",
  "HTTP/2.0",
  "HTTP/0.9",
  "http/1.1",
  "HTTP/1.10",
  "HTTP/1.1 x",
  "",
];

const rawHeaderName = fc.oneof(
  fc.constantFrom(
    "Content-Length",
    "Transfer-Encoding",
    "Host",
    "X-API-Key",
    "X-Request-Id",
    "Content-Type",
    "Upgrade",
    "Cookie",
    "X Bad",
    "Bad:Name",
    "",
    " Leading",
  ),
  fc.string({ unit: "binary-ascii", maxLength: 20 }),
);

const rawHeaderValue = fc.oneof(
  fc.constantFrom(
    "0",
    "5",
    "-1",
    "1e3",
    "chunked",
    "gzip, chunked",
    "chunked, identity",
    "websocket",
    "\u0000",
    "a\rb",
    " leading",
    "x".repeat(20_000),
  ),
  fc.string({ unit: "binary", maxLength: 60 }),
);

function rawRequestArb(f: Fixtures): fc.Arbitrary<Buffer> {
  const target = fc.oneof(
    { weight: 4, arbitrary: requestArb(f).map((r) => r.url) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "*",
        "http://localhost/v1/markets",
        "//",
        "/%",
        "/%E0%A4%A",
        "/v1/markets/é",
        "/v1/../v1/markets",
        "/v1/markets#frag",
        "/v1/markets?x=\u0000",
        "example.com:443",
      ),
    },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }).map((s) => `/${s}`) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 40_000 }).map((n) => `/${"a".repeat(n)}`) },
  );
  return fc
    .record({
      method: fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom(...RAW_METHODS) },
        { weight: 1, arbitrary: fc.string({ unit: "binary-ascii", maxLength: 8 }) },
      ),
      target,
      version: fc.constantFrom(...RAW_VERSIONS),
      headers: fc.array(fc.tuple(rawHeaderName, rawHeaderValue), { maxLength: 5 }),
      key: fc.option(fc.constantFrom(...f.keys, f.revoked), { freq: 3 }),
      host: fc.boolean(),
      body: fc.option(fc.string({ unit: "binary", maxLength: 200 }), { freq: 3 }),
      eol: fc.constantFrom("\r\n", "\r\n", "\r\n", "\n"),
      encoding: fc.constantFrom("utf8", "latin1") as fc.Arbitrary<BufferEncoding>,
    })
    .map(({ method, target, version, headers, key, host, body, eol, encoding }) => {
      const lines = [`${method} ${target} ${version}`];
      if (host) lines.push("Host: localhost");
      if (key) lines.push(`X-API-Key: ${key}`);
      for (const [name, value] of headers) lines.push(`${name}: ${value}`);
      // Asked of every request, so that an answered one ends its connection and the test reads to the end.
      lines.push("Connection: close");
      return Buffer.from(`${lines.join(eol)}${eol}${eol}${body ?? ""}`, encoding);
    });
}

/** What is wrong with an answer off the socket (interim 1xx answers are skipped by the parser). */
function rawAnswerProblems(a: RawAnswer): string[] {
  if (!Number.isInteger(a.status) || a.status < 100) return [`not an HTTP answer: ${a.body.slice(0, 200)}`];
  const problems = answerProblems("GET", { status: a.status, headers: a.headers, body: a.body });
  const length = a.headers["content-length"];
  if (a.status >= 400 && Number(length) !== a.bodyBytes)
    problems.push(`Content-Length ${length}, body ${a.bodyBytes}`);
  return problems;
}

// ---------------------------------------------------------------------------------------------------
// POST bodies and /mcp, on a server of their own: a valid body stores a strategy or a run, which the
// suite above must not see.

const BODY_RUNS = Math.max(150, Math.round(RUNS / 15));
const MCP_RUNS = Math.max(150, Math.round(RUNS / 15));

type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
};

const COMPONENTS = (DOCUMENT as unknown as { components: { schemas: Record<string, JsonSchema> } }).components
  .schemas;

/** JSON values no field expects, Object.prototype's names among them. */
const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, 0, -1, 1e308, "", "__proto__", "constructor", "toString", [], {}, [[]], {
    a: {},
  }),
  hostileText,
  fc.double(),
  fc.jsonValue({ maxDepth: 2 }),
);

/**
 * A value for a JSON schema (component references followed): valid most of the time in the valid
 * mode, with hostile values, unknown and prototype-named keys and missing required fields otherwise.
 */
function jsonFor(schema: JsonSchema, mode: Mode, depth = 0): fc.Arbitrary<unknown> {
  const own = schema.$ref ? COMPONENTS[schema.$ref.replace("#/components/schemas/", "")] : schema;
  const valid = validJsonFor(own ?? {}, mode, depth);
  if (mode === "valid") return valid;
  return fc.oneof(
    { weight: mode === "boundary" ? 6 : 3, arbitrary: valid },
    { weight: 1, arbitrary: hostileJson },
  );
}

function validJsonFor(s: JsonSchema, mode: Mode, depth: number): fc.Arbitrary<unknown> {
  if (depth > 4) return fc.constant(null);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((a) => jsonFor(a, mode, depth + 1)));
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case "integer":
      return fc.integer({ min: Math.max(s.minimum ?? -1000, -1e6), max: Math.min(s.maximum ?? 1000, 1e6) });
    case "number":
      return fc.double({
        min: Math.max(s.minimum ?? -1000, -1e6),
        max: Math.min(s.maximum ?? 1000, 1e6),
        noNaN: true,
      });
    case "boolean":
      return fc.boolean();
    case "string":
      return fc.oneof(
        fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 40, 40) }),
        fc.constantFrom("up_price", "gt", "btc", "5m", "buy", "Up", "2026-07-24T00:10:00Z"),
      );
    case "array":
      return fc.array(jsonFor(s.items ?? {}, mode, depth + 1), { maxLength: 3 });
    case "object":
      return objectFor(s, mode, depth);
    default:
      return fc.jsonValue({ maxDepth: 1 });
  }
}

function objectFor(s: JsonSchema, mode: Mode, depth: number): fc.Arbitrary<unknown> {
  const properties = Object.entries(s.properties ?? {});
  const required = new Set(s.required ?? []);
  const fields = properties.map(([name, p]) =>
    fc.option(
      jsonFor(p, mode, depth + 1).map((v) => [name, v] as const),
      { nil: null, freq: required.has(name) ? (mode === "valid" ? 20 : 4) : 2 },
    ),
  );
  const extraKey = fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "x", "");
  const extras =
    mode === "valid" ? fc.constant([]) : fc.array(fc.tuple(extraKey, hostileJson), { maxLength: 2 });
  return fc.tuple(fc.tuple(...fields), extras).map(([given, extra]) => {
    // Own properties, a "__proto__" key included, as JSON.parse would make them.
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const f of given) if (f !== null) out[f[0]] = f[1];
    for (const [k, v] of extra) out[k] = v;
    return out;
  });
}

interface PostOperation {
  id: string;
  path: string;
  schema: JsonSchema;
}

const POST_OPERATIONS: PostOperation[] = Object.entries(DOCUMENT.paths).flatMap(([path, methods]) =>
  Object.entries(
    methods as Record<
      string,
      DocumentOperation & { requestBody?: { content: Record<string, { schema: JsonSchema }> } }
    >,
  )
    .filter(([method, op]) => method === "post" && op.requestBody?.content["application/json"])
    .map(([, op]) => ({
      id: op.operationId,
      path,
      schema: op.requestBody!.content["application/json"].schema,
    })),
);

/** What is wrong with an answer to /mcp: a 5xx, an error off the envelope, or a JSON-RPC internal error. */
function mcpProblems(a: Answer): string[] {
  if (a.status !== 200) return answerProblems("POST", a);
  const problems = answerProblems("POST", a);
  try {
    const messages = [JSON.parse(a.body)].flat() as { error?: { code?: number } }[];
    for (const m of messages) {
      if (m.error?.code === -32603) problems.push(`JSON-RPC internal error: ${a.body.slice(0, 300)}`);
    }
  } catch {
    if (a.body !== "") problems.push(`not JSON: ${a.body.slice(0, 200)}`);
  }
  return problems;
}

describe(`fuzz of POST bodies and /mcp (seed ${SEED})`, () => {
  let s: TestApp;
  let key: string;
  let slugs: string[];
  let tools: { name: string; inputSchema: JsonSchema }[];
  const mcpHeaders = () => ({
    "x-api-key": key,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  });

  before(async () => {
    s = await makeTestApp();
    key = await s.keyFor("enterprise");
    slugs = ((await s.get("/v1/markets?limit=20")).json().markets as { slug: string }[]).map((m) => m.slug);
    const listed = await s.app.inject({
      method: "POST",
      url: "/mcp",
      headers: mcpHeaders(),
      payload: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    tools = listed.json().result.tools;
    assert.ok(tools.length >= 7);
  });
  after(() => s.close());

  test(`${BODY_RUNS} bodies for every POST operation: no 5xx, every error the envelope, as documented`, async () => {
    assert.deepEqual(POST_OPERATIONS.map((o) => o.id).sort(), [
      "generateStrategy",
      "replayStrategy",
      "runBacktest",
      "runStrategy",
    ]);
    const bodyOf = fc
      .tuple(fc.constantFrom(...POST_OPERATIONS), modeArb)
      .chain(([op, mode]) =>
        fc.tuple(fc.constant(op), fc.constant(mode), jsonFor(op.schema, mode), fc.constantFrom(...slugs)),
      );
    const property = fc.asyncProperty(bodyOf, async ([op, mode, body, slug]) => {
      // A market to run on, most of the time, so that valid bodies get as far as a run.
      // (A replay names its market by marketSlug.)
      const market = op.id === "replayStrategy" ? { marketSlug: slug } : { slug };
      const payload =
        typeof body === "object" && body !== null && !Array.isArray(body) && mode !== "hostile"
          ? { ...market, ...body }
          : body;
      const mismatchesBefore = s.contractMismatches.length;
      const res = await s.app.inject({
        method: "POST",
        url: op.path,
        headers: { "x-api-key": key, "content-type": "application/json" },
        payload: JSON.stringify(payload),
      });
      const problems = [
        ...answerProblems("POST", { status: res.statusCode, headers: res.headers, body: res.body }),
        ...s.contractMismatches.slice(mismatchesBefore),
      ];
      if (problems.length > 0)
        throw new Error(`POST ${op.path} ${JSON.stringify(payload)}: ${problems.join("; ")}`);
    });
    await runProperty("POST body fuzz", property, BODY_RUNS);
  });

  test(`${MCP_RUNS} JSON-RPC messages to /mcp: no 5xx, no internal error, refusals in the envelope`, async () => {
    const toolCall = fc.tuple(fc.constantFrom(...tools), modeArb).chain(([tool, mode]) =>
      fc.record({
        name: mode === "hostile" ? fc.oneof(fc.constant(tool.name), hostileJson) : fc.constant(tool.name),
        arguments: fc.oneof(
          { weight: 6, arbitrary: jsonFor(tool.inputSchema, mode) },
          { weight: 1, arbitrary: hostileJson },
        ),
      }),
    );
    const message = fc.oneof(
      {
        weight: 6,
        arbitrary: toolCall.map((params) => ({ jsonrpc: "2.0", id: 1, method: "tools/call", params })),
      },
      {
        weight: 2,
        arbitrary: fc.record({
          jsonrpc: fc.constantFrom("2.0", "1.0", undefined),
          id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null)),
          method: fc.constantFrom(
            "tools/list",
            "initialize",
            "ping",
            "prompts/list",
            "resources/read",
            "nope",
          ),
          params: fc.oneof(fc.constant({}), hostileJson),
        }),
      },
      { weight: 1, arbitrary: hostileJson },
      {
        weight: 1,
        arbitrary: fc.array(
          toolCall.map((params) => ({ jsonrpc: "2.0", id: 2, method: "tools/call", params })),
          { maxLength: 3 },
        ),
      },
    );
    const property = fc.asyncProperty(message, async (m) => {
      const res = await s.app.inject({
        method: "POST",
        url: "/mcp",
        headers: mcpHeaders(),
        payload: JSON.stringify(m),
      });
      const problems = mcpProblems({ status: res.statusCode, headers: res.headers, body: res.body });
      if (problems.length > 0) throw new Error(`POST /mcp ${JSON.stringify(m)}: ${problems.join("; ")}`);
    });
    await runProperty("MCP fuzz", property, MCP_RUNS);
  });
});
