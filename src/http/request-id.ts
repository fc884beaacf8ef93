import { randomUUID } from "node:crypto";

/** What a client may send as its own request id: kept when it is this, else a fresh UUID is given. */
const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/** A request's id (X-Request-Id on its answer and `reqId` in its log line). */
export function requestIdOf(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID_RE.test(given) ? given : randomUUID();
}
