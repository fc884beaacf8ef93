import { randomUUID } from "node:crypto";
import { type IncomingMessage, maxHeaderSize, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { ConnectionError, FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { type Clock, isoMicros } from "../domain/time.ts";
import { ALWAYS_HEADERS, CORS_HEADERS } from "./cors.ts";
import { ApiError, badRequest, errorEnvelope } from "./errors.ts";
import { JSON_TYPE } from "./media-types.ts";

/**
 * Answers to requests that never reach a route: those Node's HTTP parser refuses (a malformed
 * request line or header, oversized headers, a request not received in time) and those Fastify's
 * router refuses (a path that is not valid percent-encoding). Each gets the error envelope with
 * X-Request-Id like any other error, never the framework's or the parser's own body.
 */

/** What a parser-level error is, to the client. */
function answerTo(code: string | undefined): ApiError {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return new ApiError(
        "HEADERS_TOO_LARGE",
        `The request line and headers together exceed ${maxHeaderSize / 1024} KB.`,
      );
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new ApiError(
        "REQUEST_TIMEOUT",
        "The request was not received in time; the connection is closed.",
      );
    case "HPE_INVALID_METHOD":
      return badRequest("The request's method is not an HTTP method.", { reason: code });
    default:
      return badRequest("The request is not well-formed HTTP/1.1.", { reason: code ?? "unknown" });
  }
}

/** A whole HTTP/1.1 answer as text, for a socket no Fastify reply exists for. */
export function rawAnswer(
  err: ApiError,
  requestId: string,
  now: number,
  extra: Record<string, string> = {},
): string {
  const body = JSON.stringify(errorEnvelope(err, requestId, isoMicros(now)));
  const headers: Record<string, string> = {
    "content-type": JSON_TYPE,
    "content-length": String(Buffer.byteLength(body)),
    "x-request-id": requestId,
    ...ALWAYS_HEADERS,
    ...CORS_HEADERS,
    ...extra,
    date: new Date(Math.floor(now / 1000)).toUTCString(),
    connection: "close",
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status]}\r\n${head.join("")}\r\n${body}`;
}

/** How long a refused connection is read (and what arrives dropped) before it is closed. */
const LINGER_MS = 1000;

/** Sockets already refused: a parser in error reports every later chunk again. */
const answered = new WeakSet<Socket>();

/** The socket's response in progress, if any (Node keeps it there; it has no public accessor). */
function inFlight(socket: Socket): ServerResponse | null {
  return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? null;
}

/**
 * Writes the answer and closes. Closing at once while the client is still sending makes the kernel
 * reset the connection, and the client can lose the answer; so after a parse error the socket is
 * read for up to LINGER_MS (what arrives is dropped: the parser stays in error). After a timeout the
 * parser is not in error and would go on reading requests, so the socket is closed once written.
 */
function refuse(socket: Socket, answer: string, timedOut: boolean): void {
  if (socket.destroyed || !socket.writable) return;
  if (timedOut) {
    socket.end(answer, () => socket.destroy());
    return;
  }
  socket.end(answer);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once("close", () => clearTimeout(timer));
}

/**
 * Fastify's clientErrorHandler: answers in the envelope, then closes. Answers on a connection go out
 * in order: when a complete request before the broken one is still being answered, the refusal waits
 * for that answer. An answer under way for the broken request itself is abandoned, or, if it already
 * started, the connection is closed: writing into it would corrupt it.
 */
export function clientErrorHandler(clock: Clock): (err: ConnectionError, socket: Socket) => void {
  return (err, socket) => {
    if (err.code === "ECONNRESET" || socket.destroyed || answered.has(socket)) return;
    answered.add(socket);
    const answer = rawAnswer(answerTo(err.code), randomUUID(), clock.nowMicros());
    const timedOut = err.code === "ERR_HTTP_REQUEST_TIMEOUT";
    const previous = inFlight(socket);
    if (!previous || previous.writableFinished) {
      refuse(socket, answer, timedOut);
    } else if (previous.req.complete) {
      previous.once("close", () => refuse(socket, answer, timedOut));
    } else if (previous.headersSent) {
      socket.destroy();
    } else {
      refuse(socket, answer, timedOut);
    }
  };
}

/**
 * The server's `connect` listener. Node hands a CONNECT request's socket to it and, without one,
 * closes the connection unanswered; this is not a proxy, so the answer is 405. What the client sends
 * after it (the bytes it meant to tunnel) is read and dropped until the socket closes.
 */
export function connectRefusal(clock: Clock): (req: IncomingMessage, socket: Duplex) => void {
  return (req, socket) => {
    const err = new ApiError("METHOD_NOT_ALLOWED", "CONNECT is not served: this server is not a proxy.");
    socket.on("error", () => socket.destroy());
    socket.end(rawAnswer(err, randomUUID(), clock.nowMicros(), { allow: "GET, HEAD, OPTIONS" }));
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once("close", () => clearTimeout(timer));
  };
}

/** Fastify's frameworkErrors: the router's refusals, before any route or hook runs. */
export function frameworkErrorHandler(
  clock: Clock,
): (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => void {
  return (err, req, reply) => {
    const apiErr =
      err.code === "FST_ERR_BAD_URL"
        ? badRequest("The path is not valid percent-encoded UTF-8.", { in: "path" })
        : badRequest(`The path cannot be routed: ${err.message}`, { in: "path" });
    const body = JSON.stringify(errorEnvelope(apiErr, req.id, isoMicros(clock.nowMicros())));
    void reply
      .code(apiErr.status)
      .headers({ "x-request-id": req.id, ...ALWAYS_HEADERS, ...CORS_HEADERS })
      .type(JSON_TYPE)
      .send(body);
  };
}
