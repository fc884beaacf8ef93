import { connect } from "node:net";

/** An HTTP/1.1 answer as it came off the socket. */
export interface RawAnswer {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
  /** Bytes of the body received, to hold against Content-Length. */
  bodyBytes: number;
  /** Whether the server closed the connection after it. */
  closed: boolean;
}

/** Splits the first final answer (after any interim 1xx ones) out of what a socket received. */
export function parseAnswer(received: Buffer, closed: boolean): RawAnswer | null {
  const end = received.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const [statusLine, ...lines] = received.subarray(0, end).toString("latin1").split("\r\n");
  if (/^HTTP\/1\.[01] 1\d\d /.test(statusLine)) return parseAnswer(received.subarray(end + 4), closed);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = headers["content-length"] === undefined ? null : Number(headers["content-length"]);
  const rest = received.subarray(end + 4);
  if (length !== null && rest.length < length) return null;
  const bodyBuf = length === null ? rest : rest.subarray(0, length);
  return {
    status: Number(statusLine.split(" ")[1]),
    headers,
    body: bodyBuf.toString("utf8"),
    bodyBytes: bodyBuf.length,
    closed,
  };
}

/**
 * Writes `request` (raw bytes, sent as they are: no client library tidies them) to a fresh connection
 * and reads until the server ends the connection (`closed`), or until `timeoutMs` passes with a whole
 * answer received; the first answer is returned.
 */
export function rawRequest(
  port: number,
  request: string | Buffer,
  { timeoutMs = 5000 }: { timeoutMs?: number } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const received = Buffer.concat(chunks);
      const answer = parseAnswer(received, closed);
      if (answer) resolve(answer);
      else reject(new Error(`no whole answer (closed: ${closed}): ${received.toString()}`));
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    // A reset after the answer still leaves the answer to read; a reset before it fails in finish.
    socket.on("error", () => finish(true));
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.write(request);
  });
}

/** Every answer received on one connection for `request` (pipelined requests give several). */
export function rawExchange(port: number, request: string, count: number): Promise<RawAnswer[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = Buffer.alloc(0);
    const answers: RawAnswer[] = [];
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      for (;;) {
        const answer = parseAnswer(received, false);
        if (!answer) break;
        answers.push(answer);
        const headEnd = received.indexOf("\r\n\r\n") + 4;
        received = received.subarray(headEnd + answer.bodyBytes);
      }
      if (answers.length >= count) socket.end();
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(answers));
    socket.write(request);
  });
}
