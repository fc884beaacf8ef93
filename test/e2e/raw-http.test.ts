import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { checkAnswer } from "../helpers/contract.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { type RawAnswer, rawExchange, rawRequest } from "../helpers/raw-http.ts";

/**
 * Requests a client library would never send, written to a real socket: inject skips Node's HTTP
 * parser, and these are refused there or by the router before any route runs. Every one is answered
 * in the error envelope with X-Request-Id, a JSON Content-Type and an exact Content-Length.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestApp;
let port: number;

before(async () => {
  t = await makeTestApp();
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  port = (t.app.server.address() as { port: number }).port;
});
after(() => t.close());

interface Envelope {
  error: { code: string; message: string; details?: Record<string, unknown> };
  request_id: string;
}

/** The answer is a whole error envelope of this status and code. */
function assertEnvelope(answer: RawAnswer, status: number, code: string): Envelope {
  assert.equal(answer.status, status, answer.body);
  assert.equal(answer.headers["content-type"], "application/json; charset=utf-8");
  assert.equal(Number(answer.headers["content-length"]), answer.bodyBytes);
  assert.equal(answer.headers["x-content-type-options"], "nosniff");
  const id = answer.headers["x-request-id"];
  assert.ok(id, "X-Request-Id");
  assert.deepEqual(
    checkAnswer({ method: "GET", route: undefined, status, headers: {}, body: answer.body }),
    [],
  );
  const body = JSON.parse(answer.body) as Envelope;
  assert.equal(body.error.code, code);
  assert.equal(body.request_id, id);
  return body;
}

const get = (target: string, headers: string[] = []) =>
  [`GET ${target} HTTP/1.1`, "Host: localhost", ...headers, "Connection: close", "", ""].join("\r\n");

describe("refused by the HTTP parser: answered raw, then the connection is closed", () => {
  test("a malformed request line is 400 BAD_REQUEST", async () => {
    for (const request of [
      "GARBAGE\r\n\r\n",
      "GET /v1/markets HTTP/9.9\r\nHost: x\r\n\r\n",
      "GET v1 HTTP/1.1\r\n\r\n",
    ]) {
      const answer = await rawRequest(port, request);
      assertEnvelope(answer, 400, "BAD_REQUEST");
      assert.match(answer.headers["x-request-id"], UUID);
      assert.equal(answer.headers.connection, "close");
      assert.ok(answer.closed);
    }
  });

  test("a method HTTP does not have is 400 BAD_REQUEST, naming the reason", async () => {
    const body = assertEnvelope(
      await rawRequest(port, "FOO /v1/markets HTTP/1.1\r\nHost: x\r\n\r\n"),
      400,
      "BAD_REQUEST",
    );
    assert.equal(body.error.details?.reason, "HPE_INVALID_METHOD");
  });

  test("a control character in the path or a header name with a space is 400", async () => {
    assertEnvelope(await rawRequest(port, get("/v1/mar\u0001kets")), 400, "BAD_REQUEST");
    assertEnvelope(await rawRequest(port, get("/v1/markets", ["Bad Header: x"])), 400, "BAD_REQUEST");
  });

  test("headers over 16 KB are 431 HEADERS_TOO_LARGE", async () => {
    const answer = await rawRequest(port, get("/v1/markets", [`X-Big: ${"a".repeat(20_000)}`]));
    assertEnvelope(answer, 431, "HEADERS_TOO_LARGE");
    assert.ok(answer.closed);
  });

  test("a 200 KB request line still gets its whole answer, though the server stops reading", async () => {
    const answer = await rawRequest(port, get(`/v1/markets?x=${"a".repeat(200_000)}`));
    assertEnvelope(answer, 431, "HEADERS_TOO_LARGE");
  });

  test("a broken request after a good one on the same connection: the first answer is whole, the second an envelope", async () => {
    const request = `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/markets HTTP/1.1\r\nHo st: x\r\n\r\n`;
    const [first, second] = await rawExchange(port, request, 2);
    assert.equal(first.status, 200);
    assert.deepEqual(JSON.parse(first.body), { status: "ok" });
    assertEnvelope(second, 400, "BAD_REQUEST");
  });
});

