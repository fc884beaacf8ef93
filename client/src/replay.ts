import { errorFromAnswer, UpdownError, type UpdownErrorCode } from "./errors.ts";

/** One replayed market-channel message, exactly as Polymarket sent it. */
export type ReplayMessage = Record<string, unknown>;

/** What the replay's close codes mean (docs/events.md), as the error codes of the HTTP answers. */
const CLOSE_ERRORS: Record<number, UpdownErrorCode> = {
  4400: "VALIDATION_ERROR",
  4401: "UNAUTHORIZED",
  4403: "TIER_ACCESS_DENIED",
  4404: "RESOURCE_NOT_FOUND",
  4408: "VALIDATION_ERROR",
  4429: "RATE_LIMIT_EXCEEDED",
  4500: "INTERNAL_ERROR",
  4503: "SERVICE_UNAVAILABLE",
};

/** The error a replay's close code other than 1000 means. */
export function closeError(code: number, reason: string): UpdownError {
  const known = CLOSE_ERRORS[code];
  return new UpdownError({
    code: known ?? "NETWORK",
    message: reason || `The replay closed with ${code}`,
    status: known ? code - 4000 : null,
  });
}

/**
 * The messages of an NDJSON replay answer, one a line, read as the caller takes them (the stream's
 * backpressure reaches the server, so a slow caller slows the replay).
 */
export async function* ndjsonMessages(response: Response): AsyncGenerator<ReplayMessage> {
  if (!response.ok) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not the envelope: the text is the error.
    }
    throw errorFromAnswer(response.status, body, response.headers.get("x-request-id"), null);
  }
  if (response.body === null) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pending += value;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) if (line !== "") yield JSON.parse(line) as ReplayMessage;
    }
    if (pending !== "") yield JSON.parse(pending) as ReplayMessage;
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/**
 * The messages of a WebSocket replay: sends the subscribe message once open, yields each frame, ends
 * at the close 1000 and throws the error any other close means. The platform's WebSocket has no flow
 * control, so messages a slow caller has not taken wait here (use NDJSON to slow the server instead).
 */
export async function* socketMessages(
  url: string,
  protocols: string[],
  assets: readonly string[],
  signal: AbortSignal | undefined,
): AsyncGenerator<ReplayMessage> {
  const ws = new WebSocket(url, protocols);
  const queue: ReplayMessage[] = [];
  let ended: { error: UpdownError | null } | null = null;
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  ws.onopen = () => ws.send(JSON.stringify({ assets_ids: assets, type: "market" }));
  ws.onmessage = (m: MessageEvent) => {
    if (typeof m.data === "string" && m.data !== "PONG") queue.push(JSON.parse(m.data) as ReplayMessage);
    notify();
  };
  ws.onclose = (c: CloseEvent) => {
    ended = { error: c.code === 1000 ? null : closeError(c.code, c.reason) };
    notify();
  };
  const abort = () => ws.close(1000);
  signal?.addEventListener("abort", abort, { once: true });
  try {
    for (;;) {
      const next = queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (signal?.aborted) throw new UpdownError({ code: "ABORTED", message: "The replay was aborted" });
      const end = ended as { error: UpdownError | null } | null;
      if (end !== null) {
        if (end.error) throw end.error;
        return;
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal?.removeEventListener("abort", abort);
    if (ws.readyState === WebSocket.CONNECTING || ws.readyState === WebSocket.OPEN) ws.close(1000);
  }
}