describe("refused by the router or the app before any route runs", () => {
  test("a path that is not valid percent-encoding is 400 BAD_REQUEST, with the caller's request id", async () => {
    const answer = await rawRequest(port, get("/v1/markets/%E0%A4%A", ["X-Request-Id: mine-1"]));
    const body = assertEnvelope(answer, 400, "BAD_REQUEST");
    assert.equal(body.request_id, "mine-1");
    assert.deepEqual(body.error.details, { in: "path" });
    assertEnvelope(await rawRequest(port, get("/v1/%ZZ/spot/latest")), 400, "BAD_REQUEST");
  });

  test("a path parameter longer than the router's default of 100 reaches its schema", async () => {
    const key = [`X-API-Key: ${t.key}`];
    const long = await rawRequest(port, get(`/v1/markets/${"a".repeat(150)}`, key));
    assertEnvelope(long, 404, "RESOURCE_NOT_FOUND");
    const tooLong = await rawRequest(port, get(`/v1/markets/${"a".repeat(5000)}/snapshots`, key));
    const body = assertEnvelope(tooLong, 400, "VALIDATION_ERROR");
    assert.equal(body.error.details?.parameter, "slug");
    assert.equal(body.error.details?.rule, "maxLength");
  });

  test("a method a served path does not answer is 405 with Allow; an unknown path stays 404", async () => {
    const served = await rawRequest(
      port,
      `DELETE /v1/markets HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\nConnection: close\r\n\r\n`,
    );
    assertEnvelope(served, 405, "METHOD_NOT_ALLOWED");
    assert.equal(served.headers.allow, "GET, HEAD, OPTIONS");
    const ops = await rawRequest(
      port,
      "PUT /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    assertEnvelope(ops, 405, "METHOD_NOT_ALLOWED");
    const unknown = await rawRequest(
      port,
      `DELETE /v1/nothing HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\nConnection: close\r\n\r\n`,
    );
    assertEnvelope(unknown, 404, "RESOURCE_NOT_FOUND");
  });

  test("CONNECT, which Node would close unanswered, is 405: this is not a proxy", async () => {
    const answer = await rawRequest(
      port,
      "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
    );
    assertEnvelope(answer, 405, "METHOD_NOT_ALLOWED");
    assert.equal(answer.headers.allow, "GET, HEAD, OPTIONS");
    assert.ok(answer.closed);
  });

  test("a body on GET is 400 BAD_REQUEST, and is counted like any answered request", async () => {
    const answer = await rawRequest(
      port,
      `GET /v1/markets HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{"a":`,
    );
    const body = assertEnvelope(answer, 400, "BAD_REQUEST");
    assert.deepEqual(body.error.details, { in: "body" });
    assert.ok(answer.headers["x-ratelimit-remaining"]);
    const chunked = await rawRequest(
      port,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    );
    assertEnvelope(chunked, 400, "BAD_REQUEST");
  });

  test("an HTTP/1.1 request without Host is 400 BAD_REQUEST; HTTP/1.0 needs none", async () => {
    const answer = await rawRequest(port, "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
    const body = assertEnvelope(answer, 400, "BAD_REQUEST");
    assert.equal(body.error.details?.parameter, "Host");
    assert.equal((await rawRequest(port, "GET /healthz HTTP/1.0\r\n\r\n")).status, 200);
  });

  test("after all of the above the server answers as before", async () => {
    const answer = await rawRequest(port, get("/healthz"));
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body), { status: "ok" });
  });
});

describe("deadlines for receiving a request", () => {
  let slow: TestApp;
  let slowPort: number;
  before(async () => {
    slow = await makeTestApp({ seed: false, config: { headersTimeoutMs: 200, requestTimeoutMs: 400 } });
    await slow.app.listen({ port: 0, host: "127.0.0.1" });
    slowPort = (slow.app.server.address() as { port: number }).port;
  });
  after(() => slow.close());

  test("headers not finished within HEADERS_TIMEOUT_MS: 408 REQUEST_TIMEOUT, and the connection is closed", async () => {
    const started = performance.now();
    const answer = await rawRequest(slowPort, "GET /healthz HTTP/1.1\r\nHost: x\r\n");
    assertEnvelope(answer, 408, "REQUEST_TIMEOUT");
    assert.ok(answer.closed);
    // Node checks deadlines on a timer; the answer comes soon after the deadline, never before it.
    const waited = performance.now() - started;
    assert.ok(waited >= 150 && waited < 2000, `${waited} ms`);
  });

  test("a body not finished within REQUEST_TIMEOUT_MS: 408", async () => {
    const answer = await rawRequest(
      slowPort,
      // Outside /v1 no key is asked first, so the body is waited for.
      "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    );
    assertEnvelope(answer, 408, "REQUEST_TIMEOUT");
  });
});
